/**
 * @module sandbox/bridge/interceptors/redact-credentials
 * Outermost step: whatever comes back (status text, headers, body, final URL, error message) is
 * scrubbed of every secret value this call has loaded, in every form `secretForms` knows, before
 * it can travel towards the sandbox; a body that is not UTF-8 text is scrubbed as bytes. Errors
 * that are not `BridgeError`s become a generic network error here, so no library message (which
 * may quote a URL or header) passes through unredacted.
 */
import { BridgeError, isBridgeError } from '../bridge-error.js';
import { escapedSecretPattern, redactBytes, redactHeaders, redactText, secretForms } from '../redaction.js';
import type { Interceptor } from '../types.js';

export function redactCredentials(): Interceptor {
  return (next) =>
    async function redactCredentialsStep(req, call) {
      try {
        const res = await next(req, call);
        const secrets = call.loadedSecrets();
        const forms = secretForms(secrets);
        if (forms.length === 0) return res;
        const escaped = escapedSecretPattern(secrets);
        return {
          ...res,
          statusText: redactText(res.statusText, forms, escaped),
          headers: redactHeaders(res.headers, forms, escaped),
          body: redactText(res.body, forms, escaped),
          bytes: res.bytes && redactBytes(res.bytes, secrets),
          url: redactText(res.url, forms, escaped),
        };
      } catch (e) {
        const secrets = call.loadedSecrets();
        if (isBridgeError(e)) throw new BridgeError(e.code, redactText(e.message, secretForms(secrets), escapedSecretPattern(secrets)));
        throw new BridgeError('GW_ERR_BRIDGE_NETWORK', 'the request failed');
      }
    };
}
