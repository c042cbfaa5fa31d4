/**
 * @module host/connections/tools/connect
 * connect: a link for the user to finish connecting an integration (approve at the provider, enter
 * an API key, or sign in to the provider in a live browser whose cookies become the connection),
 * valid once, for them only, for a few minutes. An integration that is already
 * connected is said to be so (status ALREADY_CONNECTED, and since when) instead of a new link being
 * made unasked: the agent calls again with `reconnect: true` when the user wants another account
 * or new permissions. One that needs re-authorisation gets its link at once.
 */
import * as z from 'zod';
import type { MetaTool } from '../../meta-tools/types.js';
import { clientEnvPrefix } from '../oauth.js';
import type { PendingType } from '../pending.js';
import { err, integrationArg, type ConnectionMetaToolDeps, type IntegrationLookup } from './deps.js';

const connectSchema = z.strictObject({
  integration: integrationArg,
  reconnect: z
    .boolean()
    .default(false)
    .describe(
      'Make a new link although the integration is connected (to connect another account, or grant new permissions); default false',
    ),
});

/** What the person does on the link's page, by how the integration connects. */
const USER_STEP: Record<PendingType, (name: string) => string> = {
  oauth2: (name) => `approve access at ${name}`,
  apikey: (name) => `enter their ${name} API key`,
  cookie: (name) => `sign in to ${name} in the browser the page shows`,
};

export function connectTool(deps: ConnectionMetaToolDeps, lookup: IntegrationLookup): MetaTool<typeof connectSchema> {
  const { connections } = deps;
  const base = deps.publicUrl.replace(/\/+$/, '');
  return {
    name: 'connect',
    order: 60,
    title: 'Connect an integration',
    description:
      "Start connecting the user's account for an integration. Returns {connectionId, type, url, expiresAt}: give the url to the user " +
      '(they open it in a browser signed in to this gateway, and approve at the provider, enter their API key, or sign in to the provider in a live browser there), ' +
      'then call wait_for_connection with the connectionId and retry the call that failed. The link works once, only for this user, for 10 minutes. ' +
      'If the integration is already connected, returns {status: "ALREADY_CONNECTED", connectedAt} and no link: call its tools, or call connect again with reconnect: true to connect anew.',
    inputSchema: connectSchema,
    annotations: { openWorldHint: true },
    async handler(ctx, args) {
      const m = lookup.find(ctx.user, args.integration);
      if (!m) return lookup.unknown(ctx.user, args.integration);
      if (m.auth.type === 'none')
        return {
          json: {
            integration: m.name,
            status: 'NOT_REQUIRED',
            message: `${m.displayName} needs no connection: call its tools directly.`,
          },
        };
      if (m.auth.type === 'oauth2' && !connections.clientFor(m.name))
        return err(
          'GW_ERR_CONNECTION_NO_CLIENT',
          `${m.displayName} cannot be connected yet: the operator must set ${clientEnvPrefix(m.name)}_CLIENT_ID and _CLIENT_SECRET on the server.`,
          { integration: m.name },
        );
      if (!args.reconnect) {
        const s = await connections.state(ctx.user.id, m);
        if (s.state === 'connected')
          return {
            json: {
              integration: m.name,
              status: 'ALREADY_CONNECTED',
              connectedAt: new Date(s.connectedAt).toISOString(),
              message: `${m.displayName} is already connected for this user: call its tools. To connect it again (another account, or new permissions), call connect with reconnect: true.`,
            },
          };
      }
      const made = await connections.pending.createLimited(ctx.user.id, m.name, m.auth.type, deps.maxLinksPer10Min);
      if (!made.ok)
        return err(
          'GW_ERR_POLICY_RATE_LIMITED',
          `Too many connect links in 10 minutes (limit ${made.limit}); reuse the last one or wait.`,
          { retryAfterSec: made.retryAfterSec },
        );
      const p = made.pending;
      return {
        json: {
          connectionId: p.id,
          integration: m.name,
          type: p.type,
          url: `${base}/connect/${p.id}`,
          expiresAt: new Date(p.expiresAt).toISOString(),
          message: `Ask the user to open this link and ${USER_STEP[p.type](m.displayName)}, then call wait_for_connection.`,
        },
      };
    },
  };
}
