/**
 * @module test/security/hostile-starvation.test
 * A hostile plugin tries to starve the sandbox pool: busy loops, never-settling promises, endless
 * microtasks, floods of ctx.http and memory bombs. Each call ends with a clear code within its
 * limits, and legitimate plugins keep answering quickly WHILE the attacks hold their share of the
 * workers (2 workers, maxWorkerShare 0.5: the hostile plugin gets at most one).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { startSecurityGateway, type Json, type SecurityGateway } from '../helpers/security-gateway.js';

// Steps long enough that a legitimate round's own time, which a busy machine stretches, stays far
// under a hog's: the four hogs hold their worker ~5 s in all, so many legitimate rounds fit beside.
const HOG_LIMITS = { cpuMsPerCall: 1200, wallMsPerCall: 4500, memoryMb: 32, maxRequestsPerCall: 10 };
/** A legit round stuck behind a hog would wait >= cpuMsPerCall; the machine is shared, so the median is judged. */
const LEGIT_MEDIAN_BUDGET_MS = HOG_LIMITS.cpuMsPerCall * 0.75;

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? Infinity;

describe('a hostile plugin starving the pool', () => {
  let gw: SecurityGateway;
  let up: Upstream;
  let apiKey: string;

  before(async () => {
    up = await startUpstream((req) => ({ json: { path: req.path } }));
    gw = await startSecurityGateway({
      upstreams: { 'https://api.hostile.test': up.origin, 'https://api.fixture.test': up.origin },
      policy: { sandbox: { workers: 2, maxWorkerShare: 0.5 }, plugins: { 'hostile-hog': { limits: HOG_LIMITS } } },
    });
    const u = await gw.createUser('hog@example.com');
    apiKey = u.apiKey;
    await gw.connect('fixture-http', u.user, 'tok-legit');
    // warm both plugins' isolates so cold starts do not count against the budget
    await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: 'warm' } }], apiKey);
    await gw.batch('fixture-http', [{ tool: 'http_get', args: { path: '/warm' } }], apiKey);
  });

  after(async () => {
    await gw?.close();
    await up?.close();
  });

  /** Runs legitimate calls one after another until `stop` resolves; returns their latencies. */
  async function legitCallsUntil(
    stop: Promise<unknown>,
    minCalls: number,
  ): Promise<{ during: number[]; all: number[] }> {
    let done = false;
    void stop.then(() => (done = true));
    const latencies: number[] = [];
    const during: number[] = [];
    for (let i = 0; !done || i < minCalls; i++) {
      const t0 = performance.now();
      const [echo] = await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: `legit-${i}` } }], apiKey);
      const [http] = await gw.batch('fixture-http', [{ tool: 'http_get', args: { path: `/legit-${i}` } }], apiKey);
      latencies.push(performance.now() - t0);
      if (!done) during.push(performance.now() - t0);
      assert.equal(echo.result?.text, `legit-${i}`, JSON.stringify(echo));
      assert.equal(http.result?.body?.path, `/legit-${i}`, JSON.stringify(http));
      if (i >= 200) break;
    }
    return { during, all: latencies };
  }

  it("keeps legitimate calls fast while busy loops hold the hostile plugin's share", async () => {
    let hogsDone = false;
    const t0 = performance.now();
    const hogs = gw
      .batch(
        'hostile-hog',
        Array.from({ length: 4 }, () => ({ tool: 'hog_busy' })),
        apiKey,
      )
      .then((r) => {
        hogsDone = true;
        return r;
      });
    await new Promise((r) => setTimeout(r, 50)); // let the first hog take its worker
    const { during, all } = await legitCallsUntil(hogs, 5);
    const hogItems = await hogs;
    const hogMs = performance.now() - t0;
    assert.ok(hogMs >= 4 * HOG_LIMITS.cpuMsPerCall * 0.9, `the four hogs ran one at a time (${Math.round(hogMs)} ms)`);
    assert.ok(
      hogItems.every((r: Json) => r.code === 'GW_ERR_SANDBOX_TIMEOUT'),
      JSON.stringify(hogItems),
    );
    const shown = `legit rounds during the attack: ${during.map(Math.round).join(', ')} ms; after: ${all.slice(during.length).map(Math.round).join(', ')} ms`;
    assert.ok(during.length >= 4, `legitimate calls kept completing while the hogs ran (${shown})`);
    assert.ok(median(during) < LEGIT_MEDIAN_BUDGET_MS, shown);
    assert.ok(hogsDone);
  });

  it('answers a mixed MCP batch index-aligned: hogs time out, legitimate items succeed', async () => {
    const executions = [
      { tool: 'hog_busy' },
      { tool: 'echo_args', args: { text: 'one' } },
      { tool: 'hog_microtasks' },
      { tool: 'http_get', args: { path: '/mixed' } },
      { tool: 'hog_never' },
      { tool: 'echo_args', args: { text: 'two' } },
    ];
    const t0 = performance.now();
    const legit = gw
      .mcpExecute([{ tool: 'echo_args', args: { text: 'concurrent' } }], apiKey)
      .then((r) => ({ r, ms: performance.now() - t0 }));
    const [items, side] = await Promise.all([gw.mcpExecute(executions, apiKey), legit]);
    assert.equal(side.r[0].result?.text, 'concurrent');
    assert.ok(side.ms < 1000, `a concurrent MCP call finished in ${Math.round(side.ms)} ms`);
    assert.equal(items.length, 6);
    assert.equal(items[0].code, 'GW_ERR_SANDBOX_TIMEOUT');
    assert.equal(items[1].result?.text, 'one');
    assert.equal(items[2].code, 'GW_ERR_SANDBOX_TIMEOUT', `endless microtasks: ${JSON.stringify(items[2])}`);
    assert.equal(items[3].result?.body?.path, '/mixed');
    assert.equal(items[4].code, 'GW_ERR_SANDBOX_TIMEOUT', `never settles: ${JSON.stringify(items[4])}`);
    assert.match(items[4].error, /wall-clock|deadline/);
    assert.equal(items[5].result?.text, 'two');
  });

  it('lets a flood of ctx.http through only up to maxRequestsPerCall', async () => {
    const before = up.requests.filter((r) => r.path.startsWith('/flood/')).length;
    const [item] = await gw.batch('hostile-hog', [{ tool: 'hog_flood', args: { n: 200 } }], apiKey);
    const codes = item.result?.codes as Record<string, number>;
    assert.equal(codes['ok 200'], HOG_LIMITS.maxRequestsPerCall, JSON.stringify(item));
    assert.equal(codes['GW_ERR_BRIDGE_TOO_MANY_REQUESTS'], 200 - HOG_LIMITS.maxRequestsPerCall);
    assert.equal(
      up.requests.filter((r) => r.path.startsWith('/flood/')).length - before,
      HOG_LIMITS.maxRequestsPerCall,
      'the upstream saw no more than the budget',
    );
  });

  it('stops a memory bomb with GW_ERR_SANDBOX_MEMORY, and the next calls are clean', async () => {
    const [item] = await gw.batch('hostile-hog', [{ tool: 'hog_memory' }], apiKey);
    assert.equal(item.code, 'GW_ERR_SANDBOX_MEMORY', JSON.stringify(item));
    const [buffers] = await gw.batch('hostile-hog', [{ tool: 'hog_buffers', args: { mb: 512, count: 8 } }], apiKey);
    assert.equal(
      buffers.code,
      'GW_ERR_SANDBOX_MEMORY',
      `4 GiB of ArrayBuffers outside the JS heap: ${JSON.stringify(buffers)}`,
    );
    const again = await gw.batch('hostile-hog', [{ tool: 'hog_flood', args: { n: 1 } }], apiKey);
    assert.deepEqual(
      again[0].result,
      { codes: { 'ok 200': 1 } },
      'the hostile plugin itself still runs after its isolate was disposed',
    );
  });

  it('stays healthy afterwards: full-speed batch, no quarantine of legitimate plugins, audit complete', async () => {
    const t0 = performance.now();
    const items = await gw.mcpExecute(
      Array.from({ length: 16 }, (_, i) => ({ tool: 'echo_args', args: { text: `after-${i}` } })),
      apiKey,
    );
    assert.ok(items.every((r: Json, i: number) => r.result?.text === `after-${i}`));
    assert.ok(performance.now() - t0 < 2000);
    const health = await fetch(`${gw.url}/healthz`);
    assert.equal(health.status, 200);
    const stats = gw.gateway.sandbox.stats();
    assert.ok(stats.ready);
    assert.equal(stats.crashes, 0, 'no attack killed the sandbox process');
    assert.ok(!stats.quarantined.some((q) => q.plugin.startsWith('fixture-')), JSON.stringify(stats.quarantined));
    const rows = await gw.gateway.db.all<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_events WHERE integration = 'hostile-hog'",
    );
    assert.equal(rows[0]?.n, 4 + 3 + 1 + 2 + 1, 'one audit row per hostile execution');
  });
});
