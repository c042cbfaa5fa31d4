/**
 * @module host/bridge/types
 * Shapes shared by the bridge's interceptors. The bridge runs in the host process: a request
 * arrives from the sandbox as a plain `BridgeRequest`, travels down a chain of interceptors as an
 * `OutboundRequest`, and the answer climbs back up as an `InboundResponse`.
 */
import type { PluginManifest } from '../../contracts/manifest.js';
import type { EgressPolicy } from '../../contracts/protocol.js';
import type { Cidr } from './address-policy.js';
import type { Reservation } from './buffer-budget.js';
import type { StoredCookie } from './cookie-header.js';

/**
 * Secret values of one connection, e.g. `{ token }` (OAuth2) or `{ apiKey }` (API-key fields);
 * for a cookie connection, its cookies (and no values).
 */
export interface Credential {
  values: Record<string, string>;
  cookies?: readonly StoredCookie[];
  /** the instance origin the credential was sealed for (undefined: the provider's default hosts) */
  instance?: string | undefined;
}

/** What the host knows about the call a request belongs to. One object per call. */
export interface CallScope {
  manifest: PluginManifest;
  /**
   * the origin of the connection's own instance ("https://gitlab.example.com"), when it names one:
   * requests to it are allowed as if declared, and the credential goes to it and to nothing else
   */
  instance?: string | undefined;
  /** loads the credential; called lazily, at most once per call, only for credential hosts */
  getCredential: () => Promise<Credential | undefined>;
  /** requests made so far by this call (shared by every request of the call) */
  requestCount: { n: number };
  maxRequests: number;
  /** aborted when the call ends */
  signal: AbortSignal;
}

/** One hop of a request as the interceptors see it. */
export interface OutboundRequest {
  /** the URL in the plugin's own terms (never a mapped upstream) */
  url: URL;
  method: string;
  headers: Record<string, string>;
  /** text, or the bytes of a binary body */
  body?: string | Uint8Array | undefined;
  /** 0 for the plugin's request, n for the n-th redirect */
  hop: number;
  /** origin of the plugin's original request (credentials never cross to another origin) */
  initialOrigin: string;
  /** where the transport really connects (set by upstream mapping; defaults to `url`) */
  target?: URL;
  /** true when `target` is an operator-named upstream: the private-address check is skipped */
  mapped?: boolean;
  /**
   * true when the host is not declared in `egress` and the manifest allows any public host: it
   * gets no credential, and only public addresses (allowPrivateCidrs does not apply)
   */
  anyHost?: boolean;
  signal: AbortSignal;
  /**
   * the response body bytes this request holds in the bridge's buffer budget (one hop's at a
   * time); the bridge returns them when the body has reached the sandbox or the request failed
   */
  reservation: Reservation;
}

/** A response on its way back to the plugin. `stream` is consumed by the size cap. */
export interface InboundResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  /** final URL in the plugin's own terms */
  url: string;
  /** the body as text when its bytes are UTF-8 text; '' when `bytes` holds them */
  body: string;
  /** the body's bytes when they are not UTF-8 text (see cap-response-size) */
  bytes?: Uint8Array | undefined;
  stream?: ReadableStream<Uint8Array> | null;
}

/** Per-call state the interceptors share (the credential is loaded at most once). */
export interface CallContext {
  scope: CallScope;
  policy: CompiledEgressPolicy;
  /** the credential, once loaded; used for injection and for redaction */
  credential(): Promise<Credential | undefined>;
  /** secret values already loaded for this call (empty until the credential was needed) */
  loadedSecrets(): readonly string[];
  /** registers a value derived from the credential (e.g. the rendered header) for redaction */
  addSecret(value: string): void;
  /**
   * Runs `fn` when the call ends (at once if it has ended) and returns what unregisters it. The
   * call's signal gets one listener however many requests wait on it: a listener per request put
   * more than 10 on it (Node's MaxListenersExceededWarning on the host's stderr) and cost an
   * EventTarget registration each.
   */
  onEnd(fn: () => void): () => void;
}

/** The egress policy with its CIDRs and upstream origins parsed once. */
export interface CompiledEgressPolicy extends EgressPolicy {
  /** upstream origin (normalised) → target URL origin */
  upstreamMap: ReadonlyMap<string, URL>;
  denyHostSet: ReadonlySet<string>;
  allowedCidrs: readonly Cidr[];
}

export type Step = (req: OutboundRequest, call: CallContext) => Promise<InboundResponse>;
/** undici-style interceptor: takes the next step, returns a step. */
export type Interceptor = (next: Step) => Step;
