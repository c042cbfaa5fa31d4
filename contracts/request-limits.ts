/**
 * @module contracts/request-limits
 * The size limits of one ctx.http request, shared by every place that checks them. The host's
 * bridge (validate-request) is the authority, but a request refused only there has already been
 * serialised in the isolate, copied into the worker, relayed by the sandbox process and parsed by
 * the host at full size: a plugin sending 20 MB bodies in a loop kept the host busy for everyone.
 * So the sandbox refuses an oversized request before it leaves: the isolate's bootstrap on the
 * request's parts before serialising it, and the worker on the serialised text and again on its
 * parts (the bootstrap is untrusted-side code). They answer with the code and wording the host
 * would use, so a plugin cannot tell where a request was refused.
 *
 * The body cap comes from the policy (`http.maxRequestBodyBytes`, carried per call in
 * SandboxLimits); the others are fixed.
 */
import { normaliseUrl } from '../common/normalise-url.js';

/** longest URL, in characters, after WHATWG parsing (checked by the host on the parsed URL) */
export const MAX_URL_CHARS = 8192;
/**
 * Longest URL TEXT the isolate sends. Parsing can shorten a URL (tabs and newlines are removed,
 * dot segments resolved), so the raw text gets room to spare; the worker parses anything longer
 * than MAX_URL_CHARS.
 */
export const MAX_URL_TEXT_CHARS = 4 * MAX_URL_CHARS;
export const MAX_HEADERS = 64;
/** longest header name: longer names are not valid tokens for the host */
export const MAX_HEADER_NAME_CHARS = 256;
export const MAX_HEADER_VALUE_CHARS = 8192;
/** longest method text; the longest method the host accepts is OPTIONS */
export const MAX_METHOD_CHARS = 16;

/** The messages, word for word the same in the isolate, the worker and the host. */
export const requestLimitMessage = {
  url: (): string => `the URL is longer than ${MAX_URL_CHARS} characters`,
  headerCount: (): string => `at most ${MAX_HEADERS} headers are allowed`,
  headerName: (name: string): string => `"${name.slice(0, 40)}" is not a valid header name`,
  headerValue: (name: string): string =>
    `header "${name.slice(0, 40)}" is longer than ${MAX_HEADER_VALUE_CHARS} characters`,
  method: (method: string): string => `method "${method.slice(0, 20)}" is not supported`,
  body: (bytes: number, max: number): string => `the request body is ${bytes} bytes; the limit is ${max}`,
};

/**
 * Longest serialised request (JSON text, in UTF-16 units) a request within every limit can take:
 * JSON escaping makes a character at most 6 long (`\u001f`, a lone surrogate); a body of at most
 * `maxBodyBytes` UTF-8 bytes has at most as many UTF-16 units, and a binary body's base64 4/3 of its
 * bytes (never escaped); 1024 covers the punctuation and keys.
 */
export function maxRequestTextChars(maxBodyBytes: number): number {
  return (
    6 *
      (maxBodyBytes +
        MAX_URL_TEXT_CHARS +
        MAX_METHOD_CHARS +
        MAX_HEADERS * (MAX_HEADER_NAME_CHARS + MAX_HEADER_VALUE_CHARS)) +
    1024
  );
}

/**
 * Why the sandbox refuses this request (as parsed from the isolate's text), or undefined. Only
 * sizes are judged here; everything else the host checks. Cheap: a URL is parsed only when its
 * text is longer than MAX_URL_CHARS, a body's UTF-8 length is counted only when it could be over.
 */
export function oversizedRequest(
  req: { url?: unknown; method?: unknown; headers?: unknown; body?: unknown; bodyBase64?: unknown },
  maxBodyBytes: number,
): string | undefined {
  if (typeof req.method === 'string' && req.method.length > MAX_METHOD_CHARS)
    return requestLimitMessage.method(req.method);
  if (typeof req.url === 'string' && req.url.length > MAX_URL_CHARS) {
    let href: string | undefined;
    try {
      href = normaliseUrl(req.url).href;
    } catch {
      href = undefined; // not a URL, and longer than any URL may be
    }
    if (href === undefined || href.length > MAX_URL_CHARS) return requestLimitMessage.url();
  }
  if (typeof req.headers === 'object' && req.headers !== null) {
    const headers = req.headers as Record<string, unknown>;
    const names = Object.keys(headers);
    if (names.length > MAX_HEADERS) return requestLimitMessage.headerCount();
    for (const name of names) {
      if (name.length > MAX_HEADER_NAME_CHARS) return requestLimitMessage.headerName(name);
      const value = headers[name];
      if (typeof value === 'string' && value.length > MAX_HEADER_VALUE_CHARS)
        return requestLimitMessage.headerValue(name);
    }
  }
  // UTF-8 takes 1 to 3 bytes per UTF-16 unit: only a body longer than a third of the cap can be over
  if (typeof req.body === 'string' && req.body.length * 3 > maxBodyBytes) {
    const bytes = Buffer.byteLength(req.body, 'utf8');
    if (bytes > maxBodyBytes) return requestLimitMessage.body(bytes, maxBodyBytes);
  }
  if (typeof req.bodyBase64 === 'string') {
    const bytes = base64ByteLength(req.bodyBase64);
    if (bytes > maxBodyBytes) return requestLimitMessage.body(bytes, maxBodyBytes);
  }
  return undefined;
}

/** The bytes a padded base64 text holds (3 for every 4 characters, less one per `=`), without decoding it. */
export function base64ByteLength(base64: string): number {
  const n = base64.length;
  const padding = n > 0 && base64.charCodeAt(n - 1) === 0x3d ? (n > 1 && base64.charCodeAt(n - 2) === 0x3d ? 2 : 1) : 0;
  return Math.max(0, Math.floor((n * 3) / 4) - padding);
}
