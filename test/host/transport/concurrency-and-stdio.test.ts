/**
 * @module test/host/transport/concurrency-and-stdio
 * The batch concurrency bound, measured inside the upstream with 8 sandbox workers, and MCP over
 * stdio through the real CLI (params checked as over HTTP).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { EmptyResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { startGateway, stdioCommand, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');

describe('batch concurrency', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let inFlight = 0;
  let maxInFlight = 0;

  before(async () => {
    upstream = await startUpstream(async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 60));
      inFlight--;
      return { json: { ok: true } };
    });
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      workers: 8,
      policy: { sandbox: { maxWorkerShare: 1 } },
      upstreams: { 'https://api.fixture.test': upstream.origin },
    });
    await gw.connect('fixture-http', { token: 'tok-concurrency' });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('never has more than 8 executions of one batch in flight, and uses all 8', async () => {
    const executions = Array.from({ length: 40 }, (_, i) => ({ tool: 'http_get', args: { path: `/c/${i}` } }));
    const r = await gw.rest('fixture-http', { executions });
    assert.equal(r.status, 200);
    assert.equal(r.json.results.length, 40);
    assert.ok(r.json.results.every((x: any) => x.result?.status === 200));
    assert.ok(maxInFlight <= 8, `max in flight was ${maxInFlight}`);
    assert.equal(maxInFlight, 8, 'the pool of 8 was used');
  });
});

describe('MCP over stdio', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  });
  after(async () => gw.close());

  it('serves the meta-tools and runs execute_tools for the key in WORKBENCH_API_KEY', async () => {
    const transport = new StdioClientTransport({
      ...stdioCommand(gw, FIXTURES, path.join(PACKAGE_ROOT, 'test', 'fixtures', 'policies', 'small.json')),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'execute_tools'));
      const res = (await client.callTool({
        name: 'execute_tools',
        arguments: { executions: [{ tool: 'echo_args', args: { text: 'over stdio' } }] },
      })) as {
        content: { type: string; text: string }[];
      };
      const body = JSON.parse(res.content[0]?.text ?? '{}');
      assert.equal(body.results[0].result.text, 'over stdio');
      const rows = await gw.db.all<{ transport: string }>(
        "SELECT transport FROM audit_events WHERE tool = 'echo_args'",
      );
      assert.ok(
        rows.some((r) => r.transport === 'stdio'),
        'the stdio call was audited with its transport',
      );
      await assert.rejects(
        client.request({ method: 'logging/setLevel', params: { level: 'loud' as 'info' } }, EmptyResultSchema),
        (err: unknown) => err instanceof McpError && err.code === -32602 && /params\.level/.test(err.message),
        'params that do not fit the method are -32602 over stdio too',
      );
    } finally {
      await client.close();
    }
  });

  it('refuses to start with audit.sink "stdout", whose lines would corrupt the protocol on stdout', () => {
    const policyFile = path.join(gw.dataDir, 'stdout-audit-policy.json');
    fs.writeFileSync(policyFile, JSON.stringify({ sandbox: { workers: 1 }, audit: { sink: 'stdout' } }));
    const cli = stdioCommand(gw, FIXTURES, policyFile);
    const run = spawnSync(cli.command, cli.args, {
      env: cli.env,
      input: '',
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /GW_ERR_POLICY_INVALID: audit\.sink "stdout" cannot be used with `workbench stdio`/);
    assert.equal(run.stdout, '', 'nothing reached stdout');
  });
});
