/**
 * @module host/transport/caller-auth
 * Who is calling: `x-workbench-api-key: <key>` or `Authorization: Bearer <key>`. Keys are looked up
 * by hash; an unknown or revoked key is 401 with a WWW-Authenticate challenge. A key revoked while a
 * request runs refuses the executions that request has not started yet (`keyValid`).
 *
 * On /mcp the bearer may also be an OAuth access token this gateway issued (host/oauth-server):
 * looked up in the database on every request (so a revocation on any replica is seen by the next
 * request), bound to /mcp's audience, and rechecked like a key while the request runs. There the
 * 401 challenge names the protected resource metadata (RFC 9728 §5.1), so that a client can find
 * the authorization server; API keys work there unchanged, and /rest takes API keys only.
 *
 * Routes that take a body check the key before reading it (`checkKeyFirst`): a client without a
 * valid key can neither make the server hold a body of up to `bodyLimitBytes` nor keep a connection
 * open while it trickles one in; its 401 closes the connection instead of reading the rest.
 */
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User, UserStore } from '../storage/users.js';

export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-workbench-api-key'];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  const auth = request.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m?.[1]) return m[1];
  }
  return undefined;
}

export interface AuthenticatedCaller {
  user: User;
  /**
   * Whether the request's key is still valid, asked before each execution starts: a key revoked
   * while a long batch runs stops it from starting more. Revocation through this server is seen at
   * once; one on another replica (or by the CLI) within KEY_RECHECK_MS.
   */
  keyValid: () => Promise<boolean>;
}

/**
 * OAuth access tokens a route takes besides API keys (host/oauth-server's server, on /mcp): its
 * tokens, their check, and the 401 challenge that leads a client to the authorization server.
 */
export interface BearerTokens {
  ownsToken(token: string): boolean;
  verifyAccessToken(token: string): Promise<{ user: User; live(): Promise<boolean> } | undefined>;
  challenge(invalidToken: boolean): string;
}

/** How long a request trusts its key's last check against the database. */
export const KEY_RECHECK_MS = 1000;

/** callers already authenticated by `checkKeyFirst`, so that the handler does not look the key up again */
const checkedFirst = new WeakMap<FastifyRequest, AuthenticatedCaller>();

/**
 * The POST requests each user has in flight on this server (`requests.maxInFlightPerUser`): each
 * holds its body, its executions' results and a connection, so one key sending thousands at once
 * (batches of waits, bodies near the size limit) could take the server's memory and CPU from every
 * other user.
 */
export class UserRequests {
  readonly limit: number;
  readonly #counts = new Map<string, number>();
  /** requests let in over the limit for notifications only, by user */
  readonly #notifying = new Map<string, number>();
  /** what each counted request's handler reports to (`running`) */
  readonly #tickets = new WeakMap<FastifyRequest, { start(): () => void }>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /**
   * Counts a request of the user until both its answer has ended (sent, or its response or its
   * connection closed: a response pipelined behind another on a connection the client drops never
   * says 'close' itself) and its handler is not running (a REST handler goes on after its client
   * hangs up, and its executions with it). False, counting nothing, when the user is at the limit.
   */
  enter(userId: string, request: FastifyRequest, reply: FastifyReply): boolean {
    return this.#count(this.#counts, this.limit, userId, request, reply);
  }

  /**
   * Counts a request let in over the user's limit to carry notifications only (at most
   * NOTIFICATION_REQUESTS of them at once), until its answer has ended.
   */
  enterForNotifications(userId: string, request: FastifyRequest, reply: FastifyReply): boolean {
    return this.#count(this.#notifying, NOTIFICATION_REQUESTS, userId, request, reply);
  }

  #count(
    counts: Map<string, number>,
    limit: number,
    userId: string,
    request: FastifyRequest,
    reply: FastifyReply,
  ): boolean {
    const n = counts.get(userId) ?? 0;
    if (n >= limit) return false;
    counts.set(userId, n + 1);
    const res = reply.raw;
    const socket = request.raw.socket as Socket | null;
    let running = false;
    let ended = false;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      res.off('close', onEnd);
      res.off('finish', onEnd);
      socket?.off('close', onEnd);
      const left = (counts.get(userId) ?? 1) - 1;
      if (left > 0) counts.set(userId, left);
      else counts.delete(userId);
    };
    const onEnd = (): void => {
      ended = true;
      if (!running) release();
    };
    res.once('close', onEnd);
    res.once('finish', onEnd);
    socket?.once('close', onEnd);
    // the client may have gone while its key was being looked up: those events are past
    if (!socket || socket.destroyed) onEnd();
    this.#tickets.set(request, {
      start: () => {
        running = true;
        return () => {
          running = false;
          if (ended) release();
        };
      },
    });
    return true;
  }

  /** The route's handler begins; call what it returns when it has settled (in a `finally`). */
  running(request: FastifyRequest): () => void {
    return this.#tickets.get(request)?.start() ?? (() => undefined);
  }

  inFlight(userId: string): number {
    return this.#counts.get(userId) ?? 0;
  }
}

/**
 * A user at the limit may still send JSON-RPC notifications (a `notifications/cancelled` for one
 * of its requests in flight comes in a POST of its own): a body of at most this many bytes is
 * read, and refused only if it holds a request.
 */
const NOTIFICATION_BODY_BYTES = 4096;
/** such requests one user may have at once (each is answered as soon as its small body is in) */
const NOTIFICATION_REQUESTS = 4;
/** requests let in over their user's limit to carry notifications only (checked in the handler) */
const overLimit = new WeakSet<FastifyRequest>();

/** Whether a request came in over its user's limit (`checkKeyFirst`): the handler must refuse it if its body holds any request. */
export function cameOverLimit(request: FastifyRequest): boolean {
  return overLimit.has(request);
}

/** The 429 a user at its limit gets (over MCP, a JSON-RPC error body). */
export function sendTooManyRequests(reply: FastifyReply, jsonRpc: boolean, limit: number): FastifyReply {
  const message = `This user already has ${limit} requests in flight on this server (requests.maxInFlightPerUser); send the next once one has been answered.`;
  return reply
    .code(429)
    .header('retry-after', '1')
    .send(
      jsonRpc
        ? { jsonrpc: '2.0', error: { code: -32000, message }, id: null }
        : { error: 'Too many requests in flight', code: 'GW_ERR_TRANSPORT_TOO_MANY_REQUESTS', message },
    );
}

/**
 * An `onRequest` hook: the presented key is checked before the body is read. Without a valid key
 * the request is answered 401, and a user with `requests.maxInFlightPerUser` requests in flight
 * already 429; both with `Connection: close` (Node then closes the connection rather than reading
 * the rest of the body).
 */
export function checkKeyFirst(
  users: UserStore,
  jsonRpc: boolean,
  requests: UserRequests,
  tokens?: BearerTokens,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined> {
  return async (request, reply) => {
    const caller = await authenticateCaller(users, request, tokens);
    if (caller && requests.enter(caller.user.id, request, reply)) {
      checkedFirst.set(request, caller);
      return undefined;
    }
    if (
      caller &&
      jsonRpc &&
      Number(request.headers['content-length']) <= NOTIFICATION_BODY_BYTES &&
      requests.enterForNotifications(caller.user.id, request, reply)
    ) {
      // perhaps only notifications (a cancellation of a request in flight): the handler decides
      checkedFirst.set(request, caller);
      overLimit.add(request);
      return undefined;
    }
    reply.header('connection', 'close');
    if (!caller) sendUnauthorized(reply, jsonRpc, tokens && challengeFor(request, tokens));
    else void sendTooManyRequests(reply, jsonRpc, requests.limit);
    return reply;
  };
}

export async function authenticateCaller(
  users: UserStore,
  request: FastifyRequest,
  tokens?: BearerTokens,
): Promise<AuthenticatedCaller | undefined> {
  const early = checkedFirst.get(request);
  if (early) return early;
  const key = presentedKey(request);
  if (key !== undefined && tokens?.ownsToken(key)) return bearerCaller(tokens, key);
  const found = key ? await users.authenticateKey(key) : undefined;
  if (!found) return undefined;
  const { user, keyId } = found;
  return {
    user,
    keyValid: recheckEvery(
      KEY_RECHECK_MS,
      async () => !users.revokedHere(keyId),
      () => users.keyIsLive(keyId),
    ),
  };
}

/** The caller of an OAuth access token, its validity asked of the database as a key's is. */
async function bearerCaller(tokens: BearerTokens, token: string): Promise<AuthenticatedCaller | undefined> {
  const found = await tokens.verifyAccessToken(token);
  if (!found) return undefined;
  return { user: found.user, keyValid: recheckEvery(KEY_RECHECK_MS, async () => true, found.live) };
}

/**
 * A validity check that asks `ask` (the database) at most every `ms`, and `quick` (this process's
 * own record) every time. Once invalid, always invalid.
 */
function recheckEvery(ms: number, quick: () => Promise<boolean>, ask: () => Promise<boolean>): () => Promise<boolean> {
  let checkedAt = Date.now();
  let valid = true;
  return async () => {
    if (!valid || !(await quick())) return (valid = false);
    if (Date.now() - checkedAt < ms) return true;
    try {
      valid = await ask();
      checkedAt = Date.now();
    } catch {
      // the database did not answer (busy, a failover): keep what was last known, and ask again
      // before the next execution rather than failing this one
    }
    return valid;
  };
}

/** The 401 challenge on a route that takes OAuth tokens: invalid_token when a token of this server was presented. */
export function challengeFor(request: FastifyRequest, tokens: BearerTokens): string {
  const key = presentedKey(request);
  return tokens.challenge(key !== undefined && tokens.ownsToken(key));
}

/** `challenge`: the WWW-Authenticate value (default: the realm alone, where no OAuth token is taken). */
export function sendUnauthorized(reply: FastifyReply, jsonRpc: boolean, challenge = 'Bearer realm="workbench"'): void {
  const body = jsonRpc
    ? {
        jsonrpc: '2.0',
        error: {
          code: -32001,
          message:
            'Unauthorized: send your Workbench API key as "Authorization: Bearer <key>" or "x-workbench-api-key"' +
            (challenge.includes('resource_metadata=') ? ', or an OAuth access token of this server' : ''),
        },
        id: null,
      }
    : {
        error: 'Unauthorized',
        code: 'GW_ERR_TRANSPORT_UNAUTHORIZED',
        message: 'Send your Workbench API key as "Authorization: Bearer <key>" or "x-workbench-api-key".',
      };
  void reply.code(401).header('www-authenticate', challenge).send(body);
}
