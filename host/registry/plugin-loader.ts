/**
 * @module host/registry/plugin-loader
 * Loads the plugins into the registry at start-up, and again on demand (`reload`: SIGHUP, or
 * `workbench plugins reload`) into the running gateway: the folders are read again, new and
 * changed plugins are probed in the sandbox, plugin-set.ts decides which serve, and the registry
 * swaps to that set at once. Calls already running keep the version they started with; a refused
 * upgrade leaves the version serving in place. Reloads run one at a time: one asked for while
 * another runs starts when it ends (reading the folders afresh), shared by every request that
 * arrived meanwhile.
 */
import path from 'node:path';
import type { ProbeVerdict } from '../supervisor/index.js';
import type { Logger } from '../telemetry/logger.js';
import { probePlugins, readPlugins, type LoadedPlugin, type PluginLoadError } from './load-plugins.js';
import { resolvePluginSet, type PluginSet } from './plugin-set.js';
import type { Registry } from './registry.js';

export type ReloadOutcome = 'ok' | 'refused';

/** What one load did, as logged, kept for `workbench plugins reload`, and answered to it. */
export interface PluginReport {
  startedAt: string;
  finishedAt: string;
  /** `refused` when any plugin folder was refused (the rest of the reload still applies) */
  outcome: ReloadOutcome;
  plugins: number;
  tools: number;
  added: { name: string; version: string; dir: string }[];
  upgraded: { name: string; from: string; to: string; dir: string }[];
  removed: { name: string; version: string; dir: string }[];
  unchanged: number;
  refused: { file: string; code: string; message: string; keepsServing?: string }[];
}

export interface PluginLoaderDeps {
  roots: readonly string[];
  /** the names of the meta-tools the gateway serves: no plugin tool may take one */
  metaToolNames: readonly string[];
  registry: Registry;
  /**
   * the built-in integrations (builtin-plugin.ts): they serve whatever the folders hold, and a
   * folder's plugin that clashes with one is refused as it would be beside any plugin that keeps serving
   */
  builtins?: readonly LoadedPlugin[];
  /** runs plugin.js in the sandbox (host/supervisor/probe.ts) */
  probe(plugin: LoadedPlugin): Promise<ProbeVerdict>;
  logger: Logger;
  /** after every load, with the set now serving (policy warnings) */
  onLoaded?(report: PluginReport): void;
  /** counts a finished reload (not the start-up load) */
  countReload?(outcome: ReloadOutcome): void;
}

export interface PluginLoader {
  /** the start-up load: every plugin is new */
  load(): Promise<PluginReport>;
  /** reads the folders again and serves what they hold now (see the module comment) */
  reload(): Promise<PluginReport>;
  /** the refusals of the latest load */
  errors(): PluginLoadError[];
  /** the latest load's report */
  latest(): PluginReport | undefined;
}

export function createPluginLoader(deps: PluginLoaderDeps): PluginLoader {
  let errors: PluginLoadError[] = [];
  let latest: PluginReport | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  let next: Promise<PluginReport> | undefined;

  async function loadOnce(kind: 'start' | 'reload'): Promise<PluginReport> {
    const startedAt = new Date();
    const set = await readAndResolve(deps, deps.registry.plugins());
    deps.registry.replace(set.plugins);
    errors = set.errors;
    latest = reportOf(set, startedAt);
    logLoad(deps.logger, kind, set, latest);
    if (kind === 'reload') deps.countReload?.(latest.outcome);
    deps.onLoaded?.(latest);
    return latest;
  }

  return {
    load: () => loadOnce('start'),
    reload() {
      next ??= tail.then(() => {
        next = undefined;
        return loadOnce('reload');
      });
      tail = next.catch(() => undefined);
      return next;
    },
    errors: () => errors,
    latest: () => latest,
  };
}

/** Reads every folder (reusing serving plugins whose files did not change), probes the rest, resolves. */
async function readAndResolve(deps: PluginLoaderDeps, registered: readonly LoadedPlugin[]): Promise<PluginSet> {
  const builtins = deps.builtins ?? [];
  // built-ins count as serving and as read unchanged, at start-up too: nothing in a folder displaces one
  const serving = [...builtins, ...registered.filter((p) => !p.builtin)];
  const read = readPlugins(deps.roots, { metaToolNames: deps.metaToolNames, previous: serving });
  const same = new Set(serving);
  const fresh = read.plugins.filter((p) => !same.has(p));
  const probed = await probePlugins({ plugins: fresh, errors: read.errors }, deps.probe);
  for (const r of probed.retried)
    deps.logger.warn(
      { dir: r.dir, probeRetried: true },
      `plugin ${r.dir}: plugin.js ran out of time while every plugin was probed at once; probed again alone: ${r.ok ? 'it loads (the machine was busy)' : 'out of time again, refused'}`,
    );
  for (const u of probed.unchecked)
    deps.logger.warn(
      { dir: u.dir },
      `plugin ${u.dir}: plugin.js could not be checked in the sandbox (${u.reason}); loaded unchecked`,
    );
  return resolvePluginSet(
    serving,
    [...builtins, ...read.plugins.filter((p) => same.has(p)), ...probed.plugins],
    probed.errors,
  );
}

const label = (p: LoadedPlugin): string => `${p.manifest.name}@${p.manifest.version}`;

/** The version serving in a refused folder's place (its folder, or its name), if any. */
const keptFor = (set: PluginSet, e: PluginLoadError): LoadedPlugin | undefined =>
  [...set.changes.kept, ...set.changes.unchanged].find((p) => p.dir === e.dir || p.manifest.name === e.name);

function reportOf(set: PluginSet, startedAt: Date): PluginReport {
  const { added, upgraded, removed } = set.changes;
  // the report is about the plugin folders: the built-ins serve throughout and are not counted
  const unchanged = set.changes.unchanged.filter((p) => !p.builtin);
  const plugins = set.plugins.filter((p) => !p.builtin);
  const info = (p: LoadedPlugin): { name: string; version: string; dir: string } => ({
    name: p.manifest.name,
    version: p.manifest.version,
    dir: p.dir,
  });
  return {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    outcome: set.errors.length > 0 ? 'refused' : 'ok',
    plugins: plugins.length,
    tools: plugins.reduce((n, p) => n + p.tools.size, 0),
    added: added.map(info),
    upgraded: upgraded.map(({ from, to }) => ({
      name: to.manifest.name,
      from: from.manifest.version,
      to: to.manifest.version,
      dir: to.dir,
    })),
    removed: removed.map(info),
    unchanged: unchanged.length,
    refused: set.errors.map((e) => {
      const kept = keptFor(set, e);
      return {
        file: e.file,
        code: e.code ?? 'GW_ERR_PLUGIN_INVALID',
        message: e.message,
        ...(kept ? { keepsServing: label(kept) } : {}),
      };
    }),
  };
}

function logLoad(logger: Logger, kind: 'start' | 'reload', set: PluginSet, report: PluginReport): void {
  for (const r of report.refused)
    logger.error(
      { code: r.code, file: r.file, ...(r.keepsServing ? { keepsServing: r.keepsServing } : {}) },
      `plugin refused: ${r.file}: ${r.message}${r.keepsServing ? ` (${r.keepsServing} keeps serving)` : ''}`,
    );
  if (kind === 'start') return;
  for (const p of set.changes.added)
    logger.info(
      { plugin: p.manifest.name, version: p.manifest.version, dir: p.dir },
      `plugin added: ${label(p)} from ${p.dir}`,
    );
  for (const { from, to } of set.changes.upgraded) {
    logger.info(
      { plugin: to.manifest.name, from: from.manifest.version, to: to.manifest.version, dir: to.dir },
      `plugin upgraded: ${to.manifest.name} ${from.manifest.version} → ${to.manifest.version} from ${to.dir}`,
    );
    if (from.manifest.version === to.manifest.version)
      logger.warn(
        { plugin: to.manifest.name, version: to.manifest.version },
        `plugin ${to.manifest.name} changed but kept its version ${to.manifest.version}: the new files serve, but logs, audit and quarantine name both ${label(to)}; give each release a new version`,
      );
  }
  for (const p of set.changes.removed)
    logger.info(
      { plugin: p.manifest.name, version: p.manifest.version, dir: p.dir },
      `plugin removed: ${label(p)} (no plugin folder holds it any more: ${path.join(p.dir, 'manifest.json')})`,
    );
  logger.info(
    { ...summaryCounts(report), outcome: report.outcome },
    `plugins reloaded: ${report.added.length} added, ${report.upgraded.length} upgraded, ${report.removed.length} removed, ${report.unchanged} unchanged, ${report.refused.length} refused; ${report.plugins} plugins and ${report.tools} tools serving`,
  );
}

const summaryCounts = (r: PluginReport): Record<string, number> => ({
  added: r.added.length,
  upgraded: r.upgraded.length,
  removed: r.removed.length,
  unchanged: r.unchanged,
  refused: r.refused.length,
  plugins: r.plugins,
  tools: r.tools,
});
