/**
 * @module host/bridge/interceptors/timeout
 * One deadline for the whole request, redirects and body included (`requestTimeoutMs`), merged
 * with the end of its call so that a request dies with its call. One AbortController and one
 * timer per request: `AbortSignal.timeout` + `AbortSignal.any` cost several times more (weakly
 * held timers and composite signals, with their finalizers), on every ctx.http request. The call's
 * end is watched through `call.onEnd`, one listener on the call's signal for all its requests.
 */
import { BridgeError, isBridgeError } from '../bridge-error.js';
import type { Interceptor } from '../types.js';
import { fail } from '../../../contracts/errors.js';

export function timeout(): Interceptor {
  return (next) =>
    async function timeoutStep(req, call) {
      const ms = call.policy.requestTimeoutMs;
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(fail('GW_ERR_BRIDGE_TIMEOUT', { message: `no complete response within ${ms} ms` }));
      }, ms);
      timer.unref();
      const stopWatching = call.onEnd(() => controller.abort(call.scope.signal.reason));
      try {
        return await next({ ...req, signal: controller.signal }, call);
      } catch (e) {
        if (call.scope.signal.aborted)
          throw new BridgeError('GW_ERR_BRIDGE_CALL_ENDED', 'the call this request belongs to is over');
        // a body refused for its size or for want of room failed on its own, whenever the timer fired
        if (
          timedOut &&
          !(isBridgeError(e) && (e.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE' || e.code === 'GW_ERR_BRIDGE_BUSY'))
        ) {
          throw new BridgeError('GW_ERR_BRIDGE_TIMEOUT', `no complete response within ${ms} ms`);
        }
        throw e;
      } finally {
        clearTimeout(timer);
        stopWatching();
      }
    };
}
