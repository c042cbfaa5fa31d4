/**
 * @module host/transport/mcp-cancellation
 * MCP cancellation for the stateless HTTP transport. Each POST gets its own protocol server, so a
 * `notifications/cancelled` (which a client sends in a later POST) would reach no one: this
 * registry remembers the `tools/call` requests in flight on this replica by caller and JSON-RPC id,
 * and a cancellation from the same caller aborts the matching request's signal.
 *
 * The caller is the user and the API key they presented (hashed): two clients of one user with
 * different keys never cancel each other's requests. When the same caller has more than one
 * request in flight under the cancelled id (two clients sharing a key, both at id 3), the
 * cancellation is ambiguous and is ignored rather than guessed. A dropped connection is not a
 * cancellation (MCP transports spec): only the notification aborts. Per replica: behind a load
 * balancer without affinity, a cancellation reaches its request only if it lands on the same
 * replica (the spec lets either side ignore a cancellation; the answer still comes).
 */
import { createHash } from 'node:crypto';
import { fail } from '../../contracts/errors.js';

type JsonRpcId = string | number;

/** The requests of one POST registered for cancellation; `release` when the POST is answered. */
export interface TrackedRequests {
  /** the signal aborted when the client cancels that request; undefined for ids not tracked here */
  signalFor(id: JsonRpcId): AbortSignal | undefined;
  release(): void;
}

const NOTHING_TRACKED: TrackedRequests = { signalFor: () => undefined, release: () => undefined };

function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

function messagesOf(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

/** A caller's identity for matching: user id and a hash of the presented key (never the key). */
export function callerIdentity(userId: string, presentedKey: string): string {
  return `${userId}\u0000${createHash('sha256').update(presentedKey).digest('base64url').slice(0, 22)}`;
}

export class McpCancellations {
  readonly #inFlight = new Map<string, Set<AbortController>>();

  #key(caller: string, id: JsonRpcId): string {
    return `${caller}\u0000${typeof id}\u0000${id}`;
  }

  /** Registers the `tools/call` requests in a POST body. */
  track(caller: string, body: unknown): TrackedRequests {
    let mine: Map<string, AbortController> | undefined;
    for (const m of messagesOf(body)) {
      const msg = m as { method?: unknown; id?: unknown } | null;
      if (typeof msg !== 'object' || msg === null || msg.method !== 'tools/call' || !isId(msg.id)) continue;
      const key = this.#key(caller, msg.id);
      mine ??= new Map();
      if (mine.has(key)) continue;
      const controller = new AbortController();
      mine.set(key, controller);
      let set = this.#inFlight.get(key);
      if (!set) this.#inFlight.set(key, (set = new Set()));
      set.add(controller);
    }
    if (!mine) return NOTHING_TRACKED;
    const tracked = mine;
    return {
      signalFor: (id) => tracked.get(this.#key(caller, id))?.signal,
      release: () => {
        for (const [key, controller] of tracked) {
          const set = this.#inFlight.get(key);
          set?.delete(controller);
          if (set?.size === 0) this.#inFlight.delete(key);
        }
        tracked.clear();
      },
    };
  }

  /**
   * Applies the `notifications/cancelled` in a POST body: each aborts the caller's one request in
   * flight with that id. Returns how many requests were aborted (0 for unknown or ambiguous ids).
   */
  cancel(caller: string, body: unknown): number {
    let aborted = 0;
    for (const m of messagesOf(body)) {
      const msg = m as { method?: unknown; params?: { requestId?: unknown; reason?: unknown } } | null;
      if (typeof msg !== 'object' || msg === null || msg.method !== 'notifications/cancelled') continue;
      const requestId = msg.params?.requestId;
      if (!isId(requestId)) continue;
      const set = this.#inFlight.get(this.#key(caller, requestId));
      if (set?.size !== 1) continue;
      const [controller] = set;
      if (controller && !controller.signal.aborted) {
        controller.abort(
          fail('GW_ERR_ENGINE_CANCELLED', {
            message:
              typeof msg.params?.reason === 'string' ? msg.params.reason.slice(0, 200) : 'cancelled by the client',
          }),
        );
        aborted++;
      }
    }
    return aborted;
  }

  /** requests tracked now (tests and metrics) */
  get size(): number {
    let n = 0;
    for (const set of this.#inFlight.values()) n += set.size;
    return n;
  }
}
