/**
 * @module test/sandbox/worker/prepared-contexts.test
 * Fresh contexts prepared ahead of demand, on the real sandbox: calls start on a context whose
 * module was evaluated before the call arrived, and such a context has never run any call (module
 * state, globals and intrinsics are pristine in every call, also when a spare's preparation fails).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CallSpec, errorCode, useOneWorkerSandbox } from '../../helpers/sandbox/harness.js';

const shared = useOneWorkerSandbox();
const run = (spec: CallSpec) => shared.run(spec); // short name used throughout
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('contexts prepared ahead of demand', () => {
  it('a call after an idle moment starts on a context evaluated before it arrived', async () => {
    const source = `const born = Date.now(); export default { async run() { return Date.now() - born; } };`;
    const ages: number[] = [];
    for (let i = 0; i < 6; i++) {
      ages.push((await run({ name: 'aged', source })).result as number);
      await sleep(150);
    }
    // the first calls build the plugin's isolates; later ones find a spare made ~150 ms earlier
    assert.ok(
      ages.slice(2).every((a) => a >= 100),
      `module ages at call time: ${ages.join(', ')} ms`,
    );
  });

  it('a prepared context has never run a call: state is pristine in every call', async () => {
    const source = `let n = 0; const fresh = Object.prototype.leak === undefined && globalThis.mark === undefined;
      export default { async run() { globalThis.mark = (globalThis.mark || 0) + 1; Object.prototype.leak = 1; Array.prototype.push = null; return [++n, globalThis.mark, fresh]; } };`;
    for (let i = 0; i < 12; i++) {
      assert.deepEqual((await run({ name: 'pristine', source })).result, [1, 1, true], `call ${i}`);
      if (i % 3 === 0) await sleep(40);
    }
  });

  it('a module whose evaluation fails ahead of time still fails each call clearly, and recovers', async () => {
    const source = `if (Date.now() % 2 === 0 || true) { throw new Error('top-level boom'); } export default {};`;
    for (let i = 0; i < 3; i++) {
      assert.equal(errorCode(await run({ name: 'broken-top', source })), 'GW_ERR_SANDBOX_LOAD_FAILED');
      await sleep(40);
    }
    assert.equal(
      (await run({ name: 'after-broken', source: `export default { async run() { return 'ok'; } };` })).result,
      'ok',
    );
  });

  it('a module that spins at top level times out its call, and the next call gets a clean error too', async () => {
    const source = `for (;;) {} export default {};`;
    for (let i = 0; i < 2; i++) {
      assert.equal(
        errorCode(await run({ name: 'spin-top', source, limits: { cpuMsPerCall: 50 } })),
        'GW_ERR_SANDBOX_TIMEOUT',
      );
      await sleep(100);
    }
    assert.equal(
      (await run({ name: 'after-spin', source: `export default { async run() { return 3; } };` })).result,
      3,
    );
    assert.equal(shared.sandbox.stats().crashes, 0);
  });

  it('no plugin code runs between calls: FinalizationRegistry is not there for a cleanup callback', async () => {
    // V8 queues a registry's cleanup after a collection; isolated-vm runs queued tasks on the next
    // asynchronous entry into the isolate, with no time limit: here the preparation of a spare
    // (cpuMsPerCall <= 20 evaluates modules asynchronously). With the registry there, the worker
    // spun with no call running and the next call timed out.
    const source = `globalThis.armed = typeof FinalizationRegistry === 'function';
      if (globalThis.armed) { globalThis.registry = new FinalizationRegistry(() => { for (;;) {} }); globalThis.registry.register({}, 1); }
      export default {
        async grow() { globalThis.big = new Array(1e6).fill(0); return globalThis.armed; }, // over the collection threshold
        async ok() { return 1; },
      };`;
    const limits = { cpuMsPerCall: 20, wallMsPerCall: 2000 };
    assert.equal((await run({ name: 'finalizer', source, tool: 'ok', limits })).result, 1);
    await sleep(100);
    assert.equal(
      (await run({ name: 'finalizer', source, tool: 'grow', limits })).result,
      false,
      'no FinalizationRegistry',
    );
    for (let i = 0; i < 3; i++) {
      await sleep(300);
      const next = await run({ name: 'finalizer', source, tool: 'ok', limits });
      assert.equal(next.result, 1, `call ${i}: ${JSON.stringify(next.outcome)}`);
    }
  });
});
