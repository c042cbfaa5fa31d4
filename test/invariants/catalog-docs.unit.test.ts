/**
 * @module test/invariants/catalog-docs.unit.test
 * The README's table of integrations says what plugins/ holds: every shipped plugin once, with its
 * number of tools and of tools not marked read-only, and the total; and every shipped plugin has a
 * README and a test file.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { BUILTIN_PLUGINS_DIR, PACKAGE_ROOT } from '../../host/paths.js';

interface Manifest {
  name: string;
  tools: Array<{ name: string; annotations?: { readOnlyHint?: boolean } }>;
}

const shipped = (): Manifest[] =>
  fs
    .readdirSync(BUILTIN_PLUGINS_DIR)
    .filter((d) => fs.existsSync(path.join(BUILTIN_PLUGINS_DIR, d, 'manifest.json')))
    .map((d) => JSON.parse(fs.readFileSync(path.join(BUILTIN_PLUGINS_DIR, d, 'manifest.json'), 'utf8')) as Manifest);

it("the README's integrations table matches plugins/ (names, tool counts, write counts, total)", () => {
  const readme = fs.readFileSync(path.join(PACKAGE_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Integrations'), readme.indexOf('## Layout'));
  assert.ok(section.length > 0, 'README has an Integrations section before Layout');
  const matches = [...section.matchAll(/^\| `([a-z0-9-]+)` \|.*\| (\d+) \((\d+)\) \|$/gm)];
  const rows = new Map(matches.map((m) => [m[1]!, { tools: Number(m[2]), write: Number(m[3]) }]));
  const manifests = shipped();
  assert.equal(matches.length, manifests.length, 'no plugin has two rows');
  assert.deepEqual([...rows.keys()].sort(), manifests.map((m) => m.name).sort(), 'one row per shipped plugin');
  for (const m of manifests) {
    const write = m.tools.filter((t) => t.annotations?.readOnlyHint !== true).length;
    assert.deepEqual(rows.get(m.name), { tools: m.tools.length, write }, m.name);
  }
  const total = manifests.reduce((n, m) => n + m.tools.length, 0);
  const words = [
    'zero',
    'one',
    'two',
    'three',
    'four',
    'five',
    'six',
    'seven',
    'eight',
    'nine',
    'ten',
    'eleven',
    'twelve',
    'thirteen',
    'fourteen',
    'fifteen',
    'sixteen',
    'seventeen',
    'eighteen',
    'nineteen',
    'twenty',
  ];
  assert.match(
    section,
    new RegExp(
      `${words[manifests.length] ?? manifests.length} plugins ship in \`plugins/\`, ${total} tools in all`,
      'i',
    ),
  );
});

it('every shipped plugin has a README and a test file', () => {
  for (const m of shipped()) {
    assert.ok(fs.existsSync(path.join(BUILTIN_PLUGINS_DIR, m.name, 'README.md')), `${m.name}/README.md`);
    assert.ok(
      fs.existsSync(path.join(PACKAGE_ROOT, 'test', 'plugins', `${m.name}.test.ts`)),
      `test/plugins/${m.name}.test.ts`,
    );
  }
});
