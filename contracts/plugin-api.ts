/**
 * @module contracts/plugin-api
 * The types plugin code sees: the `ctx` a handler receives inside the isolate (`http`, `config`,
 * `log`), the response of `ctx.http`, and the shape of a plugin module. Types only: the objects
 * themselves are built inside the isolate by the sandbox bootstrap.
 */
import type { BridgeErrorCode } from './protocol.js';

/** A JSON value: what handlers take as arguments and return as results. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The second argument of `ctx.http`. */
export interface HttpInit {
  /** HTTP method, default `GET` */
  method?: string;
  /** request headers; names are case-insensitive. The credential header is added by the gateway. */
  headers?: Record<string, string> | ReadonlyArray<readonly [string, string]>;
  /**
   * A string is sent as is (UTF-8); bytes (an ArrayBuffer, a typed array or a DataView: the bytes
   * the view covers) are sent as they are, with no content-type of their own; a URLSearchParams is
   * sent form-encoded (`application/x-www-form-urlencoded;charset=UTF-8`, as fetch); an object or array is
   * sent as JSON (with `content-type: application/json`). Anything else is refused with
   * GW_ERR_BRIDGE_BAD_REQUEST. The size limit counts bytes.
   */
  body?: string | ArrayBuffer | ArrayBufferView | { [key: string]: unknown } | unknown[];
  /** sent as JSON; takes precedence over `body` */
  json?: unknown;
}

/** Response headers (names lower-cased). The credential never appears here. */
export interface HttpHeaders {
  /** the value, or null when the header is absent */
  get(name: string): string | null;
  has(name: string): boolean;
  keys(): string[];
  entries(): Array<[string, string]>;
  forEach(fn: (value: string, name: string) => void): void;
  toJSON(): Record<string, string>;
}

/**
 * What `ctx.http` resolves to: a small, fetch-like, already-buffered response. Its body may be read
 * any number of times, in any form: each `arrayBuffer()` and `bytes()` is a copy of its own.
 */
export interface HttpResponse {
  status: number;
  /** true for 2xx */
  ok: boolean;
  statusText: string;
  /** the final URL after redirects, in the plugin's own origins */
  url: string;
  headers: HttpHeaders;
  /** the body as text (UTF-8; U+FFFD for each invalid sequence, a byte-order mark dropped) */
  body: string;
  /** the body as text, as `body` has it */
  text(): Promise<string>;
  /** parses the body as JSON (rejects when it is not JSON) */
  json<T = unknown>(): Promise<T>;
  /** the body's bytes exactly as they arrived (after decompression), e.g. an image or a PDF */
  arrayBuffer(): Promise<ArrayBuffer>;
  /** the body's bytes, as a Uint8Array (`(await res.bytes()).toBase64()` for an `_mcpImage`) */
  bytes(): Promise<Uint8Array>;
}

/**
 * Outbound HTTP through the gateway's bridge: only hosts declared in the manifest's `egress`, with
 * the user's credential added for the hosts it is bound to. Rejects with an {@link HttpError}.
 */
export interface HttpFunction {
  (url: string, init?: HttpInit): Promise<HttpResponse>;
  /** the same function under a fetch-like name */
  fetch(url: string, init?: HttpInit): Promise<HttpResponse>;
}

/** How `ctx.http` fails: `code` is one of the `GW_ERR_BRIDGE_*` codes in docs/errors.md. */
export interface HttpError extends Error {
  name: 'HttpError';
  code: BridgeErrorCode;
}

/** Log lines reach the gateway's log with the call they belong to (at most 100 per call). */
export interface PluginLog {
  info(message: string, data?: unknown): void;
  warn(message: string, data?: unknown): void;
  error(message: string, data?: unknown): void;
}

/** What every handler receives as its first argument. Frozen; a fresh one per call. */
export interface PluginContext {
  http: HttpFunction;
  /** the connection's non-secret values (API-key fields not marked `secret`); never a credential */
  config: Readonly<Record<string, JsonValue | undefined>>;
  log: PluginLog;
  /** this call's limits, as the operator's policy sets them for the plugin */
  limits: PluginCallLimits;
}

/** What a call may do: plan requests with `requestsLeft()` rather than assuming the default 25. */
export interface PluginCallLimits {
  /** requests `ctx.http` may make in this call (`limits.maxRequestsPerCall`) */
  readonly maxRequests: number;
  /** how many of them are left now (0 once a later call has started in the same context) */
  requestsLeft(): number;
  /**
   * about how many ms are left of the call's wall-clock deadline (`limits.wallMsPerCall`, less
   * what the call waited for a worker), 0 once it has passed or a later call has started: a tool
   * that polls stops in time and says how to go on, instead of being stopped with nothing
   */
  timeLeftMs(): number;
  /** the largest result, in bytes of its JSON (`limits.maxResultBytes`) */
  readonly maxResultBytes: number;
  /** the largest request body (`http.maxRequestBodyBytes`) */
  readonly maxRequestBodyBytes: number;
}

/**
 * A result that becomes an MCP image block (it may also sit anywhere inside a larger result):
 * `data` is base64, e.g. `(await res.bytes()).toBase64()` of a fetched image.
 */
export interface ImageResult {
  _mcpImage: { data: string; mimeType: string };
}

/** One tool's handler as the sandbox calls it: validated, defaulted arguments in, JSON out. */
export type ToolHandler<Args = Record<string, unknown>> = (ctx: PluginContext, args: Args) => Promise<unknown>;

/** The default export of a built `plugin.js`: tool name → handler. */
export type PluginModule = Record<string, ToolHandler>;
