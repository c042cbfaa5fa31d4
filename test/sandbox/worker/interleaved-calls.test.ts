/**
 * @module test/sandbox/worker/interleaved-calls.test
 * `callsPerWorker` > 1 on the real sandbox: a worker interleaves calls that wait on ctx.http, each
 * in its own isolate. Calls parked on I/O do not hold a worker; calls using CPU still do, and a
 * plugin still gets at most its share of the workers (maxWorkerShare). A call that times out, runs
 * out of memory or throws while others of the same plugin are in flight on the same worker ends
 * alone: the others get their own, correct results.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSandbox, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import { callTool, egressPolicy, errorCode } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

let up: Upstream;
let bridge: Bridge;

// each call: wait on the upstream, then spin `spin` ms, and report when its CPU step ran
const PLUGIN = `export default {
  async run(ctx, args) {
    if (args.ms) await ctx.http('https://api.example.com/slow?ms=' + args.ms);
    const start = Date.now();
    while (Date.now() - start < (args.spin ?? 0)) {}
    return { tag: args.tag, start, end: Date.now() };
  },
  async spin() { for (;;) {} },
  async hog() { const a = []; for (;;) a.push(new Array(1e5).fill(1)); },
  async boom(ctx) { await ctx.http('https://api.example.com/slow?ms=50'); throw new Error('boom'); },
};`;

before(async () => {
  up = await startUpstream();
  bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin }, requestTimeoutMs: 8000 }));
});
after(async () => {
  await bridge.close();
  await up.close();
});

const run = (
  sandbox: Sandbox,
  name: string,
  args: Record<string, unknown>,
  tool = 'run',
  limits = { wallMsPerCall: 8000, cpuMsPerCall: 1000 },
) => callTool(sandbox, bridge, { name, source: PLUGIN, tool, args, limits: { ...limits, memoryMb: 32 } });

describe('calls parked on ctx.http do not hold a worker', () => {
  it('one worker serves several calls of a plugin while they wait on the upstream', async () => {
    const sandbox = await createSandbox({
      workers: 1,
      callsPerWorker: 4,
      maxQueue: 10,
      quarantineAfterCrashes: 10,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
    });
    try {
      const t0 = Date.now();
      // waits long enough that one after another (4.8 s) and overlapped (1.2 s and the calls'
      // overhead, which a busy machine stretches) stay far apart
      const results = await Promise.all([1, 2, 3, 4].map((i) => run(sandbox, 'waiter', { ms: 1200, tag: i })));
      const elapsed = Date.now() - t0;
      assert.deepEqual(
        results.map((r) => (r.result as { tag: number }).tag),
        [1, 2, 3, 4],
      );
      assert.ok(elapsed < 3600, `four 1200 ms waits overlapped on one worker: ${elapsed} ms`);
    } finally {
      await sandbox.close();
    }
  });

  it('with callsPerWorker 1 (the default) the same calls run one after another', async () => {
    const sandbox = await createSandbox({
      workers: 1,
      maxQueue: 10,
      quarantineAfterCrashes: 10,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
    });
    try {
      const t0 = Date.now();
      await Promise.all([1, 2, 3].map((i) => run(sandbox, 'waiter', { ms: 200, tag: i })));
      assert.ok(Date.now() - t0 >= 590, 'one call at a time');
    } finally {
      await sandbox.close();
    }
  });
});

describe('CPU still respects the plugin share', () => {
  it('a plugin with share 0.5 of 2 workers runs one CPU step at a time, parked calls included', async () => {
    const sandbox = await createSandbox({
      workers: 2,
      callsPerWorker: 4,
      maxQueue: 20,
      quarantineAfterCrashes: 10,
      quarantineWindowMs: 1000,
      maxWorkerShare: 0.5,
    });
    try {
      // all four wait together (parked), then each needs 750 ms of CPU: the steps must not overlap.
      // The other plugin must not wait for them (3 s one after another): its 2 s bound leaves room
      // for a busy machine.
      const roomy = { wallMsPerCall: 20_000, cpuMsPerCall: 5000 };
      const calls = [1, 2, 3, 4].map((i) => run(sandbox, 'cruncher', { ms: 500, spin: 750, tag: i }, 'run', roomy));
      await new Promise((r) => setTimeout(r, 250));
      const t0 = Date.now();
      const other = await run(sandbox, 'other', { tag: 'other' }, 'run', roomy);
      const otherMs = Date.now() - t0;
      const steps = (await Promise.all(calls))
        .map((r) => r.result as { start: number; end: number })
        .sort((a, b) => a.start - b.start);
      assert.equal((other.result as { tag: string }).tag, 'other');
      for (let i = 1; i < steps.length; i++) {
        assert.ok(steps[i]!.start >= steps[i - 1]!.end - 5, `CPU steps overlapped: ${JSON.stringify(steps)}`);
      }
      assert.ok(otherMs < 2000, `another plugin used the other worker meanwhile (${otherMs} ms)`);
    } finally {
      await sandbox.close();
    }
  });
});

describe('a failing call ends alone, even next to calls of the same plugin on the same worker', () => {
  for (const [tool, code] of [
    ['spin', 'GW_ERR_SANDBOX_TIMEOUT'],
    ['hog', 'GW_ERR_SANDBOX_MEMORY'],
    ['boom', 'GW_ERR_SANDBOX_HANDLER_THREW'],
  ] as const) {
    it(`${tool} → ${code}; the parked calls get their own results`, async () => {
      const sandbox = await createSandbox({
        workers: 1,
        callsPerWorker: 4,
        maxQueue: 10,
        quarantineAfterCrashes: 10,
        quarantineWindowMs: 1000,
        maxWorkerShare: 1,
      });
      try {
        const waiting = [1, 2, 3].map((i) => run(sandbox, 'shared', { ms: 600, tag: i }));
        await new Promise((r) => setTimeout(r, 150));
        const bad = await run(sandbox, 'shared', {}, tool);
        assert.equal(errorCode(bad), code, JSON.stringify(bad.outcome));
        const results = await Promise.all(waiting);
        assert.deepEqual(
          results.map((r) => (r.outcome.ok ? (r.result as { tag: number }).tag : r.outcome.error.code)),
          [1, 2, 3],
        );
        assert.equal((await run(sandbox, 'shared', { tag: 'after' })).outcome.ok, true);
        assert.equal(sandbox.stats().crashes, 0);
      } finally {
        await sandbox.close();
      }
    });
  }
});
