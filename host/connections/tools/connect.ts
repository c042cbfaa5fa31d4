/**
 * @module host/connections/tools/connect
 * connect: a link for the user to finish connecting an integration (approve at the provider, enter
 * an API key, or sign in to the provider in a live browser whose cookies become the connection),
 * valid once, for them only, for a few minutes. An integration that is already
 * connected is said to be so (status ALREADY_CONNECTED, and since when) instead of a new link being
 * made unasked: the agent calls again with `reconnect: true` when the user wants another account
 * or new permissions. One that needs re-authorisation gets its link at once. For an integration
 * whose provider can be self-hosted, the agent may name the instance (checked here as at any
 * connect): the link's page shows it to the person, who may change it, and it is only a suggestion
 * until they confirm it there.
 */
import * as z from 'zod';
import type { MetaTool } from '../../meta-tools/types.js';
import { whyNotConnectable } from '../connectable.js';
import { isConnectionError } from '../errors.js';
import { clientEnvPrefix } from '../oauth.js';
import { checkInstanceUrl } from '../instance-url.js';
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
  instanceUrl: z
    .string()
    .max(300)
    .optional()
    .describe(
      "Only for an integration whose provider can be self-hosted (e.g. gitlab): the address of the user's own instance, such as https://gitlab.example.com; the user sees and confirms it on the link's page. Leave it out for the provider's own service (gitlab.com).",
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
      // an OAuth2 integration without the operator's client (and no personal token instead)
      if (whyNotConnectable(m, connections.clientFor))
        return err(
          'GW_ERR_CONNECTION_NO_CLIENT',
          `${m.displayName} cannot be connected yet: the operator must set ${clientEnvPrefix(m.name)}_CLIENT_ID and _CLIENT_SECRET on the server.`,
          { integration: m.name },
        );
      let instanceUrl: string | undefined;
      try {
        instanceUrl = await checkInstanceUrl(m, args.instanceUrl, connections.instanceRules);
      } catch (e) {
        if (!isConnectionError(e)) throw e;
        return err(e.code, e.message, { integration: m.name });
      }
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
      const made = await connections.pending.createLimited(
        ctx.user.id,
        m.name,
        m.auth.type,
        deps.maxLinksPer10Min,
        instanceUrl ?? null,
      );
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
          ...(instanceUrl !== undefined ? { instanceUrl } : {}),
          expiresAt: new Date(p.expiresAt).toISOString(),
          message: `Ask the user to open this link and ${USER_STEP[p.type](m.displayName)}, then call wait_for_connection.`,
        },
      };
    },
  };
}
