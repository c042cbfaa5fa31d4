/**
 * @module host/connections/tools/list-integrations
 * list_integrations: every integration the caller may use, with the truthful state of their
 * connection to it, and whether it can be connected on this server at all.
 */
import * as z from 'zod';
import type { MetaTool } from '../../meta-tools/types.js';
import { whyNotConnectable } from '../connectable.js';
import type { ConnectionMetaToolDeps, IntegrationLookup } from './deps.js';

export function listIntegrationsTool(
  deps: ConnectionMetaToolDeps,
  lookup: IntegrationLookup,
): MetaTool<z.ZodObject<Record<string, never>>> {
  const { connections } = deps;
  return {
    name: 'list_integrations',
    order: 50,
    title: 'List integrations',
    description:
      'List every integration you can use, with its auth type, number of tools and whether the user is connected: ' +
      '"connected", "needs_reauth" (with a reason: call connect again), "not_connected" (call connect) or "not_required" (no account needed); ' +
      "`instance` is the URL of the connection's own instance of the provider (e.g. a self-managed GitLab) when it names one.",
    inputSchema: z.strictObject({}),
    annotations: { readOnlyHint: true },
    async handler(ctx) {
      const states = await connections.states(ctx.user.id);
      const integrations = deps.registry
        .plugins()
        .filter((m) => lookup.allowed(ctx.user, m.name))
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((m) => {
          const s = states.get(m.name);
          const why = whyNotConnectable(m, connections.clientFor);
          const connection =
            m.auth.type === 'none' ? 'not_required' : s && s.state !== 'not_connected' ? s.state : 'not_connected';
          return {
            name: m.name,
            displayName: m.displayName,
            description: m.description,
            authType: m.auth.type,
            // the tools this user may use, as search_tools counts them (denied tools stay hidden)
            tools: deps.toolAllowed
              ? m.tools.filter((t) => deps.toolAllowed?.(ctx.user, m.name, t.name)).length
              : m.tools.length,
            connection,
            ...(s?.state === 'needs_reauth' ? { reason: s.reason } : {}),
            // the connection's own instance (GitLab self-managed, …), where its calls go
            ...(s !== undefined && s.state !== 'not_connected' && s.instance !== undefined
              ? { instance: s.instance }
              : {}),
            ...(why !== undefined ? { connectable: false, why } : {}),
          };
        });
      return { json: { integrations } };
    },
  };
}
