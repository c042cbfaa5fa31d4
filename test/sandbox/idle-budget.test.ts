/**
 * @module test/sandbox/idle-budget.test
 * The per-worker idle budget (IDLE_HEAP_BUDGET_MB) on the real sandbox, one worker so that every
 * call lands on the same isolates. An isolate of a catalog plugin's size holds ~3.5 MiB committed
 * after a collection and up to COLLECT_AT_MB more before its next, so as many such plugins as a
 * worker keeps idle (MAX_IDLE_ISOLATES) needed more than the 32 MiB budget of before, and go over
 * any budget every few calls as garbage piles up. The budget holds them, and over it the worker
 * collects isolates holding garbage before it disposes any: plugins called in turn keep their
 * isolates. (With 32 MiB and disposal first, 8 such plugins in turn: 86 cold starts in 3,000 calls;
 * with 48 MiB and disposal first, 2 in 400.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBridge, createSandbox, type Bridge } from '../../sandbox/index.js';
import { IDLE_HEAP_BUDGET_MB, MAX_IDLE_ISOLATES } from '../../sandbox/worker/isolate-cache.js';
import { callTool, egressPolicy, moduleOf } from './helpers/harness.js';

/** a module of a catalog plugin's size (~38 KB, most of it a comment); each call leaves garbage */
const catalogSized = (i: number): string =>
  moduleOf(`async function handler(ctx, args) {
  const junk = Array.from({ length: 200 }, (_, k) => ({ k, s: 'plugin ${i} ' + k + args.round }));
  return { n: junk.length, plugin: ${i} };
}
/* ${'x'.repeat(38 * 1024)} */`);

let bridge: Bridge;
before(() => {
  bridge = createBridge(egressPolicy());
});
after(async () => {
  await bridge?.close();
});

/** calls `plugins` catalog-sized plugins in turn, `rounds` times; returns the rounds that started cold */
async function inTurn(sandbox: Awaited<ReturnType<typeof createSandbox>>, plugins: number, rounds: number): Promise<string[]> {
  const cold: string[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < plugins; i++) {
      const r = await callTool(sandbox, bridge, { name: `catalog-${i}`, source: catalogSized(i), args: { round }, limits: { memoryMb: 64 } });
      assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
      assert.deepEqual(r.result, { n: 200, plugin: i });
      if (r.outcome.stats.coldStart && round > 0) cold.push(`plugin ${i} round ${round}`);
    }
  }
  return cold;
}

describe('over the idle budget, the isolates plugins need are kept', () => {
  it(`${MAX_IDLE_ISOLATES} catalog-sized plugins in turn: over the budget, isolates are collected, none disposed`, async () => {
    const sandbox = await createSandbox({ workers: 1, callsPerWorker: 1, maxWorkerShare: 1, maxQueue: 10 });
    try {
      const cold = await inTurn(sandbox, MAX_IDLE_ISOLATES, 50);
      await new Promise((resolve) => setTimeout(resolve, 100)); // the last spare is prepared and counted
      const w = (await sandbox.memoryStats())?.workers[0];
      assert.ok(w, 'the worker answered');
      assert.deepEqual(cold, [], `cold starts after the first round (isolates disposed for memory: ${w.recycled}, collected ${w.collected} times)`);
      assert.equal(w.recycled, 0, 'no isolate disposed for memory');
      assert.equal(w.created, MAX_IDLE_ISOLATES, 'one isolate per plugin');
      assert.ok(w.idleHeld <= IDLE_HEAP_BUDGET_MB * 1024 * 1024, `idle isolates hold ${w.idleHeld} bytes`);
    } finally {
      await sandbox.close();
    }
  });
});
