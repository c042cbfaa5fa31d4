/**
 * @module test/host/plugin-sdk/cli.test
 * `workbench plugin new` scaffolds a folder that builds, validates and passes its own test out of
 * the box (and builds to the same bytes wherever it lives), and whose tool, run in the real gateway
 * and sandbox, sends a lone surrogate in its id as U+FFFD rather than failing on URIError;
 * `workbench plugin build` reports failures with exit 1; zod stays out of plugin.js unless
 * --keep-zod asks for it.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildPlugin } from '../../../host/plugin-sdk/build.js';
import { scaffoldPlugin } from '../../../host/plugin-sdk/scaffold.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { startGateway } from '../../helpers/gateway.js';
import { startUpstream } from '../../helpers/upstream.js';
import {
  CLI,
  echoTool,
  fakeCtx,
  importBuilt,
  pluginSource,
  removeTempDirs,
  tempDir,
  writePlugin,
} from '../../helpers/temp-plugin.js';

const exec = promisify(execFile);
after(() => removeTempDirs());

async function workbench(args: string[], cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--no-node-snapshot', CLI, ...args], {
      cwd,
      encoding: 'utf8',
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('workbench plugin new / build / validate', () => {
  test('a new plugin builds, validates, type-checks and passes its own fixtures out of the box', async () => {
    const parent = tempDir();
    const created = await workbench(['plugin', 'new', 'acme-tracker', '--dir', parent]);
    assert.equal(created.code, 0, created.stderr);
    const dir = path.join(parent, 'acme-tracker');
    assert.deepEqual(fs.readdirSync(dir).sort(), [
      '.gitignore',
      'README.md',
      'fixtures',
      'node_modules',
      'package.json',
      'plugin.ts',
      'tsconfig.json',
    ]);
    assert.equal(fs.realpathSync(path.join(dir, 'node_modules', 'workbench')), fs.realpathSync(PACKAGE_ROOT));
    assert.equal(fs.readFileSync(path.join(dir, '.gitignore'), 'utf8'), 'node_modules/\n');
    assert.match(fs.readFileSync(path.join(dir, 'plugin.ts'), 'utf8'), /from 'workbench\/plugin-sdk'/);

    const built = await workbench(['plugin', 'build', dir, '--json']);
    assert.equal(built.code, 0, built.stderr);
    const summary = JSON.parse(built.stdout);
    assert.deepEqual(
      { name: summary.name, tools: summary.tools, outDir: summary.outDir },
      { name: 'acme-tracker', tools: ['acme_tracker_get_item'], outDir: path.join(dir, 'dist') },
    );
    assert.ok(summary.pluginBytes < 16_000, `plugin.js is ${summary.pluginBytes} bytes`);

    const validated = await workbench(['plugin', 'validate', path.join(dir, 'dist')]);
    assert.equal(validated.code, 0, validated.stderr);
    assert.match(validated.stdout, /^ok: acme-tracker@0\.1\.0: 1 tool\(s\)/);

    const tested = await workbench(['plugin', 'test', dir]);
    assert.equal(tested.code, 0, tested.stdout + tested.stderr);
    assert.match(tested.stdout, /\n3 passed, 0 failed\n$/);
  });

  test('a new plugin folder names no path of this machine and works after being moved', async () => {
    const parent = tempDir();
    const created = await workbench(['plugin', 'new', 'far-away', '--dir', parent], parent);
    assert.equal(created.code, 0, created.stderr);
    const next = /then run: (.*)\n/.exec(created.stdout)?.[1] ?? '';
    assert.equal(next, `node ${path.join(PACKAGE_ROOT, 'bin', 'workbench.js')} plugin build far-away`);
    const dir = path.join(parent, 'far-away');
    for (const file of [
      'plugin.ts',
      'README.md',
      'package.json',
      'tsconfig.json',
      '.gitignore',
      path.join('fixtures', 'far_away_get_item.json'),
    ]) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      assert.ok(!text.includes(PACKAGE_ROOT) && !text.includes(parent), `${file} names no machine path`);
    }
    const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
    assert.doesNotMatch(readme, /npx workbench/);

    // moved elsewhere, without its link (as a clone would be), then linked again
    const moved = path.join(tempDir(), 'elsewhere', 'far-away');
    fs.mkdirSync(path.dirname(moved), { recursive: true });
    fs.cpSync(dir, moved, { recursive: true, filter: (src) => !src.includes(`${path.sep}node_modules`) });
    const linked = await workbench(['plugin', 'link', moved]);
    assert.equal(linked.code, 0, linked.stderr);
    const { NODE_TEST_CONTEXT: _inherited, ...env } = process.env;
    for (const script of ['build', 'typecheck', 'test']) {
      const r = await exec('npm', ['run', '--silent', script], { cwd: moved, encoding: 'utf8', env });
      assert.ok(r.stdout.length > 0 || script === 'typecheck', `${script}: ${r.stdout}${r.stderr}`);
    }
    assert.ok(fs.existsSync(path.join(moved, 'dist', 'plugin.js')));
    const js = fs.readFileSync(path.join(moved, 'dist', 'plugin.js'), 'utf8');
    assert.ok(!js.includes(PACKAGE_ROOT) && !js.includes(moved), 'plugin.js names no machine path');
  });

  test('plugin test names the request that differs from the recording, and what the tool returned instead', async () => {
    const { dir } = scaffoldPlugin('drifted', tempDir());
    const file = path.join(dir, 'fixtures', 'drifted_get_item.json');
    const cases = JSON.parse(fs.readFileSync(file, 'utf8')) as Array<{
      exchanges: Array<{ request: { url: string } }>;
      expect: { result?: { title?: string } };
    }>;
    cases[0]!.exchanges[0]!.request.url = 'https://api.example.com/v1/items/43';
    cases[1]!.expect.result!.title = 'Different';
    fs.writeFileSync(file, JSON.stringify(cases));
    const r = await workbench(['plugin', 'test', dir]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /✖ drifted_get_item: reads the item.*\n {4}request 1: expected GET https:\/\/api\.example\.com\/v1\/items\/43, the tool sent GET https:\/\/api\.example\.com\/v1\/items\/42\n/,
    );
    assert.match(
      r.stdout,
      /✖ drifted_get_item: an id with a slash.*\n {4}result: expected \{"id":"a\/b","title":"Different"/,
    );
    assert.match(r.stdout, /✔ drifted_get_item: a missing item is explained/);
    assert.match(r.stdout, /\n1 passed, 2 failed\n$/);
    fs.writeFileSync(file, '{"tool": 1}');
    const bad = await workbench(['plugin', 'test', dir]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /drifted_get_item\.json: tool: Invalid input: expected string, received number; expect: /);
  });

  test('the same scaffold builds to the same bytes in two different folders', async () => {
    const outputs: Buffer[] = [];
    for (const parent of [tempDir(), path.join(tempDir(), 'deeper', 'still')]) {
      fs.mkdirSync(parent, { recursive: true });
      const { dir } = scaffoldPlugin('same-name', parent);
      const out = path.join(tempDir(), 'out');
      await buildPlugin({ dir, outDir: out });
      outputs.push(
        Buffer.concat([fs.readFileSync(path.join(out, 'manifest.json')), fs.readFileSync(path.join(out, 'plugin.js'))]),
      );
    }
    assert.ok(outputs[0]!.equals(outputs[1]!));
  });

  test('plugin new refuses a bad name and a folder that has files', async () => {
    const parent = tempDir();
    const bad = await workbench(['plugin', 'new', 'My_Plugin', '--dir', parent]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /"My_Plugin" is not a plugin name: use kebab-case/);
    scaffoldPlugin('twice', parent);
    const before = fs.readFileSync(path.join(parent, 'twice', 'plugin.ts'));
    assert.throws(() => scaffoldPlugin('twice', parent), {
      code: 'GW_ERR_CLI_REFUSED',
      message: /twice already exists and is not empty/,
    });
    assert.ok(fs.readFileSync(path.join(parent, 'twice', 'plugin.ts')).equals(before), 'nothing is overwritten');
  });

  test('a failed build exits 1 and says where', async () => {
    const dir = writePlugin(pluginSource(echoTool(), "import fs from 'node:fs';\nvoid fs;"));
    const r = await workbench(['plugin', 'build', dir]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `^build failed \\(${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): plugin\\.ts:2:\\d+: import "node:fs" is not allowed`,
      ),
    );
    assert.equal(fs.existsSync(path.join(dir, 'dist')), false);
    const usage = await workbench(['plugin', 'build']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /usage: workbench plugin build DIR/);
  });
});

describe('the scaffolded plugin in the real gateway', () => {
  test('an id holding a lone surrogate reaches the API as U+FFFD (%EF%BF%BD), not as a URIError', async () => {
    const { dir } = scaffoldPlugin('acme-tracker', tempDir());
    const pluginsDir = tempDir();
    await buildPlugin({ dir, outDir: path.join(pluginsDir, 'acme-tracker') });
    const upstream = await startUpstream(() => ({
      json: { id: 'a\uFFFDb', title: 'Odd', updated_at: '2024-01-01T00:00:00Z', description: 'long' },
    }));
    const gw = await startGateway({
      plugins: [],
      pluginDirs: [pluginsDir],
      upstreams: { 'https://api.example.com': upstream.origin },
    });
    try {
      // "\uD800" alone is valid JSON: an agent can send it
      const item = await gw.execute('acme_tracker_get_item', { id: 'a\uD800b' });
      assert.deepEqual(
        item.result,
        { id: 'a\uFFFDb', title: 'Odd', updatedAt: '2024-01-01T00:00:00Z' },
        JSON.stringify(item),
      );
      assert.equal(upstream.requests.length, 1);
      assert.equal(upstream.last().path, '/v1/items/a%EF%BF%BDb');
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

describe('zod in plugin.js', () => {
  const parsing = pluginSource(
    `    temp_parse: defineTool({
      description: 'Parses the API answer with zod at run time.',
      input: z.object({ id: z.string() }),
      handler: async (ctx, args) => {
        const res = await ctx.http('https://api.temp.example/x/' + args.id);
        return Answer.parse(await res.json());
      },
    }),`,
    'const Answer = z.object({ id: z.string(), n: z.number() });',
  );

  test('left out by default: a handler that parses at run time fails with an error naming --keep-zod', async () => {
    const dir = writePlugin(parsing);
    const r = await buildPlugin({ dir });
    assert.ok(r.pluginBytes < 4_000, `${r.pluginBytes} bytes`);
    const plugin = await importBuilt(r.outDir);
    const { ctx } = fakeCtx({ status: 200, json: { id: 'a', n: 1 } });
    await assert.rejects(
      plugin['temp_parse']!(ctx, { id: 'a' }),
      /zod\.parse cannot run: zod was left out of plugin\.js .* Build with --keep-zod/,
    );
  });

  test('--keep-zod bundles the real zod, still without imports', async () => {
    const dir = writePlugin(parsing);
    const r = await buildPlugin({ dir, keepZod: true });
    const js = fs.readFileSync(path.join(r.outDir, 'plugin.js'), 'utf8');
    assert.ok(r.pluginBytes > 100_000, `${r.pluginBytes} bytes`);
    assert.doesNotMatch(js, /^\s*import\s/m);
    const plugin = await importBuilt(r.outDir);
    const ok = fakeCtx({ status: 200, json: { id: 'a', n: 1, extra: true } });
    assert.deepEqual(await plugin['temp_parse']!(ok.ctx, { id: 'a' }), { id: 'a', n: 1 });
    assert.equal(ok.requests[0]?.url, 'https://api.temp.example/x/a');
    await assert.rejects(
      plugin['temp_parse']!(fakeCtx({ status: 200, json: { id: 'a' } }).ctx, { id: 'a' }),
      /expected number/,
    );
  });

  test("`import * as z from 'zod'` works too: schemas in the manifest, an inert z at run time", async () => {
    const dir = writePlugin(
      `import * as z from 'zod';
import { definePlugin, defineTool } from 'workbench/plugin-sdk';
const Mode = z.enum(['fast', 'slow']);
export default definePlugin({
  name: 'temp-ns', version: '1.0.0', displayName: 'T', description: 'T.', auth: { type: 'none' },
  tools: { temp_ns_echo: defineTool({ description: 'x', input: z.object({ mode: Mode.default('fast') }), handler: async (_ctx, args) => ({ mode: args.mode, label: \`\${Mode}\` }) }) },
});
`,
    );
    const r = await buildPlugin({ dir });
    assert.deepEqual(r.manifest.tools[0]?.inputSchema['properties'], {
      mode: { default: 'fast', type: 'string', enum: ['fast', 'slow'] },
    });
    const plugin = await importBuilt(r.outDir);
    assert.deepEqual(await plugin['temp_ns_echo']!(fakeCtx({ status: 200, json: {} }).ctx, { mode: 'slow' }), {
      mode: 'slow',
      label: '[zod schema]',
    });
  });
});
