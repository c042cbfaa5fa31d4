/**
 * @module test/host/registry/plugin-namespace.test
 * The tool namespace of plugins (host/registry/namespace.ts, plugin-set.ts): every tool name starts
 * with its plugin's prefix, no tool takes a meta-tool's name, and plugins that clash (a plugin
 * name, a tool name or a tool prefix in common, or a tool inside another's longer prefix) are all
 * refused, with the same outcome whatever the order of the roots and of the folders in them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { BUILTIN_PLUGINS_DIR } from '../../../host/paths.js';
import { META_TOOL_NAMES } from '../../../host/meta-tools/names.js';
import { loadPlugins, type LoadResult } from '../../../host/registry/load-plugins.js';
import { namespaceProblems, prefixChoices, toolPrefixOf } from '../../../host/registry/namespace.js';
import { startGateway } from '../../helpers/gateway.js';

const temps: string[] = [];
after(() => {
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});

function writePlugin(root: string, folder: string, name: string, tools: string[]): void {
  const dir = path.join(root, folder);
  fs.mkdirSync(dir, { recursive: true });
  const manifest = {
    name,
    version: '1.0.0',
    displayName: name,
    description: 'test',
    auth: { type: 'none' },
    egress: [],
    tools: tools.map((t) => ({ name: t, description: `does ${t}`, inputSchema: { type: 'object' } })),
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
  fs.writeFileSync(
    path.join(dir, 'plugin.js'),
    `export default { ${tools.map((t) => `${t}: async () => 1`).join(', ')} };`,
  );
}

const named = (name: string, tools: string[]) =>
  ({ name, tools: tools.map((t) => ({ name: t })) }) as Parameters<typeof toolPrefixOf>[0];

describe('tool prefixes', () => {
  it('are the plugin name or its last words, with "_" for "-", the longest that fits every tool', () => {
    assert.deepEqual(prefixChoices('atlassian-jira'), ['atlassian_jira_', 'jira_']);
    assert.deepEqual(prefixChoices('a-b-c'), ['a_b_c_', 'b_c_', 'c_']);
    assert.equal(toolPrefixOf(named('atlassian-jira', ['jira_search', 'jira_get_issue'])), 'jira_');
    assert.equal(toolPrefixOf(named('x-x', ['x_x_a', 'x_b'])), 'x_', 'one prefix for all the tools');
    assert.equal(toolPrefixOf(named('weather', ['weather_now', 'forecast_now'])), undefined);
    assert.equal(toolPrefixOf(named('weather', ['weather_'])), undefined, 'a tool name is more than its prefix');
  });

  it('accept every tool name of the shipped plugins as it is', () => {
    const { plugins, errors } = loadPlugins([BUILTIN_PLUGINS_DIR]);
    assert.deepEqual(errors, []);
    assert.deepEqual(Object.fromEntries(plugins.map((p) => [p.manifest.name, p.toolPrefix])), {
      asana: 'asana_',
      'atlassian-bitbucket': 'bitbucket_',
      'atlassian-confluence': 'confluence_',
      'atlassian-jira': 'jira_',
      clevertap: 'clevertap_',
      github: 'github_',
      gitlab: 'gitlab_',
      'google-calendar': 'calendar_',
      'google-docs': 'docs_',
      'google-drive': 'drive_',
      'google-gemini': 'gemini_',
      'google-gmail': 'gmail_',
      'google-sheets': 'sheets_',
      'google-slides': 'slides_',
      'httpbin-cookie': 'httpbin_cookie_',
      linear: 'linear_',
      newrelic: 'newrelic_',
      notion: 'notion_',
      slack: 'slack_',
    });
  });

  it("refuse a tool outside the prefix, and a meta-tool's name, naming the tools", () => {
    assert.deepEqual(
      namespaceProblems(named('weather', ['weather_now', 'forecast_today', 'forecast_week']), META_TOOL_NAMES),
      [
        'tools: every tool name of plugin "weather" starts with one prefix, the same for all its tools: "weather_" (the plugin\'s name, or its last words, with "_" for "-"); "forecast_today", "forecast_week" do not start with "weather_"',
      ],
    );
    assert.deepEqual(namespaceProblems(named('acme-search', ['search_tools', 'search_web']), META_TOOL_NAMES), [
      'tools.0.name: "search_tools" is the name of one of the gateway\'s own meta-tools, which no plugin may take',
    ]);
  });

  it("keep every meta-tool the gateway registers out of reach (the list validate and build use is the gateway's)", async () => {
    const gw = await startGateway({ plugins: [] });
    try {
      assert.deepEqual(gw.gateway.metaTools.map((m) => m.name).sort(), [...META_TOOL_NAMES].sort());
    } finally {
      await gw.close();
    }
  });
});

describe('plugins that clash', () => {
  /** Two roots holding the same clashes; `mirror` gives every folder the other end of the alphabet. */
  function clashingRoots(mirror: boolean): [string, string] {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-clash-'));
    temps.push(base);
    const a = path.join(base, 'root-a');
    const b = path.join(base, 'root-b');
    const folder = (first: string, last: string): string => (mirror ? last : first);
    writePlugin(a, folder('a-weather', 'z-weather'), 'weather', ['weather_now']);
    writePlugin(b, folder('z-weather', 'a-weather'), 'weather', ['weather_later']);
    writePlugin(a, folder('b-forecast', 'y-forecast'), 'acme-forecast', ['forecast_daily']);
    writePlugin(b, folder('y-forecast', 'b-forecast'), 'forecast', ['forecast_daily']);
    writePlugin(a, folder('c-maps', 'x-maps'), 'maps', ['maps_route']);
    writePlugin(b, folder('x-maps', 'c-maps'), 'acme-maps', ['maps_tiles']);
    writePlugin(a, folder('d-github', 'w-github'), 'github', ['github_get', 'github_enterprise_list']);
    writePlugin(b, folder('w-github', 'd-github'), 'github-enterprise', ['github_enterprise_sync']);
    writePlugin(a, folder('e-calendar', 'v-calendar'), 'calendar', ['calendar_list']);
    writePlugin(b, folder('v-calendar', 'e-calendar'), 'calendar-sync', ['calendar_sync_run']);
    return [a, b];
  }

  /** What a load decided, without the folders (which differ between the mirrored layouts). */
  const outcome = (r: LoadResult) => ({
    loaded: r.plugins.map((p) => p.manifest.name),
    refused: r.errors.map((e) => [e.name, e.code, e.message.replace(/ in \S+/g, ' in …')]).sort(),
  });

  it('are all refused, naming each other, their folders and what to do; the others load', () => {
    const [a, b] = clashingRoots(false);
    const r = loadPlugins([a, b]);
    assert.deepEqual(
      r.plugins.map((p) => p.manifest.name),
      ['calendar', 'calendar-sync'],
      'a shorter prefix beside a longer one is no clash while no tool crosses',
    );
    const byName = (name: string, dir: string) =>
      r.errors.find((e) => e.name === name && e.dir.startsWith(dir))?.message;
    assert.equal(
      byName('weather', a),
      `plugin "weather" clashes with plugin "weather" in ${path.join(b, 'z-weather')} (refused too): both are named "weather". ` +
        'Rename one of them (the plugin name, and its tool names with it) or remove one folder: a clash is never settled by folder order',
    );
    assert.match(
      byName('forecast', b) ?? '',
      /clashes with plugin "acme-forecast" in .*b-forecast \(refused too\): both define the tool "forecast_daily"/,
    );
    assert.match(
      byName('acme-maps', b) ?? '',
      /clashes with plugin "maps" in .*c-maps \(refused too\): both name their tools "maps_…"/,
    );
    assert.match(
      byName('github', a) ?? '',
      /clashes with plugin "github-enterprise" in .*w-github \(refused too\): "github_enterprise_list" of plugin "github" starts with "github_enterprise_", the tool prefix of plugin "github-enterprise"/,
    );
    assert.equal(r.errors.length, 8);
    assert.ok(r.errors.every((e) => e.code === 'GW_ERR_PLUGIN_CLASH' && e.file === path.join(e.dir, 'manifest.json')));
  });

  it('come out the same with the roots swapped and the folder names sorted the other way', () => {
    const [a, b] = clashingRoots(false);
    const [ma, mb] = clashingRoots(true);
    const first = loadPlugins([a, b]);
    const swapped = loadPlugins([b, a]);
    assert.deepEqual(
      swapped.plugins.map((p) => p.dir),
      first.plugins.map((p) => p.dir),
      'roots swapped: the same plugins',
    );
    assert.deepEqual(swapped.errors, first.errors, 'and the same refusals, word for word');
    assert.deepEqual(outcome(loadPlugins([ma, mb])), outcome(first), 'folders mirrored');
    assert.deepEqual(outcome(loadPlugins([mb, ma])), outcome(first), 'both');
  });
});
