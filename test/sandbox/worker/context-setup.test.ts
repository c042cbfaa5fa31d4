/**
 * @module test/sandbox/worker/context-setup.test
 * How fresh contexts are set up and given back, on the real sandbox: the context of a finished
 * call is reclaimed (its isolate is not recycled for memory that dead contexts hold), an isolate
 * whose last step is still running plugin code after the outcome went out is not handed to the
 * next call meanwhile and does not stall the worker's other calls, nor does a module whose top-level
 * code runs long (it loads all the same), and a module that fails at any
 * setup step fails each call cleanly, again and again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSandbox, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import { callTool, egressPolicy, errorCode, useOneWorkerSandbox } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

describe('fresh contexts are reclaimed', () => {
  const shared = useOneWorkerSandbox();

  it('600 per-call calls run on the same warm isolates (no memory recycling)', async () => {
    const source = `const table = Array.from({ length: 2000 }, (_, i) => ({ i, s: 'row ' + i }));
      export default { async run(ctx, args) { return { n: args.n, rows: table.length }; } };`;
    let cold = 0;
    for (let n = 0; n < 600; n++) {
      const r = await shared.run({ name: 'many-contexts', source, args: { n }, limits: { memoryMb: 32 } });
      assert.deepEqual(r.result, { n, rows: 2000 }, `call ${n}`);
      if (r.outcome.stats.coldStart) cold++;
    }
    // the first calls start the plugin's (at most two) warm isolates; a dead context that stayed
    // reachable would fill the heap within a few hundred calls and force new isolates
    assert.ok(cold <= 3, `${cold} cold starts in 600 calls`);
  });

  for (const [what, source, code] of [
    ['a syntax error', `export default { run( };`, 'GW_ERR_SANDBOX_LOAD_FAILED'],
    [
      'an import',
      `import x from 'node:fs'; export default { async run() { return 1; } };`,
      'GW_ERR_SANDBOX_LOAD_FAILED',
    ],
    ['a top-level throw', `throw new Error('top'); export default {};`, 'GW_ERR_SANDBOX_LOAD_FAILED'],
    ['no default export', `export const run = 1;`, 'GW_ERR_SANDBOX_TOOL_MISSING'],
  ] as const) {
    it(`a module with ${what} fails every call with ${code}, and the worker stays healthy`, async () => {
      for (let i = 0; i < 40; i++)
        assert.equal(errorCode(await shared.run({ name: `bad-${what}`, source })), code, `call ${i}`);
      assert.equal(
        (await shared.run({ name: 'fine', source: `export default { async run() { return 'ok'; } };` })).result,
        'ok',
      );
      assert.equal(shared.sandbox.stats().crashes, 0);
    });
  }
});

describe('an isolate is given back only when its last step has ended', () => {
  let up: Upstream;
  let bridge: Bridge;
  let sandbox: Sandbox;
  // `late`: the result goes out, then a microtask queued behind it spins until the step timeout
  const PLUGIN = `export default {
    async wait(ctx, args) { await ctx.http('https://api.example.com/slow?ms=' + args.ms); return { tag: args.tag }; },
    async late() { const p = Promise.resolve(); p.then(() => 0).then(() => 0).then(() => 0).then(() => 0).then(() => { for (;;) {} }); return 'sent'; },
    async run(ctx, args) { return { tag: args.tag }; },
  };`;
  const call = (tool: string, args: Record<string, unknown> = {}) =>
    callTool(sandbox, bridge, {
      name: 'late-spinner',
      source: PLUGIN,
      tool,
      args,
      limits: { cpuMsPerCall: 1500, wallMsPerCall: 8000 },
    });

  before(async () => {
    up = await startUpstream();
    bridge = createBridge(
      egressPolicy({ upstreams: { 'https://api.example.com': up.origin }, requestTimeoutMs: 8000 }),
    );
    sandbox = await createSandbox({
      workers: 1,
      callsPerWorker: 4,
      maxQueue: 20,
      quarantineAfterCrashes: 10,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
    });
  });
  after(async () => {
    await sandbox.close();
    await bridge.close();
    await up.close();
  });

  it('a call still spinning after its result does not stall the calls waiting beside it', async () => {
    // `late` starts while `wait` is in the worker: its step runs on isolated-vm's pool (on the
    // worker's own thread it would hold up the waiting call for the whole 1.5 s)
    await call('run', { tag: 'warm' });
    const t0 = Date.now();
    const waiting = call('wait', { ms: 300, tag: 'w' });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await call('late')).result, 'sent');
    const w = await waiting;
    const waitedMs = Date.now() - t0;
    assert.deepEqual(w.result, { tag: 'w' });
    // the spinning step holds its own isolate for up to 1.5 s; the waiting call needs ~300 ms
    assert.ok(waitedMs < 1100, `the waiting call took ${waitedMs} ms`);
  });

  it("a module whose top-level code runs longer than the synchronous budget loads on every call, off the worker's thread", async () => {
    // 700 ms of top-level code per context, far over SYNC_EVALUATE_MS: the first evaluation times
    // out on the worker's thread, and the isolate evaluates on isolated-vm's threads from then on
    const SLOW = `const t0 = Date.now(); while (Date.now() - t0 < 700) {} export default { async run(ctx, args) { return { slow: args.n }; } };`;
    const slow = (n: number) =>
      callTool(sandbox, bridge, {
        name: 'slow-top-level',
        source: SLOW,
        args: { n },
        limits: { cpuMsPerCall: 1500, wallMsPerCall: 8000 },
      });
    assert.deepEqual((await slow(0)).result, { slow: 0 });
    // its idle isolate now prepares the next context ahead of demand (700 ms of top-level code);
    // evaluated on the worker's own thread, that would hold up this call for as long
    const t0 = Date.now();
    assert.deepEqual((await call('run', { tag: 'beside' })).result, { tag: 'beside' });
    const tookMs = Date.now() - t0;
    assert.ok(tookMs < 450, `the call beside it took ${tookMs} ms`);
    for (let n = 1; n <= 3; n++) assert.deepEqual((await slow(n)).result, { slow: n });
    assert.equal(sandbox.stats().crashes, 0);
  });

  it('calls after it get clean isolates and correct results', async () => {
    for (let i = 0; i < 5; i++) assert.deepEqual((await call('run', { tag: i })).result, { tag: i });
    await new Promise((r) => setTimeout(r, 1600)); // the late step has timed out by now
    for (let i = 0; i < 5; i++) assert.deepEqual((await call('run', { tag: i })).result, { tag: i });
    assert.equal(sandbox.stats().crashes, 0);
  });
});

describe("where a step runs: the worker's thread, or isolated-vm's pool", () => {
  const shared = useOneWorkerSandbox();
  // `late`: the result goes out, then a microtask queued behind it spins until the step timeout
  const PLUGIN = `export default {
    async late() { Promise.resolve().then(() => 0).then(() => { for (;;) {} }); return 'sent'; },
    async run(ctx, args) { return { tag: args.tag }; },
  };`;
  const call = (name: string, tool: string, args: Record<string, unknown> = {}) =>
    shared.run({ name, source: PLUGIN, tool, args, limits: { cpuMsPerCall: 300, wallMsPerCall: 8000 } });

  it("alone in the worker a step runs on its thread; one that ran long moves the plugin's steps to the pool", async () => {
    const timedLate = async (name: string) => {
      const t0 = Date.now();
      const r = await call(name, 'late');
      return { ms: Date.now() - t0, result: r.result };
    };
    assert.deepEqual((await call('late-alone', 'run', { tag: 'first' })).result, { tag: 'first' });
    // on the worker's thread the step's messages are read when it returns: after its 300 ms
    // timeout, and the result sent before it stands
    const first = await timedLate('late-alone');
    assert.equal(first.result, 'sent');
    assert.ok(first.ms >= 250, `the first late call took ${first.ms} ms`);
    // that step took over SYNC_STEP_MS: the plugin's steps now run on isolated-vm's pool, where the
    // result comes out while the step still spins
    const second = await timedLate('late-alone');
    assert.equal(second.result, 'sent');
    assert.ok(second.ms < 200, `the second late call took ${second.ms} ms`);
    assert.deepEqual((await call('late-alone', 'run', { tag: 'after' })).result, { tag: 'after' });
    // another plugin alone in the worker still steps on the worker's thread
    const other = await timedLate('late-other');
    assert.equal(other.result, 'sent');
    assert.ok(other.ms >= 250, `another plugin's late call took ${other.ms} ms`);
    assert.equal(shared.sandbox.stats().crashes, 0);
  });
});
