/**
 * @module test/host/registry/plugin-set.unit.test
 * What a reload serves (host/registry/plugin-set.ts), decided from the plugins serving and the
 * folders read again, without a sandbox: unchanged plugins stay (the very same objects), a broken
 * upgrade leaves the version serving, a newcomer clashing with a plugin serving is refused alone,
 * changes clashing with each other are all refused (their old versions stay), a plugin whose folder
 * is gone is removed. Through a real gateway and MCP client: test/e2e/plugin-reload.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { readPlugins, type LoadedPlugin } from '../../../host/registry/load-plugins.js';
import { resolvePluginSet, type PluginSet } from '../../../host/registry/plugin-set.js';
import { writeFolder, writePing } from '../../helpers/reload-plugins.js';

const temps: string[] = [];
after(() => {
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});

describe('a reload', () => {
  let root: string;
  let serving: LoadedPlugin[];
  const reload = (): PluginSet => {
    const read = readPlugins([root], { previous: serving });
    return resolvePluginSet(serving, read.plugins, read.errors);
  };
  const names = (plugins: readonly LoadedPlugin[]): string[] =>
    plugins.map((p) => `${p.manifest.name}@${p.manifest.version}`);
  const bump = (folder: string, name: string, version: string, tools = [`${name}_ping`]): void =>
    writeFolder(
      path.join(root, folder),
      {
        name,
        version,
        displayName: name,
        description: 'test',
        auth: { type: 'none' },
        egress: [],
        tools: tools.map((t) => ({ name: t, description: 'x', inputSchema: { type: 'object' } })),
      },
      `export default { ${tools.map((t) => `${t}: async () => '${version}'`).join(', ')} };`,
    );

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-plugin-set-'));
    temps.push(root);
    writePing(path.join(root, 'alpha'), 'alpha');
    writePing(path.join(root, 'beta'), 'beta');
    const read = readPlugins([root]);
    serving = resolvePluginSet([], read.plugins, read.errors).plugins;
  });

  it('keeps unchanged plugins as they are, and serves an upgrade', () => {
    bump('beta', 'beta', '2.0.0');
    const set = reload();
    assert.deepEqual(names(set.plugins), ['alpha@1.0.0', 'beta@2.0.0']);
    assert.equal(set.plugins[0], serving[0], 'the very same object');
    assert.deepEqual(
      set.changes.upgraded.map((u) => [u.from.manifest.version, u.to.manifest.version]),
      [['1.0.0', '2.0.0']],
    );
    assert.deepEqual(set.errors, []);
  });

  it('leaves the version serving in place of a broken upgrade, and of a broken copy of a moved plugin', () => {
    fs.writeFileSync(path.join(root, 'beta', 'manifest.json'), '{');
    let set = reload();
    assert.deepEqual(names(set.plugins), ['alpha@1.0.0', 'beta@1.0.0']);
    assert.deepEqual(set.changes.kept, [serving[1]]);
    fs.rmSync(path.join(root, 'beta'), { recursive: true });
    writeFolder(path.join(root, 'beta-moved'), '{ "name": "beta", "version": "2.0.0" }', '');
    set = reload();
    assert.deepEqual(names(set.plugins), ['alpha@1.0.0', 'beta@1.0.0'], 'moved and broken: found by its name');
  });

  it("does not let a broken folder that borrows a name hold back that plugin's upgrade", () => {
    bump('beta', 'beta', '2.0.0');
    writeFolder(path.join(root, 'beta-copy'), '{ "name": "beta", "tools": 3 }', '');
    const set = reload();
    assert.deepEqual(names(set.plugins), ['alpha@1.0.0', 'beta@2.0.0']);
    assert.deepEqual(
      set.errors.map((e) => [path.basename(e.dir), e.code]),
      [['beta-copy', 'GW_ERR_PLUGIN_INVALID']],
    );
  });

  it('refuses a newcomer that clashes with a plugin serving, which keeps serving', () => {
    bump('acme-beta', 'acme-beta', '1.0.0', ['beta_ping']);
    const set = reload();
    assert.deepEqual(names(set.plugins), ['alpha@1.0.0', 'beta@1.0.0']);
    assert.match(
      set.errors[0]?.message ?? '',
      /^plugin "acme-beta" clashes with plugin "beta" in \S+ \(serving, it keeps serving\): both define the tool "beta_ping"\. .* and at the next start neither would load$/,
    );
  });

  it('refuses upgrades that clash with each other, leaving both old versions serving', () => {
    bump('alpha', 'alpha', '2.0.0', ['alpha_ping', 'alpha_shared_list']);
    bump('beta', 'beta', '2.0.0', ['beta_ping']);
    bump('gamma', 'alpha-shared', '1.0.0', ['alpha_shared_run']);
    const set = reload();
    assert.deepEqual(
      names(set.plugins),
      ['alpha@1.0.0', 'beta@2.0.0'],
      'alpha 2.0.0 and the newcomer clash: neither; beta is untouched',
    );
    assert.deepEqual(
      set.errors.map((e) => [path.basename(e.dir), e.code]),
      [
        ['alpha', 'GW_ERR_PLUGIN_CLASH'],
        ['gamma', 'GW_ERR_PLUGIN_CLASH'],
      ],
    );
    assert.deepEqual(
      set.changes.kept.map((p) => p.manifest.name),
      ['alpha'],
    );
  });

  it('removes a plugin whose folder is gone', () => {
    fs.rmSync(path.join(root, 'alpha'), { recursive: true });
    const set = reload();
    assert.deepEqual(names(set.plugins), ['beta@1.0.0']);
    assert.deepEqual(names(set.changes.removed), ['alpha@1.0.0']);
  });
});
