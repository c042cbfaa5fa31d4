/**
 * @module contracts/protocol
 * The one types file for everything that crosses the host ⇄ sandbox boundary. Every value here is
 * plain, structured-clone-safe data: no functions, no class instances, no isolated-vm handles.
 * Errors travel as `{ code, message }` and are matched on `code`, never with `instanceof`.
 */
import { codesOf, type ErrorCodeOf } from './errors.js';

/** Limits applied to one plugin call inside the sandbox. */
export interface SandboxLimits {
  /** isolate heap limit in MiB (a guideline: V8 may overshoot it, see docs/security.md) */
  memoryMb: number;
  /** CPU time one host→isolate call may take before it is stopped */
  cpuMsPerCall: number;
  /** wall-clock deadline for the whole call, including time spent waiting on ctx.http */
  wallMsPerCall: number;
  /** largest JSON result a handler may return, in bytes (UTF-8) */
  maxResultBytes: number;
  /** largest arguments object accepted into the isolate, in bytes */
  maxArgsBytes: number;
  /** number of ctx.http requests one call may make */
  maxRequestsPerCall: number;
  /**
   * largest ctx.http request body, in bytes (UTF-8): the policy's `http.maxRequestBodyBytes`, so
   * that the sandbox refuses a larger request before sending it to the host (contracts/request-limits)
   */
  maxRequestBodyBytes: number;
}

/** Whether a call gets a fresh V8 context, or shares one per tenant (never across plugins). */
export type ContextMode = 'per-call' | 'per-tenant';

/** One plugin call handed to the sandbox. */
export interface RunTask {
  callId: string;
  plugin: {
    name: string;
    version: string;
    /** self-contained ES module source; compiled only inside an isolate */
    source: string;
    /** content hash of `source`: isolates are cached per (name, hash) */
    sourceHash: string;
  };
  tool: string;
  /** the validated arguments, as JSON text */
  argsJson: string;
  /** non-secret connection configuration (ctx.config) */
  config: Record<string, unknown>;
  /** tenant id when the policy asks for per-tenant contexts; undefined means a fresh context */
  contextKey?: string;
  /**
   * Whom the call runs for: the host's stable internal user id (never an API key). The supervisor
   * holds each user to its share of the sandbox (`maxUserShare`) and does not send it on to the
   * sandbox process. Left out (start-up probes, `plugin validate`), the call counts against no
   * user's share.
   */
  user?: string;
  limits: SandboxLimits;
  /**
   * A probe instead of a call (start-up, `plugin validate`): the module is compiled and evaluated
   * exactly as for a call, then no handler runs; the result is `ProbeResult` JSON saying which of
   * these tool names the default export has no function for. Made with `probeTask` (probe.ts).
   */
  probe?: string[];
}

/** Stable codes for failures of a sandboxed call: a view of the catalogue (contracts/errors.ts). */
export const SANDBOX_ERROR_CODES = codesOf('sandbox');
export type SandboxErrorCode = ErrorCodeOf<'sandbox'>;

export interface RunStats {
  /** wall time inside the sandbox, ms */
  wallMs: number;
  /** CPU time of the isolate for this call, ms (best effort) */
  cpuMs: number;
  /** ctx.http requests made */
  requests: number;
  /** whether the plugin's isolate had to be created (and the module compiled) for this call */
  coldStart: boolean;
  /** only with the sandbox option `traceHops` (benchmarks): where the call's time went */
  hops?: RunHops;
}

/**
 * When a call crossed each hand-off inside the sandbox, in ms since the epoch
 * (`performance.timeOrigin + performance.now()` of the thread that saw it): the sandbox process
 * received it, the worker began and ended it, the sandbox process sent its outcome.
 */
export interface RunHops {
  received: number;
  started: number;
  finished: number;
  sent: number;
}

export type RunOutcome =
  | { ok: true; resultJson: string; stats: RunStats }
  | { ok: false; error: { code: SandboxErrorCode; message: string }; stats: RunStats };

/** A request made by plugin code through ctx.http, as it leaves the isolate. */
export interface BridgeRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** request body as text (JSON bodies are stringified inside the isolate) */
  body?: string;
  /**
   * request body as bytes (plugin code sent an ArrayBuffer, a typed array or a DataView), in
   * base64; never with `body`. Its size limit counts the bytes, not the base64.
   */
  bodyBase64?: string;
}

/** What plugin code gets back from ctx.http (credentials redacted before it is built). */
export interface BridgeResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  /** the body as text, when its bytes are UTF-8 (they are then exactly this text's UTF-8); else '' */
  body: string;
  /**
   * the body's bytes in base64, when they are not UTF-8 text (not valid UTF-8, or starting with a
   * byte-order mark, which a text decoder drops); `body` is then ''. The response cap and the
   * buffer budget count the bytes, not the base64.
   */
  bodyBase64?: string;
  /** the final URL after redirects, expressed in the plugin's own origins (never a mapped one) */
  url: string;
}

/**
 * Stable codes for failures of ctx.http: a view of the catalogue (contracts/errors.ts). They reach
 * plugin code as an Error with this `code`.
 */
export const BRIDGE_ERROR_CODES = codesOf('bridge');
export type BridgeErrorCode = ErrorCodeOf<'bridge'>;

export type BridgeResult =
  { ok: true; response: BridgeResponse } | { ok: false; error: { code: BridgeErrorCode; message: string } };

/**
 * How the host answers a sandboxed call's ctx.http: one function per call, provided by the host.
 * `delivered`, when the supervisor passes it, settles once the answer has been written to the
 * sandbox process's channel (or dropped, the call or process being gone): the bridge keeps the
 * response body counted in its buffer budget (`maxBufferedBytes`) until then, since the host holds
 * the body, and its serialised copy, until that write. Without it the body is released as the
 * handler's promise settles.
 */
export type HttpHandler = (request: BridgeRequest, delivered?: Promise<void>) => Promise<BridgeResult>;

/** Egress rules the bridge enforces, as plain data derived from the policy file. */
export interface EgressPolicy {
  /** origin → origin rewrites, e.g. {"https://api.github.com": "http://127.0.0.1:4010"} */
  upstreams: Record<string, string>;
  /** CIDR ranges that may be reached although they are private/loopback/link-local */
  allowPrivateCidrs: string[];
  /** hosts refused even when a manifest declares them */
  denyHosts: string[];
  /** a connection's own instance may be an http:// origin (default false: https only) */
  allowHttpInstances?: boolean;
  /** per-request timeout, ms */
  requestTimeoutMs: number;
  /** response body cap, bytes */
  maxResponseBytes: number;
  /** request body cap, bytes */
  maxRequestBodyBytes: number;
  /** redirect hops followed by hand */
  maxRedirects: number;
  /** response body bytes the bridge holds at once, all calls together (at least maxResponseBytes) */
  maxBufferedBytes: number;
  /** the largest share of maxBufferedBytes one plugin may hold, 0..1 (never less than maxResponseBytes) */
  maxBufferedShare: number;
}
