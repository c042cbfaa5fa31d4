/**
 * @module test/host/plugin-sdk/typecheck.test
 * What docs/plugins.md promises about the scaffold's tsconfig.json: `tsc -p <plugin folder>` passes
 * on a new plugin, without Node.js types (the SDK's types reach no gateway file that needs them);
 * plugin.ts may use the globals the sandbox adds (URLSearchParams, atob, btoa, TextEncoder,
 * TextDecoder, Uint8Array's base64) and is refused globals it lacks (fetch, process, URL, timers,
 * …); ctx.http's bytes (arrayBuffer(), bytes(), binary request bodies) type-check and a number body
 * does not; and the declared globals are exactly those the real sandbox adds to a plain V8 context.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import vm from 'node:vm';
import ts from 'typescript';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { createSandbox } from '../../../host/supervisor/index.js';
import { createBridge } from '../../../host/bridge/index.js';
import { callTool, captureLogger, egressPolicy } from '../../helpers/sandbox/harness.js';
import { CLI, removeTempDirs, tempDir } from '../../helpers/temp-plugin.js';

const exec = promisify(execFile);
after(() => removeTempDirs());

const TSC = path.join(PACKAGE_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const GLOBALS_DTS = path.join(PACKAGE_ROOT, 'sdk', 'sandbox-globals.d.ts');

async function run(args: string[], cwd?: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, args, { cwd, encoding: 'utf8' });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

/** `workbench plugin new` into a fresh temp folder (outside the repository); returns the plugin folder. */
async function scaffold(): Promise<string> {
  const parent = tempDir();
  const created = await run(['--no-node-snapshot', CLI, 'plugin', 'new', 'acme-tracker', '--dir', parent]);
  assert.equal(created.code, 0, created.out);
  return path.join(parent, 'acme-tracker');
}

/** `tsc -p .` run in the plugin folder, so that messages name `plugin.ts`. */
const typecheck = (dir: string) => run([TSC, '-p', '.', '--noEmit'], dir);

function append(dir: string, code: string): void {
  fs.appendFileSync(path.join(dir, 'plugin.ts'), code);
}

describe('type-checking a scaffolded plugin with tsc -p', () => {
  test('a new plugin type-checks as generated', async () => {
    const dir = await scaffold();
    const r = await typecheck(dir);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.out, '');
  });

  test("plugin.ts may use the sandbox's URLSearchParams, atob and btoa", async () => {
    const dir = await scaffold();
    append(
      dir,
      `
export function query(id: string, page?: number): string {
  const q = new URLSearchParams({ a: 'b', id, page, skipped: undefined });
  q.append('pairs', new URLSearchParams([['x', 'y']]).toString());
  for (const [name, value] of new URLSearchParams(q)) q.set(name, value);
  return new URLSearchParams({ a: 'b' }).toString() + (q.get('a') ?? '') + btoa('x') + atob('eA==');
}
`,
    );
    const r = await typecheck(dir);
    assert.equal(r.code, 0, r.out);
  });

  test("plugin.ts may use the sandbox's TextEncoder, TextDecoder and Uint8Array base64", async () => {
    const dir = await scaffold();
    append(
      dir,
      `
export function bytes(text: string): string {
  const encoded: Uint8Array = new TextEncoder().encode(text);
  const back: string = new TextDecoder('utf-8', { fatal: true }).decode(encoded, { stream: true }) + new TextDecoder().decode();
  return Uint8Array.fromBase64(encoded.toBase64({ alphabet: 'base64url', omitPadding: true }), { alphabet: 'base64url', lastChunkHandling: 'strict' }).toBase64() + back;
}
`,
    );
    const r = await typecheck(dir);
    assert.equal(r.code, 0, r.out);
  });

  test('plugin.ts may read response bytes and send bytes, not a number', async () => {
    const dir = await scaffold();
    append(
      dir,
      `
import type { HttpResponse, ImageResult, PluginContext } from 'workbench/plugin-sdk';
export async function image(ctx: PluginContext): Promise<ImageResult> {
  const res: HttpResponse = await ctx.http('https://api.example.com/logo.png');
  const ab: ArrayBuffer = await res.arrayBuffer();
  const bytes: Uint8Array = await res.bytes();
  const head = new TextEncoder().encode('--b\\r\\n');
  for (const body of [head, ab, new DataView(ab), new Uint16Array(2), 'text', { json: true }, [1, 2]]) await ctx.http('https://api.example.com/upload', { method: 'POST', body });
  // @ts-expect-error -- a number is not a body (the sandbox refuses it with GW_ERR_BRIDGE_BAD_REQUEST)
  await ctx.http('https://api.example.com/upload', { method: 'POST', body: 5 });
  return { _mcpImage: { data: bytes.toBase64() + (await res.text()).length, mimeType: 'image/png' } };
}
`,
    );
    const r = await typecheck(dir);
    assert.equal(r.code, 0, r.out);
  });

  test('plugin.ts is refused the globals the sandbox does not have', async () => {
    const dir = await scaffold();
    const missing = ['fetch', 'process', 'URL', 'setTimeout', 'Blob', 'Buffer', 'console', 'structuredClone'];
    append(
      dir,
      `\nexport const unavailable = [fetch('x'), process.env, new URL('x'), setTimeout(() => {}, 1), new Blob([]), Buffer.from('x'), console.log('x'), structuredClone(1)];\n`,
    );
    const r = await typecheck(dir);
    assert.notEqual(r.code, 0);
    const errors = r.out.split('\n').filter(Boolean);
    assert.deepEqual(
      errors.map((line) => /^plugin\.ts\(\d+,\d+\): error TS\d+: Cannot find name '(\w+)'/.exec(line)?.[1] ?? line),
      missing,
    );
  });
});

describe('the declared sandbox globals', () => {
  test('are exactly the globals the sandbox adds to a plain V8 context', async () => {
    const source = ts.createSourceFile(GLOBALS_DTS, fs.readFileSync(GLOBALS_DTS, 'utf8'), ts.ScriptTarget.ES2022);
    const declared = source.statements.flatMap((s) => {
      if ((ts.isClassDeclaration(s) || ts.isFunctionDeclaration(s)) && s.name) return [s.name.text];
      if (ts.isVariableStatement(s))
        return s.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []));
      return [];
    });

    const sandbox = await createSandbox({
      workers: 1,
      maxQueue: 10,
      quarantineAfterCrashes: 10,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
      logger: captureLogger(),
    });
    const bridge = createBridge(egressPolicy());
    try {
      const r = await callTool(sandbox, bridge, {
        source:
          'export default { async run() { return Object.getOwnPropertyNames(globalThis).filter((k) => globalThis[k] !== undefined); } };',
      });
      assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
      const plain = new Set(Object.getOwnPropertyNames(vm.runInNewContext('globalThis')));
      const added = (r.result as string[]).filter((k) => !plain.has(k));
      assert.deepEqual([...declared].sort(), [...added].sort());
      assert.deepEqual([...declared].sort(), ['TextDecoder', 'TextEncoder', 'URLSearchParams', 'atob', 'btoa', 'self']);
    } finally {
      await sandbox.close();
      await bridge.close();
    }
  });
});
