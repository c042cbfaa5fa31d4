/**
 * @module host/registry/registry
 * The catalog of loaded plugins and their tools, looked up by exact tool name.
 */
import type { PluginManifest } from '../../sandbox/manifest.js';
import type { LoadedPlugin, LoadedTool } from './load-plugins.js';

export interface ResolvedTool {
  plugin: LoadedPlugin;
  tool: LoadedTool;
}

export class Registry {
  readonly #plugins: Map<string, LoadedPlugin>;
  readonly #tools = new Map<string, ResolvedTool>();

  constructor(plugins: readonly LoadedPlugin[]) {
    this.#plugins = new Map(plugins.map((p) => [p.manifest.name, p]));
    for (const plugin of plugins) for (const tool of plugin.tools.values()) this.#tools.set(tool.manifest.name, { plugin, tool });
  }

  plugins(): LoadedPlugin[] {
    return [...this.#plugins.values()];
  }

  manifests(): PluginManifest[] {
    return this.plugins().map((p) => p.manifest);
  }

  plugin(name: string): LoadedPlugin | undefined {
    return this.#plugins.get(name);
  }

  tool(name: string): ResolvedTool | undefined {
    return this.#tools.get(name);
  }

  /** Resolves a tool within one integration, by full name or by the part after "<prefix>_". */
  toolIn(integration: string, name: string): ResolvedTool | undefined {
    const plugin = this.#plugins.get(integration);
    if (!plugin) return undefined;
    const exact = plugin.tools.get(name);
    if (exact) return { plugin, tool: exact };
    const matches = [...plugin.tools.values()].filter((t) => t.manifest.name.endsWith(`_${name}`));
    return matches.length === 1 && matches[0] ? { plugin, tool: matches[0] } : undefined;
  }

  get toolCount(): number {
    return this.#tools.size;
  }
}
