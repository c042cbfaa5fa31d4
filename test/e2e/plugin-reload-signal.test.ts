/**
 * @module test/e2e/plugin-reload-signal.test
 * The two ways an operator reloads the plugins of a running server, against the real server
 * process (`workbench serve`) and a real MCP client over HTTP: SIGHUP sent to the process, and
 * `workbench plugins reload`, which finds the server through its record in the data dir, signals
 * it and prints what it did (exit 0; 1 when a plugin was refused; 2 when no server runs there).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runCli } from '../helpers/cli.js';
import { callJson } from '../helpers/mcp-call.js';
import { writeRelo } from '../helpers/reload-plugins.js';
import { waitFor } from '../helpers/wait-for.js';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';

// Answers are read as JSON.
type Json = any;

describe('reloading the plugins of a running server process', () => {
  let root: string;
  let server: ServerProcess;
  let client: Client;

  const relo = (): string => path.join(root, 'relo');
  const code = async (): Promise<unknown> =>
    (await callJson(client, 'execute_tools', { executions: [{ tool: 'relo_version' }] })).json.results[0]?.result?.code;
  const record = (): Json =>
    JSON.parse(fs.readFileSync(path.join(server.dataDir, 'run', `serve-${server.proc.pid}.json`), 'utf8'));

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-reload-proc-'));
    writeRelo(relo(), { version: '1.0.0', code: 1 });
    server = await spawnServer({ pluginDirs: [root], policy: { sandbox: { workers: 2 } }, logLevel: 'info' });
    client = new Client({ name: 'reload-test', version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.apiKey}` } },
      }),
    );
  });
  after(async () => {
    await client?.close();
    const dataDir = server?.dataDir;
    await server?.stop(true);
    if (dataDir) {
      assert.deepEqual(fs.readdirSync(path.join(dataDir, 'run')), [], 'the server deleted its record when it stopped');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('reloads on SIGHUP, keeps serving, and records the report', async () => {
    assert.equal(await code(), 1);
    assert.equal(record().url, server.url);
    writeRelo(relo(), { version: '1.1.0', code: 2 });
    server.proc.kill('SIGHUP');
    await waitFor('the new code to answer', async () => (await code()) === 2);
    await waitFor('the reload to be recorded', () => record().reload?.upgraded?.[0]?.to === '1.1.0');
    assert.match(
      server.output().stdout,
      /"msg":"plugins reloaded: 0 added, 1 upgraded, 0 removed, 19 unchanged, 0 refused; 20 plugins and \d+ tools serving"/,
    );
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  });

  it('reloads through `workbench plugins reload`, which prints what changed and what was refused', async () => {
    const env = { WORKBENCH_DATA_DIR: server.dataDir };
    writeRelo(relo(), { version: '1.2.0', code: 3 });
    const ok = runCli(env, 'plugins', 'reload');
    assert.equal(ok.code, 0, ok.stderr);
    const head = new RegExp(
      `^server ${server.proc.pid} \\(${server.url.replace(/\./g, '\\.')}\\): reloaded in \\d+\\.\\d s: 0 added, 1 upgraded, 0 removed, 19 unchanged, 0 refused; 20 plugins and \\d+ tools serving\\n`,
    );
    assert.match(ok.stdout, head);
    assert.ok(ok.stdout.endsWith(`  upgraded relo 1.1.0 → 1.2.0 (${relo()})\n`), ok.stdout);
    assert.equal(await code(), 3);

    fs.writeFileSync(path.join(relo(), 'manifest.json'), '{ "name": "relo", "version": "1.3.0" }');
    const refused = runCli(env, 'plugins', 'reload', '--json');
    assert.equal(refused.code, 1, refused.stderr);
    const answer = JSON.parse(refused.stdout);
    assert.equal(answer.servers.length, 1);
    assert.equal(answer.servers[0].pid, server.proc.pid);
    assert.deepEqual(
      answer.servers[0].report.refused.map((r: Json) => [r.file, r.code, r.keepsServing]),
      [[path.join(relo(), 'manifest.json'), 'GW_ERR_PLUGIN_INVALID', 'relo@1.2.0']],
    );
    assert.match(answer.servers[0].report.refused[0].message, /^displayName: /);
    assert.equal(await code(), 3, 'the old version keeps answering');

    const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
    assert.match(metrics, /^workbench_plugin_reloads_total\{outcome="ok"\} 2$/m);
    assert.match(metrics, /^workbench_plugin_reloads_total\{outcome="refused"\} 1$/m);
  });

  it('says so, exit 2, when no server runs with the data dir', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-no-server-'));
    try {
      const r = runCli({ WORKBENCH_DATA_DIR: empty }, 'plugins', 'reload');
      assert.equal(r.code, 2);
      assert.match(r.stderr, /^workbench: no running server uses the data directory /);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
