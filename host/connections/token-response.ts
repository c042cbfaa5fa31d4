/**
 * @module host/connections/token-response
 * Reads an OAuth2 token endpoint's answer, whatever the provider's quirks: JSON or form-encoded
 * bodies (GitHub answers form-encoded unless asked), errors sent with HTTP 200 (`{error}` or Slack's
 * `{ok:false}`), and tokens nested under a path (Slack's `authed_user`). Error messages name the
 * status, content type and the provider's error code, never a token or the raw body, and each piece
 * of the provider's text they quote is clipped (PROVIDER_TEXT_MAX). The answer is read with a byte
 * cap: the token URL comes from a manifest, and its answer must not fill memory.
 */
import { WorkbenchError } from '../../contracts/errors.js';

export type OAuthErrorKind =
  /** the grant (code or refresh token) is invalid, expired, revoked or already used: reconnect */
  | 'invalid_grant'
  /** the provider answered with an OAuth error other than invalid_grant (bad client, scope, …) */
  | 'provider_error'
  /** the provider could not be reached, timed out or answered 5xx/429 */
  | 'provider_unavailable'
  /** the provider answered something that is not a token response (HTML, garbage, no access_token) */
  | 'bad_response';

export class OAuthError extends WorkbenchError<'GW_ERR_CONNECTION_PROVIDER'> {
  readonly kind: OAuthErrorKind;
  /** the provider's `error` code when it sent one */
  readonly providerCode: string | undefined;
  constructor(kind: OAuthErrorKind, message: string, providerCode?: string) {
    super('GW_ERR_CONNECTION_PROVIDER', message);
    this.name = 'OAuthError';
    this.kind = kind;
    this.providerCode = providerCode;
  }
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** lifetime in whole seconds, when the provider said (clamped: see normaliseExpiresIn) */
  expiresInSec?: number;
  /** granted scopes, space-separated */
  scope?: string;
  tokenType?: string;
}

/** Provider error codes that mean "this grant is dead": the user must reconnect. */
const DEAD_GRANT = new Set([
  'invalid_grant',
  'invalid_refresh_token',
  'bad_refresh_token',
  'token_revoked',
  'token_expired',
  'bad_verification_code',
  'invalid_code',
]);

/**
 * The most of a token endpoint's answer that is read. A token response is a few KiB at most; the
 * endpoint's URL comes from a plugin manifest, so an answer is read as a stream and abandoned (the
 * request cancelled) beyond this, instead of buffering whatever the endpoint sends.
 */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * The most characters of each piece of the provider's text a message quotes: its `error` code, its
 * `error_description`, its content type. A message becomes a connect link's stored failure reason
 * (the connect page, wait_for_connection) and, for a refresh, the error of every execution that
 * needs the token and of its log line: the provider, whose token URL a manifest names, must not
 * decide their size (a 503 with a 60,000-character `error` made a 60,252-character message).
 */
export const PROVIDER_TEXT_MAX = { code: 60, description: 200, contentType: 100 } as const;

/** `s` on one line, cut to `n` characters (and an ellipsis). */
function clip(s: string, n: number): string {
  const one = s.replace(/[\r\n\t]+/g, ' ');
  return one.length > n ? `${one.slice(0, n)}…` : one;
}

function parseBody(text: string, contentType: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (contentType.includes('json') || t.startsWith('{')) {
    try {
      const v: unknown = JSON.parse(t);
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
  const formish =
    contentType.includes('x-www-form-urlencoded') || (contentType.includes('text/plain') && /^[\w.%-]+=/.test(t));
  if (formish) return Object.fromEntries(new URLSearchParams(t));
  return undefined;
}

function pick(obj: Record<string, unknown>, dotted: string | undefined): unknown {
  if (!dotted) return obj;
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function numberOf(v: unknown): number | undefined {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The shortest token lifetime kept: a provider's `expires_in` below one second counts as one. */
export const MIN_EXPIRES_IN_SEC = 1;
/** The longest token lifetime kept (10 years): a larger `expires_in` (`1e300`) counts as this. */
export const MAX_EXPIRES_IN_SEC = 10 * 365 * 24 * 3600;

/**
 * A token lifetime in whole seconds within [MIN_EXPIRES_IN_SEC, MAX_EXPIRES_IN_SEC]. Providers
 * send fractions (`3599.0001`) and absurd values; `now + lifetime * 1000` must stay a safe integer,
 * because `connections.expires_at` is a BIGINT of milliseconds (PostgreSQL refuses anything else).
 */
export function normaliseExpiresIn(sec: number): number {
  return Math.min(MAX_EXPIRES_IN_SEC, Math.max(MIN_EXPIRES_IN_SEC, Math.floor(sec)));
}

/** When a token issued at `now` (ms) with a lifetime of `expiresInSec` expires: an integer (ms). */
export function expiresAtOf(now: number, expiresInSec: number): number {
  return Math.floor(now) + normaliseExpiresIn(expiresInSec) * 1000;
}

/** Discards a response body without reading it: the request is cancelled, whatever its size. */
export async function discardBody(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

/**
 * The body as text, read chunk by chunk up to `maxBytes`: a larger answer (declared or streamed)
 * is cancelled and refused with a bad_response OAuthError. Errors while reading are thrown as is.
 */
async function readCapped(res: Response, what: string, maxBytes: number): Promise<string> {
  const tooLarge = (): OAuthError =>
    new OAuthError(
      'bad_response',
      `${what}: the provider's answer is larger than ${maxBytes} bytes, which is not a token response`,
    );
  const declared = Number(res.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discardBody(res);
    throw tooLarge();
  }
  if (!res.body) return '';
  // @types/node types a fetch body as ReadableStream<any>; its chunks are bytes.
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * `text` with every value in `secrets` (as sent, and URL-encoded) replaced by `[redacted]`: a
 * provider that echoes the request in its error_description must not put the code, the refresh
 * token or the client secret into a message the agent sees and the log keeps.
 */
export function redactSent(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  const forms = secrets
    .filter((v): v is string => typeof v === 'string' && v.length >= 4)
    .flatMap((v) => [v, encodeURIComponent(v), new URLSearchParams({ v }).toString().slice(2)])
    .sort((a, b) => b.length - a.length);
  for (const f of forms) out = out.split(f).join('[redacted]');
  return out;
}

/**
 * Turns a token endpoint response into a TokenSet or throws an OAuthError with a clear message.
 * `sent` lists the secret values of the request (code, verifier, refresh token, client secret):
 * they are cut out of the provider's error text before it is quoted.
 */
export async function readTokenResponse(
  res: Response,
  what: string,
  tokenPath?: string,
  sent: readonly (string | undefined)[] = [],
): Promise<TokenSet> {
  const contentType = (res.headers.get('content-type') ?? '').toLowerCase();
  let text: string;
  try {
    text = await readCapped(res, what, MAX_TOKEN_RESPONSE_BYTES);
  } catch (err) {
    if (err instanceof OAuthError) throw err;
    throw new OAuthError(
      'provider_unavailable',
      `${what}: the provider's answer was cut off (${clip((err as Error).message, PROVIDER_TEXT_MAX.description)})`,
    );
  }
  const body = parseBody(text, contentType);
  // redacted before they are clipped: a clip must not leave the start of a secret behind
  const errorCode = body && typeof body['error'] === 'string' ? redactSent(body['error'], sent) : undefined;
  const errorText =
    body && typeof body['error_description'] === 'string'
      ? `: ${clip(redactSent(body['error_description'], sent), PROVIDER_TEXT_MAX.description)}`
      : '';
  if (errorCode || (body && body['ok'] === false)) {
    const raw = errorCode ?? 'unknown_error';
    // the same clipped code on every path, and as providerCode
    const code = clip(raw, PROVIDER_TEXT_MAX.code);
    if (DEAD_GRANT.has(raw))
      throw new OAuthError('invalid_grant', `${what}: the provider rejected the grant (${code}${errorText})`, code);
    if (res.status >= 500 || res.status === 429)
      throw new OAuthError(
        'provider_unavailable',
        `${what}: the provider answered HTTP ${res.status} (${code}${errorText})`,
        code,
      );
    throw new OAuthError('provider_error', `${what}: the provider answered ${code}${errorText}`, code);
  }
  if (res.status >= 500 || res.status === 429)
    throw new OAuthError('provider_unavailable', `${what}: the provider answered HTTP ${res.status}; try again later`);
  const kindOf = clip(contentType.split(';')[0] || 'no content type', PROVIDER_TEXT_MAX.contentType);
  if (!body)
    throw new OAuthError(
      'bad_response',
      `${what}: the provider answered HTTP ${res.status} with ${kindOf} that is not a token response`,
    );
  if (res.status >= 400)
    throw new OAuthError(
      'provider_error',
      `${what}: the provider answered HTTP ${res.status} without an OAuth error code`,
    );
  // Providers that nest the first token (Slack's authed_user) answer refreshes at the top level:
  // fall back to the top level when the nested object is absent but the top level has a token.
  const nested = pick(body, tokenPath);
  const topLevelToken = tokenPath !== undefined && typeof body['access_token'] === 'string';
  const token = (nested === null || typeof nested !== 'object') && topLevelToken ? body : nested;
  if (token === null || typeof token !== 'object')
    throw new OAuthError('bad_response', `${what}: the token response has no object at "${tokenPath}"`);
  const t = token as Record<string, unknown>;
  const accessToken = t['access_token'];
  if (typeof accessToken !== 'string' || accessToken.length === 0 || accessToken.length > 8192)
    throw new OAuthError(
      'bad_response',
      `${what}: the token response (HTTP ${res.status}, ${kindOf}) has no access_token${tokenPath ? ` under "${tokenPath}"` : ''}`,
    );
  const out: TokenSet = { accessToken };
  if (typeof t['refresh_token'] === 'string' && t['refresh_token'].length > 0) out.refreshToken = t['refresh_token'];
  const expires = numberOf(t['expires_in']);
  if (expires !== undefined) out.expiresInSec = normaliseExpiresIn(expires);
  const scope = t['scope'] ?? body['scope'];
  if (typeof scope === 'string') out.scope = scope;
  else if (Array.isArray(scope)) out.scope = scope.filter((s) => typeof s === 'string').join(' ');
  if (typeof t['token_type'] === 'string') out.tokenType = t['token_type'];
  return out;
}
