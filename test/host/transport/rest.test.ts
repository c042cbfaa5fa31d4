/**
 * @module test/host/transport/rest
 * POST /rest/:integration and the discovery routes: body shapes, the path's integration being
 * authoritative, and every status code, over real HTTP.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');

describe('REST transport', () => {
  let gw: TestGateway;
  let upstream: Upstream;

  before(async () => {
    upstream = await startUpstream((req) =>
      req.path === '/down' ? { status: 503, body: 'maintenance' } : { json: { path: req.path } },
    );
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      upstreams: { 'https://api.fixture.test': upstream.origin },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const cases: { name: string; integration: string; body: unknown; status: number; check?: (json: any) => void }[] = [
    {
      name: 'wrapped {tool, args}',
      integration: 'fixture-echo',
      body: { tool: 'echo_args', args: { text: 'a' } },
      status: 200,
      check: (j) =>
        assert.deepEqual(j, {
          integration: 'fixture-echo',
          tool: 'echo_args',
          result: { text: 'a', args: { text: 'a', times: 1 } },
        }),
    },
    {
      name: 'flat {tool, ...args}',
      integration: 'fixture-echo',
      body: { tool: 'echo_args', text: 'b', times: 2 },
      status: 200,
      check: (j) => assert.equal(j.result.text, 'bb'),
    },
    {
      name: 'bare tool suffix',
      integration: 'fixture-echo',
      body: { tool: 'args', args: { text: 'c' } },
      status: 200,
      check: (j) => assert.equal(j.tool, 'echo_args'),
    },
    {
      name: 'invalid arguments',
      integration: 'fixture-echo',
      body: { tool: 'echo_args', args: { text: 1 } },
      status: 400,
      check: (j) => assert.match(j.error, /^Invalid arguments for echo_args/),
    },
    {
      name: 'missing tool',
      integration: 'fixture-echo',
      body: { args: {} },
      status: 400,
      check: (j) => assert.equal(j.code, 'GW_ERR_TRANSPORT_BAD_BODY'),
    },
    { name: 'array body', integration: 'fixture-echo', body: [1, 2], status: 400 },
    { name: 'args not an object', integration: 'fixture-echo', body: { tool: 'echo_args', args: 'x' }, status: 400 },
    {
      name: 'tool of another integration',
      integration: 'fixture-echo',
      body: { tool: 'http_get', args: {} },
      status: 404,
      check: (j) => assert.equal(j.error, 'Tool not found'),
    },
    {
      name: 'unknown integration',
      integration: 'nope',
      body: { tool: 'x' },
      status: 404,
      check: (j) => assert.equal(j.code, 'GW_ERR_TRANSPORT_INTEGRATION_NOT_FOUND'),
    },
    {
      name: 'not connected',
      integration: 'fixture-http',
      body: { tool: 'http_get' },
      status: 409,
      check: (j) => assert.equal(j.error, 'NOT_CONNECTED'),
    },
    {
      name: 'handler failure',
      integration: 'fixture-echo',
      body: { tool: 'echo_fail', args: { message: 'upstream broke' } },
      status: 502,
      check: (j) => assert.equal(j.error, 'upstream broke'),
    },
    { name: 'empty batch', integration: 'fixture-echo', body: { executions: [] }, status: 400 },
    { name: 'malformed batch item', integration: 'fixture-echo', body: { executions: [{ args: {} }] }, status: 400 },
    {
      name: 'batch item with an empty tool name',
      integration: 'fixture-echo',
      body: { executions: [{ tool: '', args: {} }] },
      status: 400,
      check: (j) => assert.equal(j.code, 'GW_ERR_TRANSPORT_BAD_BODY'),
    },
    // a misspelt "args" is refused, never dropped (the tool would run with its defaults)
    {
      name: 'batch item with "arguments" for "args"',
      integration: 'fixture-echo',
      body: {
        executions: [
          { tool: 'echo_args', args: { text: 'a' } },
          { tool: 'echo_image', arguments: { x: 1 } },
        ],
      },
      status: 400,
      check: (j) =>
        assert.deepEqual(j, {
          error: 'executions[1] has "arguments": an execution is {"tool": string, "args"?: object}',
          code: 'GW_ERR_TRANSPORT_BAD_BODY',
        }),
    },
    {
      name: 'batch with keys beside "executions"',
      integration: 'fixture-echo',
      body: { executions: [{ tool: 'echo_args', args: { text: 'a' } }], tool: 'echo_args', text: 'b' },
      status: 400,
      check: (j) =>
        assert.equal(
          j.error,
          'A batch body has only "executions"; put "tool" and "text" inside each execution as {"tool", "args"}',
        ),
    },
    {
      name: '"args" and flat arguments mixed',
      integration: 'fixture-echo',
      body: { tool: 'echo_args', args: { text: 'hi' }, times: 4 },
      status: 400,
      check: (j) =>
        assert.equal(
          j.error,
          'The body has "args" and "times": send {"tool", "args": {…}} with every argument inside "args", or {"tool", …args} without "args"',
        ),
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.status}`, async () => {
      const r = await gw.rest(c.integration, c.body);
      assert.equal(r.status, c.status, JSON.stringify(r.json));
      c.check?.(r.json);
    });
  }

  it('a call to an unknown integration is audited too, once per execution asked for', async () => {
    const r = await gw.rest('no-such-plugin', { tool: 'ghost_tool', args: {} });
    assert.equal(r.status, 404);
    assert.equal(r.json.code, 'GW_ERR_TRANSPORT_INTEGRATION_NOT_FOUND');
    const batch = await gw.rest('no-such-plugin', { executions: [{ tool: 'ghost_tool' }, { tool: 'ghost_tool' }] });
    assert.equal(batch.status, 404);
    const rows = await gw.db.all<{ success: number; error_code: string; integration: string | null }>(
      "SELECT success, error_code, integration FROM audit_events WHERE tool = 'ghost_tool'",
    );
    assert.deepEqual(
      rows,
      Array.from({ length: 3 }, () => ({ success: 0, error_code: 'GW_ERR_ENGINE_TOOL_NOT_FOUND', integration: null })),
    );
  });

  it('an unknown tool is audited like every execution (no integration on its event)', async () => {
    const r = await gw.rest('fixture-echo', { tool: 'no_such_tool', args: {} });
    assert.equal(r.status, 404);
    assert.deepEqual(
      { error: r.json.error, code: r.json.code, integration: r.json.integration, tool: r.json.tool },
      {
        error: 'Tool not found',
        code: 'GW_ERR_ENGINE_TOOL_NOT_FOUND',
        integration: 'fixture-echo',
        tool: 'no_such_tool',
      },
    );
    const rows = await gw.db.all<{ action: string; success: number; integration: string | null; transport: string }>(
      "SELECT action, success, integration, transport FROM audit_events WHERE tool = 'no_such_tool'",
    );
    assert.deepEqual(rows, [{ action: 'EXECUTE', success: 0, integration: null, transport: 'rest' }]);
  });

  it('a batch is always 200, index-aligned, with foreign tools not found', async () => {
    const r = await gw.rest('fixture-echo', {
      executions: [
        { tool: 'echo_args', args: { text: 'x' } },
        { tool: 'http_get' },
        { tool: 'echo_fail', args: { message: 'm' } },
      ],
    });
    assert.equal(r.status, 200);
    assert.equal(r.json.results[0].result.text, 'x');
    assert.equal(r.json.results[1].error, 'Tool not found');
    assert.equal(r.json.results[2].error, 'm');
  });

  it("counts the batch's results in UTF-8 bytes, as the policy names them", async () => {
    // each result is ~120,000 characters of "é": ~240,000 bytes; two fit in 300,000 characters, not bytes
    const small = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { requests: { maxBatchResultBytes: 300_000 } },
    });
    try {
      const execution = { tool: 'echo_args', args: { text: 'é'.repeat(20_000), times: 5 } };
      const r = await small.rest('fixture-echo', { executions: [execution, execution] });
      assert.equal(r.status, 200);
      const codes = (r.json.results as { result?: unknown; code?: string }[])
        .map((x) => (x.result ? 'ok' : x.code))
        .sort();
      assert.deepEqual(codes, ['GW_ERR_RESULT_BATCH_TOO_LARGE', 'ok']);
      const dropped = (r.json.results as { code?: string; error?: string }[]).find(
        (x) => x.code === 'GW_ERR_RESULT_BATCH_TOO_LARGE',
      );
      assert.match(
        dropped?.error ?? '',
        /^The results of this batch exceed 300000 bytes; this result \(2\d{5} bytes\) was dropped after its handler ran\./,
      );
    } finally {
      await small.close();
    }
  });

  it("bounds the total size of a batch's results, dropping items past the budget with a clear error", async () => {
    const small = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { requests: { maxBatchResultBytes: 300_000 } },
    });
    try {
      const r = await small.rest('fixture-echo', {
        executions: Array.from({ length: 4 }, () => ({ tool: 'echo_big', args: { chars: 100_000 } })),
      });
      assert.equal(r.status, 200);
      const kept = r.json.results.filter((x: any) => x.result);
      const dropped = r.json.results.filter((x: any) => x.code === 'GW_ERR_RESULT_BATCH_TOO_LARGE');
      assert.equal(r.json.results.length, 4);
      assert.ok(kept.length >= 1 && kept.length <= 3, `kept ${kept.length}`);
      assert.equal(kept.length + dropped.length, 4);
      assert.match(dropped[0].error, /Split the batch/);
    } finally {
      await small.close();
    }
  });

  it('has no result cap', async () => {
    const r = await gw.rest('fixture-echo', { tool: 'echo_big', args: { chars: 200_000 } });
    assert.equal(r.status, 200);
    assert.ok(JSON.stringify(r.json).length > 200_000);
  });

  it('401 without a key, with a bad key, and with a revoked key', async () => {
    const none = await fetch(`${gw.url}/rest/fixture-echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal((await gw.rest('fixture-echo', { tool: 'echo_args' }, 'wb_not-a-key')).status, 401);
    const other = await gw.createUser('revoked@example.com');
    const keys = await gw.gateway.users.listApiKeys(other.user.id);
    await gw.gateway.users.revokeApiKey(other.user.id, keys[0]?.id ?? '');
    assert.equal((await gw.rest('fixture-echo', { tool: 'echo_args', args: { text: 'a' } }, other.apiKey)).status, 401);
  });

  it('415 for a non-JSON body, 400 for broken JSON, {} for an empty body', async () => {
    const headers = { authorization: `Bearer ${gw.apiKey}` };
    const text = await fetch(`${gw.url}/rest/fixture-echo`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body: 'hello',
    });
    assert.equal(text.status, 415);
    assert.equal(((await text.json()) as any).code, 'GW_ERR_TRANSPORT_UNSUPPORTED_MEDIA');
    const broken = await fetch(`${gw.url}/rest/fixture-echo`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{"tool":',
    });
    assert.equal(broken.status, 400);
    assert.equal(((await broken.json()) as any).code, 'GW_ERR_TRANSPORT_BAD_BODY');
    const empty = await fetch(`${gw.url}/rest/fixture-echo`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '',
    });
    assert.equal(empty.status, 400);
    assert.match(((await empty.json()) as any).error, /Missing "tool"/);
  });

  it('GET /rest and GET /rest/:integration describe what the caller can use', async () => {
    const headers = { authorization: `Bearer ${gw.apiKey}` };
    const list = (await (await fetch(`${gw.url}/rest`, { headers })).json()) as any;
    const names = list.integrations.map((i: any) => i.name).sort();
    assert.deepEqual(names, ['fixture-echo', 'fixture-http']);
    assert.equal(list.integrations.find((i: any) => i.name === 'fixture-echo').connected, true);
    const one = (await (await fetch(`${gw.url}/rest/fixture-echo`, { headers })).json()) as any;
    assert.equal(one.tools.length, 4);
    assert.equal(one.tools[0].inputSchema.type, 'object');
    assert.equal((await fetch(`${gw.url}/rest/nope`, { headers })).status, 404);
  });

  it('serves health, readiness and bounded route labels', async () => {
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    const ready = await fetch(`${gw.url}/readyz`);
    assert.equal(ready.status, 200);
    await fetch(`${gw.url}/random/${Date.now()}`);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /route="unmatched"/);
    assert.doesNotMatch(metrics, /route="\/random/);
  });

  it('readiness with the database unreachable: 503, and no driver text (addresses, names) to unauthenticated callers', async () => {
    const broken = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
    try {
      // the readiness check's SELECT fails the way a lost connection does
      const db = broken.db;
      const get = db.get;
      db.get = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432 for user "workbench_admin"'));
      const ready = await fetch(`${broken.url}/readyz`);
      db.get = get;
      assert.equal(ready.status, 503);
      const body = (await ready.json()) as { checks: Record<string, string> };
      assert.deepEqual(body.checks, { database: 'failed', sandbox: 'ok' });
    } finally {
      await broken.close();
    }
  });

  it('refuses a foreign Host or Origin on a loopback bind', async () => {
    const res = await fetch(`${gw.url}/rest`, {
      headers: { authorization: `Bearer ${gw.apiKey}`, origin: 'https://evil.example' },
    });
    assert.equal(res.status, 403);
    assert.equal(((await res.json()) as any).code, 'GW_ERR_TRANSPORT_HOST_NOT_ALLOWED');
  });
});

describe('REST status of a failed execution', () => {
  it('maps each code as docs/errors.md says, with Retry-After where retrying later helps', async () => {
    const { restStatusOf } = await import('../../../host/transport/rest.js');
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_ENGINE_TOOL_NOT_FOUND' }), { status: 404 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_ENGINE_NOT_CONNECTED' }), { status: 409 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_VALIDATION_INVALID_ARGS' }), { status: 400 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_SANDBOX_ARGS_TOO_LARGE' }), { status: 413 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_VALIDATION_SCHEMA_ERROR' }), { status: 502 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_POLICY_FORBIDDEN' }), { status: 403 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_POLICY_RATE_LIMITED', retryAfterSec: 7 }), {
      status: 429,
      retryAfterSec: 7,
    });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_ENGINE_INTERNAL' }), { status: 500 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_SANDBOX_OVERLOADED' }), { status: 503, retryAfterSec: 1 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_SANDBOX_UNAVAILABLE' }), { status: 503, retryAfterSec: 5 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_SANDBOX_QUARANTINED' }), { status: 502 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_SANDBOX_HANDLER_THREW' }), { status: 502 });
    assert.deepEqual(restStatusOf({ code: 'GW_ERR_ENGINE_CREDENTIAL_FAILED' }), { status: 502 });
  });
});

describe('REST error messages a script can act on', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: ['github', 'newrelic'], pluginDirs: [FIXTURES] });
  });
  after(async () => gw.close());

  it('"Tool not found" names the tools an ambiguous name could be, and where the list is', async () => {
    const r = await gw.rest('github', { tool: 'issues', args: {} });
    assert.equal(r.status, 404);
    assert.deepEqual(r.json, {
      error: 'Tool not found',
      code: 'GW_ERR_ENGINE_TOOL_NOT_FOUND',
      tool: 'issues',
      message:
        'No tool "issues" in github: "issues" could be github_list_issues, github_search_issues; name one in full. GET /rest/github lists its tools.',
      integration: 'github',
    });
    const batch = await gw.rest('fixture-echo', { executions: [{ tool: 'nope' }] });
    assert.equal(
      batch.json.results[0].message,
      'No tool "nope" in fixture-echo. GET /rest/fixture-echo lists its tools.',
    );
  });

  it('a very long tool name is echoed cut to 200 characters', async () => {
    const r = await gw.rest('fixture-echo', { tool: 'n'.repeat(100_000) });
    assert.equal(r.status, 404);
    assert.equal(r.json.tool, `${'n'.repeat(200)}…`);
    assert.ok(JSON.stringify(r.json).length < 1000, `${JSON.stringify(r.json).length} characters`);
  });

  it('NOT_CONNECTED sends a script to the portal (and, where nobody can connect, to the operator)', async () => {
    const r = await gw.rest('newrelic', { tool: 'newrelic_list_accounts', args: {} });
    assert.equal(r.status, 409);
    assert.equal(r.json.error, 'NOT_CONNECTED');
    assert.equal(
      r.json.message,
      `newrelic not connected. Connect it in the portal (${gw.url}/integrations), or have an agent call connect('newrelic').`,
    );
    // an OAuth integration with no client configured: connecting cannot work, as the engine says
    const oauth = await gw.rest('fixture-http', { tool: 'http_get', args: { path: '/x' } });
    assert.match(oauth.json.message, /cannot be connected on this server yet/);
  });
});
