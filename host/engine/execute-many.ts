/**
 * @module host/engine/execute-many
 * A batch: at most `concurrency` (8) executions in flight, results index-aligned with the
 * requests (each worker writes to the index it claimed), never throwing.
 */
import { setMaxListeners } from 'node:events';
import { executeSingle, type Caller, type EngineDeps } from './execute-single.js';
import type { ExecutionItem, ExecutionRequest } from './outcomes.js';

export const BATCH_CONCURRENCY = 8;

export async function executeMany(
  deps: EngineDeps,
  caller: Caller,
  executions: readonly ExecutionRequest[],
  onItemDone?: (done: number, total: number) => void,
  concurrency = BATCH_CONCURRENCY,
): Promise<ExecutionItem[]> {
  // Each execution in flight listens on the cancellation signal twice (its running call, and its
  // wait for a sandbox slot): more than Node's default of 10 before it warns of a leak.
  if (caller.signal) setMaxListeners(2 * concurrency + 8, caller.signal);
  const results = new Array<ExecutionItem>(executions.length);
  const batchCaller: Caller = {
    ...caller,
    resultBudget: caller.resultBudget ?? { remaining: deps.policy.requests.maxBatchResultBytes },
  };
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const index = next++;
      if (index >= executions.length) return;
      const execution = executions[index] as ExecutionRequest;
      try {
        results[index] = await executeSingle(deps, batchCaller, execution);
      } catch {
        // executeSingle never throws; this guards the batch invariant (one item per execution).
        results[index] = { error: `Internal error (request ${caller.requestId})`, code: 'GW_ERR_ENGINE_INTERNAL' };
      }
      done++;
      try {
        onItemDone?.(done, executions.length);
      } catch {
        // progress is best effort and must not lose an item
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, executions.length) }, worker));
  return results;
}
