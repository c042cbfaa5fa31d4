/**
 * @module test/sandbox/process/worker-death
 * Recovery paths that plugin code cannot reach, driven by the tests-only fault injection: a worker
 * thread that dies mid-call fails that call only and is replaced; a catastrophic isolate error
 * ends the sandbox process, fails the calls in flight, and a new process takes the next call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSandbox, type BridgeResult, type RunTask, type Sandbox } from '../../../host/supervisor/index.js';
import { LIMITS, hashOf } from '../../helpers/sandbox/harness.js';

const SOURCE = `export default {
  async wait(ctx, args) { const r = await ctx.http('https://api.example.com/' + args.tag); return { tag: args.tag, status: r.status }; },
  async now(ctx, args) { return { tag: args.tag }; },
};`;

let seq = 0;
function task(tool: string, tag: string): RunTask {
  return {
    callId: `call-${++seq}-${tag}`,
    plugin: { name: 'fault-plugin', version: '1.0.0', source: SOURCE, sourceHash: hashOf(SOURCE) },
    tool,
    argsJson: JSON.stringify({ tag }),
    config: {},
    limits: { ...LIMITS, wallMsPerCall: 10_000 },
  };
}

/** An http handler whose answers the test releases by hand. */
function heldHttp(): {
  handler: (req: { url: string }) => Promise<BridgeResult>;
  seen: Promise<void>;
  release(): void;
} {
  let release: () => void = () => undefined;
  let markSeen: () => void = () => undefined;
  const seen = new Promise<void>((r) => (markSeen = r));
  const gate = new Promise<void>((r) => (release = r));
  return {
    seen,
    release: () => release(),
    handler: async (req) => {
      markSeen();
      await gate;
      return { ok: true, response: { status: 200, statusText: 'OK', headers: {}, body: '{}', url: req.url } };
    },
  };
}

describe('worker and process death (fault injection)', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({
      workers: 2,
      maxWorkerShare: 1,
      maxQueue: 10,
      quarantineAfterCrashes: 100,
      quarantineWindowMs: 1000,
      faultInjection: true,
    });
  });
  after(async () => sandbox.close());

  it('is not available without the option', async () => {
    const plain = await createSandbox({ workers: 1 });
    try {
      assert.equal(plain.injectFault, undefined);
    } finally {
      await plain.close();
    }
  });

  it('a worker that dies mid-call fails that call only; the pool replaces it', async () => {
    const a = task('wait', 'a');
    const b = task('wait', 'b');
    const ha = heldHttp();
    const hb = heldHttp();
    const pa = sandbox.run(a, ha.handler);
    const pb = sandbox.run(b, hb.handler);
    await Promise.all([ha.seen, hb.seen]);
    const pidBefore = sandbox.stats().pid;
    sandbox.injectFault?.({ kind: 'exit-worker', callId: a.callId });
    const ra = await pa;
    assert.equal(ra.ok, false);
    assert.equal(!ra.ok && ra.error.code, 'GW_ERR_SANDBOX_CRASHED');
    hb.release();
    ha.release();
    const rb = await pb;
    assert.ok(rb.ok, `the other call in flight is unaffected: ${JSON.stringify(rb)}`);
    assert.deepEqual(JSON.parse(rb.ok ? rb.resultJson : '{}'), { tag: 'b', status: 200 });
    assert.equal(sandbox.stats().pid, pidBefore, 'the process survived; only the thread died');
    // both workers serve again: two calls that hold their worker run at the same time
    const results = await Promise.all(['c', 'd', 'e', 'f'].map((t) => sandbox.run(task('now', t), heldHttp().handler)));
    assert.deepEqual(
      results.map((r) => (r.ok ? JSON.parse(r.resultJson).tag : r.error.code)),
      ['c', 'd', 'e', 'f'],
    );
    // and both talk to the sandbox process, the new worker on its own new port: two calls that
    // each hold one worker make their ctx.http requests at the same time and get their answers
    const hg = heldHttp();
    const hh = heldHttp();
    const pg = sandbox.run(task('wait', 'g'), hg.handler);
    const ph = sandbox.run(task('wait', 'h'), hh.handler);
    // (bounded: a request that never arrives ends its call at the wall-clock deadline)
    await Promise.race([Promise.all([hg.seen, hh.seen]), Promise.all([pg, ph])]);
    hg.release();
    hh.release();
    const both = await Promise.all([pg, ph]);
    assert.deepEqual(
      both.map((r) => (r.ok ? JSON.parse(r.resultJson) : r.error.code)),
      [
        { tag: 'g', status: 200 },
        { tag: 'h', status: 200 },
      ],
    );
  });

  it('a catastrophic isolate error ends the process: calls in flight fail, a new process takes over', async () => {
    const pidBefore = sandbox.stats().pid;
    const held = heldHttp();
    const p = sandbox.run(task('wait', 'cat'), held.handler);
    await held.seen;
    sandbox.injectFault?.({ kind: 'catastrophic' });
    const r = await p;
    assert.equal(!r.ok && r.error.code, 'GW_ERR_SANDBOX_CRASHED', JSON.stringify(r));
    held.release();
    const next = await sandbox.run(task('now', 'after'), heldHttp().handler);
    assert.ok(next.ok, JSON.stringify(next));
    const stats = sandbox.stats();
    assert.notEqual(stats.pid, pidBefore);
    assert.ok(stats.restarts >= 1);
  });
});
