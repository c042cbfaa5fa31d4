/**
 * @module test/fuzz/manifest.test
 * Property-based fuzzing of plugin manifests: manifestSchema on arbitrary values, and
 * loadPluginDir / loadPlugins on temp folders holding mutated manifests (random fields, random
 * JSON Schemas for inputSchema, broken JSON, missing plugin.js). A folder either loads (and its
 * compiled validators answer valid / invalid / schema-error for any arguments, never throwing) or is
 * refused with an Error naming the file; loadPlugins never throws and keeps the good plugins.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { validateArguments } from '../../host/engine/validate-args.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { loadPluginDir, loadPlugins } from '../../host/registry/load-plugins.js';
import { manifestSchema } from '../../contracts/manifest.js';

type Json = ReturnType<typeof JSON.parse>;
const BASE = JSON.parse(
  fs.readFileSync(path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins', 'fixture-echo', 'manifest.json'), 'utf8'),
) as Record<string, Json>;

/** JSON-Schema-shaped values, valid or not, that z.fromJSONSchema has to cope with (nesting bounded by hand). */
const leaf = fc.record(
  {
    type: fc.oneof(
      fc.constantFrom('string', 'integer', 'number', 'boolean', 'null', 'array', 'object', 'nope'),
      fc.array(fc.constantFrom('string', 'null', 'integer'), { maxLength: 2 }),
    ),
    minLength: fc.integer({ min: -1, max: 5 }),
    maxLength: fc.integer({ min: 0, max: 10 }),
    minimum: fc.integer({ min: -5, max: 5 }),
    pattern: fc.oneof(fc.constantFrom('^[a-z]+$', '(', '\\d{2}', '[', '^$'), fc.string({ maxLength: 6 })),
    enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
    const: fc.jsonValue({ maxDepth: 1 }),
    format: fc.constantFrom('email', 'uri', 'date-time', 'uuid', 'ipv4', 'bogus'),
    default: fc.jsonValue({ maxDepth: 1 }),
    required: fc.oneof(fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }), fc.jsonValue({ maxDepth: 0 })),
    $ref: fc.constantFrom('#', '#/properties/a', '#/$defs/x', 'http://example.com/s.json', '#/nope'),
  },
  { requiredKeys: [] },
);
const nestAround = (inner: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 2, arbitrary: leaf },
    fc
      .tuple(
        leaf,
        fc.record(
          {
            items: inner,
            properties: fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), inner, { maxKeys: 2 }),
            additionalProperties: fc.oneof(fc.boolean(), inner),
          },
          { requiredKeys: [] },
        ),
      )
      .map(([a, b]) => ({ ...a, ...b })),
    fc
      .tuple(
        leaf,
        fc.record(
          {
            anyOf: fc.array(inner, { minLength: 1, maxLength: 2 }),
            oneOf: fc.array(inner, { minLength: 1, maxLength: 2 }),
            allOf: fc.array(inner, { minLength: 1, maxLength: 2 }),
            not: inner,
            $defs: fc.dictionary(fc.constantFrom('x', 'y'), inner, { maxKeys: 1 }),
          },
          { requiredKeys: [] },
        ),
      )
      .map(([a, b]) => ({ ...a, ...b })),
    fc.boolean(),
    fc.jsonValue({ maxDepth: 1 }),
  );
const schema = nestAround(nestAround(leaf));
const simple = fc.constantFrom<Json>(
  { type: 'string' },
  { type: 'integer', minimum: 0 },
  { type: 'string', pattern: '^[a-z]+$' },
  { type: 'array', items: { type: 'string' } },
  { type: 'boolean' },
  { type: 'string', enum: ['a', 'b'] },
  { type: 'number', default: 1 },
);
const inputSchema = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('object'),
      properties: fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), simple, { maxKeys: 4 }),
    }),
  },
  schema.map((s) => (s && typeof s === 'object' && !Array.isArray(s) ? { ...s, type: 'object' } : s)),
  fc.record({
    type: fc.constant('object'),
    properties: fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), schema, { maxKeys: 4 }),
  }),
);
const tool = fc.record(
  {
    name: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('fz_one', 'fz_two', 'fz_three') },
      { weight: 1, arbitrary: fc.oneof(fc.constantFrom('Bad-Name', ''), fc.string({ maxLength: 10 })) },
    ),
    description: fc.oneof(
      { weight: 8, arbitrary: fc.constant('A tool.') },
      { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
    ),
    inputSchema,
    annotations: fc.oneof(
      { weight: 8, arbitrary: fc.constant({ readOnlyHint: true }) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
    ),
  },
  { requiredKeys: ['name', 'description', 'inputSchema'] },
);
const field = <T>(good: T, bad: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 5, arbitrary: fc.constant(good) }, { weight: 1, arbitrary: bad });
const manifest = fc.record({
  name: field('fz', fc.oneof(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 0 }))),
  version: field('1.0.0', fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('1.0', 'v1.0.0', '1.0.0-beta.1'))),
  displayName: field('Fuzz', fc.string({ maxLength: 120 })),
  description: field('Fuzzed plugin.', fc.string({ maxLength: 10 })),
  auth: field<Json>(
    BASE['auth'],
    fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.record(
        {
          type: fc.constantFrom('apikey', 'oauth2', 'none'),
          fields: fc.jsonValue({ maxDepth: 2 }),
          inject: fc.record(
            {
              header: fc.string({ maxLength: 10 }),
              format: fc.string({ maxLength: 10 }),
              hosts: fc.array(fc.domain(), { maxLength: 2 }),
            },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: ['type'] },
      ),
    ),
  ),
  egress: field<string[]>(
    [],
    fc.oneof(
      fc.array(fc.oneof(fc.domain(), fc.string({ maxLength: 12 })), { maxLength: 3 }),
      fc.jsonValue({ maxDepth: 1 }),
    ),
  ),
  tools: fc.oneof(
    { weight: 4, arbitrary: fc.uniqueArray(tool, { minLength: 1, maxLength: 3, selector: (t) => t.name }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  ),
});
const argValue = fc.jsonValue({ maxDepth: 3 }).map((v) => (typeof v === 'string' ? v.slice(0, 20) : v));

describe('fuzzing plugin manifests', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-manifest-fuzz-'));
  let n = 0;
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  function writePlugin(manifestText: string | undefined, source: string | undefined): string {
    const dir = path.join(root, 'set', `p${n++}`);
    fs.mkdirSync(dir, { recursive: true });
    if (manifestText !== undefined) fs.writeFileSync(path.join(dir, 'manifest.json'), manifestText);
    if (source !== undefined) fs.writeFileSync(path.join(dir, 'plugin.js'), source);
    return dir;
  }

  it('manifestSchema.safeParse never throws, for any value', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true, withDate: true, maxDepth: 3 }),
          manifest,
        ),
        (v) => {
          const r = manifestSchema.safeParse(v);
          if (!r.success) assert.ok(r.error.issues.length > 0);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('loadPluginDir loads a folder or refuses it with an Error naming the file', () => {
    let loaded = 0;
    fc.assert(
      fc.property(
        manifest,
        fc.oneof(fc.constant('export default {};'), fc.string({ maxLength: 50 })),
        fc.array(argValue, { minLength: 1, maxLength: 4 }),
        (m, source, argsList) => {
          const dir = writePlugin(JSON.stringify(m), source);
          let plugin: ReturnType<typeof loadPluginDir>;
          try {
            plugin = loadPluginDir(dir);
          } catch (err) {
            assert.ok(err instanceof Error && err.message.length > 0, String(err));
            assert.ok(
              typeof (err as Error & { file?: string }).file === 'string' &&
                (err as Error & { file: string }).file.startsWith(dir),
              `the error names the file: ${String(err)}`,
            );
            return;
          }
          loaded++;
          assert.equal(plugin.source, source);
          for (const t of plugin.tools.values())
            for (const a of argsList) {
              const v = validateArguments(t.validator, a);
              assert.ok(['valid', 'invalid', 'schema-error'].includes(v.kind));
            }
        },
      ),
      { numRuns: 400 },
    );
    assert.ok(loaded > 10, `some fuzzed manifests loaded (${loaded})`);
  });

  it('refuses broken JSON, missing plugin.js and odd files with an Error naming the file', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 80 }),
          manifest.map((m) => JSON.stringify(m).slice(0, -1)),
        ),
        fc.boolean(),
        (text, withSource) => {
          const dir = writePlugin(text, withSource ? 'export default {};' : undefined);
          try {
            loadPluginDir(dir);
          } catch (err) {
            assert.ok(typeof (err as Error & { file?: string }).file === 'string', String(err));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('loadPlugins never throws on a folder of fuzzed plugins and keeps the good ones', () => {
    const good = path.join(root, 'set', 'zz-good');
    fs.mkdirSync(good, { recursive: true });
    fs.writeFileSync(
      path.join(good, 'manifest.json'),
      JSON.stringify({
        ...BASE,
        name: 'zz-good',
        tools: [{ name: 'zz_good_tool', description: 'Good.', inputSchema: { type: 'object' } }],
      }),
    );
    fs.writeFileSync(path.join(good, 'plugin.js'), 'export default { async zz_good_tool() { return {}; } };');
    const result = loadPlugins([path.join(root, 'set'), path.join(root, 'does-not-exist')]);
    assert.ok(
      result.plugins.some((p) => p.manifest.name === 'zz-good'),
      'the good plugin loads beside the fuzzed ones',
    );
    assert.ok(result.errors.length > 0);
    for (const e of result.errors) assert.ok(e.file && e.message, JSON.stringify(e));
    const names = result.plugins.map((p) => p.manifest.name);
    assert.equal(new Set(names).size, names.length, 'no two loaded plugins share a name');
  });
});
