/**
 * @module host/wiring/plugins
 * The plugin folders: a word at start about a folder that can hold no plugin, and the loader that
 * fills the registry, each plugin probed in the sandbox before any of its tools is listed.
 */
import { probePlugin, type Sandbox } from '../supervisor/index.js';
import type { MetaTool } from '../meta-tools/types.js';
import { sandboxLimits } from '../policy/limits.js';
import type { Policy } from '../policy/schema.js';
import { unknownPolicyNames } from '../policy/tenancy.js';
import { pluginRootProblem } from '../registry/load-plugins.js';
import { createPluginLoader, type PluginLoader, type ReloadOutcome } from '../registry/plugin-loader.js';
import type { LoadedPlugin } from '../registry/loaded-plugin.js';
import type { Registry } from '../registry/registry.js';
import type { Logger } from '../telemetry/logger.js';

/** A misspelt WORKBENCH_PLUGINS_DIR, or one naming a plugin folder itself, loaded nothing without a word. */
export function warnAboutPluginRoots(pluginDirs: readonly string[], logger: Logger): void {
  for (const dir of pluginDirs) {
    const problem = pluginRootProblem(dir);
    if (problem) logger.warn({ dir }, problem);
  }
}

export interface PluginWiring {
  roots: string[];
  /** the gateway's meta-tools, whose names no plugin tool may take */
  metaTools: readonly MetaTool[];
  registry: Registry;
  /** the built-in integrations, served beside the plugins (host/wiring/builtins.ts) */
  builtins: readonly LoadedPlugin[];
  sandbox: Sandbox;
  policy: Policy;
  logger: Logger;
  countReload: (outcome: ReloadOutcome) => void;
}

export function createPlugins(w: PluginWiring): PluginLoader {
  const { registry, sandbox, policy, logger } = w;
  return createPluginLoader({
    roots: w.roots,
    metaToolNames: w.metaTools.map((m) => m.name),
    registry,
    builtins: w.builtins,
    // plugin.js is only ever evaluated in the sandbox: ask it whether each module loads and exports
    // every tool of its manifest, with the limits its calls get, before listing any tool
    probe: (p) =>
      probePlugin(
        sandbox,
        { name: p.manifest.name, version: p.manifest.version, source: p.source, sourceHash: p.sourceHash },
        [...p.tools.keys()],
        sandboxLimits(policy, p.manifest.name),
      ),
    logger,
    onLoaded: () => {
      for (const name of unknownPolicyNames(policy, registry))
        logger.warn(
          { field: name },
          `policy names no loaded plugin or tool: ${name} (it applies to nothing until one is installed)`,
        );
    },
    countReload: w.countReload,
  });
}
