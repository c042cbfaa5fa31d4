/**
 * @module sandbox/worker/busy-mark
 * What this worker's thread is doing synchronously inside an isolate, shared with the sandbox
 * process's main thread (the buffer goes over once with WorkerHello).
 *
 * V8 does not stop for a time limit in some work (compiling a regular expression that outgrows the
 * isolate's memory kept retrying inside the compiler), and a synchronous isolated-vm call doing
 * that work holds this thread: the worker stops answering, and neither the call's own deadline nor
 * isolated-vm's report of a lost isolate runs here any more. Every such synchronous stretch is
 * marked with the call it works for and how long it may take; the main thread reads the mark
 * (process-main.ts, `watchWorkers`), and a mark that outlives its budget names the call whose work
 * wedged the worker, so that its plugin alone is blamed instead of every plugin in flight.
 *
 * Cells (Int32): the call's id as an Int32 (`markOf`; 0: nothing marked), a sequence number bumped at every mark and
 * unmark (a mark seen twice with the same sequence is the same stretch), the budget in ms. A mark
 * costs three atomic stores; stretches are never nested (each is one synchronous region).
 */
export const MARK_CALL = 0;
export const MARK_SEQ = 1;
export const MARK_BUDGET = 2;
const CELLS = 3;

/** stands for work that belongs to no call (none is marked with it) */
export const NO_CALL = 0;

/** A call's id as the mark holds it (ids count up for the process's life and may pass 2^31). */
export const markOf = (callId: number): number => callId | 0;

/** the most a budget may say (Int32) */
const MAX_BUDGET_MS = 0x7fffffff;

const buffer = new SharedArrayBuffer(CELLS * Int32Array.BYTES_PER_ELEMENT);
const cells = new Int32Array(buffer);

/** This worker's mark, for the main thread. */
export const markBuffer: SharedArrayBuffer = buffer;

/**
 * Runs `work` (synchronous work in an isolate, for call `callId`) with the worker's mark set: it
 * may hold this thread for about `budgetMs`, after which the main thread takes the worker to be
 * wedged by that call.
 */
export function marked<T>(callId: number, budgetMs: number, work: () => T): T {
  const mark = markOf(callId);
  if (mark === NO_CALL) return work();
  Atomics.store(cells, MARK_BUDGET, Math.max(0, Math.min(MAX_BUDGET_MS, Math.ceil(budgetMs))));
  Atomics.store(cells, MARK_CALL, mark);
  Atomics.add(cells, MARK_SEQ, 1);
  try {
    return work();
  } finally {
    Atomics.store(cells, MARK_CALL, NO_CALL);
    Atomics.add(cells, MARK_SEQ, 1);
  }
}
