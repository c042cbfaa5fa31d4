/**
 * @module host/bridge/create-bridge
 * The host side of `ctx.http`. The sandbox hands a plain `BridgeRequest`; the bridge runs it
 * through these steps (BRIDGE_INTERCEPTORS), outermost first, and always answers with a
 * `BridgeResult` (never throws):
 *
 *   redact-credentials → request-budget → validate-request → timeout → follow-redirects
 *     → egress-policy → inject-credential → map-upstream → cap-response-size → transport
 *
 * The credential is loaded in this process only, so it never enters the sandbox process.
 * Response bodies held in this process, all calls together, are bounded by one byte budget
 * (buffer-budget.ts, `maxBufferedBytes`), which counts a body's bytes as they arrive. Until the
 * answer is written to the sandbox process the host holds a body in a few forms at once (its bytes;
 * its text or, for a body that is not UTF-8 text, its base64, 4/3 of the bytes; the serialised
 * message), all bounded through the bytes the budget counts (docs/security.md, sizing the host).
 */
import type { BridgeRequest, BridgeResponse, BridgeResult, EgressPolicy } from '../../contracts/protocol.js';
import { parseCidrs } from './address-policy.js';
import { isBridgeError } from './bridge-error.js';
import { BufferBudget } from './buffer-budget.js';
import { compose } from './compose.js';
import { capResponseSize } from './interceptors/cap-response-size.js';
import { egressPolicy } from './interceptors/egress-policy.js';
import { followRedirects } from './interceptors/follow-redirects.js';
import { injectCredential } from './interceptors/inject-credential.js';
import { mapUpstream, mappedTarget } from './interceptors/map-upstream.js';
import { redactCredentials } from './interceptors/redact-credentials.js';
import { requestBudget } from './interceptors/request-budget.js';
import { timeout } from './interceptors/timeout.js';
import { validateRequest } from './interceptors/validate-request.js';
import { normaliseUrl } from '../../common/normalise-url.js';
import { requestBody } from './request-body.js';
import type { Resolver } from './safe-lookup.js';
import { createTransport } from './transport.js';
import type {
  CallContext,
  CallScope,
  CompiledEgressPolicy,
  Credential,
  InboundResponse,
  Interceptor,
  OutboundRequest,
  Step,
} from './types.js';

/**
 * The steps of every ctx.http request, outermost first (compose.ts: the first one runs first on
 * the way out and last on the way back), before the transport. docs/lifecycle.md numbers them in
 * this order, and the module doc above draws it; test/architecture/lifecycle-doc.test.ts holds all
 * three together.
 */
export const BRIDGE_INTERCEPTORS: ReadonlyArray<{ readonly name: string; readonly make: () => Interceptor }> = [
  { name: 'redact-credentials', make: redactCredentials },
  { name: 'request-budget', make: requestBudget },
  { name: 'validate-request', make: validateRequest },
  { name: 'timeout', make: timeout },
  { name: 'follow-redirects', make: followRedirects },
  { name: 'egress-policy', make: egressPolicy },
  { name: 'inject-credential', make: injectCredential },
  { name: 'map-upstream', make: mapUpstream },
  { name: 'cap-response-size', make: capResponseSize },
];

export interface BridgeOptions {
  /** DNS resolver with `dns.lookup(host, {all:true}, cb)` semantics (default: the system's) */
  resolver?: Resolver;
  /** extra trusted CA certificates (PEM) for upstreams behind a private CA */
  ca?: string | string[];
  /** TCP/TLS connect timeout, ms (default 10000, capped by requestTimeoutMs) */
  connectTimeoutMs?: number;
}

/** The bridge's buffer budget now (a metric, and for tests). */
export interface BridgeBufferStats {
  /** bytes of response bodies held now, all calls together */
  heldBytes: number;
  /** `maxBufferedBytes` */
  limitBytes: number;
  /** requests refused with GW_ERR_BRIDGE_BUSY since start */
  refusals: number;
}

export interface Bridge {
  /**
   * Runs one ctx.http request for the call described by `scope`. Never rejects. The response body
   * counts in the buffer budget until `delivered` settles (see HttpHandler), or, without it, until
   * this promise settles; at the latest until the call ends.
   */
  dispatch(req: BridgeRequest, scope: CallScope, delivered?: Promise<void>): Promise<BridgeResult>;
  bufferStats(): BridgeBufferStats;
  /** Closes the HTTP agents (in-flight requests fail). */
  close(): Promise<void>;
}

function compileUpstreams(upstreams: Record<string, string>): Map<string, URL> {
  const upstreamMap = new Map<string, URL>();
  for (const [from, to] of Object.entries(upstreams))
    upstreamMap.set(new URL(from).origin, new URL(new URL(to).origin));
  return upstreamMap;
}

/**
 * The same origin mapping for requests the host itself makes to plugin-named URLs (OAuth token,
 * authorization and revocation endpoints): `url` rewritten to its mapped target, or unchanged.
 */
export function createUpstreamMapper(upstreams: Record<string, string>): (url: string) => string {
  const upstreamMap = compileUpstreams(upstreams);
  return (url) => {
    try {
      return mappedTarget(new URL(url), upstreamMap)?.href ?? url;
    } catch {
      return url;
    }
  };
}

export function compileEgressPolicy(egress: EgressPolicy): CompiledEgressPolicy {
  return {
    ...egress,
    upstreamMap: compileUpstreams(egress.upstreams),
    denyHostSet: new Set(egress.denyHosts.map((h) => h.toLowerCase().replace(/\.+$/, ''))),
    allowedCidrs: parseCidrs(egress.allowPrivateCidrs),
  };
}

const NOTHING_TO_UNDO = (): void => undefined;

function createCallContext(scope: CallScope, policy: CompiledEgressPolicy): CallContext {
  const secrets: string[] = [];
  let loading: Promise<Credential | undefined> | undefined;
  const atEnd = new Set<() => void>();
  if (!scope.signal.aborted)
    scope.signal.addEventListener(
      'abort',
      () => {
        for (const fn of atEnd) fn();
        atEnd.clear();
      },
      { once: true },
    );
  return {
    scope,
    policy,
    credential() {
      loading ??= scope.getCredential().then((c) => {
        if (c) for (const v of Object.values(c.values)) if (typeof v === 'string') secrets.push(v);
        // every stored cookie's value, sent or not: none of them may reach plugin code
        if (c?.cookies) for (const cookie of c.cookies) secrets.push(cookie.value);
        return c;
      });
      return loading;
    },
    loadedSecrets: () => secrets,
    addSecret(value) {
      if (!secrets.includes(value)) secrets.push(value);
    },
    onEnd(fn) {
      if (scope.signal.aborted) {
        fn();
        return NOTHING_TO_UNDO;
      }
      atEnd.add(fn);
      return () => atEnd.delete(fn);
    },
  };
}

export function createBridge(egress: EgressPolicy, options: BridgeOptions = {}): Bridge {
  const policy = compileEgressPolicy(egress);
  const transport = createTransport({
    allowedCidrs: policy.allowedCidrs,
    resolver: options.resolver,
    ca: options.ca,
    connectTimeoutMs: Math.min(options.connectTimeoutMs ?? 10_000, policy.requestTimeoutMs),
    requestTimeoutMs: policy.requestTimeoutMs,
  });
  const parts: BridgeParts = {
    policy,
    run: compose(...BRIDGE_INTERCEPTORS.map((step) => step.make()))(transport.send),
    calls: new WeakMap<CallScope, CallContext>(),
    budget: new BufferBudget({
      limit: egress.maxBufferedBytes,
      share: egress.maxBufferedShare,
      maxResponseBytes: egress.maxResponseBytes,
    }),
  };

  return {
    dispatch: (raw, scope, delivered) => dispatch(parts, raw, scope, delivered),
    bufferStats: () => ({
      heldBytes: parts.budget.held,
      limitBytes: parts.budget.limit,
      refusals: parts.budget.refusals,
    }),
    close: () => transport.close(),
  };
}

/** What every request through one bridge shares. */
interface BridgeParts {
  policy: CompiledEgressPolicy;
  /** the steps (BRIDGE_INTERCEPTORS) over the transport */
  run: Step;
  calls: WeakMap<CallScope, CallContext>;
  budget: BufferBudget;
}

type BridgeFailure = Extract<BridgeResult, { ok: false }>;

/** One ctx.http request (Bridge.dispatch): never rejects, and gives its body's bytes back to the budget. */
async function dispatch(
  bridge: BridgeParts,
  raw: BridgeRequest,
  scope: CallScope,
  delivered: Promise<void> | undefined,
): Promise<BridgeResult> {
  let call = bridge.calls.get(scope);
  if (!call) bridge.calls.set(scope, (call = createCallContext(scope, bridge.policy)));
  const reservation = bridge.budget.open(scope.manifest.name);
  // whatever becomes of the request, its bytes are back in the budget when its call ends
  const forget = call.onEnd(() => reservation.release());
  let handedOver = false;
  try {
    const req = outboundRequest(raw, scope, bridge.policy, reservation);
    if ('ok' in req) return req;
    const res = await bridge.run(req, call);
    if (delivered && reservation.bytes > 0) {
      // the body stays counted until the sandbox process has it (see HttpHandler)
      handedOver = true;
      const release = (): void => {
        reservation.release();
        forget();
      };
      delivered.then(release, release);
    }
    return { ok: true, response: bridgeResponse(res) };
  } catch (e) {
    if (isBridgeError(e)) return { ok: false, error: { code: e.code, message: e.message } };
    return { ok: false, error: { code: 'GW_ERR_BRIDGE_NETWORK', message: 'the request failed' } };
  } finally {
    if (!handedOver) {
      reservation.release();
      forget();
    }
  }
}

/** The sandbox's plain request as the steps take it, or why it is malformed (its body may throw a BridgeError). */
function outboundRequest(
  raw: BridgeRequest,
  scope: CallScope,
  policy: CompiledEgressPolicy,
  reservation: OutboundRequest['reservation'],
): OutboundRequest | BridgeFailure {
  if (
    typeof raw?.url !== 'string' ||
    typeof raw.method !== 'string' ||
    typeof raw.headers !== 'object' ||
    raw.headers === null
  ) {
    return { ok: false, error: { code: 'GW_ERR_BRIDGE_BAD_REQUEST', message: 'malformed request' } };
  }
  const body = requestBody(raw, policy.maxRequestBodyBytes);
  let url: URL;
  try {
    url = normaliseUrl(raw.url);
  } catch {
    return {
      ok: false,
      error: { code: 'GW_ERR_BRIDGE_BAD_REQUEST', message: `"${raw.url.slice(0, 200)}" is not a valid URL` },
    };
  }
  return {
    url,
    method: raw.method,
    headers: { ...raw.headers },
    body,
    hop: 0,
    initialOrigin: url.origin,
    signal: scope.signal,
    reservation,
  };
}

function bridgeResponse(res: InboundResponse): BridgeResponse {
  const response: BridgeResponse = {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
    body: res.body,
    url: res.url,
  };
  // bytes that are not UTF-8 text cross the sandbox's JSON messages as base64
  if (res.bytes)
    response.bodyBase64 = Buffer.from(res.bytes.buffer, res.bytes.byteOffset, res.bytes.byteLength).toString('base64');
  return response;
}
