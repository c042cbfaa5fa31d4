/**
 * @module host/plugin-sdk/build
 * `workbench plugin build`: from a folder holding plugin.ts, writes `manifest.json` (generated from
 * the definition) and a self-contained `plugin.js` (esbuild: ESM, no imports, default export =
 * tool name → handler). Same input, byte-identical output. The result passes the same checks as
 * `workbench plugin validate` before anything is written.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as zod from 'zod';
import type * as esbuild from 'esbuild';
import { describeIssues, manifestSchema, TOOL_NAME, type PluginManifest } from '../../sandbox/manifest.js';
import { PACKAGE_ROOT } from '../paths.js';
import { loadPluginDir } from '../registry/load-plugins.js';
import { EVALUATION_TIMEOUT_MS, evaluateDefinition, PluginBuildError, runEsbuild } from './evaluate-definition.js';
import { resolveGuard, type GuardOptions } from './resolve-guard.js';

export { PluginBuildError } from './evaluate-definition.js';

const SDK_PATH = fileURLToPath(new URL('./define.js', import.meta.url));
const TO_MANIFEST_PATH = fileURLToPath(new URL('./to-manifest.js', import.meta.url));
const RUNTIME_ENTRY = 'export { default } from "./plugin.ts";\n';

export interface BuildOptions {
  /** folder holding plugin.ts */
  dir: string;
  /** where manifest.json and plugin.js go (default DIR/dist) */
  outDir?: string;
  /** bundle the real zod into plugin.js (for handlers that parse with zod at run time) */
  keepZod?: boolean;
  /** time limit for evaluating the definition, ms (default 10 s) */
  evaluationTimeoutMs?: number;
}

export interface BuildResult {
  outDir: string;
  manifest: PluginManifest;
  manifestBytes: number;
  pluginBytes: number;
  warnings: string[];
}

async function loadEsbuild(): Promise<typeof esbuild> {
  try {
    return await import('esbuild');
  } catch {
    throw new PluginBuildError('', 'esbuild is not installed: run `npm install` in the workbench folder (it is a development dependency)');
  }
}

/** Tool names and the manifest schema, with messages that point at plugin.ts. */
function checkDefinition(raw: Record<string, unknown>): void {
  const tools = Array.isArray(raw['tools']) ? (raw['tools'] as Array<{ name: string }>) : [];
  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name))
      throw new PluginBuildError('plugin.ts', `tool "${tool.name}": tool names must be snake_case (a-z, 0-9 and _, starting with a letter, at most 64), e.g. "${suggestName(tool.name)}"`);
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) throw new PluginBuildError('plugin.ts', `definePlugin: ${describeIssues(parsed.error)}`);
}

function suggestName(name: string): string {
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^[^A-Za-z]+|_+$/g, '')
    .toLowerCase();
  return snake || 'my_tool';
}

function banner(manifest: Record<string, unknown>): string {
  const id = `${String(manifest['name'])} ${String(manifest['version'])}`.replace(/[\r\n*/]/g, ' ');
  return `// ${id}: built from plugin.ts by \`workbench plugin build\`. Do not edit: change plugin.ts and rebuild.`;
}

/** Builds the plugin in memory, validates it in a staging folder, then writes it to outDir. */
export async function buildPlugin(options: BuildOptions): Promise<BuildResult> {
  const dir = path.resolve(options.dir);
  const outDir = path.resolve(options.outDir ?? path.join(dir, 'dist'));
  if (!fs.existsSync(path.join(dir, 'plugin.ts')))
    throw new PluginBuildError('plugin.ts', 'missing: a TypeScript plugin folder holds plugin.ts (create one with `workbench plugin new NAME`)');
  const api = await loadEsbuild();
  const guard: Omit<GuardOptions, 'phase' | 'keepZod'> = {
    sdkPath: SDK_PATH,
    packageRoot: PACKAGE_ROOT,
    zodExports: Object.keys(zod),
  };

  const raw = await evaluateDefinition({ esbuild: api, dir, toManifestPath: TO_MANIFEST_PATH, guard, timeoutMs: options.evaluationTimeoutMs ?? EVALUATION_TIMEOUT_MS });
  checkDefinition(raw);
  const manifestText = JSON.stringify(raw, null, 2) + '\n';

  const runtime = await runEsbuild(api, {
    stdin: { contents: RUNTIME_ENTRY, resolveDir: dir, sourcefile: 'plugin-entry.js', loader: 'js' },
    absWorkingDir: dir,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    nodePaths: [path.join(PACKAGE_ROOT, 'node_modules')],
    target: 'es2022',
    legalComments: 'none',
    charset: 'utf8',
    banner: { js: banner(raw) },
    plugins: [resolveGuard({ ...guard, phase: 'runtime', keepZod: options.keepZod === true })],
  });
  const pluginText = runtime.outputFiles[0]?.text ?? '';
  const warnings = runtime.warnings.map((w) => (w.location ? `${w.location.file}:${w.location.line}: ${w.text}` : w.text));

  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-plugin-build-'));
  let manifest: PluginManifest;
  try {
    fs.writeFileSync(path.join(staging, 'manifest.json'), manifestText);
    fs.writeFileSync(path.join(staging, 'plugin.js'), pluginText);
    try {
      manifest = loadPluginDir(staging).manifest;
    } catch (err) {
      const e = err as Error & { file?: string };
      throw new PluginBuildError(e.file ? path.basename(e.file) : 'manifest.json', `the built plugin does not validate: ${e.message}`);
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'manifest.json'), manifestText);
  fs.writeFileSync(path.join(outDir, 'plugin.js'), pluginText);
  return { outDir, manifest, manifestBytes: Buffer.byteLength(manifestText), pluginBytes: Buffer.byteLength(pluginText), warnings };
}
