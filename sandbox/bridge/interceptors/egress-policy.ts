/**
 * @module sandbox/bridge/interceptors/egress-policy
 * Deny by default, per hop. A request may leave iff:
 *   - the scheme is https (http only for an origin the policy maps to an upstream),
 *   - the URL carries no user:password and no explicit port (unless its origin is mapped),
 *   - the host is declared, exactly, in the manifest's `egress`, and not in `denyHosts`,
 *   - an IP-literal host is an allowed address (DNS names are checked at connect time by the
 *     transport's safe lookup; IP literals never reach a lookup, so they are checked here).
 */
import { BridgeError } from '../bridge-error.js';
import { ipLiteralOf, judgeAddress } from '../address-policy.js';
import { policyHost } from '../normalise-url.js';
import type { Interceptor } from '../types.js';

export function egressPolicy(): Interceptor {
  return (next) =>
    async function egressPolicyStep(req, call) {
      const { url } = req;
      const { policy } = call;
      const where = req.hop === 0 ? '' : `redirect hop ${req.hop}: `;
      const mapped = policy.upstreamMap.has(url.origin);
      if (url.protocol !== 'https:' && !(mapped && url.protocol === 'http:')) {
        throw new BridgeError('GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED', `${where}scheme "${url.protocol}" is not allowed; use https`);
      }
      if (url.username || url.password) throw new BridgeError('GW_ERR_BRIDGE_HOST_NOT_ALLOWED', `${where}URLs with user information are refused`);
      if (url.port !== '' && !mapped) throw new BridgeError('GW_ERR_BRIDGE_HOST_NOT_ALLOWED', `${where}port ${url.port} is not allowed`);
      const host = policyHost(url);
      if (!call.scope.manifest.egress.includes(host)) {
        throw new BridgeError('GW_ERR_BRIDGE_HOST_NOT_ALLOWED', `${where}host "${host.slice(0, 100)}" is not declared in the plugin's egress`);
      }
      if (policy.denyHostSet.has(host)) throw new BridgeError('GW_ERR_BRIDGE_HOST_NOT_ALLOWED', `${where}host "${host}" is denied by policy`);
      const literal = mapped ? undefined : ipLiteralOf(url.hostname);
      if (literal !== undefined) {
        const verdict = judgeAddress(literal, policy.allowedCidrs);
        if (!verdict.allowed) throw new BridgeError('GW_ERR_BRIDGE_ADDRESS_BLOCKED', `${where}address ${literal} is ${verdict.range} and not allowed`);
      }
      return next(req, call);
    };
}
