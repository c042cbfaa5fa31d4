/**
 * @module host/plugin-sdk/evaluate-definition
 * Build time only, on the author's machine: bundles plugin.ts with zod and the SDK into a script,
 * runs it in a throwaway `vm` context (no Node.js globals, a time limit; the same web globals a
 * sandbox context has, so top-level code that runs in the sandbox also runs here) and returns the
 * manifest data its definition describes. The gateway never does this: it reads manifest.json as data.
 */
import path from 'node:path';
import vm from 'node:vm';
import type * as esbuild from 'esbuild';
import { WEB_GLOBALS_SOURCE } from '../../sandbox/isolate/web-globals-source.js';
import { resolveGuard, type GuardOptions } from './resolve-guard.js';
import { WorkbenchError } from '../../contracts/errors.js';

export const EVALUATION_TIMEOUT_MS = 10_000;
const RESULT_GLOBAL = '__workbenchManifest';

/**
 * An error in the author's input. `file` is the file to look at, relative to the plugin folder, or
 * '' when the message already names files (esbuild's `file:line:col: text` lines).
 */
export class PluginBuildError extends WorkbenchError<'GW_ERR_PLUGIN_BUILD_FAILED'> {
  override name = 'PluginBuildError';
  constructor(
    readonly file: string,
    message: string,
  ) {
    super('GW_ERR_PLUGIN_BUILD_FAILED', message);
  }
}

/** `file:line:col: text` lines for esbuild messages, paths relative to the plugin folder. */
export function formatMessages(messages: readonly esbuild.Message[]): string {
  return messages
    .map((m) => {
      const at = m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ` : '';
      return `${at}${m.text}`;
    })
    .join('\n');
}

/** Runs esbuild; a failure becomes a PluginBuildError listing every message. */
export async function runEsbuild(
  api: typeof esbuild,
  options: esbuild.BuildOptions & { write: false },
): Promise<esbuild.BuildResult & { outputFiles: esbuild.OutputFile[] }> {
  try {
    return await api.build({ ...options, logLevel: 'silent' });
  } catch (err) {
    const failure = err as esbuild.BuildFailure;
    if (Array.isArray(failure.errors) && failure.errors.length > 0)
      throw new PluginBuildError('', formatMessages(failure.errors));
    throw err;
  }
}

const ENTRY = (toManifestPath: string): string => `import * as mod from "./plugin.ts";
import { pluginManifest } from ${JSON.stringify(toManifestPath)};
let out;
try {
  out = mod.default === undefined
    ? { ok: false, message: "plugin.ts has no default export: end it with \`export default definePlugin({ … })\`" }
    : { ok: true, manifest: pluginManifest(mod.default) };
} catch (e) {
  out = { ok: false, message: e && e.name === "DefinitionError" ? e.message : "evaluating the definition failed: " + String(e && e.message || e) };
}
globalThis.${RESULT_GLOBAL} = JSON.stringify(out);
`;

export interface EvaluateOptions {
  esbuild: typeof esbuild;
  /** absolute plugin folder (holds plugin.ts) */
  dir: string;
  /** absolute path of to-manifest.js */
  toManifestPath: string;
  guard: Omit<GuardOptions, 'phase' | 'keepZod'>;
  timeoutMs: number;
}

/** Returns the manifest data (not yet validated) that plugin.ts defines. */
export async function evaluateDefinition(options: EvaluateOptions): Promise<Record<string, unknown>> {
  const result = await runEsbuild(options.esbuild, {
    stdin: {
      contents: ENTRY(options.toManifestPath),
      resolveDir: options.dir,
      sourcefile: 'workbench-manifest-entry.js',
      loader: 'js',
    },
    absWorkingDir: options.dir,
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    // packages such as zod resolve from the plugin folder first, then from this installation
    nodePaths: [path.join(options.guard.packageRoot, 'node_modules')],
    target: 'es2022',
    plugins: [resolveGuard({ ...options.guard, phase: 'manifest', keepZod: true })],
  });
  const code = result.outputFiles[0]?.text ?? '';
  const sandbox: Record<string, unknown> = {};
  const context = vm.createContext(sandbox);
  vm.runInContext(WEB_GLOBALS_SOURCE, context, { filename: 'web-globals.js' });
  try {
    vm.runInContext(code, context, { timeout: options.timeoutMs, filename: 'plugin.ts (build-time evaluation)' });
  } catch (err) {
    const message =
      err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err)
        ? String((err as Error).message)
        : String(err);
    throw new PluginBuildError('plugin.ts', `plugin.ts threw while its definition was evaluated: ${message}`);
  }
  const text = sandbox[RESULT_GLOBAL];
  if (typeof text !== 'string') throw new PluginBuildError('plugin.ts', 'the definition produced no result');
  const out = JSON.parse(text) as { ok: true; manifest: Record<string, unknown> } | { ok: false; message: string };
  if (!out.ok) throw new PluginBuildError('plugin.ts', out.message);
  return out.manifest;
}
