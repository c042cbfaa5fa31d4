/**
 * @module host/bridge/compose
 * Folds interceptors over a terminal step, undici-style: `compose(a, b, c)(transport)` runs `a`
 * first on the way out and last on the way back.
 */
import type { Interceptor, Step } from './types.js';

export function compose(...interceptors: Interceptor[]): (terminal: Step) => Step {
  return (terminal) => interceptors.reduceRight<Step>((next, interceptor) => {
    const step = interceptor(next);
    if (typeof step !== 'function') throw new TypeError('invalid interceptor: it must return a step function');
    return step;
  }, terminal);
}
