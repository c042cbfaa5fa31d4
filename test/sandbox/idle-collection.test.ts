/**
 * @module test/sandbox/idle-collection.test
 * Dead contexts of past calls are reclaimed by collecting idle isolates between calls, not by
 * disposing them: on the real sandbox (one worker, so every call lands on the same isolates), two
 * plugins called in turn, each call leaving ~250 KB of garbage, keep the isolates they start with
 * (at most WARM_ISOLATES_PER_PLUGIN each) warm through 240 calls. Without the collection the worker's idle isolates go over the idle budget
 * and are disposed every few dozen calls, and each next call of their plugin starts cold.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBridge, createSandbox, type Bridge } from '../../sandbox/index.js';
import { WARM_ISOLATES_PER_PLUGIN } from '../../sandbox/worker/isolate-cache.js';
import { callTool, egressPolicy, moduleOf } from './helpers/harness.js';

const PLUGINS = 2;
const ROUNDS = 120;

const source = (i: number): string =>
  moduleOf(`async function handler(ctx, args) {
  const junk = Array.from({ length: 2500 }, (_, k) => ({ k, s: 'plugin ${i} ' + k + args.round }));
  return { n: junk.length, plugin: ${i} };
}`);

describe('idle isolates are collected, not disposed', () => {
  let sandbox: Awaited<ReturnType<typeof createSandbox>>;
  let bridge: Bridge;
  before(async () => {
    sandbox = await createSandbox({ workers: 1, callsPerWorker: 1, maxWorkerShare: 1, maxQueue: 10 });
    bridge = createBridge(egressPolicy());
  });
  after(async () => {
    await sandbox?.close();
    await bridge?.close();
  });

  it(`${PLUGINS} plugins in turn, ${PLUGINS * ROUNDS} calls: no isolate disposed, no cold start after the first ones`, async () => {
    const cold: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < PLUGINS; i++) {
        const r = await callTool(sandbox, bridge, { name: `garbage-${i}`, source: source(i), args: { round }, limits: { memoryMb: 64 } });
        assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
        assert.deepEqual(r.result, { n: 2500, plugin: i });
        if (r.outcome.stats.coldStart) cold.push(round);
      }
    }
    const w = (await sandbox.memoryStats())?.workers[0];
    assert.ok(w, 'the worker answered');
    assert.ok(w.collected >= PLUGINS, `idle isolates collected ${w.collected} times`);
    assert.equal(w.recycled, 0, `isolates disposed for memory: ${w.recycled} (collected ${w.collected})`);
    assert.ok(w.created <= PLUGINS * WARM_ISOLATES_PER_PLUGIN, `isolates created ${w.created}`);
    // a cold start is an isolate being created: at most the warm isolates each plugin may have
    assert.ok(cold.length <= PLUGINS * WARM_ISOLATES_PER_PLUGIN, `cold starts in rounds ${cold.join(', ')}`);
  });
});
