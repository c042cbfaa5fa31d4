/**
 * @module test/host/registry/patterns.unit
 * Manifest `pattern`s are checked with RE2 in linear time, wherever they sit in plain properties,
 * items and additionalProperties; patterns RE2 cannot run, or that sit under combinators, refuse the
 * plugin at load with the path named.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { compileToolSchema } from '../../../host/registry/load-plugins.js';
import { formatZodIssues } from '../../../host/engine/validate-args.js';
import type { ToolManifest } from '../../../contracts/manifest.js';

const tool = (inputSchema: Record<string, unknown>): ToolManifest => ({
  name: 'demo_tool',
  description: 'demo',
  inputSchema: { type: 'object', ...inputSchema },
});

function problems(schema: Record<string, unknown>, value: unknown): string | undefined {
  const r = compileToolSchema(tool(schema)).safeParse(value);
  return r.success ? undefined : formatZodIssues(r.error);
}

it('a catastrophic-backtracking pattern is matched in linear time', () => {
  const schema = { properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
  const t0 = performance.now();
  assert.equal(problems(schema, { s: 'a'.repeat(5000) + '!' }), 's: must match the pattern ^(a+)+$');
  // exponential backtracking on 5,000 characters would never end: the bound leaves a busy machine room
  assert.ok(performance.now() - t0 < 10_000, 'no exponential backtracking');
  assert.equal(problems(schema, { s: 'aaaa' }), undefined);
});

it('patterns apply in nested properties, array items and additionalProperties, with paths', () => {
  const schema = {
    properties: {
      labels: { type: 'array', items: { type: 'string', pattern: '^[a-z-]+$' } },
      owner: { type: 'object', properties: { login: { type: 'string', pattern: '^[A-Za-z0-9-]+$' } } },
      env: { type: 'object', additionalProperties: { type: 'string', pattern: '^[A-Z_]+$' } },
    },
  };
  assert.equal(
    problems(schema, { labels: ['ok', 'Not ok'], owner: { login: 'a b' }, env: { x: 'FINE', y: 'bad' } }),
    'labels.1: must match the pattern ^[a-z-]+$; owner.login: must match the pattern ^[A-Za-z0-9-]+$; env.y: must match the pattern ^[A-Z_]+$',
  );
  assert.equal(problems(schema, { labels: ['fine'], owner: { login: 'octo-cat' }, env: { X: 'OK' } }), undefined);
});

it('defaults still apply and other keywords still validate', () => {
  const r = compileToolSchema(
    tool({ properties: { s: { type: 'string', pattern: '^x', default: 'xyz' }, n: { type: 'integer', maximum: 3 } } }),
  ).safeParse({ n: 2 });
  assert.deepEqual(r.success && r.data, { s: 'xyz', n: 2 });
  assert.match(problems({ properties: { n: { type: 'integer', maximum: 3 } } }, { n: 9 }) ?? '', /^n: /);
});

const refused: [string, Record<string, unknown>, RegExp][] = [
  [
    'lookahead',
    { properties: { s: { type: 'string', pattern: '^(?!x)' } } },
    /inputSchema\.properties\.s\.pattern: .* not a linear-time regular expression/,
  ],
  ['backreference', { properties: { s: { type: 'string', pattern: '(a)\\1' } } }, /not a linear-time/],
  [
    'pattern under anyOf',
    { properties: { s: { anyOf: [{ type: 'string', pattern: '^a' }, { type: 'integer' }] } } },
    /properties\.s\.anyOf: "pattern" is not supported here/,
  ],
  ['patternProperties', { patternProperties: { '^(a+)+$': { type: 'string' } } }, /not supported|cannot be compiled/],
];
for (const [name, schema, message] of refused) {
  it(`refuses ${name} at load, naming the path`, () => {
    assert.throws(
      () => compileToolSchema(tool(schema)),
      (err: Error & { code?: string }) =>
        err.code === 'GW_ERR_PLUGIN_INVALID' &&
        err.message.startsWith('tools.demo_tool.inputSchema: cannot be compiled: ') &&
        message.test(err.message),
    );
  });
}
