/**
 * @module test/sandbox/process/plugin-affinity.test
 * Calls go to their plugin's home worker when it is idle (sandbox/process/balancer.ts, alone in
 * balancer.unit.test.ts), on the real sandbox: ten plugins called in turn on two workers stay warm,
 * where one worker (8 idle isolates at most) would evict the isolate the next call needs every time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_IDLE_ISOLATES } from '../../../sandbox/worker/isolate-cache.js';
import { moduleOf, useSandbox } from '../../helpers/sandbox/harness.js';

describe('plugin affinity on the real sandbox', () => {
  const PLUGINS = 10;
  const shared = useSandbox({ workers: 2, callsPerWorker: 1, maxWorkerShare: 1, maxQueue: 10 });

  it(`${PLUGINS} plugins called in turn (more than the ${MAX_IDLE_ISOLATES} idle isolates a worker keeps) stay warm on two workers`, async () => {
    const source = (i: number): string =>
      moduleOf(`async function handler(ctx, args) { return { plugin: ${i}, round: args.round }; }`);
    const cold: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < PLUGINS; i++) {
        const r = await shared.run({ name: `turn-${i}`, source: source(i), args: { round } });
        assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
        assert.deepEqual(r.result, { plugin: i, round });
        if (r.outcome.stats.coldStart) cold.push(`${round}:${i}`);
      }
    }
    // each plugin starts cold once, on its home worker; without homes every call here starts cold
    assert.ok(cold.length <= PLUGINS + 2, `cold starts ${cold.length}: ${cold.join(' ')}`);
    const stats = await shared.sandbox.memoryStats();
    assert.ok(stats);
    assert.equal(stats.workers.filter((w) => w.isolates > 0).length, 2, 'both workers hold isolates');
  });
});
