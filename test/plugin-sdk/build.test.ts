/**
 * @module test/plugin-sdk/build.test
 * The TypeScript fixture plugin (test/fixtures/sdk-plugin) builds to exactly its committed dist/
 * (a stale build fails here), builds byte-identically twice, produces a manifest with defaults and
 * descriptions and a plugin.js without zod or imports, and runs through the real gateway and
 * sandbox against a loopback upstream.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildPlugin } from '../../host/plugin-sdk/build.js';
import { loadPluginDir } from '../../host/registry/load-plugins.js';
import type fixture from '../fixtures/sdk-plugin/plugin.js';
import { startGateway } from '../helpers/gateway.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { FIXTURE_DIR, removeTempDirs, tempDir } from './temp-plugin.js';

// Compile-time check that handler args are inferred from the zod schema (output type: defaults applied).
type SearchArgs = Parameters<(typeof fixture)['tools']['sdk_demo_search_items']['handler']>[1];
const typed: SearchArgs = { query: 'q', status: 'open', limit: 10 };
// @ts-expect-error -- limit is a number, status one of the enum values
const wrong: SearchArgs = { query: 'q', status: 'opened', limit: '10' };
void typed;
void wrong;

const read = (dir: string, file: string): string => fs.readFileSync(path.join(dir, file), 'utf8');
let outA: string;
let outB: string;

before(async () => {
  const root = tempDir();
  outA = path.join(root, 'a', 'sdk-demo');
  outB = path.join(root, 'b', 'sdk-demo');
  await buildPlugin({ dir: FIXTURE_DIR, outDir: outA });
  await buildPlugin({ dir: FIXTURE_DIR, outDir: outB });
});
after(() => removeTempDirs());

describe('build output', () => {
  test('the committed build in test/fixtures/sdk-plugin/dist is current', () => {
    const committed = path.join(FIXTURE_DIR, 'dist');
    for (const file of ['manifest.json', 'plugin.js']) {
      assert.equal(read(outA, file), read(committed, file), `test/fixtures/sdk-plugin/dist/${file} is stale: run \`npx workbench plugin build test/fixtures/sdk-plugin\` and commit it`);
    }
  });

  test('two builds of the same source are byte-identical', () => {
    for (const file of ['manifest.json', 'plugin.js']) assert.ok(fs.readFileSync(path.join(outA, file)).equals(fs.readFileSync(path.join(outB, file))), file);
  });

  test('the manifest carries defaults, descriptions, bounds and annotations, and no $schema', () => {
    const manifest = JSON.parse(read(outA, 'manifest.json'));
    assert.deepEqual(Object.keys(manifest), ['name', 'version', 'displayName', 'description', 'auth', 'egress', 'tools']);
    assert.deepEqual(manifest.tools.map((t: { name: string }) => t.name), ['sdk_demo_search_items', 'sdk_demo_create_item', 'sdk_demo_echo']);
    const search = manifest.tools[0];
    assert.equal(search.inputSchema.$schema, undefined);
    assert.deepEqual(search.inputSchema.required, ['query']);
    assert.equal(search.inputSchema.additionalProperties, false, 'a z.object is published strict');
    assert.deepEqual(search.inputSchema.properties.limit, { default: 10, description: 'How many items to return', type: 'integer', minimum: 1, maximum: 50 });
    assert.deepEqual(search.inputSchema.properties.status.enum, ['open', 'closed', 'all']);
    assert.equal(search.inputSchema.properties.status.default, 'open');
    assert.equal(search.inputSchema.properties.query.description, 'Words to look for in titles, e.g. "login bug"');
    assert.deepEqual(search.annotations, { readOnlyHint: true });
    assert.deepEqual(manifest.tools[1].inputSchema.properties.labels.default, []);
    assert.equal(manifest.auth.inject.header, 'x-demo-key');
    assert.equal(loadPluginDir(outA).tools.size, 3);
  });

  test('plugin.js is one module without imports, zod or the schemas’ runtime', () => {
    const js = read(outA, 'plugin.js');
    assert.ok(js.startsWith('// sdk-demo 1.0.0: built from plugin.ts by `workbench plugin build`.'));
    assert.doesNotMatch(js, /^\s*import\s|\bimport\(|\brequire\(/m);
    assert.doesNotMatch(js, /ZodObject|node_modules|\$ZodType/);
    assert.ok(Buffer.byteLength(js) < 8_000, `plugin.js is ${Buffer.byteLength(js)} bytes`);
    assert.doesNotMatch(js, /\/work\/|\/tmp\/|\/home\//, 'no machine paths');
    assert.match(js, /export \{\s*plugin_default as default\s*\};/);
  });
});

describe('the built plugin in the real gateway', () => {
  let upstream: Upstream;
  let gw: Awaited<ReturnType<typeof startGateway>>;
  before(async () => {
    upstream = await startUpstream();
    gw = await startGateway({ plugins: [], pluginDirs: [path.dirname(outA)], upstreams: { 'https://api.demo.example': upstream.origin } });
    await gw.connect('sdk-demo', { values: { apiKey: 'demo-key-1234' }, config: { workspace: 'team a' } });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  test('search: the request carries the defaults and the injected key; the result is shaped', async () => {
    upstream.setHandler(() => ({
      json: { items: [{ id: 'I-1', title: 'Login bug', status: 'open', owner: { login: 'ana' }, created_at: '2024-05-01T10:00:00Z', noise: 'x'.repeat(50) }], next_cursor: 'c2' },
    }));
    const item = await gw.execute('sdk_demo_search_items', { query: 'login bug' });
    assert.deepEqual(item.result, { items: [{ id: 'I-1', title: 'Login bug', status: 'open', owner: 'ana', createdAt: '2024-05-01T10:00:00Z' }], next: 'c2' });
    const req = upstream.last();
    assert.equal(req.method, 'GET');
    assert.equal(req.path, '/v1/workspaces/team%20a/items');
    assert.deepEqual(Object.fromEntries(req.query), { q: 'login bug', status: 'open', per_page: '10' });
    assert.equal(req.headers['x-demo-key'], 'demo-key-1234');
    assert.equal(req.headers['accept'], 'application/json');
  });

  test('create: a JSON body with defaults applied', async () => {
    upstream.setHandler(() => ({ status: 201, json: { id: 'I-9', title: 'New', status: 'open', created_at: '2024-05-02T00:00:00Z' } }));
    const item = await gw.execute('sdk_demo_create_item', { title: 'New' });
    assert.deepEqual(item.result, { id: 'I-9', title: 'New', status: 'open', owner: null, createdAt: '2024-05-02T00:00:00Z' });
    const req = upstream.last();
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/v1/items');
    assert.deepEqual(req.json, { title: 'New', body: '', labels: [] });
    assert.equal(req.headers['content-type'], 'application/json');
  });

  test('echo: the handler sees validated, defaulted arguments', async () => {
    assert.deepEqual((await gw.execute('sdk_demo_echo', {})).result, { echoed: 'hello', args: { text: 'hello', times: 1 } });
    assert.deepEqual((await gw.execute('sdk_demo_echo', { text: 'yo', times: 2 })).result, { echoed: 'yo yo', args: { text: 'yo', times: 2 } });
  });

  test('bad arguments are refused before the handler runs; provider errors are mapped', async () => {
    const before = upstream.requests.length;
    const tooMany = await gw.execute('sdk_demo_search_items', { query: 'x', limit: 500 });
    assert.ok(tooMany.error && tooMany.code, JSON.stringify(tooMany));
    assert.match(tooMany.error, /limit/);
    const unknown = await gw.execute('sdk_demo_echo', { txet: 'typo' });
    assert.match(unknown.error ?? '', /txet/);
    assert.equal(upstream.requests.length, before, 'no request was made');
    upstream.setHandler(() => ({ status: 429, headers: { 'retry-after': '30' }, json: {} }));
    const limited = await gw.execute('sdk_demo_search_items', { query: 'x' });
    assert.match(limited.error ?? '', /retry after 30 seconds/);
  });
});
