/**
 * @module host/bridge/interceptors/inject-credential
 * Adds the user's credential to a request, host-side, after the egress policy allowed it, and
 * only when (a) the host is one of `credentialHosts(manifest)` and (b) the hop is still on the
 * origin of the plugin's original request (a redirect to another origin never carries it).
 * The credential is loaded lazily, at most once per call, the first time it is needed.
 * `format` placeholders: `{name}` is the secret value `name`; `{base64:a:b}` is base64("a:b").
 */
import { credentialHosts, INJECT_PLACEHOLDER } from '../../../contracts/manifest.js';
import { BridgeError } from '../bridge-error.js';
import { policyHost } from '../../../common/normalise-url.js';
import type { Credential, Interceptor } from '../types.js';

const PLACEHOLDER = INJECT_PLACEHOLDER;

/** Renders the manifest's format; returns the header value and the secret pieces it contains. */
export function renderCredential(format: string, credential: Credential): { value: string; pieces: string[] } {
  const pieces: string[] = [];
  const value = format.replace(PLACEHOLDER, (_m, a?: string, b?: string, name?: string) => {
    if (name !== undefined) {
      const v = credential.values[name];
      if (typeof v !== 'string')
        throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `the connection has no credential value "${name}"`);
      pieces.push(v);
      return v;
    }
    const left = credential.values[a ?? ''];
    const right = b ? credential.values[b] : '';
    if (typeof left !== 'string' || typeof right !== 'string') {
      throw new BridgeError(
        'GW_ERR_BRIDGE_BAD_REQUEST',
        `the connection has no credential value "${typeof left !== 'string' ? a : b}"`,
      );
    }
    const encoded = Buffer.from(`${left}:${right}`, 'utf8').toString('base64');
    pieces.push(left, right, encoded);
    return encoded;
  });
  if (/[\r\n\0]/.test(value))
    throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', 'the credential is not a valid header value');
  return { value, pieces };
}

export function injectCredential(): Interceptor {
  return (next) =>
    async function injectCredentialStep(req, call) {
      const { manifest } = call.scope;
      if (manifest.auth.type === 'none') return next(req, call);
      const sameOrigin = req.hop === 0 || req.url.origin === req.initialOrigin;
      if (!sameOrigin || !credentialHosts(manifest).includes(policyHost(req.url))) return next(req, call);
      // a partial answer (206) could cut a quoted credential into pieces redaction cannot match
      if (req.headers['range'] !== undefined || req.headers['if-range'] !== undefined)
        throw new BridgeError(
          'GW_ERR_BRIDGE_BAD_REQUEST',
          "Range requests are not allowed where the connection's credential is sent",
        );
      const credential = await call.credential();
      if (!credential) return next(req, call);
      const { value, pieces } = renderCredential(manifest.auth.inject.format, credential);
      for (const p of [value, ...pieces]) call.addSecret(p);
      return next({ ...req, headers: { ...req.headers, [manifest.auth.inject.header.toLowerCase()]: value } }, call);
    };
}
