/**
 * @module test/sandbox/worker/memory-bound.test
 * The sandbox's memory stays bounded by design: on the real sandbox (one worker), calls of several
 * plugins that leave garbage behind never leave the worker's idle isolates holding more heap than
 * IDLE_HEAP_BUDGET_MB. Collecting idle isolates between calls (idle-collection.test.ts) reclaims
 * their dead contexts but not what a plugin keeps at module level (here 16 MB each, in every
 * context: a spare holds its own), and six such plugins need more than the budget holds: the bound
 * is reached by disposing idle isolates.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IDLE_HEAP_BUDGET_MB } from '../../../sandbox/worker/isolate-cache.js';
import { moduleOf, useSandbox } from '../../helpers/sandbox/harness.js';

const PLUGINS = 6;
const CALLS_PER_PLUGIN = 60;
const MiB = 1024 * 1024;

/** each context keeps 16 MB (a typed array: external memory), so six plugins pass the budget even before their spare contexts are ready (a loaded machine prepares them late); each call allocates ~1 MB that is garbage once it returns */
const source = (i: number): string =>
  moduleOf(`const table = new Float64Array(2048 * 1024);
async function handler(ctx, args) {
  const junk = Array.from({ length: 8000 }, (_, k) => ({ k, s: 'plugin ${i} ' + k + args.round }));
  return { n: junk.length, plugin: ${i} };
}`);

describe('memory bound of idle isolates', () => {
  const shared = useSandbox({ workers: 1, callsPerWorker: 4, maxWorkerShare: 1, maxQueue: 100 });

  it(`after ${PLUGINS * CALLS_PER_PLUGIN} calls of ${PLUGINS} plugins, idle isolates hold at most ${IDLE_HEAP_BUDGET_MB} MiB`, async () => {
    const codes: Record<string, number> = {};
    let peakIdle = 0;
    for (let round = 0; round < CALLS_PER_PLUGIN; round++) {
      const batch = await Promise.all(
        Array.from({ length: PLUGINS }, (_, i) =>
          shared.run({ name: `mem-plugin-${i}`, source: source(i), args: { round }, limits: { memoryMb: 64 } }),
        ),
      );
      for (const [i, r] of batch.entries()) {
        if (!r.outcome.ok) codes[r.outcome.error.code] = (codes[r.outcome.error.code] ?? 0) + 1;
        else assert.deepEqual(r.result, { n: 8000, plugin: i });
      }
      if (round % 10 === 9) {
        // between rounds nothing runs, but spares may still be in preparation (they count when ready)
        await new Promise((r) => setTimeout(r, 100));
        const stats = await shared.sandbox.memoryStats();
        const w = stats?.workers[0];
        assert.ok(w, 'the worker answered');
        peakIdle = Math.max(peakIdle, w.idleHeld);
        assert.ok(
          w.idleHeld <= IDLE_HEAP_BUDGET_MB * MiB,
          `round ${round}: idle isolates hold ${(w.idleHeld / MiB).toFixed(1)} MiB (budget ${IDLE_HEAP_BUDGET_MB})`,
        );
      }
    }
    assert.deepEqual(codes, {});
    const stats = await shared.sandbox.memoryStats();
    const w = stats?.workers[0];
    assert.ok(w);
    // the bound was reached by disposing isolates, not by the calls leaving nothing behind
    assert.ok(
      w.recycled > 0,
      `no isolate was disposed (${w.isolates} live, peak idle ${(peakIdle / MiB).toFixed(1)} MiB)`,
    );
    assert.ok(w.created > PLUGINS, `isolates created ${w.created}`);
    assert.ok(peakIdle > 0);
  });
});
