/**
 * @module sandbox/bridge/interceptors/validate-request
 * Checks the method, headers and body the plugin asked for. Headers that carry credentials or
 * steer routing (authorization, cookie, host, forwarded, proxy-*, hop-by-hop headers, the
 * manifest's credential header) and any CR/LF/NUL are refused with GW_ERR_BRIDGE_BAD_REQUEST:
 * refusing is louder than dropping, so a plugin author sees the mistake at once.
 */
import { isForbiddenHeader } from '../../forbidden-headers.js';
import { BridgeError } from '../bridge-error.js';
import type { Interceptor } from '../types.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
/** dropped silently: the bridge negotiates and decodes content encodings itself */
const IGNORED = new Set(['accept-encoding']);
const MAX_HEADERS = 64;
const MAX_HEADER_VALUE = 8192;
const MAX_URL = 8192;

export function validateRequest(): Interceptor {
  return (next) =>
    async function validateRequestStep(req, call) {
      const method = req.method.toUpperCase();
      if (!METHODS.has(method)) throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `method "${req.method.slice(0, 20)}" is not supported`);
      if (req.url.href.length > MAX_URL) throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `the URL is longer than ${MAX_URL} characters`);
      const auth = call.scope.manifest.auth;
      const credentialHeader = auth.type === 'none' ? undefined : auth.inject.header.toLowerCase();
      const entries = Object.entries(req.headers);
      if (entries.length > MAX_HEADERS) throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `at most ${MAX_HEADERS} headers are allowed`);
      const headers: Record<string, string> = {};
      for (const [rawName, value] of entries) {
        const name = rawName.toLowerCase();
        if (!TOKEN.test(name)) throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `"${rawName.slice(0, 40)}" is not a valid header name`);
        if (typeof value !== 'string' || /[\r\n\0]/.test(value) || value.length > MAX_HEADER_VALUE) {
          throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `header "${name}" has an invalid value (CR, LF and NUL are refused)`);
        }
        if (isForbiddenHeader(name) || name === credentialHeader) {
          throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `header "${name}" may not be set by plugin code`);
        }
        if (!IGNORED.has(name)) headers[name] = value;
      }
      if (req.body !== undefined) {
        if (method === 'GET' || method === 'HEAD') throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `a ${method} request cannot have a body`);
        const bytes = Buffer.byteLength(req.body, 'utf8');
        const max = call.policy.maxRequestBodyBytes;
        if (bytes > max) throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `the request body is ${bytes} bytes; the limit is ${max}`);
      }
      return next({ ...req, method, headers }, call);
    };
}
