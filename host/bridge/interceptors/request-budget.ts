/**
 * @module host/bridge/interceptors/request-budget
 * Counts requests per call (`scope.requestCount`, shared by all requests of the call) and refuses
 * them once `scope.maxRequests` is reached or the call is over. Redirect hops are not counted.
 */
import { BridgeError } from '../bridge-error.js';
import type { Interceptor } from '../types.js';

export function requestBudget(): Interceptor {
  return (next) =>
    async function requestBudgetStep(req, call) {
      const { scope } = call;
      if (scope.signal.aborted)
        throw new BridgeError('GW_ERR_BRIDGE_CALL_ENDED', 'the call this request belongs to is over');
      if (scope.requestCount.n >= scope.maxRequests) {
        throw new BridgeError(
          'GW_ERR_BRIDGE_TOO_MANY_REQUESTS',
          `a call may make at most ${scope.maxRequests} requests`,
        );
      }
      scope.requestCount.n++;
      return next(req, call);
    };
}
