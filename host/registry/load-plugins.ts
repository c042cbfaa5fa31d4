/**
 * @module host/registry/load-plugins
 * Reads plugin folders as DATA: `manifest.json` is parsed and validated, each tool's inputSchema is
 * compiled to a zod validator, API-key field patterns are compiled with RE2, and `plugin.js` is
 * read as text and hashed — never imported, required or evaluated here (invariant 1). A bad plugin
 * is refused with a message naming the file, the field and the problem; the other plugins still load.
 * Whether plugin.js can run (compiles, evaluates, exports a function for every tool) only the
 * sandbox can tell: `probePlugins` asks it, at start-up, at a reload and in `workbench plugin
 * validate`. Which of the plugins read may serve together is plugin-set.ts's to decide.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { compilePattern, PATTERN_BUDGET, separatePatterns, type PatternIssue } from './patterns.js';
import { checkRegExpLiterals } from './regexp-literals.js';
import { measureSchema } from './schema-size.js';
import { namespaceProblems, toolPrefixOf } from './namespace.js';
import { resolvePluginSet } from './plugin-set.js';
import type { LoadedPlugin, LoadedTool, LoadResult, PluginLoadError } from './loaded-plugin.js';

export type { LoadedPlugin, LoadedTool, LoadResult, PluginLoadError } from './loaded-plugin.js';
import { META_TOOL_NAMES } from '../meta-tools/names.js';
import { describeIssues, manifestSchema, type PluginManifest, type ToolManifest } from '../../contracts/manifest.js';
import type { ProbeVerdict } from '../supervisor/index.js';
import { fail } from '../../contracts/errors.js';

export const MAX_PLUGIN_SOURCE_BYTES = 4 * 1024 * 1024;

/**
 * Lists plugin folders (those holding a manifest.json) directly under each root, in name order. A
 * symbolic link to a folder counts as a folder: installing a release by linking it
 * (`plugins/weather -> /opt/releases/weather-1.2`) is common, and was skipped without a word.
 */
function listPluginDirs(roots: readonly string[]): string[] {
  const dirs: string[] = [];
  for (const root of roots) {
    if (!fs.existsSync(root)) continue;
    for (const entry of fs.readdirSync(root, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const dir = path.join(root, entry.name);
      const isDir =
        entry.isDirectory() ||
        (entry.isSymbolicLink() && fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true);
      if (isDir && fs.existsSync(path.join(dir, 'manifest.json'))) dirs.push(dir);
    }
  }
  return dirs;
}

/**
 * Why a plugins root loads nothing, or undefined: it does not exist (a misspelt
 * WORKBENCH_PLUGINS_DIR), or it is itself a plugin folder (its manifest.json is beside, not below:
 * only sub-folders of a root are plugins).
 */
export function pluginRootProblem(root: string): string | undefined {
  if (!fs.existsSync(root)) return `plugins directory ${root} does not exist: no plugin is loaded from it`;
  if (fs.existsSync(path.join(root, 'manifest.json')))
    return `plugins directory ${root} is itself a plugin (it holds manifest.json), and only its sub-folders are searched: point WORKBENCH_PLUGINS_DIR at its parent folder, ${path.dirname(root)}`;
  return undefined;
}

let metaSchema: Ajv2020 | undefined;

/**
 * Why a tool's inputSchema is not a valid JSON Schema (2020-12 meta-schema), or undefined. zod's
 * fromJSONSchema reads only the keywords it knows in the shapes it knows: `"required": "a"` or
 * `"properties": 5` compiled into validators that accept anything, losing the schema's constraints
 * without a word. A top-level `$schema` naming another draft is not held against the schema.
 */
function metaSchemaProblem(schema: Record<string, unknown>): string | undefined {
  metaSchema ??= new Ajv2020({ strict: false, validateSchema: false });
  const { $schema: _ignored, ...rest } = schema;
  if (metaSchema.validateSchema(rest) === true) return undefined;
  return metaSchema.errorsText(metaSchema.errors, { dataVar: 'inputSchema', separator: '; ' });
}

/**
 * Compiles one tool's JSON Schema; throws with a message naming the tool when it cannot, or when
 * validating arguments against it could not be done in bounded time (see schema-size.ts).
 */
export function compileToolSchema(tool: ToolManifest): z.ZodType {
  return compileTool(tool).validator;
}

/** compileToolSchema, with the most sub-schemas one argument value meets (the validation budget's divisor). */
export function compileTool(tool: ToolManifest): Omit<LoadedTool, 'manifest'> {
  const problem = metaSchemaProblem(tool.inputSchema);
  if (problem)
    throw fail('GW_ERR_PLUGIN_INVALID', {
      message: `tools.${tool.name}.inputSchema: not a valid JSON Schema: ${problem}`,
    });
  const schemaSize = measureSchema(tool.inputSchema);
  if (typeof schemaSize === 'string')
    throw fail('GW_ERR_PLUGIN_INVALID', {
      message: `tools.${tool.name}.inputSchema: cannot be validated in bounded time: ${schemaSize}`,
    });
  return { validator: compileValidator(tool), schemaSize };
}

function compileValidator(tool: ToolManifest): z.ZodType {
  try {
    // Patterns are checked with RE2 after zod, never as backtracking RegExps (see patterns.ts).
    const { stripped, check } = separatePatterns(tool.inputSchema);
    const base = z.fromJSONSchema(stripped);
    if (!check) return base;
    return base.superRefine((value, ctx) => {
      const issues: PatternIssue[] = [];
      check(value, [], issues, { left: PATTERN_BUDGET });
      for (const issue of issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    });
  } catch (err) {
    throw fail('GW_ERR_PLUGIN_INVALID', {
      message: `tools.${tool.name}.inputSchema: cannot be compiled: ${(err as Error).message}`,
    });
  }
}

/**
 * API-key field patterns are checked with RE2 when people connect (host/connections/apikey-fields.ts).
 * One RE2 cannot compile would match nothing, so nobody could ever connect: it refuses the plugin
 * here instead, naming each such field.
 */
export function checkFieldPatterns(manifest: PluginManifest): void {
  if (manifest.auth.type !== 'apikey') return;
  const problems: string[] = [];
  manifest.auth.fields.forEach((field, i) => {
    if (field.pattern === undefined) return;
    try {
      compilePattern(field.pattern);
    } catch (err) {
      problems.push(`auth.fields.${i}.pattern (field "${field.name}"): ${(err as Error).message}`);
    }
  });
  if (problems.length > 0) throw fail('GW_ERR_PLUGIN_INVALID', { message: problems.join('; ') });
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** An Error that names the file it is about (and the plugin, when known). */
const fileError = (err: Error, file: string, plugin?: string): Error =>
  Object.assign(err, { file }, plugin !== undefined ? { plugin } : {});

function readManifestFile(file: string): { text: string; raw: unknown } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw fileError(
      fail('GW_ERR_PLUGIN_INVALID', {
        message: e.code === 'ENOENT' ? 'missing: a plugin folder holds manifest.json and plugin.js' : e.message,
      }),
      file,
    );
  }
  try {
    return { text, raw: JSON.parse(text) };
  } catch (err) {
    throw fileError(fail('GW_ERR_PLUGIN_INVALID', { message: `not valid JSON: ${(err as Error).message}` }), file);
  }
}

function readSource(file: string, name: string): string {
  try {
    const stat = fs.statSync(file);
    if (stat.size > MAX_PLUGIN_SOURCE_BYTES)
      throw fail('GW_ERR_PLUGIN_INVALID', {
        message: `is ${stat.size} bytes; the limit is ${MAX_PLUGIN_SOURCE_BYTES}`,
      });
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw fileError(
      fail('GW_ERR_PLUGIN_INVALID', {
        message: e.code === 'ENOENT' ? 'missing: a plugin needs plugin.js beside manifest.json' : e.message,
      }),
      file,
      name,
    );
  }
}

/**
 * Reads one plugin folder as data and checks it: the manifest, its schemas and field patterns, its
 * tool names (namespace.ts; `metaToolNames` are the names no tool may take) and plugin.js as text.
 * Throws an Error carrying `file` (and `plugin`, its name, once the manifest told it).
 */
export function loadPluginDir(dir: string, metaToolNames: readonly string[] = META_TOOL_NAMES): LoadedPlugin {
  const manifestFile = path.join(dir, 'manifest.json');
  const { text, raw } = readManifestFile(manifestFile);
  const rawName =
    typeof (raw as { name?: unknown } | null)?.name === 'string' ? (raw as { name: string }).name : undefined;
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success)
    throw fileError(fail('GW_ERR_PLUGIN_INVALID', { message: describeIssues(parsed.error) }), manifestFile, rawName);
  const manifest = parsed.data;
  const tools = new Map<string, LoadedTool>();
  try {
    checkFieldPatterns(manifest);
    const problems = namespaceProblems(manifest, metaToolNames);
    if (problems.length > 0) throw fail('GW_ERR_PLUGIN_INVALID', { message: problems.join('; ') });
    for (const tool of manifest.tools) tools.set(tool.name, { manifest: tool, ...compileTool(tool) });
  } catch (err) {
    throw fileError(err as Error, manifestFile, manifest.name);
  }
  const sourceFile = path.join(dir, 'plugin.js');
  const source = readSource(sourceFile, manifest.name);
  const literals = checkRegExpLiterals(source);
  if (literals.ok === false)
    throw fileError(fail('GW_ERR_PLUGIN_INVALID', { message: literals.problem }), sourceFile, manifest.name);
  return {
    manifest,
    dir,
    source,
    sourceHash: sha256(source),
    manifestHash: sha256(text),
    toolPrefix: toolPrefixOf(manifest) as string,
    tools,
    ...(literals.ok === 'unchecked' ? { unscanned: literals.reason } : {}),
  };
}

/** `previous` itself when its folder still holds exactly the files it was read from, else undefined. */
function unchanged(previous: LoadedPlugin | undefined): LoadedPlugin | undefined {
  if (!previous) return undefined;
  try {
    const same =
      sha256(fs.readFileSync(path.join(previous.dir, 'manifest.json'), 'utf8')) === previous.manifestHash &&
      sha256(fs.readFileSync(path.join(previous.dir, 'plugin.js'), 'utf8')) === previous.sourceHash;
    return same ? previous : undefined;
  } catch {
    return undefined; // unreadable now: read it again, and let that say why
  }
}

export interface ReadOptions {
  /** names no tool may take (default: META_TOOL_NAMES) */
  metaToolNames?: readonly string[];
  /** plugins read before (those serving): one whose files did not change is returned as it is, not read again */
  previous?: readonly LoadedPlugin[];
}

/**
 * Reads every plugin folder under the given roots, each on its own: a folder that cannot be read is
 * an error, the others are returned in order. Names are not compared here (plugin-set.ts does that),
 * so that start-up and reloads can leave out plugins the sandbox refuses before deciding who owns a name.
 */
export function readPlugins(roots: readonly string[], options: ReadOptions = {}): LoadResult {
  const plugins: LoadedPlugin[] = [];
  const errors: PluginLoadError[] = [];
  const previousByDir = new Map((options.previous ?? []).map((p) => [p.dir, p]));
  for (const dir of listPluginDirs(roots)) {
    try {
      plugins.push(unchanged(previousByDir.get(dir)) ?? loadPluginDir(dir, options.metaToolNames));
    } catch (err) {
      const e = err as Error & { file?: string; plugin?: string };
      errors.push({
        dir,
        file: e.file ?? dir,
        message: e.message,
        code: 'GW_ERR_PLUGIN_INVALID',
        ...(e.plugin !== undefined ? { name: e.plugin } : {}),
      });
    }
  }
  return { plugins, errors };
}

/**
 * Reads every plugin under the given roots and settles clashes between them as start-up does
 * (plugin-set.ts: plugins that clash are all refused), without probing plugin.js in a sandbox.
 */
export function loadPlugins(roots: readonly string[]): LoadResult {
  const read = readPlugins(roots);
  const set = resolvePluginSet([], read.plugins, read.errors);
  return { plugins: set.plugins, errors: set.errors };
}

/** A plugin the sandbox could not probe (its failure, not the plugin's): loaded, and said why. */
export interface UncheckedPlugin {
  dir: string;
  reason: string;
}

/** A plugin whose probe ran out of time among the others, probed again alone. */
export interface RetriedProbe {
  dir: string;
  /** whether the second probe, alone, accepted it */
  ok: boolean;
}

/**
 * Probes every loaded plugin in the sandbox at once (host/supervisor/probe.ts): a module that does not
 * compile, imports anything, throws or runs out of its limits at the top level, or has no function
 * for a tool of its manifest is refused like a bad manifest (file plugin.js, the problem named),
 * instead of loading and failing every call. A probe the sandbox could not run keeps its plugin.
 *
 * Probing all at once is start-up's busiest moment: a module whose top-level code ran out of its
 * time limits may only have been starved of CPU by the others. Each such plugin is probed once more,
 * alone (one after another), and refused only if it runs out of time again; the second verdict
 * stands, and `retried` says which plugins were probed twice.
 */
export async function probePlugins(
  loaded: LoadResult,
  probe: (plugin: LoadedPlugin) => Promise<ProbeVerdict>,
): Promise<LoadResult & { unchecked: UncheckedPlugin[]; retried: RetriedProbe[] }> {
  const verdicts = await Promise.all(loaded.plugins.map((p) => probe(p)));
  const retried: RetriedProbe[] = [];
  for (const [i, plugin] of loaded.plugins.entries()) {
    const first = verdicts[i] as ProbeVerdict;
    if (!(first.checked && !first.ok && first.timedOut)) continue;
    const again = await probe(plugin);
    verdicts[i] = again;
    retried.push({ dir: plugin.dir, ok: !again.checked || again.ok });
  }
  const plugins: LoadedPlugin[] = [];
  const errors = [...loaded.errors];
  const unchecked: UncheckedPlugin[] = [];
  loaded.plugins.forEach((plugin, i) => {
    const v = verdicts[i] as ProbeVerdict;
    if (!v.checked) unchecked.push({ dir: plugin.dir, reason: v.reason });
    const problem = v.checked && !v.ok ? v.problem : plugin.unscanned;
    if (problem !== undefined)
      errors.push({
        dir: plugin.dir,
        file: path.join(plugin.dir, 'plugin.js'),
        message: problem,
        name: plugin.manifest.name,
        code: 'GW_ERR_PLUGIN_INVALID',
      });
    else plugins.push(plugin);
  });
  return { plugins, errors, unchecked, retried };
}
