/**
 * @module sandbox/bridge/interceptors/timeout
 * One deadline for the whole request, redirects and body included (`requestTimeoutMs`), merged
 * with the call's own signal so that a request dies with its call.
 */
import { BridgeError, isBridgeError } from '../bridge-error.js';
import type { Interceptor } from '../types.js';

export function timeout(): Interceptor {
  return (next) =>
    async function timeoutStep(req, call) {
      const ms = call.policy.requestTimeoutMs;
      const timer = AbortSignal.timeout(ms);
      const signal = AbortSignal.any([req.signal, timer]);
      try {
        return await next({ ...req, signal }, call);
      } catch (e) {
        if (req.signal.aborted) throw new BridgeError('GW_ERR_BRIDGE_CALL_ENDED', 'the call this request belongs to is over');
        if (timer.aborted && !(isBridgeError(e) && e.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE')) {
          throw new BridgeError('GW_ERR_BRIDGE_TIMEOUT', `no complete response within ${ms} ms`);
        }
        throw e;
      }
    };
}
