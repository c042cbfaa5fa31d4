/**
 * @module test/faults/limits
 * The limits a multi-tenant operator sets in policy, end to end over HTTP: request body size
 * (413, JSON), batch length (an isError invalid-arguments result over MCP, 400 over REST),
 * per-user and per-tenant rate limits (GW_ERR_POLICY_RATE_LIMITED with retryAfterSec; REST 429 +
 * Retry-After; executions of unknown tools count; meta-tool calls have a budget of their own), the rate limiter's clock (monotonic: a wall clock stepped either way changes no
 * window), its memory bound (ended windows go first, then the oldest running one, never all at
 * once), and the per-plugin worker share (a slow plugin saturating its share
 * while another stays fast).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRateLimiter, RATE_LIMIT_MAX_KEYS } from '../../host/engine/rate-limit.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type Item, type TestGateway } from '../helpers/gateway.js';
import { startFaultUpstream, type FaultUpstream } from '../helpers/fault-upstream.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const FAULT_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'fault-plugins');

const echo = (text: string) => ({ tool: 'echo_args', args: { text } });

describe('limits: body size and batch length', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { requests: { bodyLimitBytes: 2048, maxBatch: 3 } },
    });
  });
  after(async () => gw.close());

  it('a REST body over requests.bodyLimitBytes is 413 with a JSON error', async () => {
    const r = await gw.rest('fixture-echo', { tool: 'echo_args', args: { text: 'x'.repeat(4096) } });
    assert.equal(r.status, 413);
    assert.equal(r.json.code, 'GW_ERR_TRANSPORT_BODY_TOO_LARGE');
    assert.equal(typeof r.json.error, 'string');
    const ok = await gw.rest('fixture-echo', { tool: 'echo_args', args: { text: 'x'.repeat(1000) } });
    assert.equal(ok.status, 200, 'a body under the limit still passes');
  });

  it('an MCP body over the limit is 413 with a JSON-RPC error', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${gw.apiKey}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'execute_tools', arguments: { executions: [echo('y'.repeat(4096))] } },
      }),
    });
    assert.equal(res.status, 413);
    const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(typeof body.error.message, 'string');
  });

  it('a batch over requests.maxBatch: an invalid-arguments result over MCP, 400 over REST; at the limit it runs', async () => {
    const client = await gw.mcpClient();
    const over = (await client.callTool({
      name: 'execute_tools',
      arguments: { executions: [echo('1'), echo('2'), echo('3'), echo('4')] },
    })) as { content: { text: string }[]; isError?: boolean };
    assert.equal(over.isError, true);
    const refused = JSON.parse(over.content[0]?.text ?? '{}');
    assert.equal(refused.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
    assert.match(refused.error, /^Invalid arguments for execute_tools: executions: .*3/);
    const r = await gw.rest('fixture-echo', { executions: [echo('1'), echo('2'), echo('3'), echo('4')] });
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'GW_ERR_TRANSPORT_BATCH_TOO_LARGE');
    const ok = await gw.rest('fixture-echo', { executions: [echo('1'), echo('2'), echo('3')] });
    assert.deepEqual(
      ok.json.results.map((x: Item) => x.result?.text),
      ['1', '2', '3'],
    );
  });
});

describe('limits: per-user and per-tenant rate limits', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { requests: { perUserPerMinute: 3, perTenantPerMinute: 5 } },
    });
  });
  after(async () => gw.close());

  it('per user: items past the budget get GW_ERR_POLICY_RATE_LIMITED with retryAfterSec; REST 429 with Retry-After', async () => {
    const r = await gw.rest('fixture-echo', { executions: [echo('a'), echo('b'), echo('c'), echo('d')] });
    assert.equal(r.status, 200);
    const items = r.json.results as Item[];
    assert.deepEqual(
      items.slice(0, 3).map((x) => x.result?.text),
      ['a', 'b', 'c'],
    );
    assert.equal(items[3]?.code, 'GW_ERR_POLICY_RATE_LIMITED');
    assert.ok(
      Number.isInteger(items[3]?.retryAfterSec) && items[3].retryAfterSec >= 1 && items[3].retryAfterSec <= 60,
      JSON.stringify(items[3]),
    );
    const single = await gw.rest('fixture-echo', { tool: 'echo_args', args: { text: 'e' } });
    assert.equal(single.status, 429);
    assert.equal(single.json.code, 'GW_ERR_POLICY_RATE_LIMITED');
    const header = Number(single.headers.get('retry-after'));
    assert.ok(header >= 1 && header <= 60, `Retry-After: ${single.headers.get('retry-after')}`);
    assert.equal(header, single.json.retryAfterSec);
  });

  it('per tenant: a second user of the same tenant shares the tenant budget; refused items do not spend it; other tenants are unaffected', async () => {
    // the tenant has spent 3 of 5 (the refused items above must not count)
    const second = await gw.createUser('second@example.com', 'acme');
    const r = await gw.rest('fixture-echo', { executions: [echo('f'), echo('g'), echo('h')] }, second.apiKey);
    const items = r.json.results as Item[];
    assert.deepEqual(
      items.map((x) => x.result?.text ?? x.code),
      ['f', 'g', 'GW_ERR_POLICY_RATE_LIMITED'],
    );
    const client = await gw.mcpClient(second.apiKey);
    const res = (await client.callTool({ name: 'execute_tools', arguments: { executions: [echo('i')] } })) as {
      content: Array<{ text: string }>;
    };
    const mcpItem = JSON.parse(res.content[0]!.text).results[0] as Item;
    assert.equal(mcpItem.code, 'GW_ERR_POLICY_RATE_LIMITED');
    assert.ok(mcpItem.retryAfterSec >= 1);
    const other = await gw.createUser('other@example.com', 'globex');
    const o = await gw.execute('echo_args', { text: 'other tenant' }, other.apiKey);
    assert.equal(o.result?.text, 'other tenant');
    const limited = await gw.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_events WHERE error_code = 'GW_ERR_POLICY_RATE_LIMITED'",
    );
    assert.equal(limited!.n, 4, 'every refused execution is audited');
  });
});

describe('limits: what the budgets count', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { requests: { perUserPerMinute: 3, metaCallsPerUserPerMinute: 3 } },
    });
  });
  after(async () => gw.close());

  it('executions of a tool that does not exist take from the execution budget (each is audited)', async () => {
    const user = await gw.createUser('unknown-tools@example.com');
    const r = await gw.rest(
      'fixture-echo',
      { executions: [{ tool: 'no_such_tool' }, { tool: 'no_such_tool' }, { tool: 'no_such_tool' }, echo('late')] },
      user.apiKey,
    );
    const items = r.json.results as Item[];
    assert.deepEqual(
      items.map((x) => x.code),
      [
        'GW_ERR_ENGINE_TOOL_NOT_FOUND',
        'GW_ERR_ENGINE_TOOL_NOT_FOUND',
        'GW_ERR_ENGINE_TOOL_NOT_FOUND',
        'GW_ERR_POLICY_RATE_LIMITED',
      ],
    );
    const client = await gw.mcpClient(user.apiKey);
    const res = (await client.callTool({
      name: 'execute_tools',
      arguments: { executions: [{ tool: 'still_no_such_tool' }] },
    })) as { content: Array<{ text: string }> };
    const item = JSON.parse(res.content[0]!.text).results[0] as Item;
    assert.equal(item.code, 'GW_ERR_POLICY_RATE_LIMITED', 'an unknown tool past the budget is refused for the budget');
    assert.equal(item.tool, 'still_no_such_tool');
    assert.ok(item.retryAfterSec >= 1);
  });

  it('meta-tool calls have a budget of their own (requests.metaCallsPerUserPerMinute); execute_tools and continue_tool_result take nothing from it', async () => {
    const user = await gw.createUser('meta-calls@example.com');
    const client = await gw.mcpClient(user.apiKey);
    const call = async (name: string, args: Record<string, unknown>) => {
      const res = (await client.callTool({ name, arguments: args })) as {
        content: Array<{ text: string }>;
        isError?: boolean;
      };
      return { isError: res.isError === true, json: JSON.parse(res.content[0]!.text) };
    };
    const ran = await call('execute_tools', { executions: [echo('first')] });
    assert.equal(ran.json.results[0].result.text, 'first');
    for (const name of ['search_tools', 'get_tool_schema', 'list_integrations']) {
      const r = await call(
        name,
        name === 'search_tools' ? { query: 'echo' } : name === 'get_tool_schema' ? { tool: 'echo_args' } : {},
      );
      assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.json)}`);
    }
    const over = await call('search_tools', { query: 'echo' });
    assert.equal(over.isError, true);
    assert.equal(over.json.code, 'GW_ERR_POLICY_RATE_LIMITED');
    assert.match(over.json.error, /metaCallsPerUserPerMinute/);
    assert.ok(
      Number.isInteger(over.json.retryAfterSec) && over.json.retryAfterSec >= 1 && over.json.retryAfterSec <= 60,
    );
    assert.equal((await call('whoami', {})).json.code, 'GW_ERR_POLICY_RATE_LIMITED', 'every other meta-tool counts');
    // executions still run (their own budget: 1 of 3 spent), and a stored result can still be paged
    const again = await call('execute_tools', { executions: [echo('second')] });
    assert.equal(again.json.results[0].result.text, 'second');
    const paged = await call('continue_tool_result', { continuationId: 'nope', part: 1 });
    assert.notEqual(paged.json.code, 'GW_ERR_POLICY_RATE_LIMITED', JSON.stringify(paged.json));
    // REST's catalog reads (what list_integrations and get_tool_schema answer) take from it too
    const listed = await fetch(`${gw.url}/rest`, { headers: { authorization: `Bearer ${user.apiKey}` } });
    assert.equal(listed.status, 429);
    assert.equal(
      Number(listed.headers.get('retry-after')),
      ((await listed.json()) as { retryAfterSec: number }).retryAfterSec,
    );
    const metrics = await fetch(`${gw.url}/metrics`).then((r) => r.text());
    assert.equal(
      Number(/^workbench_meta_calls_refused_total (\d+)$/m.exec(metrics)?.[1]),
      3,
      'search_tools, whoami and GET /rest were refused',
    );
    // another user has a budget of their own, which GET /rest/:integration spends
    const other = await gw.createUser('meta-other@example.com');
    const theirs = (await (
      await gw.mcpClient(other.apiKey)
    ).callTool({ name: 'search_tools', arguments: { query: 'echo' } })) as { isError?: boolean };
    assert.notEqual(theirs.isError, true);
    const read = async () =>
      (await fetch(`${gw.url}/rest/fixture-echo`, { headers: { authorization: `Bearer ${other.apiKey}` } })).status;
    assert.deepEqual([await read(), await read(), await read()], [200, 200, 429]);
  });
});

describe('limits: the rate limiter times its windows on a clock the wall clock cannot move', () => {
  it('a wall clock stepped an hour forward or back neither refreshes a spent budget nor stretches its wait', (t) => {
    const HOUR = 3_600_000;
    const wall = { t: Date.UTC(2030, 0, 1) };
    t.mock.method(Date, 'now', () => wall.t);
    // the production default clock, as the gateway creates it
    const { take } = createRateLimiter({ perUserPerMinute: 3, perTenantPerMinute: 5 });
    for (let i = 0; i < 3; i++) assert.equal(take('u1', 'acme'), undefined);
    const waitFor = (user: string): number => {
      const wait = take(user, 'acme');
      assert.ok(wait !== undefined && wait >= 1 && wait <= 60, `${user} is refused for at most a minute: ${wait}`);
      return wait;
    };
    waitFor('u1');

    wall.t += HOUR;
    waitFor('u1');
    assert.equal(take('u2', 'acme'), undefined);
    assert.equal(take('u2', 'acme'), undefined, 'the tenant has spent 5 of 5');
    assert.ok(take('u3', 'acme') !== undefined, 'a step forward does not end the tenant window either');

    wall.t -= 2 * HOUR;
    waitFor('u1');
    waitFor('u3');

    // a budget spent after the step back: the next step back does not stretch its wait to an hour
    const other = createRateLimiter({ perUserPerMinute: 1, perTenantPerMinute: 0 });
    assert.equal(other.take('v1', 'globex'), undefined);
    wall.t -= HOUR;
    const wait = other.take('v1', 'globex');
    assert.ok(wait !== undefined && wait >= 1 && wait <= 60, `refused for at most a minute: ${wait}`);
  });
});

describe('limits: the rate limiter stays bounded without handing out fresh budgets', () => {
  /** a limiter on a clock the test moves by hand */
  const limiter = (limits: { perUserPerMinute: number; perTenantPerMinute: number }, maxKeys?: number) => {
    const clock = { t: 0 };
    return { clock, take: createRateLimiter(limits, () => clock.t, maxKeys).take };
  };
  const spend = (
    take: (u: string, t: string) => number | undefined,
    user: string,
    times: number,
    tenant = 'acme',
  ): void => {
    for (let i = 0; i < times; i++) assert.equal(take(user, tenant), undefined, `${user} take ${i + 1} is allowed`);
  };

  it('at the bound, windows that have ended are dropped first: a caller who spent the budget stays refused', () => {
    const { clock, take } = limiter({ perUserPerMinute: 3, perTenantPerMinute: 0 });
    for (let i = 0; i < RATE_LIMIT_MAX_KEYS - 10; i++) take(`old${i}`, 'acme');
    clock.t = 61_000;
    spend(take, 'victim', 3);
    assert.equal(take('victim', 'acme'), 60);
    for (let i = 0; i < 20; i++) assert.equal(take(`new${i}`, 'acme'), undefined);
    clock.t = 90_000;
    assert.equal(take('victim', 'acme'), 31, 'still refused, with the time left in its own window');
  });

  it('when every window is still running, only the one that started first is forgotten', () => {
    const { clock, take } = limiter({ perUserPerMinute: 3, perTenantPerMinute: 0 });
    spend(take, 'first', 3);
    clock.t = 1_000;
    spend(take, 'victim', 3);
    clock.t = 2_000;
    for (let i = 2; i < RATE_LIMIT_MAX_KEYS; i++) assert.equal(take(`u${i}`, 'acme'), undefined);
    assert.equal(take('first', 'acme'), 58, 'at the bound nothing is forgotten yet');
    assert.equal(take('victim', 'acme'), 59);
    assert.equal(take('one-more', 'acme'), undefined, 'a new key past the bound');
    assert.equal(take('victim', 'acme'), 59, 'the second oldest window keeps its spent budget');
    assert.equal(take(`u${RATE_LIMIT_MAX_KEYS - 1}`, 'acme'), undefined, 'the newest keep theirs too');
    assert.equal(take('first', 'acme'), undefined, 'the oldest window was forgotten: its key starts afresh');
  });

  it('making room for a user window never drops the tenant window the same take spends from', () => {
    const { clock, take } = limiter({ perUserPerMinute: 100, perTenantPerMinute: 3 }, 4);
    assert.equal(take('a', 'acme'), undefined); // t:acme, u:a
    clock.t = 1_000;
    assert.equal(take('b', 'globex'), undefined); // t:globex, u:b: at the bound
    clock.t = 2_000;
    assert.equal(take('c', 'acme'), undefined, 'u:c takes the place of u:a, not of t:acme');
    assert.equal(take('d', 'acme'), undefined, 'u:d takes the place of t:globex');
    assert.equal(take('e', 'acme'), 58, 'the tenant spent 3 of 3 in its first window');
    assert.equal(take('b', 'globex'), undefined, 'globex was forgotten and starts afresh');
  });

  // Its cost per take at the bound is a matter for a benchmark, not a timed assertion; this runs
  // the bound over four times its size and checks what it keeps.
  it('keeps working over many times its bound, forgetting the first users and never the tenant being spent', () => {
    const N = 4 * RATE_LIMIT_MAX_KEYS;
    const { clock, take } = limiter({ perUserPerMinute: 5, perTenantPerMinute: N + 5 });
    for (let i = 0; i < 5; i++) assert.equal(take('u0', 'acme'), undefined);
    assert.notEqual(take('u0', 'acme'), undefined, 'u0 spent its budget');
    // every take adds a user window at the bound, with the tenant's window the oldest of all
    for (let i = 1; i < N; i++) {
      if (i % 1000 === 0) clock.t += 1;
      assert.equal(take(`u${i}`, 'acme'), undefined);
    }
    assert.equal(take('u0', 'acme'), undefined, 'u0 was forgotten long ago and starts afresh');
    assert.notEqual(take('u-last', 'acme'), undefined, 'the tenant window was kept throughout: its N + 5 are spent');
  });
});

describe('limits: one plugin cannot take more than its share of the workers', () => {
  let gw: TestGateway;
  let up: FaultUpstream;
  before(async () => {
    up = await startFaultUpstream('slow');
    up.slowMs = 1500;
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES, FAULT_PLUGINS],
      upstreams: { 'https://api.faults.test': up.origin },
      workers: 4,
      // one user makes every call: its own share (maxUserShare, tested in test/host/engine/user-fair-share) is lifted
      policy: { sandbox: { maxWorkerShare: 0.5, maxUserShare: 1, callsPerWorker: 1 } },
    });
  });
  after(async () => {
    await gw.close();
    await up.close();
  });

  it('a slow plugin saturating its share (2 of 4 workers) leaves room for a fast plugin', async () => {
    await gw.execute('echo_args', { text: 'warm' });
    const slow = gw.rest('fixture-faults', {
      executions: Array.from({ length: 6 }, (_, i) => ({ tool: 'faults_slow', args: { tag: `s${i}` } })),
    });
    const deadline = Date.now() + 10_000;
    while (up.inFlight < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const stats = gw.gateway.sandbox.stats();
    assert.ok(stats.queued >= 1, `the slow plugin's extra calls wait: ${JSON.stringify(stats)}`);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const item = await gw.execute('echo_args', { text: `fast${i}` });
      times.push(performance.now() - t0);
      assert.equal(item.result?.text, `fast${i}`);
    }
    const r = await slow;
    assert.deepEqual(
      r.json.results.map((x: Item) => x.result?.tag),
      ['s0', 's1', 's2', 's3', 's4', 's5'],
    );
    assert.equal(up.maxInFlight, 2, 'ceil(0.5 × 4) = 2 calls of one plugin at once');
    assert.ok(
      Math.max(...times) < up.slowMs,
      `fast calls did not wait for the slow plugin: ${times.map(Math.round).join(', ')} ms`,
    );
  });
});
