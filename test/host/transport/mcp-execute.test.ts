/**
 * @module test/host/transport/mcp-execute
 * execute_tools end to end: a real MCP client over Streamable HTTP, real plugins in isolates, a
 * loopback upstream, the real SQLite audit table and the Prometheus endpoint.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');

type Content = { type: string; text?: string; data?: string; mimeType?: string };

async function execute(
  client: Client,
  executions: unknown[],
  onprogress?: (p: { progress: number; total?: number | undefined }) => void,
) {
  const res = (await client.callTool(
    { name: 'execute_tools', arguments: { executions } },
    undefined,
    onprogress ? { onprogress } : {},
  )) as {
    content: Content[];
    isError?: boolean;
  };
  const text = res.content.find((c) => c.type === 'text')?.text ?? '';
  return { res, text, body: JSON.parse(text) as { results: any[] } };
}

async function auditRows(gw: TestGateway) {
  return gw.db.all<{
    tool: string;
    integration: string | null;
    success: number;
    error_code: string | null;
    error: string | null;
    transport: string;
  }>('SELECT tool, integration, success, error_code, error, transport FROM audit_events ORDER BY at, rowid');
}

describe('execute_tools over MCP', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let client: Client;

  before(async () => {
    upstream = await startUpstream((req) => ({
      json: { ok: true, path: req.path, auth: req.headers.authorization ?? null },
    }));
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      upstreams: { 'https://api.fixture.test': upstream.origin },
    });
    client = await gw.mcpClient();
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('lists the meta-tools in a stable order, each with a description', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('execute_tools') && names.includes('whoami') && names.includes('continue_tool_result'));
    const again = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(again, names);
    for (const t of tools) assert.ok((t.description ?? '').length > 20, `${t.name} has a description`);
    const exec = tools.find((t) => t.name === 'execute_tools');
    assert.equal((exec?.inputSchema as any).properties.executions.type, 'array');
  });

  it('returns each outcome shape, in order, and audits every path', async () => {
    const before = (await auditRows(gw)).length;
    const { body, res } = await execute(client, [
      { tool: 'echo_args', args: { text: 'hi' } },
      { tool: 'no_such_tool', args: {} },
      { tool: 'http_get', args: {} },
      { tool: 'echo_args', args: { text: 5 } },
      { tool: 'echo_fail', args: { message: 'boom from the handler' } },
    ]);
    assert.equal(res.isError, undefined);
    const [ok, missing, notConnected, invalid, failed] = body.results;
    assert.deepEqual(ok, { result: { text: 'hi', args: { text: 'hi', times: 1 } } }, 'defaults are applied');
    assert.equal(missing.error, 'Tool not found');
    assert.equal(missing.code, 'GW_ERR_ENGINE_TOOL_NOT_FOUND');
    assert.equal(notConnected.error, 'NOT_CONNECTED');
    assert.equal(notConnected.integration, 'fixture-http');
    // no FIXTURE_HTTP_CLIENT_ID here: connect could not work, so the message does not send the agent to it
    assert.equal(
      notConnected.message,
      "fixture-http not connected, and it cannot be connected on this server yet (the server has no FIXTURE_HTTP_CLIENT_ID configured): connect('fixture-http') would fail. Tell the user an operator must configure it first.",
    );
    assert.match(invalid.error, /^Invalid arguments for echo_args: text: /);
    assert.equal(invalid.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
    assert.equal(failed.error, 'boom from the handler');
    assert.equal(failed.code, 'GW_ERR_SANDBOX_HANDLER_THREW');

    const rows = (await auditRows(gw)).slice(before);
    assert.equal(rows.length, 5, 'one audit event per execution');
    const byTool = (t: string) => rows.filter((r) => r.tool === t);
    assert.equal(byTool('no_such_tool')[0]?.integration, null, 'integration is absent only for an unknown tool');
    assert.equal(byTool('http_get')[0]?.error_code, 'GW_ERR_ENGINE_NOT_CONNECTED');
    assert.equal(byTool('echo_fail')[0]?.error, 'boom from the handler');
    assert.ok(rows.every((r) => r.transport === 'mcp'));
    assert.equal(rows.filter((r) => r.success === 1).length, 1);
  });

  it('sets isError only when every item failed', async () => {
    const { res } = await execute(client, [{ tool: 'nope_1' }, { tool: 'echo_fail', args: { message: 'x' } }]);
    assert.equal(res.isError, true);
  });

  it('runs a batch of 50 mixed executions and keeps them index-aligned', async () => {
    await gw.connect('fixture-http', { token: 'tok-batch-50' });
    const executions = Array.from({ length: 50 }, (_, i) => {
      switch (i % 5) {
        case 0:
          return { tool: 'echo_args', args: { text: `item-${i}` } };
        case 1:
          return { tool: `missing_${i}`, args: {} };
        case 2:
          return { tool: 'http_get', args: { path: `/items/${i}` } };
        case 3:
          return { tool: 'echo_args', args: { text: '' } };
        default:
          return { tool: 'echo_fail', args: { message: `fail-${i}` } };
      }
    });
    const progress: number[] = [];
    const { body } = await execute(client, executions, (p) => progress.push(p.progress));
    assert.equal(body.results.length, 50);
    body.results.forEach((r, i) => {
      switch (i % 5) {
        case 0:
          assert.equal(r.result.text, `item-${i}`);
          break;
        case 1:
          assert.equal(r.error, 'Tool not found');
          break;
        case 2:
          assert.equal(r.result.body.path, `/items/${i}`);
          assert.equal(r.result.body.auth, '[REDACTED]', 'an upstream echoing the credential back is redacted');
          break;
        case 3:
          assert.match(r.error, /^Invalid arguments for echo_args/);
          break;
        default:
          assert.equal(r.error, `fail-${i}`);
      }
    });
    const seen = upstream.requests.filter((r) => r.path.startsWith('/items/'));
    assert.equal(seen.length, 10);
    assert.ok(
      seen.every((r) => r.headers.authorization === 'Bearer tok-batch-50'),
      'the bridge injected the credential',
    );
    assert.ok(progress.length > 0, 'progress notifications were sent');
    assert.equal(progress[progress.length - 1], 50);
  });

  it('caps the text at 60,000 characters as valid JSON and pages the rest', async () => {
    const { text, body } = await execute(client, [
      { tool: 'echo_big', args: { chars: 150_000 } },
      { tool: 'echo_args', args: { text: 'small' } },
    ]);
    assert.ok(text.length <= 60_000, `text is ${text.length} chars`);
    const stub = body.results[0].result;
    assert.equal(stub.truncated, true);
    assert.ok(stub.totalParts >= 3);
    assert.equal(body.results[1].result.text, 'small', 'small items stay inline');
    let joined = '';
    for (let part = 1; part <= stub.totalParts; part++) {
      const r = (await client.callTool({
        name: 'continue_tool_result',
        arguments: { continuationId: stub.continuationId, part },
      })) as { content: Content[] };
      const page = JSON.parse(r.content[0]?.text ?? '{}');
      assert.ok((r.content[0]?.text ?? '').length <= 60_000);
      assert.equal(page.hasMore, part < stub.totalParts);
      joined += page.chunk;
    }
    const full = JSON.parse(joined);
    assert.ok(full.count > 1000);
    assert.equal(joined.length, stub.totalChars);
  });

  it("refuses another user's continuation id", async () => {
    const { body } = await execute(client, [{ tool: 'echo_big', args: { chars: 90_000 } }]);
    const id = body.results[0].result.continuationId;
    const other = await gw.createUser('other@example.com');
    const otherClient = await gw.mcpClient(other.apiKey);
    const r = (await otherClient.callTool({ name: 'continue_tool_result', arguments: { continuationId: id } })) as {
      content: Content[];
      isError?: boolean;
    };
    assert.equal(r.isError, true);
    assert.equal(JSON.parse(r.content[0]?.text ?? '{}').code, 'GW_ERR_RESULT_CONTINUATION_UNKNOWN');
  });

  it('turns _mcpImage into an image block and keeps the batch text', async () => {
    const { res, body } = await execute(client, [
      { tool: 'echo_image' },
      { tool: 'echo_args', args: { text: 'beside' } },
    ]);
    const images = res.content.filter((c) => c.type === 'image');
    assert.equal(images.length, 1);
    assert.equal(images[0]?.mimeType, 'image/png');
    assert.equal(body.results[0].result.label, 'one pixel');
    assert.equal(body.results[1].result.text, 'beside');
  });

  it('answers bad meta-tool arguments with an isError result the model can read (SEP-1303); an unknown meta-tool is a JSON-RPC error', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['execute_tools', { executions: [] }, /^Invalid arguments for execute_tools: executions: /],
      [
        'execute_tools',
        { executions: [{ tool: 'echo_args' }], extra: 1 },
        /^Invalid arguments for execute_tools: \(root\): .*"extra"/,
      ],
      // a misspelt "args" is refused, never dropped (the tool would run with its defaults)
      [
        'execute_tools',
        { executions: [{ tool: 'echo_image', arguments: {} }] },
        /^Invalid arguments for execute_tools: executions\.0: .*"arguments"/,
      ],
      ['get_tool_schema', {}, /^Invalid arguments for get_tool_schema: tool: /],
      [
        'search_tools',
        { query: 'echo', integraton: 'x' },
        /^Invalid arguments for search_tools: \(root\): .*"integraton"/,
      ],
    ];
    for (const [name, args, message] of cases) {
      const r = (await client.callTool({ name, arguments: args })) as { content: Content[]; isError?: boolean };
      assert.equal(r.isError, true, name);
      assert.equal(r.content.length, 1);
      const body = JSON.parse(r.content[0]?.text ?? '{}');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'error']);
      assert.equal(body.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
      assert.match(body.error, message);
    }
    await assert.rejects(
      client.callTool({ name: 'execute_tool', arguments: {} }),
      (err: unknown) =>
        err instanceof McpError && err.code === -32602 && /Tool not found: execute_tool/.test(err.message),
    );
  });

  it('exports the execution metrics and the refusal counter', async () => {
    const res = await fetch(`${gw.url}/metrics`);
    const text = await res.text();
    assert.match(
      text,
      /workbench_tool_executions_total\{integration="fixture-echo",tool="echo_args",success="true"\} \d+/,
    );
    assert.match(text, /workbench_tool_execution_duration_seconds_bucket\{[^}]*integration="fixture-echo"/);
    assert.match(text, /workbench_tool_executions_refused_total\{reason="not_found",integration=""\} \d+/);
    assert.match(
      text,
      /workbench_tool_executions_refused_total\{reason="invalid_arguments",integration="fixture-echo"\} \d+/,
    );
    assert.match(text, /workbench_http_requests_total\{method="POST",route="\/mcp",status="200"\} \d+/);
    // the process's own metrics under the one prefix, as Prometheus' node exporters name them
    assert.match(text, /^workbench_process_cpu_user_seconds_total \d/m);
    assert.match(text, /^workbench_nodejs_heap_size_used_bytes \d/m);
    assert.doesNotMatch(text, /process_process_/);
    // the sandbox's state, read when scraped
    assert.match(text, /^workbench_sandbox_up 1$/m);
    assert.match(text, /^workbench_sandbox_queued_calls 0$/m);
    assert.match(text, /^workbench_sandbox_restarts_total 0$/m);
    assert.match(text, /^workbench_sandbox_crashes_total 0$/m);
    assert.match(text, /^workbench_sandbox_reruns_total 0$/m);
    assert.match(text, /^workbench_audit_write_failures_total 0$/m);
    // rate limits on SQLite are counted in memory: nothing to fail, the same metrics as on PostgreSQL
    assert.match(text, /^workbench_rate_limit_failures_total 0$/m);
    // a *_total name is a counter (rate() and increase() assume one; promtool check metrics says so)
    const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
    for (const name of [
      'workbench_sandbox_restarts_total',
      'workbench_sandbox_crashes_total',
      'workbench_sandbox_reruns_total',
      'workbench_audit_write_failures_total',
      'workbench_rate_limit_failures_total',
    ])
      assert.equal(types.get(name), 'counter', name);
    // every one of ours; prom-client's defaults name three current counts so (nodejs_active_handles_total, …)
    for (const [name, type] of types)
      if (name?.endsWith('_total') && !name.startsWith('workbench_nodejs_active_'))
        assert.equal(type, 'counter', `# TYPE ${name} ${type}`);
    const rss = Number(/^workbench_sandbox_resident_memory_bytes (\d+)$/m.exec(text)?.[1]);
    assert.ok(rss > 10 * 1024 * 1024, `the sandbox process's resident memory (${rss} bytes)`);
  });

  it('records a tool spelled another way under its own name: one audit name and one metrics series per tool', async () => {
    const spellings = ['Echo_Args', 'ECHO_ARGS ', ' echo_args'];
    const { body } = await execute(
      client,
      spellings.map((tool, i) => ({ tool, args: { text: `spelled ${i}` } })),
    );
    assert.deepEqual(
      body.results.map((r) => r.result?.text),
      ['spelled 0', 'spelled 1', 'spelled 2'],
      'each spelling ran the tool',
    );
    const rows = await gw.db.all<{ tool: string }>(
      "SELECT DISTINCT tool FROM audit_events WHERE lower(trim(tool)) = 'echo_args'",
    );
    assert.deepEqual(
      rows.map((r) => r.tool),
      ['echo_args'],
    );
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const tools = new Set(
      [...text.matchAll(/^workbench_tool_executions_total\{integration="fixture-echo",tool="([^"]*)"/gm)].map(
        (m) => m[1],
      ),
    );
    assert.ok(tools.has('echo_args'));
    for (const spelled of spellings)
      if (spelled !== 'echo_args') assert.ok(!tools.has(spelled), `no series for "${spelled}"`);
  });

  it('answers whoami with the authenticated caller', async () => {
    const r = (await client.callTool({ name: 'whoami', arguments: {} })) as { content: Content[] };
    assert.deepEqual(JSON.parse(r.content[0]?.text ?? '{}'), { id: gw.user.id, email: gw.user.email, tenant: 'acme' });
  });
});
