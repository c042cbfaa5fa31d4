/**
 * @module test/host/supervisor/supervision.test
 * The sandbox process as a unit of failure: killed mid-call (SIGKILL, as an OOM abort would), its
 * calls in flight fail with GW_ERR_SANDBOX_CRASHED and a new process takes over (when a call of a
 * known culprit brought it down, other plugins' calls that had only read run again); a plugin blamed
 * for repeated crashes is quarantined; one plugin cannot occupy every worker; the queue is
 * bounded; close() drains and ends the process. SIGINT and SIGTERM sent to the sandbox process (a
 * signal to the host's process group reaches it too) do not end it; once shutdown has begun, a
 * sandbox process that dies is neither restarted nor counted as a crash nor blamed on a plugin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSandbox, type BridgeRequest, type BridgeResult, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import { callTool, egressPolicy, errorCode, manifest, type CallSpec } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

let up: Upstream;
let bridge: Bridge;
const SLOW = `export default { async run(ctx, args) { await ctx.http('https://api.example.com/slow?ms=' + (args.ms ?? 3000)); return 'slept'; }, async quick() { return 'quick'; } };`;
const LONG = { wallMsPerCall: 8000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// a wait, not a limit under test: generous, so that a busy machine only makes it slower
async function waitFor(check: () => boolean, ms = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) throw new Error('condition not reached in time');
    await sleep(20);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

before(async () => {
  up = await startUpstream();
  bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin }, requestTimeoutMs: 8000 }));
});
after(async () => {
  await bridge.close();
  await up.close();
});

describe('sandbox process death', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({
      workers: 2,
      maxQueue: 10,
      quarantineAfterCrashes: 2,
      quarantineWindowMs: 60_000,
      maxWorkerShare: 1,
    });
  });
  after(() => sandbox.close());
  const run = (spec: CallSpec) => callTool(sandbox, bridge, { limits: LONG, ...spec });

  it('fails the calls in flight with GW_ERR_SANDBOX_CRASHED and restarts the process', async () => {
    const pid = sandbox.stats().pid as number;
    const inFlight = up.received.length;
    const calls = [run({ name: 'victim-a', source: SLOW }), run({ name: 'victim-b', source: SLOW })];
    await waitFor(() => up.received.length >= inFlight + 2);
    process.kill(pid, 'SIGKILL');
    const results = await Promise.all(calls);
    assert.deepEqual(results.map(errorCode), ['GW_ERR_SANDBOX_CRASHED', 'GW_ERR_SANDBOX_CRASHED']);
    const next = await run({ name: 'victim-a', source: SLOW, tool: 'quick' });
    assert.equal(next.result, 'quick');
    const stats = sandbox.stats();
    assert.equal(stats.crashes, 1);
    assert.equal(stats.restarts, 1);
    // killed by a signal, no culprit is known: either call may have caused it, so neither runs again
    assert.equal(stats.reruns, 0);
    assert.notEqual(stats.pid, pid);
    assert.equal(alive(pid), false);
  });

  it('quarantines a plugin blamed for repeated crashes, and only that plugin', async () => {
    const seen = up.received.length;
    const call = run({ name: 'victim-a', source: SLOW });
    await waitFor(() => up.received.length > seen);
    process.kill(sandbox.stats().pid as number, 'SIGKILL');
    assert.equal(errorCode(await call), 'GW_ERR_SANDBOX_CRASHED');
    const refused = await run({ name: 'victim-a', source: SLOW, tool: 'quick' });
    assert.equal(errorCode(refused), 'GW_ERR_SANDBOX_QUARANTINED');
    assert.match(
      refused.outcome.ok ? '' : refused.outcome.error.message,
      /victim-a@1\.0\.0 crashed the sandbox 2 times/,
    );
    assert.deepEqual(
      sandbox.stats().quarantined.map((q) => q.plugin),
      ['victim-a@1.0.0'],
      'victim-b has one strike only',
    );
    assert.equal((await run({ name: 'bystander', source: SLOW, tool: 'quick' })).result, 'quick');
  });

  it('strikes a plugin once per crash, however many of its calls were in flight', async () => {
    const busy = await createSandbox({
      workers: 2,
      callsPerWorker: 2,
      maxQueue: 10,
      quarantineAfterCrashes: 2,
      quarantineWindowMs: 60_000,
      maxWorkerShare: 1,
    });
    try {
      const seen = up.received.length;
      // three calls of one busy plugin in flight when the process dies (quarantine after 2 crashes)
      const calls = [1, 2, 3].map(() => callTool(busy, bridge, { name: 'busy-bystander', source: SLOW, limits: LONG }));
      await waitFor(() => up.received.length >= seen + 3);
      process.kill(busy.stats().pid as number, 'SIGKILL');
      assert.deepEqual((await Promise.all(calls)).map(errorCode), [
        'GW_ERR_SANDBOX_CRASHED',
        'GW_ERR_SANDBOX_CRASHED',
        'GW_ERR_SANDBOX_CRASHED',
      ]);
      const next = await callTool(busy, bridge, { name: 'busy-bystander', source: SLOW, tool: 'quick', limits: LONG });
      assert.equal(next.result, 'quick', `one crash is one strike: ${JSON.stringify(next.outcome)}`);
      assert.deepEqual(busy.stats().quarantined, []);
    } finally {
      await busy.close();
    }
  });
});

describe('a call that wedges its worker', () => {
  // compiling two million alternatives needs more than the isolate's 64 MiB: V8 keeps retrying
  // inside the compiler, where no time limit reaches it, and the worker stops answering (the
  // loader refuses such a literal; the sandbox is driven directly here)
  const WEDGE = `const re = /(${'a|'.repeat(2_000_000)}b)/;\nexport default { async run() { return re.test('b'); } };`;
  // the step's mark has a budget of 500 ms (its CPU timeout): the sandbox process gives up on the
  // worker ~2.5 s into the step, well before the host's watchdog (deadline + 5 s) would
  const WEDGE_LIMITS = { memoryMb: 64, cpuMsPerCall: 500, wallMsPerCall: 5000 };

  // bystanders in flight on other workers, parked on ctx.http. A first run waits 10 s upstream (it
  // must still be in flight when the wedge brings the process down, ~2.5 s in); a run again after
  // the crash has what the first left of the request budget (LIMITS: 10), so it sees 9 and answers
  // at once.
  const BYSTANDER = `export default {
    async read(ctx, args) {
      const again = ctx.limits.maxRequests < 10;
      const r = await ctx.http('https://api.example.com/slow?ms=' + (again ? 10 : 10000) + '&tag=' + args.tag);
      return { tag: args.tag, status: r.status, again, max: ctx.limits.maxRequests, left: ctx.limits.requestsLeft() };
    },
    async readMany(ctx, args) {
      for (let i = 0; i < 6; i++) await ctx.http('https://api.example.com/slow?ms=1&tag=' + args.tag);
      await ctx.http('https://api.example.com/slow?ms=10000&tag=' + args.tag);
      return 'read';
    },
    async write(ctx, args) {
      await ctx.http('https://api.example.com/slow?ms=10000&tag=' + args.tag, { method: 'POST', body: 'x' });
      return 'wrote';
    },
    async quick() { return 'quick'; },
  };`;
  it('is failed, the process is replaced, and its plugin alone is struck; a call of another plugin that had only read runs again', async () => {
    const sandbox = await createSandbox({
      workers: 2,
      maxQueue: 10,
      quarantineAfterCrashes: 1,
      quarantineWindowMs: 60_000,
      maxWorkerShare: 1,
    });
    try {
      const pid = sandbox.stats().pid as number;
      const seen = up.received.length;
      const reader = callTool(sandbox, bridge, {
        name: 'bystander',
        source: BYSTANDER,
        tool: 'read',
        args: { tag: 'reader' },
        limits: { wallMsPerCall: 30_000 },
      });
      await waitFor(() => up.received.length > seen);
      const culprit = await callTool(sandbox, bridge, { name: 'wedger', source: WEDGE, limits: WEDGE_LIMITS });
      assert.equal(errorCode(culprit), 'GW_ERR_SANDBOX_TIMEOUT', JSON.stringify(culprit.outcome));
      assert.match(
        culprit.outcome.ok ? '' : culprit.outcome.error.message,
        /could not be interrupted.*call \d+ of plugin wedger@1\.0\.0 held it/,
      );
      // the read ran again in the new process, with what its first run left of the request budget
      const read = await reader;
      assert.deepEqual(
        read.result,
        { tag: 'reader', status: 200, again: true, max: 9, left: 8 },
        JSON.stringify(read.outcome),
      );
      assert.deepEqual(
        up.received.slice(seen).map((r) => r.method),
        ['GET', 'GET'],
      );
      assert.equal(sandbox.stats().reruns, 1);
      assert.notEqual(sandbox.stats().pid, pid);
      // the worker's mark named the call that held it: its plugin alone is struck
      assert.deepEqual(
        sandbox.stats().quarantined.map((q) => q.plugin),
        ['wedger@1.0.0'],
      );
      assert.equal(
        errorCode(await callTool(sandbox, bridge, { name: 'wedger', source: WEDGE, tool: 'run' })),
        'GW_ERR_SANDBOX_QUARANTINED',
      );
      assert.equal(
        (await callTool(sandbox, bridge, { name: 'bystander', source: BYSTANDER, tool: 'quick' })).result,
        'quick',
      );
    } finally {
      await sandbox.close();
    }
  });

  it("when V8 gives up on the culprit's isolate: runs again only the other plugins' calls that had sent nothing but GET", async () => {
    // one worker holding calls parked on ctx.http: the wedging step then runs on isolated-vm's thread
    // pool, where V8 running out of memory in the compiler ends the isolate (a catastrophic error
    // naming its plugin) instead of wedging the worker
    const source = WEDGE.replace(
      'export default {',
      "export default { async read(ctx) { const r = await ctx.http('https://api.example.com/slow?ms=10000&tag=culprit-read'); return r.status; },",
    );
    // (not quarantined after one crash: a quarantined plugin's call would not run again anyway)
    const sandbox = await createSandbox({
      workers: 1,
      callsPerWorker: 8,
      maxQueue: 10,
      quarantineAfterCrashes: 5,
      quarantineWindowMs: 60_000,
      maxWorkerShare: 1,
    });
    try {
      const seen = up.received.length;
      const slow = { wallMsPerCall: 30_000 };
      const reader = callTool(sandbox, bridge, {
        name: 'bystander',
        source: BYSTANDER,
        tool: 'read',
        args: { tag: 'reader' },
        limits: slow,
      });
      const writer = callTool(sandbox, bridge, {
        name: 'bystander',
        source: BYSTANDER,
        tool: 'write',
        args: { tag: 'writer' },
        limits: slow,
      });
      // another version of the culprit (its source differs): a plugin being upgraded is suspect in either version
      const culpritsRead = callTool(sandbox, bridge, {
        name: 'wedger',
        source: `${source}\n// 1.0.1`,
        tool: 'read',
        limits: slow,
      });
      // 7 requests made of its 10: a second run, which starts from the beginning, would run out
      const greedy = callTool(sandbox, bridge, {
        name: 'bystander',
        source: BYSTANDER,
        tool: 'readMany',
        args: { tag: 'greedy' },
        limits: slow,
      });
      await waitFor(() => up.received.length >= seen + 10);
      const culprit = await callTool(sandbox, bridge, { name: 'wedger', source, limits: WEDGE_LIMITS });
      assert.equal(errorCode(culprit), 'GW_ERR_SANDBOX_CRASHED', JSON.stringify(culprit.outcome));
      assert.match(culprit.outcome.ok ? '' : culprit.outcome.error.message, /a call of this plugin brought it down/);
      const read = await reader;
      assert.deepEqual(
        read.result,
        { tag: 'reader', status: 200, again: true, max: 9, left: 8 },
        JSON.stringify(read.outcome),
      );
      const wrote = await writer;
      assert.equal(errorCode(wrote), 'GW_ERR_SANDBOX_CRASHED', 'it had sent a POST: it may have changed something');
      assert.match(
        wrote.outcome.ok ? '' : wrote.outcome.error.message,
        /another call in the same sandbox process brought it down/,
      );
      const many = await greedy;
      assert.equal(errorCode(many), 'GW_ERR_SANDBOX_CRASHED', 'fewer requests left than it had made: not run again');
      const own = await culpritsRead;
      assert.equal(errorCode(own), 'GW_ERR_SANDBOX_CRASHED', "the culprit plugin's own read is not run again");
      assert.match(own.outcome.ok ? '' : own.outcome.error.message, /a call of this plugin brought it down/);
      const asked = up.received
        .slice(seen)
        .map((r) => `${r.method} ${new URL(r.url, 'http://x').searchParams.get('tag')}`);
      assert.deepEqual(asked.filter((a) => a !== 'GET greedy').sort(), [
        'GET culprit-read',
        'GET reader',
        'GET reader',
        'POST writer',
      ]);
      assert.equal(asked.filter((a) => a === 'GET greedy').length, 7);
      assert.equal(sandbox.stats().reruns, 1);
      assert.deepEqual(sandbox.stats().quarantined, []);
    } finally {
      await sandbox.close();
    }
  });

  it('does not blame a call queued behind the wedge, even when its deadline comes first; that call runs again', async () => {
    // one worker and one CPU slot: the wedger takes it first (IPC and the slot queue keep order) and
    // the victim waits behind it; the victim's watchdog would fire long before the wedger's
    const sandbox = await createSandbox({
      workers: 1,
      callsPerWorker: 2,
      maxQueue: 10,
      quarantineAfterCrashes: 1,
      quarantineWindowMs: 60_000,
      maxWorkerShare: 1,
    });
    try {
      const culprit = callTool(sandbox, bridge, {
        name: 'wedger',
        source: WEDGE,
        limits: { ...WEDGE_LIMITS, wallMsPerCall: 20_000 },
      });
      const victim = callTool(sandbox, bridge, {
        name: 'queued-victim',
        source: SLOW,
        tool: 'quick',
        limits: { wallMsPerCall: 15_000 },
      });
      const [c, v] = await Promise.all([culprit, victim]);
      assert.equal(errorCode(c), 'GW_ERR_SANDBOX_TIMEOUT', JSON.stringify(c.outcome));
      // it never started (so it changed nothing), and ~12 s of its 15 were left: it ran in the new process
      assert.equal(v.result, 'quick', JSON.stringify(v.outcome));
      assert.equal(sandbox.stats().reruns, 1);
      assert.deepEqual(
        sandbox.stats().quarantined.map((q) => q.plugin),
        ['wedger@1.0.0'],
      );
      assert.equal(
        (await callTool(sandbox, bridge, { name: 'queued-victim', source: SLOW, tool: 'quick' })).result,
        'quick',
      );
    } finally {
      await sandbox.close();
    }
  });
});

describe('signals and shutdown', () => {
  it('SIGINT and SIGTERM do not end the sandbox process (the host stops it itself): the call in flight completes', async () => {
    const sandbox = await createSandbox({
      workers: 1,
      maxQueue: 5,
      quarantineAfterCrashes: 5,
      quarantineWindowMs: 60_000,
      maxWorkerShare: 1,
    });
    try {
      const pid = sandbox.stats().pid as number;
      const seen = up.received.length;
      const call = callTool(sandbox, bridge, { name: 'signalled', source: SLOW, args: { ms: 1500 }, limits: LONG });
      await waitFor(() => up.received.length > seen);
      process.kill(pid, 'SIGINT');
      process.kill(pid, 'SIGTERM');
      const done = await call;
      assert.equal(done.result, 'slept', JSON.stringify(done.outcome));
      assert.equal(sandbox.stats().pid, pid);
      assert.equal(sandbox.stats().crashes, 0);
    } finally {
      await sandbox.close();
    }
  });

  it('once shutdown has begun, a sandbox process that dies is not restarted, counted as a crash, or blamed on a plugin', async () => {
    const lines: Array<{ level: string; msg: string }> = [];
    const logger = {
      info: (_: object, msg: string) => lines.push({ level: 'info', msg }),
      warn: (_: object, msg: string) => lines.push({ level: 'warn', msg }),
      error: (_: object, msg: string) => lines.push({ level: 'error', msg }),
    };
    const sandbox = await createSandbox({
      workers: 1,
      maxQueue: 5,
      quarantineAfterCrashes: 1,
      quarantineWindowMs: 60_000,
      maxWorkerShare: 1,
      logger,
    });
    try {
      const pid = sandbox.stats().pid as number;
      const seen = up.received.length;
      const call = callTool(sandbox, bridge, { name: 'innocent', source: SLOW, args: { ms: 3000 }, limits: LONG });
      await waitFor(() => up.received.length > seen);
      sandbox.beginShutdown();
      process.kill(pid, 'SIGKILL');
      const died = await call;
      assert.equal(errorCode(died), 'GW_ERR_SANDBOX_CRASHED');
      assert.doesNotMatch(died.outcome.ok ? '' : died.outcome.error.message, /restart/);
      const later = await callTool(sandbox, bridge, { name: 'innocent', source: SLOW, tool: 'quick' });
      assert.equal(
        errorCode(later),
        'GW_ERR_SANDBOX_UNAVAILABLE',
        'no new sandbox process is started during a shutdown',
      );
      const stats = sandbox.stats();
      assert.equal(stats.crashes, 0);
      assert.equal(stats.restarts, 0);
      assert.deepEqual(stats.quarantined, []);
      assert.equal(lines.filter((l) => l.level === 'error').length, 0, JSON.stringify(lines));
      assert.equal(lines.filter((l) => l.msg === 'sandbox process ready').length, 1, JSON.stringify(lines));
      assert.ok(
        lines.some((l) => l.level === 'warn' && /during shutdown/.test(l.msg)),
        JSON.stringify(lines),
      );
    } finally {
      await sandbox.close();
    }
  });
});

describe('admission', () => {
  it("counts a call's wall-clock deadline from when the host sent it, time waiting in the sandbox for a worker included", async () => {
    // one worker, two calls in it: the spinner holds the worker's only CPU slot for ~1.5 s; the
    // quick call, sent just after it with a 1 s deadline, waits in the sandbox process for the slot
    const sandbox = await createSandbox({
      workers: 1,
      callsPerWorker: 2,
      maxQueue: 10,
      quarantineAfterCrashes: 5,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
    });
    try {
      const SPIN = `export default { async run() { const end = Date.now() + 1500; while (Date.now() < end) {} return 'spun'; }, async quick() { return 'quick'; } };`;
      const spinner = callTool(sandbox, bridge, {
        name: 'spinner',
        source: SPIN,
        limits: { cpuMsPerCall: 4000, wallMsPerCall: 8000 },
      });
      const queued = await callTool(sandbox, bridge, {
        name: 'queued',
        source: SPIN,
        tool: 'quick',
        limits: { wallMsPerCall: 1000 },
      });
      assert.equal((await spinner).result, 'spun');
      assert.equal(errorCode(queued), 'GW_ERR_SANDBOX_TIMEOUT', JSON.stringify(queued.outcome));
      assert.match(queued.outcome.ok ? '' : queued.outcome.error.message, /wall-clock deadline of 1000 ms/);
    } finally {
      await sandbox.close();
    }
  });

  it('caps the workers one plugin may occupy (maxWorkerShare)', async () => {
    const sandbox = await createSandbox({
      workers: 2,
      maxQueue: 10,
      quarantineAfterCrashes: 5,
      quarantineWindowMs: 1000,
      maxWorkerShare: 0.5,
    });
    try {
      let hogActive = 0;
      let hogPeak = 0;
      const hog = (): Promise<unknown> =>
        sandbox.run(
          {
            callId: 'h',
            plugin: { name: 'hog', version: '1.0.0', source: SLOW, sourceHash: 'hog' },
            tool: 'run',
            argsJson: '{"ms":300}',
            config: {},
            limits: {
              memoryMb: 32,
              cpuMsPerCall: 500,
              wallMsPerCall: 5000,
              maxResultBytes: 1000,
              maxArgsBytes: 1000,
              maxRequestsPerCall: 2,
              maxRequestBodyBytes: 1000,
            },
          },
          async (req: BridgeRequest): Promise<BridgeResult> => {
            hogPeak = Math.max(hogPeak, ++hogActive);
            try {
              return await bridge.dispatch(req, {
                manifest: manifest({ name: 'hog' }),
                getCredential: async () => undefined,
                requestCount: { n: 0 },
                maxRequests: 2,
                signal: new AbortController().signal,
              });
            } finally {
              hogActive--;
            }
          },
        );
      const t0 = Date.now();
      const hogs = Promise.all([hog(), hog(), hog()]).then(() => Date.now());
      await sleep(50);
      const other = await callTool(sandbox, bridge, { name: 'other', source: SLOW, tool: 'quick' });
      const otherDone = Date.now();
      const hogsDone = await hogs;
      assert.equal(other.result, 'quick');
      assert.equal(hogPeak, 1, 'the hog never held more than ceil(0.5 × 2) = 1 worker');
      assert.ok(otherDone < hogsDone, 'another plugin was served while the hog calls waited');
      assert.ok(hogsDone - t0 >= 850, 'the hog calls ran one after another');
    } finally {
      await sandbox.close();
    }
  });

  it('refuses calls beyond maxQueue with GW_ERR_SANDBOX_OVERLOADED', async () => {
    const sandbox = await createSandbox({
      workers: 1,
      maxQueue: 1,
      quarantineAfterCrashes: 5,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
    });
    try {
      const calls = [0, 1, 2].map(() => callTool(sandbox, bridge, { name: 'busy', source: SLOW, args: { ms: 200 } }));
      const codes = (await Promise.all(calls)).map((r) => errorCode(r) ?? 'ok');
      assert.deepEqual(codes.sort(), ['GW_ERR_SANDBOX_OVERLOADED', 'ok', 'ok']);
    } finally {
      await sandbox.close();
    }
  });

  it('close() lets the call in flight finish, refuses new ones, and ends the process', async () => {
    const sandbox = await createSandbox({
      workers: 1,
      maxQueue: 5,
      quarantineAfterCrashes: 5,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
    });
    const pid = sandbox.stats().pid as number;
    const seen = up.received.length;
    const inFlight = callTool(sandbox, bridge, { name: 'closing', source: SLOW, args: { ms: 300 } });
    await waitFor(() => up.received.length > seen);
    const closing = sandbox.close();
    assert.equal(
      errorCode(await callTool(sandbox, bridge, { name: 'closing', source: SLOW, tool: 'quick' })),
      'GW_ERR_SANDBOX_UNAVAILABLE',
    );
    assert.equal((await inFlight).result, 'slept');
    await closing;
    await waitFor(() => !alive(pid));
    assert.equal(sandbox.stats().ready, false);
  });
});
