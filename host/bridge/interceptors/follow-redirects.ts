/**
 * @module host/bridge/interceptors/follow-redirects
 * Redirects are followed by hand, never by the HTTP client: each hop goes through the inner
 * steps again (egress policy, credential injection, upstream mapping, size cap), so every hop is
 * re-checked and the credential is re-decided per hop (it is never sent to another origin).
 */
import { BridgeError } from '../bridge-error.js';
import type { Interceptor, OutboundRequest } from '../types.js';
import { normaliseUrl } from '../../../common/normalise-url.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];

export function followRedirects(): Interceptor {
  return (next) =>
    async function followRedirectsStep(req, call) {
      let current: OutboundRequest = req;
      for (;;) {
        const res = await next(current, call);
        const location = res.headers['location'];
        if (!REDIRECTS.has(res.status) || location === undefined) return res;
        // the redirect's own body is dropped here: its bytes leave the buffer budget
        current.reservation.release();
        if (current.hop >= call.policy.maxRedirects) {
          throw new BridgeError('GW_ERR_BRIDGE_TOO_MANY_REDIRECTS', `more than ${call.policy.maxRedirects} redirects`);
        }
        let url: URL;
        try {
          url = normaliseUrl(new URL(location, current.url));
        } catch {
          throw new BridgeError(
            'GW_ERR_BRIDGE_NETWORK',
            `hop ${current.hop + 1}: the redirect location is not a valid URL`,
          );
        }
        const toGet = res.status === 303 || ((res.status === 301 || res.status === 302) && current.method === 'POST');
        const headers = { ...current.headers };
        if (toGet) for (const h of BODY_HEADERS) delete headers[h];
        current = {
          ...current,
          url,
          method: toGet && current.method !== 'HEAD' ? 'GET' : current.method,
          headers,
          body: toGet ? undefined : current.body,
          hop: current.hop + 1,
        };
      }
    };
}
