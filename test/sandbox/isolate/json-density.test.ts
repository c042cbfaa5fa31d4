/**
 * @module test/sandbox/isolate/json-density.test
 * A hostile or broken upstream answering millions of tiny JSON values ('[{},{},…]', 7 MB, under the
 * response cap): parsing it would need more than the isolate's memory in collections V8 does not
 * interrupt (the sandbox process was replaced after ~3 s). Through a started gateway: `res.json()`
 * and `JSON.parse` refuse it at once with a RangeError of code GW_ERR_SANDBOX_MEMORY (a plugin may
 * catch it), ordinary
 * large answers still parse, a reviver still works, and the plugin's next call runs.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

let gw: TestGateway;
let up: Upstream;
let root: string;

const DENSE = `[${Array(2_500_000).fill('{}').join(',')}]`;
const ARRAYS = `[${Array(2_500_000).fill('[]').join(',')}]`;
/** one object with 838,000 members (~9 MB): aborted the whole process in a 64 MiB isolate */
const MEMBERS = `{${Array.from({ length: 838_000 }, (_, i) => `"${i.toString(36)}":0`).join(',')}}`;
/** 500,000 objects: room for them at 64 MiB, not at 32 */
const HALF_MILLION = `[${Array(500_000).fill('{}').join(',')}]`;
/** a million braces inside one string value are text, not objects */
const BRACES_IN_STRING = JSON.stringify({ note: '{['.repeat(600_000), items: [1, 2] });
const ORDINARY = JSON.stringify(
  Array.from({ length: 25_000 }, (_, i) => ({ id: i, title: `item ${i}`, labels: ['a', 'b'], open: i % 2 === 0 })),
);

const pluginSource = (prefix: string): string => `
export default {
  async ${prefix}_parse(ctx, args) {
    const res = await ctx.http('https://api.dense.test/' + args.path);
    if (args.via === 'json') return { length: (await res.json()).length };
    const text = await res.text();
    if (args.via === 'catch') {
      try { JSON.parse(text); return { caught: null }; } catch (e) { return { caught: e.code, name: e.name }; }
    }
    return { length: JSON.parse(text).length };
  },
  async ${prefix}_reviver() {
    return JSON.parse('{"a":1,"b":[2]}', (k, v) => (typeof v === 'number' ? v + 1 : v));
  },
};
`;

before(async () => {
  const bodies: Record<string, string> = {
    '/dense': DENSE,
    '/arrays': ARRAYS,
    '/members': MEMBERS,
    '/half-million': HALF_MILLION,
    '/braces': BRACES_IN_STRING,
    '/ordinary': ORDINARY,
  };
  up = await startUpstream((req) => ({
    body: bodies[req.path] ?? '{}',
    headers: { 'content-type': 'application/json' },
  }));
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-json-density-'));
  const pathArg = { type: 'string', enum: Object.keys(bodies).map((k) => k.slice(1)) };
  // the same plugin twice: "dense" with the default 64 MiB, "small" with 32 MiB (policy below)
  for (const [name, prefix] of [
    ['dense', 'dense'],
    ['dense-small', 'small'],
  ] as const) {
    const dir = path.join(root, name);
    fs.mkdirSync(dir);
    fs.writeFileSync(
      path.join(dir, 'manifest.json'),
      JSON.stringify({
        name,
        version: '1.0.0',
        displayName: `Dense JSON (${prefix})`,
        description: 'Test plugin: parses what its upstream answers.',
        auth: { type: 'none' },
        egress: ['api.dense.test'],
        tools: [
          {
            name: `${prefix}_parse`,
            description: 'Parses an answer.',
            inputSchema: {
              type: 'object',
              properties: { path: pathArg, via: { type: 'string', enum: ['json', 'parse', 'catch'] } },
              required: ['path', 'via'],
            },
          },
          {
            name: `${prefix}_reviver`,
            description: 'JSON.parse with a reviver.',
            inputSchema: { type: 'object', properties: {} },
          },
        ],
      }),
    );
    fs.writeFileSync(path.join(dir, 'plugin.js'), pluginSource(prefix));
  }
  gw = await startGateway({
    plugins: [],
    pluginDirs: [root],
    upstreams: { 'https://api.dense.test': up.origin },
    // parsing half a million objects is not a test of time: the step limit leaves a busy machine room
    policy: { limits: { cpuMsPerCall: 10_000 }, plugins: { 'dense-small': { limits: { memoryMb: 32 } } } },
  });
});
after(async () => {
  await gw?.close();
  await up?.close();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe('JSON too dense for the isolate', () => {
  it('res.json() and JSON.parse refuse it with GW_ERR_SANDBOX_MEMORY, naming what it holds', async () => {
    assert.ok(DENSE.length < 8 * 1024 * 1024, 'under the response cap');
    for (const via of ['json', 'parse']) {
      const item = await gw.execute('dense_parse', { path: 'dense', via });
      // thrown into the handler, as a bridge error is: a plugin that does not catch it fails with its code in the message
      assert.equal(item.code, 'GW_ERR_SANDBOX_HANDLER_THREW', `${via}: ${JSON.stringify(item).slice(0, 300)}`);
      assert.match(
        String(item.error),
        /holds more than \d+ objects and arrays, more than this plugin's memory can parse \(GW_ERR_SANDBOX_MEMORY\)/,
      );
    }
  });

  it('an array of arrays and one object of 838,000 members are refused too; nesting is counted outside strings only', async () => {
    const arrays = await gw.execute('dense_parse', { path: 'arrays', via: 'json' });
    assert.match(
      String(arrays.error),
      /holds more than 786432 objects and arrays.*\(GW_ERR_SANDBOX_MEMORY\)/,
      JSON.stringify(arrays).slice(0, 300),
    );
    const members = await gw.execute('dense_parse', { path: 'members', via: 'json' });
    assert.match(
      String(members.error),
      /has an object with more than 307200 members.*\(GW_ERR_SANDBOX_MEMORY\)/,
      JSON.stringify(members).slice(0, 300),
    );
    assert.ok(BRACES_IN_STRING.length > 1024 * 1024);
    const braces = await gw.execute('dense_parse', { path: 'braces', via: 'parse' });
    assert.deepEqual(
      braces.result,
      {},
      `1.2 million braces in a string parse: ${JSON.stringify(braces).slice(0, 200)}`,
    );
  });

  it("the room is the plugin's own memory limit: 500,000 objects parse at 64 MiB and are refused at 32", async () => {
    assert.deepEqual((await gw.execute('dense_parse', { path: 'half-million', via: 'json' })).result, {
      length: 500_000,
    });
    const small = await gw.execute('small_parse', { path: 'half-million', via: 'json' });
    assert.match(String(small.error), /holds more than 393216 objects and arrays/, JSON.stringify(small).slice(0, 300));
  });

  it('a plugin can catch the refusal', async () => {
    const item = await gw.execute('dense_parse', { path: 'dense', via: 'catch' });
    assert.deepEqual(item.result, { caught: 'GW_ERR_SANDBOX_MEMORY', name: 'RangeError' });
  });

  it('an ordinary large answer parses, a reviver works, and the plugin keeps running', async () => {
    assert.ok(ORDINARY.length > 1024 * 1024, 'large enough to be counted');
    for (const via of ['json', 'parse'])
      assert.deepEqual((await gw.execute('dense_parse', { path: 'ordinary', via })).result, { length: 25_000 }, via);
    assert.deepEqual((await gw.execute('dense_reviver', {})).result, { a: 2, b: [3] });
  });
});
