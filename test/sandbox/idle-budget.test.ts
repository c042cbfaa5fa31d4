/**
 * @module test/sandbox/idle-budget.test
 * The per-worker idle budget (IDLE_HEAP_BUDGET_MB) on the real sandbox, one worker so that every
 * call lands on the same isolates. An isolate of a catalog plugin's size holds ~3.5 MiB committed
 * after a collection and up to COLLECT_AT_MB more before its next, so as many such plugins as a
 * worker keeps idle (MAX_IDLE_ISOLATES) go over the budget every few calls. Over it, the worker
 * first disposes extra isolates that concurrent calls left, then collects isolates holding garbage,
 * and only then disposes one a plugin needs: plugins called in turn keep their isolates. (Disposing
 * the largest first churned: 8 such plugins in turn, 83 cold starts in 3,000 calls.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBridge, createSandbox, type Bridge } from '../../sandbox/index.js';
import { IDLE_HEAP_BUDGET_MB, MAX_IDLE_ISOLATES } from '../../sandbox/worker/isolate-cache.js';
import { callTool, egressPolicy, moduleOf, type CallSpec } from './helpers/harness.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** a module of a catalog plugin's size (~38 KB, most of it a comment); each call leaves garbage */
const catalogSized = (i: number): string =>
  moduleOf(`async function handler(ctx, args) {
  const junk = Array.from({ length: 200 }, (_, k) => ({ k, s: 'plugin ${i} ' + k + args.round }));
  return { n: junk.length, plugin: ${i} };
}
/* ${'x'.repeat(38 * 1024)} */`);

/** waits on the upstream: concurrent calls of it each take an isolate of their own */
const WAITER = moduleOf(`async function handler(ctx, args) {
  await ctx.http('https://api.example.com/slow?ms=' + args.ms);
  return { waited: args.ms };
}`);

let up: Upstream;
let bridge: Bridge;
before(async () => {
  up = await startUpstream();
  bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin }, requestTimeoutMs: 8000 }));
});
after(async () => {
  await bridge?.close();
  await up?.close();
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

  it('extra isolates left by concurrent calls go first; the plugins called before them, and the one that had them, stay warm', async () => {
    const sandbox = await createSandbox({ workers: 1, callsPerWorker: 4, maxWorkerShare: 1, maxQueue: 10 });
    const small = (i: number): CallSpec => ({ name: `small-${i}`, source: moduleOf(`async function handler() { return { plugin: ${i} }; }`), limits: { memoryMb: 64 } });
    try {
      for (let i = 0; i < 6; i++) assert.ok((await callTool(sandbox, bridge, small(i))).outcome.ok);
      // four concurrent calls of another plugin, four isolates: ten idle, over MAX_IDLE_ISOLATES;
      // the least recently used were the first two small plugins, and they were the ones disposed
      const waiters = await Promise.all([1, 2, 3, 4].map(() => callTool(sandbox, bridge, { name: 'waiter', source: WAITER, args: { ms: 100 }, limits: { memoryMb: 64 } })));
      assert.ok(waiters.every((r) => r.outcome.ok));
      const w = (await sandbox.memoryStats())?.workers[0];
      assert.ok(w);
      assert.equal(w.evicted, 10 - MAX_IDLE_ISOLATES, `isolates evicted: ${w.evicted}`);
      for (let i = 0; i < 6; i++) {
        const r = await callTool(sandbox, bridge, small(i));
        assert.ok(r.outcome.ok);
        assert.equal(r.outcome.stats.coldStart, false, `plugin small-${i} kept its isolate`);
      }
      const again = await callTool(sandbox, bridge, { name: 'waiter', source: WAITER, args: { ms: 1 }, limits: { memoryMb: 64 } });
      assert.ok(again.outcome.ok);
      assert.equal(again.outcome.stats.coldStart, false, 'the waiter kept one isolate');
    } finally {
      await sandbox.close();
    }
  });
});
