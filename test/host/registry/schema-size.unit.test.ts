/**
 * @module test/host/registry/schema-size.unit
 * Where the expanded-size limit of inputSchemas falls (host/registry/schema-size.ts), through the
 * compile that loading runs: a reuse that doubles per level passes at the 12th level and not the
 * 11th; a definition reused widely without doubling, and recursions that hand down the same
 * sub-schemas at every level (several recursive properties, mutual recursion), are counted once.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { compileToolSchema } from '../../../host/registry/load-plugins.js';
import { MAX_SCHEMA_EXPANSION, measureSchema } from '../../../host/registry/schema-size.js';
import type { ToolManifest } from '../../../contracts/manifest.js';

const tool = (inputSchema: Record<string, unknown>): ToolManifest => ({
  name: 'demo_tool',
  description: 'demo',
  inputSchema,
});

function allOfChain(depth: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = { L0: { type: 'integer' } };
  for (let i = 1; i <= depth; i++)
    $defs[`L${i}`] = { allOf: [{ $ref: `#/$defs/L${i - 1}` }, { $ref: `#/$defs/L${i - 1}` }] };
  return { type: 'object', $defs, properties: { a: { $ref: `#/$defs/L${depth}` } } };
}

it(`a $ref used twice per level is accepted up to 11 levels (8,191 sub-schemas) and refused at 12 (over ${MAX_SCHEMA_EXPANSION})`, () => {
  const v = compileToolSchema(tool(allOfChain(11)));
  assert.equal(v.safeParse({ a: 3 }).success, true);
  assert.equal(v.safeParse({ a: 'x' }).success, false);
  assert.throws(() => compileToolSchema(tool(allOfChain(12))), {
    name: 'Error',
    code: 'GW_ERR_PLUGIN_INVALID',
    message:
      /^tools\.demo_tool\.inputSchema: cannot be validated in bounded time: inputSchema\.properties\.a: expands to more than 10000 sub-schemas/,
  });
});

it('a definition reused by many properties, each once, is accepted', () => {
  const address = {
    type: 'object',
    properties: { street: { type: 'string' }, city: { type: 'string' }, zip: { type: 'string' } },
  };
  const properties = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, { $ref: '#/$defs/Address' }]));
  const v = compileToolSchema(tool({ type: 'object', $defs: { Address: address }, properties }));
  assert.equal(v.safeParse({ p0: { city: 'Lisbon' }, p299: { zip: '1000' } }).success, true);
  assert.equal(v.safeParse({ p7: { city: 7 } }).success, false);
});

it('recursions that hand down the same sub-schemas at every level are counted once: eight recursive properties, mutual recursion, a filter language', () => {
  const wide = {
    type: 'object',
    properties: Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((k) => [k, { $ref: '#' }])),
  };
  assert.equal(
    compileToolSchema(tool(wide)).safeParse({ a: { b: { c: { d: { e: { f: { g: { h: {} } } } } } } } }).success,
    true,
  );
  const mutual = {
    type: 'object',
    $defs: {
      A: { type: 'array', items: { $ref: '#/$defs/B' } },
      B: { type: 'object', properties: { list: { $ref: '#/$defs/A' } } },
    },
    properties: { root: { $ref: '#/$defs/B' } },
  };
  assert.equal(compileToolSchema(tool(mutual)).safeParse({ root: { list: [{ list: [{}] }] } }).success, true);
  const filter = {
    type: 'object',
    $defs: {
      F: {
        anyOf: [
          { type: 'object', properties: { and: { type: 'array', items: { $ref: '#/$defs/F' } } }, required: ['and'] },
          { type: 'object', properties: { or: { type: 'array', items: { $ref: '#/$defs/F' } } }, required: ['or'] },
          { type: 'object', properties: { not: { $ref: '#/$defs/F' } }, required: ['not'] },
          {
            type: 'object',
            properties: { field: { type: 'string' }, equals: { type: ['string', 'number'] } },
            required: ['field', 'equals'],
          },
        ],
      },
    },
    properties: { where: { $ref: '#/$defs/F' } },
  };
  const v = compileToolSchema(tool(filter));
  assert.equal(
    v.safeParse({ where: { and: [{ field: 'a', equals: 1 }, { or: [{ not: { field: 'b', equals: 'x' } }] }] } })
      .success,
    true,
  );
  assert.equal(v.safeParse({ where: { and: [{ field: 'a' }] } }).success, false);
});

it('measures the sub-schemas one value meets at its place, not the whole schema (the validation budget is per value)', () => {
  const address = { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } };
  const wide = {
    type: 'object',
    $defs: { Address: address },
    properties: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`a${i}`, { $ref: '#/$defs/Address' }])),
  };
  assert.equal(measureSchema(wide), 2, 'a $ref and its target, at each address');
  const options = Array.from({ length: 1000 }, (_, i) => ({ const: i }));
  assert.equal(
    measureSchema({ type: 'object', properties: { ids: { type: 'array', items: { anyOf: options } } } }),
    1001,
    'every element meets the anyOf and its 1,000 options',
  );
  assert.equal(
    measureSchema({
      type: 'object',
      properties: { grid: { type: 'array', items: { type: 'array', items: { type: 'number' } } } },
    }),
    1,
  );
});
