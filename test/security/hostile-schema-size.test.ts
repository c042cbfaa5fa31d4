/**
 * @module test/security/hostile-schema-size.test
 * A hostile plugin attacks the host through the size of its inputSchema once `$ref`s are followed:
 * a few KB of `$defs`, each used twice by the next under anyOf, allOf or oneOf, make zod check
 * millions of sub-schemas against one argument, on the event loop, on every call (the red team's
 * anyOf variant blocked the gateway for 30–60 s and ran it out of heap; allOf cost a second per
 * call with valid arguments). Such a schema is refused where plugins are loaded (the loader,
 * `workbench plugin validate`, start-up), naming manifest.json, the tool and the path; a
 * legitimate recursive schema (a tree through `"$ref": "#"`) still loads and validates.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { validateArguments } from '../../host/engine/validate-args.js';
import { loadPluginDir } from '../../host/registry/load-plugins.js';
import { MAX_SCHEMA_EXPANSION } from '../../host/registry/schema-size.js';
import { runCli } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/** `$defs` L0 … L<depth>, each level built from the one below by `level`; argument `a` is the top. */
function doubling(depth: number, leaf: unknown, level: (below: { $ref: string }) => unknown): Record<string, unknown> {
  const $defs: Record<string, unknown> = { L0: leaf };
  for (let i = 1; i <= depth; i++) $defs[`L${i}`] = level({ $ref: `#/$defs/L${i - 1}` });
  return { type: 'object', $defs, properties: { a: { $ref: `#/$defs/L${depth}` } } };
}

/** A tree of nodes, each with a name and children: recursion through `"$ref": "#"`. */
const TREE = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1 }, children: { type: 'array', items: { $ref: '#' } } },
  required: ['name'],
  additionalProperties: false,
};

/** A tree `depth` levels deep (nesting depth 2 per level: the node, then its children array). */
function tree(depth: number): Record<string, unknown> {
  return depth === 0 ? { name: 'leaf' } : { name: `level-${depth}`, children: [tree(depth - 1)] };
}

const sizeMessage = (tool: string, at: string, argument: string): string =>
  `tools.${tool}.inputSchema: cannot be validated in bounded time: ${at}: expands to more than ${MAX_SCHEMA_EXPANSION} sub-schemas once every "$ref" is replaced by the schema it points to (the count passed ${MAX_SCHEMA_EXPANSION} at the sub-schemas checking the argument ${argument}): too many to check on every call; reuse $defs less under anyOf, oneOf and allOf`;

/** The hostile plugins: folder, tool, inputSchema, and the whole message it is refused with. */
const HOSTILE: Array<{ folder: string; tool: string; schema: Record<string, unknown>; message: string }> = [
  {
    // the red team's rt-schema-anyof: nested arrays, two branches per level, 26 levels
    folder: 'hostile-schema-anyof',
    tool: 'anyof_check',
    schema: doubling(26, { type: 'string' }, (below) => ({
      anyOf: [
        { type: 'array', items: below },
        { type: 'array', minItems: 1, items: below },
      ],
    })),
    message: sizeMessage('anyof_check', 'inputSchema.$defs.L16.anyOf.0.items', `a${'[*]'.repeat(11)}`),
  },
  {
    // the red team's rt-schema-allof: slow with valid arguments (2^23 checks of `a`)
    folder: 'hostile-schema-allof',
    tool: 'allof_check',
    schema: doubling(22, { type: 'integer' }, (below) => ({ allOf: [below, below] })),
    message: sizeMessage('allof_check', 'inputSchema.properties.a', 'a'),
  },
  {
    folder: 'hostile-schema-oneof',
    tool: 'oneof_check',
    schema: doubling(20, { type: 'integer' }, (below) => ({ oneOf: [below, below] })),
    message: sizeMessage('oneof_check', 'inputSchema.properties.a', 'a'),
  },
  {
    // a recursion that checks twice as many sub-schemas at every level of nesting
    folder: 'hostile-schema-recursion',
    tool: 'recursion_check',
    schema: {
      type: 'object',
      $defs: {
        L: {
          anyOf: [
            { type: 'array', items: { $ref: '#/$defs/L' } },
            { type: 'array', minItems: 1, items: { $ref: '#/$defs/L' } },
          ],
        },
      },
      properties: { a: { $ref: '#/$defs/L' } },
    },
    message: sizeMessage('recursion_check', 'inputSchema.$defs.L.anyOf.0.items', `a${'[*]'.repeat(11)}`),
  },
  {
    // a $ref back to itself on the same value: zod would recurse until the stack overflows
    folder: 'hostile-schema-loop',
    tool: 'loop_check',
    schema: {
      type: 'object',
      $defs: { A: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/A' }] } },
      properties: { a: { $ref: '#/$defs/A' } },
    },
    message:
      'tools.loop_check.inputSchema: cannot be validated in bounded time: inputSchema.$defs.A.anyOf.1: "$ref": "#/$defs/A" leads back to inputSchema.$defs.A, which it is part of, without descending into a property or an item: validating an argument against it would never end',
  },
];

function writePlugin(
  root: string,
  folder: string,
  tool: string,
  inputSchema: Record<string, unknown>,
  handler = 'async () => ({ ok: true })',
): string {
  const dir = path.join(root, folder);
  fs.mkdirSync(dir, { recursive: true });
  const manifest = {
    name: folder,
    version: '1.0.0',
    displayName: folder,
    description: 'schema size test',
    auth: { type: 'none' },
    egress: [],
    tools: [{ name: tool, description: `checks ${tool}`, inputSchema }],
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 1));
  fs.writeFileSync(path.join(dir, 'plugin.js'), `export default { ${tool}: ${handler} };\n`);
  return dir;
}

const COUNT_NODES =
  'async (ctx, args) => { const count = (n) => 1 + (n.children ?? []).reduce((s, c) => s + count(c), 0); return { nodes: count(args) }; }';

describe('a hostile plugin whose inputSchema expands exponentially through $ref', () => {
  let root: string;
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-schema-size-'));
    for (const h of HOSTILE) writePlugin(root, h.folder, h.tool, h.schema);
    writePlugin(root, 'schema-tree', 'tree_count', TREE, COUNT_NODES);
  });
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  for (const h of HOSTILE) {
    it(`refuses ${h.folder} in the loader, naming manifest.json, the tool and the path`, () => {
      assert.throws(
        () => loadPluginDir(path.join(root, h.folder)),
        (err: Error & { file?: string; code?: string }) => {
          assert.equal(err.code, 'GW_ERR_PLUGIN_INVALID');
          assert.equal(err.file, path.join(root, h.folder, 'manifest.json'));
          assert.equal(err.message, h.message);
          return true;
        },
      );
    });
  }

  it('keeps a recursive tree schema ("$ref": "#"): it loads and validates nested arguments, and the same recursion through two anyOf branches does not', () => {
    const plugin = loadPluginDir(path.join(root, 'schema-tree'));
    const validator = plugin.tools.get('tree_count')?.validator;
    assert.ok(validator);
    assert.deepEqual(validateArguments(validator, tree(30)), { kind: 'valid', value: tree(30) });
    const bad = tree(3) as { children: Array<{ children: Array<Record<string, unknown>> }> };
    (bad.children[0] as { children: Array<Record<string, unknown>> }).children[0] = { name: '', extra: 1 };
    const invalid = validateArguments(validator, bad);
    assert.equal(invalid.kind, 'invalid');
    assert.match((invalid as { message: string }).message, /^children\.0\.children\.0\.name: /);
    assert.match((invalid as { message: string }).message, /children\.0\.children\.0: Unrecognized key: "extra"/);
    const twin = HOSTILE.find((h) => h.folder === 'hostile-schema-recursion');
    assert.throws(
      () => loadPluginDir(path.join(root, 'hostile-schema-recursion')),
      (err: Error & { file?: string }) => err.message === twin?.message,
    );
  });

  it('is refused by `workbench plugin validate` (exit 1, the message on stderr), which accepts the tree', () => {
    const allof = HOSTILE.find((h) => h.folder === 'hostile-schema-allof');
    const refused = runCli({}, 'plugin', 'validate', path.join(root, 'hostile-schema-allof'));
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.equal(refused.stdout, '');
    assert.equal(
      refused.stderr,
      `invalid: ${path.join(root, 'hostile-schema-allof', 'manifest.json')}: ${allof?.message}\n`,
    );
    const good = runCli({}, 'plugin', 'validate', path.join(root, 'schema-tree'));
    assert.equal(good.code, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /^ok: schema-tree@1\.0\.0: 1 tool\(s\)/);
  });
});

describe('a gateway starting with hostile-schema plugins beside a good one', () => {
  let root: string;
  let gw: TestGateway;
  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-schema-size-gw-'));
    for (const h of HOSTILE) writePlugin(root, h.folder, h.tool, h.schema);
    writePlugin(root, 'schema-tree', 'tree_count', TREE, COUNT_NODES);
    gw = await startGateway({ plugins: [], pluginDirs: [root] });
  });
  after(async () => {
    await gw?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('refuses each hostile plugin at start-up (listed in pluginErrors) and serves the good one', async () => {
    for (const h of HOSTILE) {
      const refused = gw.gateway.pluginErrors.find((e) => e.dir === path.join(root, h.folder));
      assert.ok(refused, `${h.folder} was not refused: ${JSON.stringify(gw.gateway.pluginErrors)}`);
      assert.equal(refused.file, path.join(root, h.folder, 'manifest.json'));
      assert.equal(refused.message, h.message);
      assert.equal(gw.gateway.registry.plugin(h.folder), undefined);
    }
    // the red team's argument (anyof-arg.json): 26 levels of arrays, wrong at the bottom
    let nested: unknown = 1;
    for (let i = 0; i < 26; i++) nested = [nested];
    const attack = await gw.execute('anyof_check', { a: nested });
    assert.equal(attack.code, 'GW_ERR_ENGINE_TOOL_NOT_FOUND', JSON.stringify(attack));
    const good = await gw.execute('tree_count', tree(20));
    assert.deepEqual(good, { result: { nodes: 21 } });
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  });
});
