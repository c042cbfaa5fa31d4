/**
 * @module host/oauth-server/client-document
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client whose
 * client_id is an https URL publishes its metadata there, and this server fetches it. The fetch is
 * third-party input reaching out from the gateway, so it gets the plugins' egress address rules
 * (the fetch handed in is host/connections' provider fetch: https only, every resolved address
 * public unless the policy's http.allowPrivateCidrs allows it, an origin mapped by the policy's
 * `upstreams` reachable as the operator named it), no redirects followed, status 200 only, a JSON
 * body of at most MAX_DOCUMENT_BYTES read within FETCH_TIMEOUT_MS. The document must name itself:
 * its client_id equal, character for character, to the URL it was fetched from. How long it may
 * be kept comes from its Cache-Control max-age, held between MIN_CACHE_SEC and MAX_CACHE_SEC.
 */
import { checkClientMetadata, MAX_URI_LENGTH, type ClientMetadata } from './client-metadata.js';
import { isOAuthRefusal, refuse } from './oauth-error.js';

/** The draft's recommended bound on what is read (§ Maximum Response Size). */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
export const FETCH_TIMEOUT_MS = 5000;
/** a document is kept at least this long (fewer fetches, and an answer that says no-store is not refetched per request) */
export const MIN_CACHE_SEC = 60;
/** and at most this long: a changed document (a removed redirect URI) is seen within a day */
export const MAX_CACHE_SEC = 86_400;
/** when the document says nothing about caching */
export const DEFAULT_CACHE_SEC = 3600;

export interface ClientDocumentDeps {
  /** a fetch with the egress address rules that does not follow redirects */
  fetch: typeof fetch;
  /** the policy's `upstreams` mapping (tests and staging serve documents from loopback this way) */
  mapUrl: (url: string) => string;
}

/** Whether a client_id is to be read as a Client Identifier URL (this server's own ids never start so). */
export function isClientIdUrl(clientId: string): boolean {
  return clientId.startsWith('https://');
}

/** Why a Client Identifier URL is not one the draft allows (§3), or undefined. */
export function clientIdUrlProblem(clientId: string): string | undefined {
  if (clientId.length > MAX_URI_LENGTH) return `a client_id URL may be at most ${MAX_URI_LENGTH} characters`;
  if (/[\u0000-\u0020\u007f-\u009f\\]/.test(clientId))
    return 'a client_id URL may not hold spaces or control characters';
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'the client_id is not a URL';
  }
  if (url.protocol !== 'https:') return 'a client_id URL must be https';
  if (url.username !== '' || url.password !== '') return 'a client_id URL may not hold a user name or password';
  if (clientId.includes('#')) return 'a client_id URL may not have a fragment';
  if (url.pathname === '/' || url.pathname === '') return 'a client_id URL must have a path';
  const path = clientId.slice(url.origin.length).split(/[?#]/)[0] ?? '';
  if (path.split('/').some((seg) => seg === '.' || seg === '..' || /^%2e(%2e)?$|^\.%2e$|^%2e\.$/i.test(seg)))
    return 'a client_id URL may not have "." or ".." path segments';
  return undefined;
}

/** The seconds a document may be kept, from its Cache-Control header. */
export function cacheSecondsOf(cacheControl: string | null): number {
  if (!cacheControl) return DEFAULT_CACHE_SEC;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return MIN_CACHE_SEC;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  const seconds = maxAge === undefined ? DEFAULT_CACHE_SEC : Number(maxAge.slice('max-age='.length));
  if (!Number.isFinite(seconds)) return DEFAULT_CACHE_SEC;
  return Math.min(MAX_CACHE_SEC, Math.max(MIN_CACHE_SEC, Math.floor(seconds)));
}

/** Reads at most `limit` bytes of a body; undefined when it holds more. */
async function readCapped(res: Response, limit: number): Promise<string | undefined> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const isJsonType = (type: string | null): boolean =>
  type !== null && /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(type.trim());

/** A fetch failure as the person and the client read it: no address, no stack. */
function fetchFailure(clientId: string, err: unknown): never {
  if (isOAuthRefusal(err)) throw err;
  const code = (err as { code?: unknown }).code;
  const why =
    code === 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'
      ? 'its address is not allowed (a private, loopback or link-local address that the policy does not allow)'
      : (err as { name?: unknown }).name === 'TimeoutError'
        ? `it did not answer within ${FETCH_TIMEOUT_MS / 1000} s`
        : 'it could not be reached';
  throw refuse('invalid_client', `The client ID metadata document at ${clientId} could not be fetched: ${why}.`);
}

/**
 * Fetches and checks the metadata document of `clientId` (already checked by clientIdUrlProblem).
 * Throws OAuthRefusal invalid_client saying what is wrong with it.
 */
export async function fetchClientDocument(
  clientId: string,
  deps: ClientDocumentDeps,
): Promise<{ metadata: ClientMetadata; cacheSec: number }> {
  let fetched: { text: string | undefined; cacheControl: string | null };
  try {
    const res = await deps.fetch(deps.mapUrl(clientId), {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw refuse(
        'invalid_client',
        `The client ID metadata document at ${clientId} answered HTTP ${res.status}, not 200.`,
      );
    }
    if (!isJsonType(res.headers.get('content-type'))) {
      await res.body?.cancel();
      throw refuse('invalid_client', `The client ID metadata document at ${clientId} is not served as JSON.`);
    }
    fetched = { text: await readCapped(res, MAX_DOCUMENT_BYTES), cacheControl: res.headers.get('cache-control') };
  } catch (err) {
    fetchFailure(clientId, err);
  }
  if (fetched.text === undefined)
    throw refuse(
      'invalid_client',
      `The client ID metadata document at ${clientId} is larger than ${MAX_DOCUMENT_BYTES} bytes.`,
    );
  return { metadata: checkDocument(clientId, fetched.text), cacheSec: cacheSecondsOf(fetched.cacheControl) };
}

/** The document's metadata, when it is JSON, names this very URL, holds no secret and checks as client metadata. */
function checkDocument(clientId: string, text: string): ClientMetadata {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw refuse('invalid_client', `The client ID metadata document at ${clientId} is not valid JSON.`);
  }
  const fields = (typeof doc === 'object' && doc !== null ? doc : {}) as Record<string, unknown>;
  if (fields['client_id'] !== clientId)
    throw refuse(
      'invalid_client',
      `The client ID metadata document at ${clientId} names another client_id: a document must name the URL it is served at.`,
    );
  if ('client_secret' in fields || 'client_secret_expires_at' in fields)
    throw refuse(
      'invalid_client',
      `The client ID metadata document at ${clientId} holds a client secret, which it may not.`,
    );
  try {
    return checkClientMetadata(doc);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw refuse('invalid_client', `The client ID metadata document at ${clientId} is not valid: ${why}.`);
  }
}
