/**
 * @module host/bridge/interceptors/egress-policy
 * Deny by default, per hop. A request may leave iff:
 *   - the scheme is https (http only for an origin the policy maps to an upstream, or for the
 *     connection's own instance where the policy's allowHttpInstances allows it),
 *   - the URL carries no user:password and no explicit port (unless its origin is mapped, or is the
 *     connection's instance, whose origin may name one),
 *   - the host is declared, exactly, in the manifest's `egress`, or the origin is the connection's
 *     own instance (scope.instance: checked at connect time, and here as any declared host), or the manifest allows any public
 *     host (`egressAnyPublicHost`: the request is then marked `anyHost`, gets no credential and
 *     may reach public addresses only), and it is not in `denyHosts`,
 *   - an IP-literal host is an allowed address (DNS names are checked at connect time by the
 *     transport's safe lookup; IP literals never reach a lookup, so they are checked here).
 * A refusal quotes the URL's parts only for the plugin's own request. At a redirect hop the upstream
 * chose them (an upstream that echoes the credential can redirect to `https://<credential>.example/`,
 * which URL parsing lower-cases or punycodes); redaction removes those forms too, but plugin code
 * needs to know which rule refused, not the upstream's text, so none is quoted.
 */
import { BridgeError } from '../bridge-error.js';
import { ipLiteralOf, judgeAddress } from '../address-policy.js';
import { policyHost } from '../../../common/normalise-url.js';
import type { Interceptor, OutboundRequest } from '../types.js';

/** `scheme "ftp:"` for the plugin's own request; `the redirect's scheme` at a redirect hop. */
function named(req: OutboundRequest, part: string, value: string): string {
  return req.hop === 0 ? `${part} ${value}` : `the redirect's ${part}`;
}

export function egressPolicy(): Interceptor {
  return (next) =>
    async function egressPolicyStep(req, call) {
      const { url } = req;
      const { policy } = call;
      const where = req.hop === 0 ? '' : `redirect hop ${req.hop}: `;
      const mapped = policy.upstreamMap.has(url.origin);
      const instance = call.scope.instance !== undefined && url.origin === call.scope.instance;
      const httpAllowed = mapped || (instance && policy.allowHttpInstances === true);
      if (url.protocol !== 'https:' && !(httpAllowed && url.protocol === 'http:')) {
        throw new BridgeError(
          'GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED',
          `${where}${named(req, 'scheme', `"${url.protocol}"`)} is not allowed; use https`,
        );
      }
      if (url.username || url.password)
        throw new BridgeError('GW_ERR_BRIDGE_HOST_NOT_ALLOWED', `${where}URLs with user information are refused`);
      if (url.port !== '' && !mapped && !instance)
        throw new BridgeError(
          'GW_ERR_BRIDGE_HOST_NOT_ALLOWED',
          `${where}${named(req, 'port', url.port)} is not allowed`,
        );
      const host = policyHost(url);
      const declared = instance || call.scope.manifest.egress.includes(host);
      // an undeclared host of a plugin that may reach any public one: no credential, public addresses only
      const anyHost = !declared && call.scope.manifest.egressAnyPublicHost === true;
      if (!declared && !anyHost) {
        throw new BridgeError(
          'GW_ERR_BRIDGE_HOST_NOT_ALLOWED',
          `${where}${named(req, 'host', `"${host.slice(0, 100)}"`)} is not declared in the plugin's egress`,
        );
      }
      if (policy.denyHostSet.has(host))
        throw new BridgeError('GW_ERR_BRIDGE_HOST_NOT_ALLOWED', `${where}host "${host}" is denied by policy`);
      const literal = mapped ? undefined : ipLiteralOf(url.hostname);
      if (literal !== undefined) {
        const verdict = judgeAddress(literal, anyHost ? [] : policy.allowedCidrs);
        if (!verdict.allowed)
          throw new BridgeError(
            'GW_ERR_BRIDGE_ADDRESS_BLOCKED',
            `${where}${named(req, 'address', literal)} is ${verdict.range} and not allowed`,
          );
      }
      return next(anyHost ? { ...req, anyHost } : req, call);
    };
}
