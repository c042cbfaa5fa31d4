/**
 * @module host/connections/tools/disconnect
 * disconnect: removes the caller's connection to an integration, revoking its token at the
 * provider where the provider supports revocation.
 */
import * as z from 'zod';
import type { MetaTool } from '../../meta-tools/types.js';
import { integrationArg, type ConnectionMetaToolDeps, type IntegrationLookup } from './deps.js';

export function disconnectTool(
  deps: ConnectionMetaToolDeps,
  lookup: IntegrationLookup,
): MetaTool<z.ZodObject<{ integration: typeof integrationArg }>> {
  return {
    name: 'disconnect',
    order: 80,
    title: 'Disconnect an integration',
    description:
      "Remove the user's connection to an integration and revoke its token at the provider when the provider supports revocation.",
    inputSchema: z.strictObject({ integration: integrationArg }),
    annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
    async handler(ctx, args) {
      const m = lookup.find(ctx.user, args.integration);
      if (!m) return lookup.unknown(ctx.user, args.integration);
      const r = await deps.connections.disconnect(ctx.user.id, m);
      return { json: { integration: m.name, disconnected: r.removed, revocation: r.revocation } };
    },
  };
}
