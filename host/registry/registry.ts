/**
 * @module host/registry/registry
 * The catalog of the plugins serving and their tools, looked up by exact tool name. A reload
 * replaces the whole set at once (`replace`): a lookup sees either the old set or the new one,
 * never a mix, and a call that resolved its tool before keeps the plugin it resolved (its source
 * and manifest) until it ends.
 */
import type { CatalogTool } from '../discovery/catalog-tool.js';
import type { PluginManifest } from '../../contracts/manifest.js';
import type { LoadedPlugin, LoadedTool } from './load-plugins.js';

export interface ResolvedTool {
  plugin: LoadedPlugin;
  tool: LoadedTool;
}

interface Snapshot {
  plugins: ReadonlyMap<string, LoadedPlugin>;
  tools: ReadonlyMap<string, ResolvedTool>;
  /** built on first use; the same array until the next replace (discovery rebuilds its index when it changes) */
  catalog?: readonly CatalogTool[];
}

function snapshotOf(plugins: readonly LoadedPlugin[]): Snapshot {
  const tools = new Map<string, ResolvedTool>();
  for (const plugin of plugins)
    for (const tool of plugin.tools.values()) tools.set(tool.manifest.name, { plugin, tool });
  return { plugins: new Map(plugins.map((p) => [p.manifest.name, p])), tools };
}

function catalogOf(plugins: Iterable<LoadedPlugin>): CatalogTool[] {
  return [...plugins].flatMap((p) =>
    [...p.tools.values()].map((t) => ({
      name: t.manifest.name,
      integration: p.manifest.name,
      integrationDisplayName: p.manifest.displayName,
      description: t.manifest.description,
      inputSchema: t.manifest.inputSchema,
      annotations: t.manifest.annotations,
    })),
  );
}

export class Registry {
  #now: Snapshot;

  constructor(plugins: readonly LoadedPlugin[]) {
    this.#now = snapshotOf(plugins);
  }

  /** Serves `plugins` from now on, in place of the set serving until now. */
  replace(plugins: readonly LoadedPlugin[]): void {
    this.#now = snapshotOf(plugins);
  }

  plugins(): LoadedPlugin[] {
    return [...this.#now.plugins.values()];
  }

  manifests(): PluginManifest[] {
    return this.plugins().map((p) => p.manifest);
  }

  plugin(name: string): LoadedPlugin | undefined {
    return this.#now.plugins.get(name);
  }

  tool(name: string): ResolvedTool | undefined {
    return this.#now.tools.get(name);
  }

  /** Every tool serving, as discovery reads it: the same array until the set is replaced. */
  catalog(): readonly CatalogTool[] {
    const now = this.#now;
    now.catalog ??= catalogOf(now.plugins.values());
    return now.catalog;
  }

  /** Resolves a tool within one integration, by full name or by the part after "<prefix>_". */
  toolIn(integration: string, name: string): ResolvedTool | undefined {
    const plugin = this.#now.plugins.get(integration);
    if (!plugin) return undefined;
    const exact = plugin.tools.get(name);
    if (exact) return { plugin, tool: exact };
    const matches = [...plugin.tools.values()].filter((t) => t.manifest.name.endsWith(`_${name}`));
    return matches.length === 1 && matches[0] ? { plugin, tool: matches[0] } : undefined;
  }

  get toolCount(): number {
    return this.#now.tools.size;
  }
}
