/**
 * @module test/security/hostile-namespace.test
 * Hostile plugins reach for another plugin's namespace at start-up: one takes another plugin's
 * name (to inherit its users' connections), one another's tool name (to receive its calls), one
 * another's tool prefix (to pass its tools off as that plugin's), one a meta-tool's name (to stand
 * in for the gateway's search). No folder order settles a clash: every plugin of a clash is
 * refused, the same with the roots in either order, and the log names both plugins and their
 * folders. Nothing reaches the impostors. (The same impostors arriving at a reload, beside
 * originals already serving, are refused alone: test/e2e/plugin-reload.test.ts.)
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { FIXTURE_PLUGINS, startSecurityGateway, type Json, type SecurityGateway } from '../helpers/security-gateway.js';

const CLASH_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'clash-plugins');

describe("hostile plugins that take another plugin's namespace", () => {
  let hostileUp: Upstream;
  let forward: SecurityGateway;
  let backward: SecurityGateway;
  let apiKey: string;

  before(async () => {
    hostileUp = await startUpstream(() => ({ json: { hostile: true } }));
    const upstreams = { 'https://api.hostile.test': hostileUp.origin };
    forward = await startSecurityGateway({ upstreams, pluginDirs: [FIXTURE_PLUGINS, CLASH_PLUGINS] });
    backward = await startSecurityGateway({ upstreams, pluginDirs: [CLASH_PLUGINS, FIXTURE_PLUGINS] });
    apiKey = (await forward.createUser('names@example.com')).apiKey;
  });
  after(async () => {
    await forward?.close();
    await backward?.close();
    await hostileUp?.close();
  });

  const refusals = (gw: SecurityGateway) =>
    gw.gateway.pluginErrors.map((e) => ({ folder: path.basename(e.dir), code: e.code, message: e.message }));

  it('refuses every plugin of a clash, whatever the order of the roots, and no other', () => {
    assert.deepEqual(
      // the built-ins (jots, a browser) serve whatever the folders hold
      forward.gateway.registry
        .plugins()
        .filter((p) => !p.builtin)
        .map((p) => p.manifest.name),
      [],
    );
    assert.deepEqual(
      refusals(forward).map((r) => [r.folder, r.code]),
      [
        ['hostile-impostor-name', 'GW_ERR_PLUGIN_CLASH'],
        ['hostile-impostor-tool', 'GW_ERR_PLUGIN_CLASH'],
        ['hostile-meta-thief', 'GW_ERR_PLUGIN_INVALID'],
        ['hostile-prefix-thief', 'GW_ERR_PLUGIN_CLASH'],
        ['fixture-echo', 'GW_ERR_PLUGIN_CLASH'],
        ['fixture-http', 'GW_ERR_PLUGIN_CLASH'],
      ],
    );
    assert.deepEqual(
      refusals(backward),
      refusals(forward),
      'the same refusals, word for word, with the roots the other way round',
    );
    assert.deepEqual(
      backward.gateway.registry.plugins().filter((p) => !p.builtin),
      [],
    );
  });

  it('names both plugins, their folders and the way out, in the log and in pluginErrors', () => {
    const echo = refusals(forward).find((r) => r.folder === 'fixture-echo');
    assert.equal(
      echo?.message,
      `plugin "fixture-echo" clashes with plugin "impostor-echo" in ${path.join(CLASH_PLUGINS, 'hostile-impostor-tool')} (refused too): both define the tool "echo_args". ` +
        'Rename one of them (the plugin name, and its tool names with it) or remove one folder: a clash is never settled by folder order',
    );
    const http = refusals(forward).find((r) => r.folder === 'fixture-http');
    assert.match(
      http?.message ?? '',
      /both are named "fixture-http".*with plugin "hostile-http" in .*hostile-prefix-thief \(refused too\): both name their tools "http_…"/,
    );
    const meta = refusals(forward).find((r) => r.folder === 'hostile-meta-thief');
    assert.equal(
      meta?.message,
      'tools.0.name: "search_tools" is the name of one of the gateway\'s own meta-tools, which no plugin may take',
    );
    const lines = forward.logs.map((l) => JSON.parse(l)).filter((l) => l.code === 'GW_ERR_PLUGIN_CLASH');
    assert.equal(lines.length, 5);
    const line = lines.find((l) => l.file === path.join(FIXTURE_PLUGINS, 'fixture-echo', 'manifest.json'));
    assert.equal(line?.level, 50, 'logged at error');
    assert.equal(line?.msg, `plugin refused: ${line?.file}: ${echo?.message}`);
  });

  it('lets no impostor receive a call, an argument or a search', async () => {
    const items = await forward.mcpExecute(
      [
        { tool: 'echo_args', args: { text: 'secret' } },
        { tool: 'http_post', args: { path: '/x' } },
        { tool: 'http_impostor_get' },
        { tool: 'search_tools', args: { query: 'x' } },
      ],
      apiKey,
    );
    assert.deepEqual(
      items.map((i: Json) => i.code),
      Array(4).fill('GW_ERR_ENGINE_TOOL_NOT_FOUND'),
    );
    const search = await forward.post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'search_tools', arguments: { query: 'echo args' } },
      },
      apiKey,
    );
    assert.equal(search.status, 200);
    assert.doesNotMatch(search.text, /captured|impostor/);
    assert.deepEqual(
      hostileUp.requests.map((r) => r.path),
      [],
      "nothing reached the impostors' host",
    );
  });
});
