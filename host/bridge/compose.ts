/**
 * @module host/bridge/compose
 * Folds interceptors over a terminal step, undici-style: `compose(a, b, c)(transport)` runs `a`
 * first on the way out and last on the way back.
 */
import type { Interceptor, Step } from './types.js';
import { fail } from '../../contracts/errors.js';

export function compose(...interceptors: Interceptor[]): (terminal: Step) => Step {
  return (terminal) =>
    interceptors.reduceRight<Step>((next, interceptor) => {
      const step = interceptor(next);
      if (typeof step !== 'function')
        throw fail('GW_ERR_INTERNAL_INVARIANT', { message: 'invalid interceptor: it must return a step function' });
      return step;
    }, terminal);
}
