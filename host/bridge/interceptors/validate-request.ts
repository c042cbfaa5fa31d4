/**
 * @module host/bridge/interceptors/validate-request
 * Checks the method, headers and body the plugin asked for. Headers that carry credentials or
 * steer routing (authorization, cookie, host, forwarded, proxy-*, hop-by-hop headers, the
 * manifest's credential header), any CR/LF/NUL, and any other character a header value cannot
 * carry (other control characters, anything past U+00FF: a stack that kept one byte of U+010D
 * U+010A would send CR LF) are refused with GW_ERR_BRIDGE_BAD_REQUEST: refusing is louder than
 * dropping, so a plugin author sees the mistake at once.
 *
 * The size limits (URL, headers, body) are checked here as the authority, and before that inside
 * the sandbox, with the same wording (contracts/request-limits), so an oversized request does not
 * cross into the host at all unless the sandbox is broken.
 */
import { isForbiddenHeader } from '../../../contracts/forbidden-headers.js';
import {
  MAX_HEADER_VALUE_CHARS,
  MAX_HEADERS,
  MAX_URL_CHARS,
  requestLimitMessage,
} from '../../../contracts/request-limits.js';
import { BridgeError } from '../bridge-error.js';
import type { Interceptor } from '../types.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
/** dropped silently: the bridge negotiates and decodes content encodings itself */
const IGNORED = new Set(['accept-encoding']);
/** what an HTTP header value may not hold besides CR, LF and NUL: control characters but tab, DEL, and anything past Latin-1 */
// The control characters are the point.
const NOT_FIELD_TEXT = /[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f\u0100-\uffff]/;

/** The refusal of a header value holding a character no header can carry, naming it and what to do. */
function unsendable(name: string, value: string): string | undefined {
  const at = value.search(NOT_FIELD_TEXT);
  if (at < 0) return undefined;
  const code = value.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0');
  return `header "${name}" has a character no HTTP header can carry (U+${code} at ${at}): percent-encode text beyond Latin-1, or send it in the body`;
}

export function validateRequest(): Interceptor {
  return (next) =>
    async function validateRequestStep(req, call) {
      const method = req.method.toUpperCase();
      if (!METHODS.has(method))
        throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', requestLimitMessage.method(req.method));
      if (req.url.href.length > MAX_URL_CHARS)
        throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', requestLimitMessage.url());
      const auth = call.scope.manifest.auth;
      const credentialHeader =
        auth.type === 'none' ? undefined : auth.type === 'cookie' ? 'cookie' : auth.inject.header.toLowerCase();
      const entries = Object.entries(req.headers);
      if (entries.length > MAX_HEADERS)
        throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', requestLimitMessage.headerCount());
      const headers: Record<string, string> = {};
      for (const [rawName, value] of entries) {
        const name = rawName.toLowerCase();
        if (!TOKEN.test(name))
          throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', requestLimitMessage.headerName(rawName));
        if (typeof value === 'string' && value.length > MAX_HEADER_VALUE_CHARS)
          throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', requestLimitMessage.headerValue(name));
        if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
          throw new BridgeError(
            'GW_ERR_BRIDGE_BAD_REQUEST',
            `header "${name}" has an invalid value (CR, LF and NUL are refused)`,
          );
        }
        const refusal = unsendable(name, value);
        if (refusal) throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', refusal);
        if (isForbiddenHeader(name) || name === credentialHeader) {
          throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `header "${name}" may not be set by plugin code`);
        }
        if (!IGNORED.has(name)) headers[name] = value;
      }
      if (req.body !== undefined) {
        if (method === 'GET' || method === 'HEAD')
          throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `a ${method} request cannot have a body`);
        const bytes = typeof req.body === 'string' ? Buffer.byteLength(req.body, 'utf8') : req.body.byteLength;
        const max = call.policy.maxRequestBodyBytes;
        if (bytes > max) throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', requestLimitMessage.body(bytes, max));
      }
      return next({ ...req, method, headers }, call);
    };
}
