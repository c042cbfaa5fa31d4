/**
 * @module test/helpers/temp-plugin
 * Test helpers for the plugin SDK: temp folders holding a plugin.ts written by the test, the
 * fixture's paths, and a fake ctx for calling a built handler directly from Node.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../../host/paths.js';

export const FIXTURE_DIR = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'sdk-plugin');
export const CLI = path.join(PACKAGE_ROOT, 'dist', 'host', 'cli', 'main.js');

const created: string[] = [];

/** A fresh temp folder, removed by {@link removeTempDirs}. */
export function tempDir(prefix = 'workbench-sdk-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Writes `<temp>/<name>/plugin.ts` (plus any other files) and returns the plugin folder. */
export function writePlugin(source: string, extra: Record<string, string> = {}, name = 'p'): string {
  const dir = path.join(tempDir(), name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'plugin.ts'), source);
  for (const [file, text] of Object.entries(extra)) fs.writeFileSync(path.join(dir, file), text);
  return dir;
}

/** A minimal valid plugin.ts importing the SDK by its bare name, with the tools section given. */
export function pluginSource(tools: string, header = ''): string {
  return `import { definePlugin, defineTool, z } from 'workbench/plugin-sdk';
${header}
export default definePlugin({
  name: 'temp',
  version: '1.0.0',
  displayName: 'Temp',
  description: 'A plugin written by a test.',
  auth: { type: 'none' },
  egress: ['api.temp.example'],
  tools: {
${tools}
  },
});
`;
}

/** One tool named `name` that returns its args. */
export function echoTool(name = 'temp_echo', input = 'z.object({ text: z.string().default("hi") })'): string {
  return `    ${name}: defineTool({ description: 'Echo.', input: ${input}, handler: async (_ctx, args) => ({ args }) }),`;
}

export interface FakeReply {
  status: number;
  json: unknown;
}

/** A ctx like the sandbox's, answering every ctx.http with `reply`, recording the requests. */
export function fakeCtx(reply: FakeReply): { ctx: unknown; requests: Array<{ url: string; init: unknown }> } {
  const requests: Array<{ url: string; init: unknown }> = [];
  const http = async (url: string, init?: unknown) => {
    requests.push({ url, init });
    const body = JSON.stringify(reply.json);
    return {
      status: reply.status,
      ok: reply.status < 300,
      statusText: '',
      url,
      headers: { get: () => null },
      body,
      text: async () => body,
      json: async () => JSON.parse(body),
    };
  };
  return { ctx: { http, config: {}, log: { info() {}, warn() {}, error() {} } }, requests };
}

let imports = 0;

/** Imports a built plugin.js in Node (the file is plain ESM without imports). */
export async function importBuilt(
  outDir: string,
): Promise<Record<string, (ctx: unknown, args: unknown) => Promise<unknown>>> {
  const mod = (await import(`${pathToFileURL(path.join(outDir, 'plugin.js')).href}?v=${++imports}`)) as {
    default: Record<string, (ctx: unknown, args: unknown) => Promise<unknown>>;
  };
  return mod.default;
}
