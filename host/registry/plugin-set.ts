/**
 * @module host/registry/plugin-set
 * Which plugins serve, decided from those serving now and those just read from the plugin folders
 * (and accepted by the sandbox's probe). One rule, at start-up (nothing serves yet) and at every
 * reload, whatever the order of the roots and of the folders in them:
 *
 * - A plugin whose files did not change keeps serving.
 * - A new or changed plugin that clashes (namespace.ts) with one that keeps serving is refused; new
 *   or changed plugins that clash with each other are all refused. Nothing is settled by folder
 *   order, so at start-up every plugin of a clash is refused and the others load.
 * - A plugin refused for any reason (a broken upgrade) leaves the version serving now in place: the
 *   one from the same folder, or of the same name when no folder read holds a plugin of that name.
 * - A serving plugin that no folder holds any more is removed.
 */
import path from 'node:path';
import { clashOf } from './namespace.js';
import type { LoadedPlugin, PluginLoadError } from './loaded-plugin.js';

export interface PluginSetChanges {
  added: LoadedPlugin[];
  upgraded: { from: LoadedPlugin; to: LoadedPlugin }[];
  removed: LoadedPlugin[];
  /** serving versions that keep serving because what their folder holds now was refused */
  kept: LoadedPlugin[];
  unchanged: LoadedPlugin[];
}

export interface PluginSet {
  /** the plugins to serve, by name */
  plugins: LoadedPlugin[];
  /** every refusal, by file */
  errors: PluginLoadError[];
  changes: PluginSetChanges;
}

/**
 * @param serving the plugins serving now (none at start-up)
 * @param read the plugins read and accepted; those serving now whose files did not change are the
 *   very same objects (load-plugins.ts readPlugins with `previous`)
 * @param refused the folders refused while reading or probing
 */
export function resolvePluginSet(
  serving: readonly LoadedPlugin[],
  read: readonly LoadedPlugin[],
  refused: readonly PluginLoadError[],
): PluginSet {
  const current = new Set(serving);
  const unchanged = read.filter((p) => current.has(p));
  const keep = new Set(unchanged);
  const errors = [...refused];
  // a broken upgrade: the version serving stays, found by its folder, or by its name when no folder read holds that name
  const nameRead = (name: string): boolean => read.some((p) => p.manifest.name === name);
  for (const e of refused)
    for (const old of serving)
      if (old.dir === e.dir || (old.manifest.name === e.name && !nameRead(old.manifest.name))) keep.add(old);
  let candidates = read.filter((p) => !current.has(p));
  // Refusing a change can put its serving version back, which later changes must not clash with:
  // repeat until nothing more is refused. Each round judges all changes at once, so the order of
  // `read` does not matter.
  for (;;) {
    const others = [...keep, ...candidates];
    const clashing = candidates
      .map((p) => ({ p, with: others.filter((q) => q !== p && clashOf(p, q) !== undefined) }))
      .filter((c) => c.with.length > 0);
    if (clashing.length === 0) break;
    for (const c of clashing) errors.push(clashError(c.p, c.with, keep));
    for (const c of clashing) for (const old of serving) if (old.manifest.name === c.p.manifest.name) keep.add(old);
    candidates = candidates.filter((p) => !clashing.some((c) => c.p === p));
  }
  const plugins = [...keep, ...candidates].sort((a, b) => compare(a.manifest.name, b.manifest.name));
  return {
    plugins,
    errors: errors.sort((a, b) => compare(a.file, b.file)),
    changes: changesOf(serving, plugins, unchanged, candidates),
  };
}

function changesOf(
  serving: readonly LoadedPlugin[],
  plugins: readonly LoadedPlugin[],
  unchanged: readonly LoadedPlugin[],
  accepted: readonly LoadedPlugin[],
): PluginSetChanges {
  const servingByName = new Map(serving.map((p) => [p.manifest.name, p]));
  const next = new Set(plugins);
  return {
    added: accepted.filter((p) => !servingByName.has(p.manifest.name)),
    upgraded: accepted.flatMap((to) => {
      const from = servingByName.get(to.manifest.name);
      return from ? [{ from, to }] : [];
    }),
    removed: serving.filter((p) => !next.has(p) && !plugins.some((q) => q.manifest.name === p.manifest.name)),
    kept: serving.filter((p) => next.has(p) && !unchanged.includes(p)),
    unchanged: [...unchanged],
  };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The refusal of `plugin`, naming every plugin it clashes with, their folders, and what to do. */
function clashError(
  plugin: LoadedPlugin,
  others: readonly LoadedPlugin[],
  serving: ReadonlySet<LoadedPlugin>,
): PluginLoadError {
  const { name } = plugin.manifest;
  const each = [...others]
    .sort((a, b) => compare(a.dir, b.dir))
    .map(
      (q) =>
        `plugin "${q.manifest.name}" in ${q.dir}${serving.has(q) ? ' (serving, it keeps serving)' : ' (refused too)'}: ${clashOf(plugin, q) ?? ''}`,
    );
  const againstServing = others.some((q) => serving.has(q));
  return {
    dir: plugin.dir,
    file: path.join(plugin.dir, 'manifest.json'),
    name,
    code: 'GW_ERR_PLUGIN_CLASH',
    message:
      `plugin "${name}" clashes with ${each.join('; with ')}. ` +
      'Rename one of them (the plugin name, and its tool names with it) or remove one folder: a clash is never settled by folder order' +
      (againstServing ? ', and at the next start neither would load' : ''),
  };
}
