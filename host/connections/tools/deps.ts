/**
 * @module host/connections/tools/deps
 * What the connection meta-tools need (host/connections/meta-tools.ts puts them together), and
 * the helpers they share: the integration argument, the error answer, and finding an integration
 * the caller may use (or naming the ones they meant).
 */
import * as z from 'zod';
import type { PluginManifest } from '../../../contracts/manifest.js';
import { guessIntegration } from '../../discovery/integration-names.js';
import type { MetaToolResult } from '../../meta-tools/types.js';
import type { User } from '../../storage/users.js';
import type { FullConnectionService } from '../service-types.js';

export interface PluginCatalog {
  plugins(): PluginManifest[];
  plugin(name: string): PluginManifest | undefined;
}

export interface ConnectionMetaToolDeps {
  connections: FullConnectionService;
  registry: PluginCatalog;
  /** the portal's public origin, e.g. https://workbench.example.com (no trailing slash needed) */
  publicUrl: string;
  /** whether the user's tenant may use a plugin (policy); default: every plugin */
  allowed?: (user: User, pluginName: string) => boolean;
  /** whether the user's tenant may use one tool of a plugin (policy); default: every tool */
  toolAllowed?: (user: User, pluginName: string, toolName: string) => boolean;
  /** links one user may create per 10 minutes (default CONNECT_LINK_LIMIT.max, shared with the portal's Connect button) */
  maxLinksPer10Min?: number;
  /** longest wait between two database polls in wait_for_connection (default 1000 ms) */
  maxPollMs?: number;
  /** wait_for_connection calls one user may have waiting at once on this server (default MAX_WAITS_PER_USER) */
  maxWaitsPerUser?: number;
  /** aborted when the server begins to shut down: waits answer TIMEOUT at once instead of holding the drain */
  closing?: AbortSignal;
}

export const integrationArg = z
  .string()
  .min(1)
  .max(100)
  .describe('Integration name, as listed by list_integrations (e.g. "github")');

export const err = (code: string, error: string, extra: Record<string, unknown> = {}): MetaToolResult => ({
  json: { error, code, ...extra },
  isError: true,
});

export interface IntegrationLookup {
  /** may the user's tenant use the plugin? */
  allowed(user: User, name: string): boolean;
  /** the manifest of an integration the user may use, or undefined */
  find(user: User, name: string): PluginManifest | undefined;
  /** the answer for a name that is no integration the user may use, naming the ones they may have meant */
  unknown(user: User, name: string): MetaToolResult;
}

export function integrationLookup(deps: ConnectionMetaToolDeps): IntegrationLookup {
  const allowed = (user: User, name: string): boolean => (deps.allowed ? deps.allowed(user, name) : true);
  const find = (user: User, name: string): PluginManifest | undefined => {
    const m = deps.registry.plugin(name);
    return m && allowed(user, name) ? m : undefined;
  };
  const unknown = (user: User, name: string): MetaToolResult => {
    // "jira" or "Atlassian Jira" for atlassian-jira: named back, never accepted silently
    const known = deps.registry.plugins().filter((m) => allowed(user, m.name));
    const { didYouMean, candidates } = guessIntegration(name, known);
    const integrations = known.map((m) => m.name).sort();
    const guess = didYouMean
      ? ` Did you mean "${didYouMean}"?`
      : candidates.length > 1
        ? ` "${name}" may mean several integrations, each connected on its own: ${candidates.map((c) => `"${c}"`).join(', ')}. Pass the exact name of the one you need.`
        : '';
    return err(
      'GW_ERR_CONNECTION_UNKNOWN_INTEGRATION',
      `Unknown integration "${name}".${guess} Integrations you can use: ${integrations.join(', ') || 'none'} (list_integrations describes them).`,
      {
        integration: name,
        ...(didYouMean ? { didYouMean } : {}),
        ...(candidates.length > 0 ? { candidates } : {}),
        integrations,
      },
    );
  };
  return { allowed, find, unknown };
}
