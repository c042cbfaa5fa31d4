/**
 * @module test/sandbox/json-density.test
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
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

let gw: TestGateway;
let up: Upstream;
let root: string;

const DENSE = `[${Array(2_500_000).fill('{}').join(',')}]`;
const ORDINARY = JSON.stringify(Array.from({ length: 25_000 }, (_, i) => ({ id: i, title: `item ${i}`, labels: ['a', 'b'], open: i % 2 === 0 })));

const PLUGIN = `
export default {
  async dense_parse(ctx, args) {
    const res = await ctx.http('https://api.dense.test/' + args.path);
    if (args.via === 'json') return { length: (await res.json()).length };
    const text = await res.text();
    if (args.via === 'catch') {
      try { JSON.parse(text); return { caught: null }; } catch (e) { return { caught: e.code, name: e.name }; }
    }
    return { length: JSON.parse(text).length };
  },
  async dense_reviver() {
    return JSON.parse('{"a":1,"b":[2]}', (k, v) => (typeof v === 'number' ? v + 1 : v));
  },
};
`;

before(async () => {
  up = await startUpstream((req) => ({ body: req.path === '/dense' ? DENSE : ORDINARY, headers: { 'content-type': 'application/json' } }));
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-json-density-'));
  const dir = path.join(root, 'dense');
  fs.mkdirSync(dir);
  const pathArg = { type: 'string', enum: ['dense', 'ordinary'] };
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      name: 'dense',
      version: '1.0.0',
      displayName: 'Dense JSON',
      description: 'Test plugin: parses what its upstream answers.',
      auth: { type: 'none' },
      egress: ['api.dense.test'],
      tools: [
        { name: 'dense_parse', description: 'Parses an answer.', inputSchema: { type: 'object', properties: { path: pathArg, via: { type: 'string', enum: ['json', 'parse', 'catch'] } }, required: ['path', 'via'] } },
        { name: 'dense_reviver', description: 'JSON.parse with a reviver.', inputSchema: { type: 'object', properties: {} } },
      ],
    }),
  );
  fs.writeFileSync(path.join(dir, 'plugin.js'), PLUGIN);
  gw = await startGateway({ plugins: [], pluginDirs: [root], upstreams: { 'https://api.dense.test': up.origin } });
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
      assert.match(String(item.error), /holds more than \d+ objects and arrays, more than this plugin's memory can parse \(GW_ERR_SANDBOX_MEMORY\)/);
    }
  });

  it('a plugin can catch the refusal', async () => {
    const item = await gw.execute('dense_parse', { path: 'dense', via: 'catch' });
    assert.deepEqual(item.result, { caught: 'GW_ERR_SANDBOX_MEMORY', name: 'RangeError' });
  });

  it('an ordinary large answer parses, a reviver works, and the plugin keeps running', async () => {
    assert.ok(ORDINARY.length > 1024 * 1024, 'large enough to be counted');
    for (const via of ['json', 'parse']) assert.deepEqual((await gw.execute('dense_parse', { path: 'ordinary', via })).result, { length: 25_000 }, via);
    assert.deepEqual((await gw.execute('dense_reviver', {})).result, { a: 2, b: [3] });
  });
});
