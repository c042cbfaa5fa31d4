/**
 * @module host/wiring/meta-tools
 * What the policy lets a user see (a tool, a plugin), the plugin catalog the connection tools and
 * the portal read, and the gateway's meta-tools in tools/list order: discovery, engine, connections.
 */
import { whyNotConnectable } from '../connections/connectable.js';
import { createConnectionMetaTools, type PluginCatalog } from '../connections/meta-tools.js';
import type { FullConnectionService } from '../connections/service.js';
import { isUsable } from '../connections/types.js';
import { createDiscoveryMetaTools } from '../discovery/meta-tools.js';
import type { EngineDeps } from '../engine/execute-single.js';
import { createEngineMetaTools } from '../meta-tools/engine-tools.js';
import type { MetaTool } from '../meta-tools/types.js';
import type { Policy } from '../policy/schema.js';
import { decideToolAccess } from '../policy/tenancy.js';
import type { Registry } from '../registry/registry.js';
import type { ContinuationStore } from '../results/continuations.js';
import type { User } from '../storage/users.js';

export interface Access {
  /** may the user's tenant run this tool of this plugin? */
  toolAllowed(user: User, plugin: string, tool: string): boolean;
  /** may the user's tenant run any tool of this plugin? */
  pluginAllowed(user: User, plugin: string): boolean;
}

export function policyAccess(policy: Policy, registry: Registry): Access {
  const toolAllowed = (user: User, plugin: string, tool: string): boolean =>
    decideToolAccess(policy, user.tenant, plugin, tool).allowed;
  const pluginAllowed = (user: User, plugin: string): boolean =>
    [...(registry.plugin(plugin)?.tools.keys() ?? [])].some((t) => toolAllowed(user, plugin, t));
  return { toolAllowed, pluginAllowed };
}

/** The manifests of the plugins serving now (a reload replaces them in place). */
export function pluginCatalog(registry: Registry): PluginCatalog {
  return { plugins: () => registry.manifests(), plugin: (name: string) => registry.plugin(name)?.manifest };
}

export interface MetaToolWiring {
  policy: Policy;
  registry: Registry;
  connections: FullConnectionService;
  engine: EngineDeps;
  continuations: ContinuationStore;
  access: Access;
  /** the plugin catalog the connection tools read (the portal reads the same) */
  catalog: PluginCatalog;
  publicUrl: string;
  /** aborted when the gateway begins to close */
  closing: AbortSignal;
}

export function createMetaTools(w: MetaToolWiring): MetaTool[] {
  const { registry, connections, access, policy } = w;
  const metaTools: MetaTool[] = [
    ...createDiscoveryMetaTools({
      catalog: () => registry.catalog(),
      isAllowed: (user, tool) => access.toolAllowed(user, tool.integration, tool.name),
      isConnected: async (user, integration) => {
        const manifest = registry.plugin(integration)?.manifest;
        return manifest !== undefined && (await isUsable(connections, user.id, manifest));
      },
      metaTools: () => metaTools,
      whyNotConnectable: (integration) => {
        const manifest = registry.plugin(integration)?.manifest;
        return manifest && whyNotConnectable(manifest, connections.clientFor);
      },
    }),
    ...createEngineMetaTools({
      engine: w.engine,
      continuations: w.continuations,
      maxChars: policy.resultCap.maxChars,
      maxBatch: policy.requests.maxBatch,
    }),
    ...createConnectionMetaTools({
      connections,
      registry: w.catalog,
      publicUrl: w.publicUrl,
      allowed: access.pluginAllowed,
      toolAllowed: access.toolAllowed,
      closing: w.closing,
    }),
  ];
  return metaTools;
}
