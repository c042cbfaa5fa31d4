/**
 * @module bench/closed-loop
 * Drives an operation from N concurrent loops (closed loop: each loop starts its next operation
 * when the previous one ends), bounded both in time and in count. Operations that finish during
 * the warm-up are not recorded. An operation reports failure by throwing; failures are counted and
 * the first message is kept, so a broken case shows up in the table instead of as a fast number.
 */
import { LatencyRecorder, type LatencySummary } from './latency.js';

export interface LoadOptions {
  concurrency: number;
  /** measured time, after the warm-up */
  durationMs: number;
  warmupMs: number;
  /** stop after this many measured operations even if time is left */
  maxOps: number;
  /** units of work per operation (executions per batch), for the per-execution throughput */
  unitsPerOp: number;
}

export interface LoadResult {
  concurrency: number;
  ops: number;
  errors: number;
  firstError?: string;
  seconds: number;
  /** operations (requests or batches) per second */
  opsPerSec: number;
  /** executions per second (ops × unitsPerOp) */
  execPerSec: number;
  latencyMs: LatencySummary;
}

export async function runClosedLoop(options: LoadOptions, op: (loop: number) => Promise<void>): Promise<LoadResult> {
  const rec = new LatencyRecorder();
  const t0 = performance.now();
  const measureFrom = t0 + options.warmupMs;
  const stopAt = measureFrom + options.durationMs;
  let started = 0;
  let measured = 0;
  let errors = 0;
  let firstError: string | undefined;
  let lastEnd = measureFrom;

  const loop = async (id: number): Promise<void> => {
    for (;;) {
      const start = performance.now();
      if (start >= stopAt) return;
      const counted = start >= measureFrom;
      if (counted) {
        if (started >= options.maxOps) return;
        started++;
      }
      let failed = false;
      try {
        await op(id);
      } catch (err) {
        failed = true;
        if (firstError === undefined) firstError = err instanceof Error ? err.message : String(err);
      }
      const end = performance.now();
      if (counted) {
        measured++;
        lastEnd = Math.max(lastEnd, end);
        if (failed) errors++;
        else rec.record(end - start);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => loop(i)));
  const seconds = Math.max(1e-9, (lastEnd - measureFrom) / 1000);
  const ok = measured - errors;
  const result: LoadResult = {
    concurrency: options.concurrency,
    ops: measured,
    errors,
    seconds,
    opsPerSec: ok / seconds,
    execPerSec: (ok * options.unitsPerOp) / seconds,
    latencyMs: rec.summary(),
  };
  if (firstError !== undefined) result.firstError = firstError.slice(0, 300);
  return result;
}

export interface PairedResult {
  a: LatencySummary;
  b: LatencySummary;
  errors: number;
  firstError?: string;
}

/**
 * Runs `a` and `b` `count` times each, one call at a time and interleaved (a b, b a, a b, …), so
 * that both see the same machine load; the first `warmup` pairs are not recorded.
 */
export async function runPaired(
  count: number,
  warmup: number,
  a: () => Promise<void>,
  b: () => Promise<void>,
): Promise<PairedResult> {
  const recA = new LatencyRecorder();
  const recB = new LatencyRecorder();
  let errors = 0;
  let firstError: string | undefined;
  const timed = async (op: () => Promise<void>, rec: LatencyRecorder, record: boolean): Promise<void> => {
    const start = performance.now();
    try {
      await op();
      if (record) rec.record(performance.now() - start);
    } catch (err) {
      if (record) errors++;
      if (firstError === undefined) firstError = err instanceof Error ? err.message : String(err);
    }
  };
  for (let i = 0; i < warmup + count; i++) {
    const record = i >= warmup;
    if (i % 2 === 0) {
      await timed(a, recA, record);
      await timed(b, recB, record);
    } else {
      await timed(b, recB, record);
      await timed(a, recA, record);
    }
  }
  return {
    a: recA.summary(),
    b: recB.summary(),
    errors,
    ...(firstError !== undefined ? { firstError: firstError.slice(0, 300) } : {}),
  };
}
