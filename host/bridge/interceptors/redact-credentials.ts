/**
 * @module host/bridge/interceptors/redact-credentials
 * Outermost step: whatever comes back (status text, header names and values, body, final URL,
 * error message) is scrubbed of every secret value this call has loaded, in every form `Redactor`
 * knows and in any case, before it can travel towards the sandbox; a body that is not UTF-8 text
 * is scrubbed as bytes. Errors that are not `BridgeError`s become a generic network error here, so
 * no library message (which may quote a URL or header) passes through unredacted.
 */
import { BridgeError, isBridgeError } from '../bridge-error.js';
import { Redactor } from '../redaction.js';
import type { CallContext, Interceptor } from '../types.js';

/** One redactor per call, rebuilt only when the call has loaded more secrets (its patterns are compiled once). */
const redactors = new WeakMap<CallContext, { count: number; redactor: Redactor | undefined }>();

function redactorFor(call: CallContext): Redactor | undefined {
  const secrets = call.loadedSecrets();
  const cached = redactors.get(call);
  if (cached && cached.count === secrets.length) return cached.redactor;
  const redactor = Redactor.of(secrets);
  redactors.set(call, { count: secrets.length, redactor });
  return redactor;
}

export function redactCredentials(): Interceptor {
  return (next) =>
    async function redactCredentialsStep(req, call) {
      try {
        const res = await next(req, call);
        const redactor = redactorFor(call);
        if (!redactor) return res;
        return {
          ...res,
          statusText: redactor.text(res.statusText),
          headers: redactor.headers(res.headers),
          body: redactor.text(res.body),
          bytes: res.bytes && redactor.bytes(res.bytes),
          url: redactor.text(res.url),
        };
      } catch (e) {
        if (!isBridgeError(e)) throw new BridgeError('GW_ERR_BRIDGE_NETWORK', 'the request failed');
        const redactor = redactorFor(call);
        throw redactor ? new BridgeError(e.code, redactor.text(e.message)) : e;
      }
    };
}
