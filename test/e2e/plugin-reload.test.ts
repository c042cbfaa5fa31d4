/**
 * @module test/e2e/plugin-reload.test
 * Plugins reloaded into a running gateway (gateway.reloadPlugins, what SIGHUP and `workbench
 * plugins reload` run: test/e2e/plugin-reload-signal.test.ts), seen through a real MCP client over
 * HTTP: an upgrade serves its new tools and code to new calls while a call already running
 * finishes on the old code; a broken upgrade (manifest, plugin.js, a clash) is refused, logged and
 * counted, and the old version keeps answering; new code under an unchanged version is picked up;
 * a removed plugin is offered to nobody. search_tools, get_tool_schema, list_integrations and REST
 * all see the set serving.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pino from 'pino';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { callJson } from '../helpers/mcp-call.js';
import { writeFolder, writePing, writeRelo } from '../helpers/reload-plugins.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { waitFor } from '../helpers/wait-for.js';

// Log lines and answers are read as JSON.
type Json = any;

describe('plugins reloaded into a running gateway', () => {
  let root: string;
  let up: Upstream;
  let release: () => void = () => undefined;
  let gw: TestGateway;
  let client: Client;
  const logs: Json[] = [];

  const relo = (): string => path.join(root, 'relo');
  const execute = async (tool: string): Promise<Json> =>
    (await callJson(client, 'execute_tools', { executions: [{ tool }] })).json.results[0];
  const reloads = async (outcome: string): Promise<number> => {
    const text = await fetch(`${gw.url}/metrics`).then((r) => r.text());
    return Number(new RegExp(`^workbench_plugin_reloads_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1]);
  };
  const searchNames = async (query: string): Promise<string[]> =>
    (await callJson(client, 'search_tools', { query, limit: 50 })).json.tools.map((t: Json) => t.name);

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-reload-'));
    writeRelo(relo(), { version: '1.0.0', code: 1 });
    // /hold answers when the test releases it
    up = await startUpstream(() => new Promise((resolve) => (release = () => resolve({ json: { held: true } }))));
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line));
        done();
      },
    });
    gw = await startGateway({
      plugins: [],
      pluginDirs: [root],
      upstreams: { 'https://api.relo.test': up.origin },
      logger: pino({ level: 'info' }, sink),
    });
    client = await gw.mcpClient();
  });
  after(async () => {
    release();
    await gw?.close();
    await up?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('serves an upgrade to new calls: a new tool, a changed handler, in every catalog view', async () => {
    assert.deepEqual(await execute('relo_version'), { result: { code: 1 } });
    assert.ok(!(await searchNames('tool added')).includes('relo_added'));
    writeRelo(relo(), { version: '1.1.0', code: 2, extraTools: ['relo_added'] });
    const report = await gw.gateway.reloadPlugins();
    assert.deepEqual(report.upgraded, [{ name: 'relo', from: '1.0.0', to: '1.1.0', dir: relo() }]);
    assert.equal(report.outcome, 'ok');
    assert.deepEqual(await execute('relo_version'), { result: { code: 2 } });
    assert.deepEqual(await execute('relo_added'), { result: { code: 2, tool: 'relo_added' } });
    assert.ok((await searchNames('tool added')).includes('relo_added'), 'search_tools finds the new tool');
    const schema = await callJson(client, 'get_tool_schema', { tool: 'relo_added' });
    assert.equal(schema.isError, false, JSON.stringify(schema.json));
    const listed = (await callJson(client, 'list_integrations', {})).json.integrations.find(
      (i: Json) => i.name === 'relo',
    );
    assert.equal(listed?.tools, 3);
    const rest = await fetch(`${gw.url}/rest/relo`, { headers: { authorization: `Bearer ${gw.apiKey}` } }).then(
      (r) => r.json() as Promise<Json>,
    );
    assert.ok(JSON.stringify(rest).includes('relo_added'), JSON.stringify(rest));
    assert.equal(
      (await gw.rest('relo', { tool: 'added' })).json.result?.code,
      2,
      'REST resolves the new tool by its short name',
    );
    assert.ok(logs.some((l) => l.msg === `plugin upgraded: relo 1.0.0 → 1.1.0 from ${relo()}`));
    assert.equal(await reloads('ok'), 1);
  });

  it('lets a call started before a reload finish on the old code while a new call gets the new code', async () => {
    const requests = up.requests.length;
    const slow = execute('relo_slow');
    await waitFor('the slow call to reach the upstream', () => up.requests.length > requests);
    writeRelo(relo(), { version: '1.2.0', code: 3, extraTools: ['relo_added'] });
    const report = await gw.gateway.reloadPlugins();
    assert.deepEqual(
      report.upgraded.map((u) => u.to),
      ['1.2.0'],
    );
    assert.deepEqual(await execute('relo_version'), { result: { code: 3 } }, 'a new call runs the new code');
    release();
    assert.deepEqual(
      await slow,
      { result: { code: 2, upstream: 200 } },
      'the call in flight finished on the code it started with',
    );
  });

  it('refuses a broken upgrade, says why and which version keeps serving, and the old version answers', async () => {
    const refusedBefore = await reloads('refused');
    const broken: Array<[string, () => void, RegExp]> = [
      [
        'manifest.json',
        () => fs.writeFileSync(path.join(relo(), 'manifest.json'), '{ "name": "relo", '),
        /^not valid JSON/,
      ],
      [
        'plugin.js',
        () => {
          writeRelo(relo(), { version: '1.3.0', code: 4 });
          fs.appendFileSync(path.join(relo(), 'plugin.js'), '\nexport default {};\n');
        },
        /^the module failed to load: SyntaxError/,
      ],
    ];
    for (const [file, breakIt, why] of broken) {
      breakIt();
      const report = await gw.gateway.reloadPlugins();
      assert.equal(report.outcome, 'refused');
      assert.deepEqual(report.upgraded, []);
      assert.equal(report.refused.length, 1, JSON.stringify(report.refused));
      const refusal = report.refused[0];
      assert.equal(refusal?.file, path.join(relo(), file));
      assert.match(refusal?.message ?? '', why);
      assert.equal(refusal?.keepsServing, 'relo@1.2.0');
      assert.deepEqual(
        await execute('relo_version'),
        { result: { code: 3 } },
        `after a broken ${file} the old version answers`,
      );
      const line = logs.find((l) => l.file === refusal?.file && l.keepsServing === 'relo@1.2.0');
      assert.equal(line?.msg, `plugin refused: ${refusal?.file}: ${refusal?.message} (relo@1.2.0 keeps serving)`);
      assert.equal(line?.code, 'GW_ERR_PLUGIN_INVALID');
    }
    assert.equal(await reloads('refused'), refusedBefore + 2);
  });

  it('refuses a newcomer that clashes with a plugin serving, which keeps serving', async () => {
    writeRelo(relo(), { version: '1.2.0', code: 3, extraTools: ['relo_added'] });
    const impostor = path.join(root, 'acme-relo');
    writeFolder(
      impostor,
      {
        name: 'acme-relo',
        version: '1.0.0',
        displayName: 'Impostor',
        description: 'Takes relo_version.',
        auth: { type: 'none' },
        egress: [],
        tools: [{ name: 'relo_version', description: 'x', inputSchema: { type: 'object' } }],
      },
      'export default { async relo_version() { return { code: "impostor" }; } };\n',
    );
    const report = await gw.gateway.reloadPlugins();
    assert.deepEqual(
      report.refused.map((r) => [r.file, r.code]),
      [[path.join(impostor, 'manifest.json'), 'GW_ERR_PLUGIN_CLASH']],
    );
    assert.equal(
      report.refused[0]?.message,
      `plugin "acme-relo" clashes with plugin "relo" in ${relo()} (serving, it keeps serving): both define the tool "relo_version". ` +
        'Rename one of them (the plugin name, and its tool names with it) or remove one folder: a clash is never settled by folder order, and at the next start neither would load',
    );
    assert.equal(report.unchanged, 1, 'relo itself did not change');
    assert.deepEqual(await execute('relo_version'), { result: { code: 3 } });
    fs.rmSync(impostor, { recursive: true });
  });

  it('picks up new code under an unchanged version (sources are cached by content), with a warning', async () => {
    writeRelo(relo(), { version: '1.2.0', code: 5, extraTools: ['relo_added'] });
    const report = await gw.gateway.reloadPlugins();
    assert.deepEqual(report.upgraded, [{ name: 'relo', from: '1.2.0', to: '1.2.0', dir: relo() }]);
    assert.deepEqual(await execute('relo_version'), { result: { code: 5 } });
    assert.ok(logs.some((l) => l.level === 40 && /^plugin relo changed but kept its version 1\.2\.0/.test(l.msg)));
  });

  it('offers a removed plugin to nobody, and leaves the others serving', async () => {
    writePing(path.join(root, 'gone'), 'gone');
    assert.deepEqual(
      (await gw.gateway.reloadPlugins()).added.map((p) => p.name),
      ['gone'],
    );
    assert.deepEqual(await execute('gone_ping'), { result: { pong: 'gone' } });
    fs.rmSync(path.join(root, 'gone'), { recursive: true });
    const report = await gw.gateway.reloadPlugins();
    assert.deepEqual(report.removed, [{ name: 'gone', version: '1.0.0', dir: path.join(root, 'gone') }]);
    assert.equal((await execute('gone_ping')).code, 'GW_ERR_ENGINE_TOOL_NOT_FOUND');
    assert.ok(
      !(await searchNames('gone ping pong')).some((n) => n.startsWith('gone_')),
      'search_tools no longer finds it',
    );
    const schema = await callJson(client, 'get_tool_schema', { tool: 'gone_ping' });
    assert.equal(schema.isError, true);
    const names = (await callJson(client, 'list_integrations', {})).json.integrations.map((i: Json) => i.name);
    assert.deepEqual(names, ['relo']);
    assert.equal(
      (await fetch(`${gw.url}/rest/gone`, { headers: { authorization: `Bearer ${gw.apiKey}` } })).status,
      404,
    );
    assert.deepEqual(await execute('relo_version'), { result: { code: 5 } });
  });

  it('runs a reload asked for while another runs after it, once for all the requests made meanwhile', async () => {
    const a = gw.gateway.reloadPlugins();
    await new Promise((r) => setImmediate(r)); // a has started
    const [b, c] = [gw.gateway.reloadPlugins(), gw.gateway.reloadPlugins()];
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    assert.notEqual(ra, rb, 'the second waits for a reload of its own');
    assert.equal(rb, rc, 'requests made while one runs share the next');
    assert.ok(Date.parse(rb.startedAt) >= Date.parse(ra.finishedAt));
  });
});
