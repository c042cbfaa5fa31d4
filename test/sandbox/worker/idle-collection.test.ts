/**
 * @module test/sandbox/worker/idle-collection.test
 * Dead contexts of past calls are reclaimed by collecting idle isolates between calls, not by
 * disposing them: on the real sandbox (one worker, so every call lands on the same isolates), two
 * plugins of a catalog plugin's size called in turn, each call leaving its dead context and ~20 KB
 * of garbage, keep the isolates they start with (at most WARM_ISOLATES_PER_PLUGIN each) warm
 * through 400 calls. Without the collection (no gc in the sandbox process) 2–3 of them are
 * disposed for memory meanwhile, and each next call of their plugin starts cold. With per-tenant
 * contexts (no spare to collect through) a tenant's kept context serves, and keeps its state.
 *
 * As many such plugins as a worker keeps idle (MAX_IDLE_ISOLATES) must fit its idle budget
 * (IDLE_HEAP_BUDGET_MB): an idle isolate of that size commits 3.5–6 MiB, and goes over any budget
 * every few calls as garbage piles up; over it, the worker collects the isolates holding garbage
 * before it disposes any. With 32 MiB and disposal first, 8 such plugins in turn started cold 86
 * times in 3,000 calls; with 48 MiB and disposal first, 2 isolates were disposed in 400 calls.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { createSandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import {
  IDLE_HEAP_BUDGET_MB,
  MAX_IDLE_ISOLATES,
  WARM_ISOLATES_PER_PLUGIN,
} from '../../../sandbox/worker/isolate-cache.js';
import { callTool, egressPolicy, moduleOf, ROOMY } from '../../helpers/sandbox/harness.js';

const PLUGINS = 2;
const ROUNDS = 200;

/** a module of a catalog plugin's size (~38 KB, most of it a comment) */
const source = (i: number): string =>
  moduleOf(`async function handler(ctx, args) {
  const junk = Array.from({ length: 200 }, (_, k) => ({ k, s: 'plugin ${i} ' + k + args.round }));
  return { n: junk.length, plugin: ${i} };
}
/* ${'x'.repeat(38 * 1024)} */`);

describe('idle isolates are collected, not disposed', () => {
  // each test has a sandbox of its own: the idle budget is per worker, across plugins
  let sandbox: Awaited<ReturnType<typeof createSandbox>>;
  let bridge: Bridge;
  before(() => {
    bridge = createBridge(egressPolicy());
  });
  beforeEach(async () => {
    sandbox = await createSandbox({ workers: 1, callsPerWorker: 1, maxWorkerShare: 1, maxQueue: 10 });
  });
  afterEach(async () => {
    await sandbox?.close();
  });

  /** calls `plugins` such plugins in turn, `rounds` times; returns the rounds that started cold */
  async function inTurn(plugins: number, rounds: number): Promise<number[]> {
    const cold: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < plugins; i++) {
        const r = await callTool(sandbox, bridge, {
          name: `garbage-${i}`,
          source: source(i),
          args: { round },
          limits: { memoryMb: 64, ...ROOMY },
        });
        assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
        assert.deepEqual(r.result, { n: 200, plugin: i });
        if (r.outcome.stats.coldStart) cold.push(round);
      }
    }
    return cold;
  }
  after(async () => {
    await bridge?.close();
  });

  it(`${PLUGINS} plugins in turn, ${PLUGINS * ROUNDS} calls: no isolate disposed, no cold start after the first ones`, async () => {
    const cold = await inTurn(PLUGINS, ROUNDS);
    const w = (await sandbox.memoryStats())?.workers[0];
    assert.ok(w, 'the worker answered');
    assert.ok(w.collected >= PLUGINS, `idle isolates collected ${w.collected} times`);
    assert.equal(w.recycled, 0, `isolates disposed for memory: ${w.recycled} (collected ${w.collected})`);
    assert.ok(w.created <= PLUGINS * WARM_ISOLATES_PER_PLUGIN, `isolates created ${w.created}`);
    // a cold start is an isolate being created: at most the warm isolates each plugin may have
    assert.ok(cold.length <= PLUGINS * WARM_ISOLATES_PER_PLUGIN, `cold starts in rounds ${cold.join(', ')}`);
  });

  it(`${MAX_IDLE_ISOLATES} such plugins in turn fit the idle budget: collected when over it, none disposed`, async () => {
    const cold = await inTurn(MAX_IDLE_ISOLATES, 50);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the last spare is prepared and counted
    const w = (await sandbox.memoryStats())?.workers[0];
    assert.ok(w, 'the worker answered');
    assert.equal(w.recycled, 0, `isolates disposed for memory: ${w.recycled} (collected ${w.collected})`);
    assert.equal(w.created, MAX_IDLE_ISOLATES, 'one isolate per plugin');
    assert.deepEqual(
      cold,
      Array.from({ length: MAX_IDLE_ISOLATES }, () => 0),
      'cold starts only in the first round',
    );
    assert.ok(w.idleHeld <= IDLE_HEAP_BUDGET_MB * 1024 * 1024, `idle isolates hold ${w.idleHeld} bytes`);
  });

  it('per-tenant contexts: collected through a kept context, and every tenant keeps its state across the collections', async () => {
    const tenants = 20;
    const counting = moduleOf(`let calls = 0;
async function handler(ctx, args) {
  const junk = Array.from({ length: 5000 }, (_, k) => ({ k, s: 'tenant ' + k + args.round }));
  calls++;
  return { calls, n: junk.length };
}`);
    for (let call = 0; call < 240; call++) {
      const r = await callTool(sandbox, bridge, {
        name: 'garbage-tenants',
        source: counting,
        args: { round: call },
        limits: { memoryMb: 64, ...ROOMY },
        contextKey: `tenant-${call % tenants}`,
      });
      assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
      // each tenant's module state persists: its own count of calls, collections or not
      assert.deepEqual(r.result, { calls: Math.floor(call / tenants) + 1, n: 5000 });
    }
    // the collection runs once the call's turn is over: let the last one run
    await new Promise((resolve) => setTimeout(resolve, 50));
    const w = (await sandbox.memoryStats())?.workers[0];
    assert.ok(w);
    assert.ok(w.collected >= 1, `idle isolates collected ${w.collected} times`);
    assert.equal(w.created, 1, 'one isolate for the plugin');
  });
});
