/**
 * @module test/sandbox/process/trace-hops.test
 * The benchmarks' hop trace (SandboxOptions.traceHops): absent by default; when asked for, every
 * outcome carries the times its call crossed each hand-off inside the sandbox, in order and inside
 * the caller's own send/receive window, and the time spent waiting on ctx.http falls in the
 * worker's part. The host re-checks what the sandbox sends: malformed hops are dropped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSandbox, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import { checkOutcome } from '../../../host/supervisor/check-outcome.js';
import { callTool, egressPolicy, LIMITS, useOneWorkerSandbox } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

const now = (): number => performance.timeOrigin + performance.now();

describe('without traceHops', () => {
  const shared = useOneWorkerSandbox();
  it('outcomes carry no hops', async () => {
    const r = await shared.run({ source: `export default { async run() { return 1; } };` });
    assert.equal(r.result, 1);
    assert.equal(r.outcome.stats.hops, undefined);
  });
});

describe('with traceHops', () => {
  let up: Upstream;
  let sandbox: Sandbox;
  let bridge: Bridge;
  before(async () => {
    up = await startUpstream();
    sandbox = await createSandbox({ workers: 2, traceHops: true });
    bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin } }));
  });
  after(async () => {
    await sandbox.close();
    await bridge.close();
    await up.close();
  });

  it('every outcome, success or failure, carries its hand-offs in order within the call', async () => {
    const sources = [
      `export default { async run() { return 'ok'; } };`,
      `export default { async run() { throw new Error('no'); } };`,
    ];
    for (const source of sources) {
      for (let i = 0; i < 5; i++) {
        const sentAt = now();
        const r = await callTool(sandbox, bridge, { source });
        const gotAt = now();
        const h = r.outcome.stats.hops;
        assert.ok(h, `call ${i} of ${source}: no hops`);
        const order = [sentAt, h.received, h.started, h.finished, h.sent, gotAt];
        // clocks of different threads and processes agree to well under a millisecond
        for (let k = 1; k < order.length; k++)
          assert.ok(
            (order[k] as number) >= (order[k - 1] as number) - 1,
            `hop ${k} goes back in time: ${order.join(', ')}`,
          );
      }
    }
  });

  it('a call waiting 150 ms on ctx.http spends it in the worker, not in the hand-offs', async () => {
    const source = `export default { async run(ctx) { const res = await ctx.http('https://api.example.com/slow?ms=150'); return (await res.json()).slow; } };`;
    const r = await callTool(sandbox, bridge, { source });
    assert.equal(r.result, true);
    const h = r.outcome.stats.hops;
    assert.ok(h);
    assert.ok(h.finished - h.started >= 140, `in worker ${h.finished - h.started} ms`);
    assert.ok(
      h.started - h.received < 100 && h.sent - h.finished < 100,
      `hand-offs ${h.started - h.received} / ${h.sent - h.finished} ms`,
    );
  });
});

describe('the host re-checks hops', () => {
  const task = {
    callId: 'c',
    plugin: { name: 'p', version: '1.0.0', source: '', sourceHash: 'h' },
    tool: 'run',
    argsJson: '{}',
    config: {},
    limits: LIMITS,
  };
  const stats = { wallMs: 1, cpuMs: 1, requests: 0, coldStart: false };
  it('four finite numbers pass through', () => {
    const hops = { received: 1, started: 2, finished: 3, sent: 4 };
    assert.deepEqual(checkOutcome({ ok: true, resultJson: '1', stats: { ...stats, hops } }, task).stats.hops, hops);
  });
  for (const [what, hops] of [
    ['a string', { received: '1', started: 2, finished: 3, sent: 4 }],
    ['a missing field', { received: 1, started: 2, finished: 3 }],
    ['NaN', { received: 1, started: Number.NaN, finished: 3, sent: 4 }],
    ['not an object', 'fast'],
  ] as const) {
    it(`hops with ${what} are dropped, and the outcome is kept`, () => {
      const out = checkOutcome({ ok: true, resultJson: '1', stats: { ...stats, hops, extra: 'x' } }, task);
      assert.equal(out.ok, true);
      assert.equal(out.stats.hops, undefined);
      assert.deepEqual(Object.keys(out.stats).sort(), ['coldStart', 'cpuMs', 'requests', 'wallMs']);
    });
  }
});
