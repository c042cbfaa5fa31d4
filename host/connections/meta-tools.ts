/**
 * @module host/connections/meta-tools
 * The agent's side of connecting: list_integrations (the truthful state of each connection),
 * connect (a link for the user, OAuth2 or API key), wait_for_connection (long-polls the database
 * with back-off, woken early by this process's events, with progress notifications) and disconnect
 * (revokes at the provider where it can).
 */
import * as z from 'zod';
import type { PluginManifest } from '../../contracts/manifest.js';
import type { MetaTool, MetaToolContext, MetaToolResult } from '../meta-tools/types.js';
import type { User } from '../storage/users.js';
import { guessIntegration } from '../discovery/integration-names.js';
import { whyNotConnectable } from './connectable.js';
import { clientEnvPrefix } from './oauth.js';
import type { PendingConnect } from './pending.js';
import type { ConnectionChange, FullConnectionService } from './service.js';

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

/**
 * wait_for_connection calls one user may have waiting at once on this server. Each wait polls the
 * database and listens for its link; without a bound, one key sending batches of waits (a batch
 * may hold a hundred) kept ten thousand waiting, used most of a core and slowed every other user.
 */
export const MAX_WAITS_PER_USER = 4;

export type WaitStatus = 'CONNECTED' | 'EXPIRED' | 'DENIED' | 'FAILED' | 'TIMEOUT';

const integrationArg = z.string().min(1).max(100).describe('Integration name, as listed by list_integrations (e.g. "github")');

const err = (code: string, error: string, extra: Record<string, unknown> = {}): MetaToolResult => ({ json: { error, code, ...extra }, isError: true });

export function createConnectionMetaTools(deps: ConnectionMetaToolDeps): MetaTool[] {
  const { connections } = deps;
  const maxWaits = deps.maxWaitsPerUser ?? MAX_WAITS_PER_USER;
  /** wait_for_connection calls waiting now, by user id */
  const waiting = new Map<string, number>();
  const base = deps.publicUrl.replace(/\/+$/, '');
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
      { integration: name, ...(didYouMean ? { didYouMean } : {}), ...(candidates.length > 0 ? { candidates } : {}), integrations },
    );
  };

  const listIntegrations: MetaTool<z.ZodObject<Record<string, never>>> = {
    name: 'list_integrations',
    order: 50,
    title: 'List integrations',
    description:
      'List every integration you can use, with its auth type, number of tools and whether the user is connected: ' +
      '"connected", "needs_reauth" (with a reason: call connect again), "not_connected" (call connect) or "not_required" (no account needed).',
    inputSchema: z.strictObject({}),
    annotations: { readOnlyHint: true },
    async handler(ctx) {
      const states = await connections.states(ctx.user.id);
      const integrations = deps.registry
        .plugins()
        .filter((m) => allowed(ctx.user, m.name))
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((m) => {
          const s = states.get(m.name);
          const why = whyNotConnectable(m, connections.clientFor);
          const connection = m.auth.type === 'none' ? 'not_required' : s && s.state !== 'not_connected' ? s.state : 'not_connected';
          return {
            name: m.name,
            displayName: m.displayName,
            description: m.description,
            authType: m.auth.type,
            // the tools this user may use, as search_tools counts them (denied tools stay hidden)
            tools: deps.toolAllowed ? m.tools.filter((t) => deps.toolAllowed?.(ctx.user, m.name, t.name)).length : m.tools.length,
            connection,
            ...(s?.state === 'needs_reauth' ? { reason: s.reason } : {}),
            ...(why !== undefined ? { connectable: false, why } : {}),
          };
        });
      return { json: { integrations } };
    },
  };

  const connect: MetaTool<z.ZodObject<{ integration: typeof integrationArg }>> = {
    name: 'connect',
    order: 60,
    title: 'Connect an integration',
    description:
      'Start connecting the user\'s account for an integration. Returns {connectionId, type, url, expiresAt}: give the url to the user ' +
      '(they open it in a browser signed in to this gateway, and approve at the provider or enter their API key there), ' +
      'then call wait_for_connection with the connectionId and retry the call that failed. The link works once, only for this user, for 10 minutes.',
    inputSchema: z.strictObject({ integration: integrationArg }),
    annotations: { openWorldHint: true },
    async handler(ctx, args) {
      const m = find(ctx.user, args.integration);
      if (!m) return unknown(ctx.user, args.integration);
      if (m.auth.type === 'none') return { json: { integration: m.name, status: 'NOT_REQUIRED', message: `${m.displayName} needs no connection: call its tools directly.` } };
      if (m.auth.type === 'oauth2' && !connections.clientFor(m.name))
        return err('GW_ERR_CONNECTION_NO_CLIENT', `${m.displayName} cannot be connected yet: the operator must set ${clientEnvPrefix(m.name)}_CLIENT_ID and _CLIENT_SECRET on the server.`, { integration: m.name });
      const made = await connections.pending.createLimited(ctx.user.id, m.name, m.auth.type, deps.maxLinksPer10Min);
      if (!made.ok)
        return err('GW_ERR_POLICY_RATE_LIMITED', `Too many connect links in 10 minutes (limit ${made.limit}); reuse the last one or wait.`, { retryAfterSec: made.retryAfterSec });
      const p = made.pending;
      return {
        json: {
          connectionId: p.id,
          integration: m.name,
          type: p.type,
          url: `${base}/connect/${p.id}`,
          expiresAt: new Date(p.expiresAt).toISOString(),
          message: `Ask the user to open this link and ${p.type === 'oauth2' ? `approve access at ${m.displayName}` : `enter their ${m.displayName} API key`}, then call wait_for_connection.`,
        },
      };
    },
  };

  const waitSchema = z.strictObject({
    connectionId: z.string().min(1).max(64).describe('The connectionId returned by connect'),
    timeoutSec: z.number().int().min(1).max(300).default(120).describe('How long to wait, 1 to 300 seconds (default 120)'),
  });
  const waitForConnection: MetaTool<typeof waitSchema> = {
    name: 'wait_for_connection',
    order: 70,
    title: 'Wait for a connection',
    description:
      'Wait until the user finishes the link from connect. Returns {status}: CONNECTED (retry your call; also when the user connected the integration another way, e.g. in the portal), DENIED (the user refused at the provider), ' +
      'EXPIRED (the link expired: call connect again), FAILED (the provider exchange failed or the connection could not be stored; reason says why) or TIMEOUT (still pending: call again to keep waiting).',
    inputSchema: waitSchema,
    annotations: { readOnlyHint: true, idempotentHint: true },
    async handler(ctx, args) {
      const userId = ctx.user.id;
      const already = waiting.get(userId) ?? 0;
      if (already >= maxWaits)
        return err(
          'GW_ERR_POLICY_RATE_LIMITED',
          `At most ${maxWaits} wait_for_connection calls of one user may wait at once, and ${already} are waiting: wait for one link at a time, or call again once one has answered.`,
          { retryAfterSec: 5 },
        );
      waiting.set(userId, already + 1);
      try {
        const first = await connections.pending.get(args.connectionId);
        if (!first || first.userId !== userId)
          return err('GW_ERR_CONNECTION_LINK_INVALID', 'Unknown connectionId. Use the connectionId returned by connect.', { connectionId: args.connectionId });
        return { json: await waitFor(ctx, first, args.timeoutSec * 1000) };
      } finally {
        const left = (waiting.get(userId) ?? 1) - 1;
        if (left > 0) waiting.set(userId, left);
        else waiting.delete(userId);
      }
    },
  };

  /**
   * The client's signal, also aborted when the server begins to shut down. Listeners, removed by
   * `detach` (AbortSignal.any kept a reference on the server-long closing signal for every wait).
   */
  function waitSignal(ctx: MetaToolContext): { signal: AbortSignal; detach: () => void } {
    const closing = deps.closing;
    if (!closing) return { signal: ctx.signal, detach: () => undefined };
    const both = new AbortController();
    if (closing.aborted || ctx.signal.aborted) {
      both.abort();
      return { signal: both.signal, detach: () => undefined };
    }
    const stop = (): void => both.abort();
    closing.addEventListener('abort', stop, { once: true });
    ctx.signal.addEventListener('abort', stop, { once: true });
    return {
      signal: both.signal,
      detach: () => {
        closing.removeEventListener('abort', stop);
        ctx.signal.removeEventListener('abort', stop);
      },
    };
  }

  async function waitFor(ctx: MetaToolContext, first: PendingConnect, timeoutMs: number): Promise<Record<string, unknown>> {
    const { signal, detach } = waitSignal(ctx);
    try {
      return await waitUntilSettled(ctx, first, timeoutMs, signal);
    } finally {
      detach();
    }
  }

  async function waitUntilSettled(ctx: MetaToolContext, first: PendingConnect, timeoutMs: number, signal: AbortSignal): Promise<Record<string, unknown>> {
    const started = Date.now();
    const maxPoll = deps.maxPollMs ?? 1000;
    const closing = deps.closing;
    let pollMs = 100;
    let lastProgress = 0;
    let p: PendingConnect | undefined = first;
    for (;;) {
      if (!p) return { connectionId: first.id, integration: first.integration, status: 'EXPIRED', reason: 'the link no longer exists' };
      const done = outcome(p) ?? (await connectedElsewhere(ctx, p));
      if (done) return done;
      const elapsed = Date.now() - started;
      if (elapsed >= timeoutMs || signal.aborted)
        return {
          connectionId: p.id,
          integration: p.integration,
          status: 'TIMEOUT',
          linkExpiresAt: new Date(p.expiresAt).toISOString(),
          message: ctx.signal.aborted
            ? 'cancelled by the client'
            : closing?.aborted
              ? 'This server is shutting down; call wait_for_connection again to keep waiting (the link stays valid).'
              : 'The user has not finished yet; call wait_for_connection again to keep waiting.',
        };
      if (elapsed - lastProgress >= 2000 || lastProgress === 0) {
        lastProgress = Math.max(elapsed, 1);
        await ctx.progress(Math.floor(elapsed / 1000), Math.ceil(timeoutMs / 1000), `waiting for the user to connect ${p.integration}`);
      }
      await nap(Math.min(pollMs, timeoutMs - elapsed, Math.max(1, p.expiresAt - connections.now())), p, signal);
      pollMs = Math.min(pollMs * 2, maxPoll);
      p = await connections.pending.get(p.id);
    }
  }

  /**
   * CONNECTED when the user connected the link's integration some other way since the link was
   * made (the portal's own Connect button makes a link of its own, an operator's import): the
   * agent's link may never be used, and waiting for it would only end in EXPIRED. Judged by
   * connectedAt, which only a connect, reconnect or import sets: a token refresh (the sweep, a
   * call) or a status change during the wait moves updatedAt, and is no answer to the link.
   */
  async function connectedElsewhere(ctx: MetaToolContext, p: PendingConnect): Promise<Record<string, unknown> | undefined> {
    if (p.status === 'pending' || p.status === 'opened' || p.status === 'exchanging') {
      const m = deps.registry.plugin(p.integration);
      if (!m) return undefined;
      const s = await connections.state(ctx.user.id, m);
      if (s.state === 'connected' && s.connectedAt >= p.createdAt)
        return { connectionId: p.id, integration: p.integration, status: 'CONNECTED', message: `${m.displayName} was connected another way (for example in the portal); this link is no longer needed.` };
    }
    return undefined;
  }

  function outcome(p: PendingConnect): Record<string, unknown> | undefined {
    const map: Partial<Record<PendingConnect['status'], WaitStatus>> = { connected: 'CONNECTED', denied: 'DENIED', expired: 'EXPIRED', failed: 'FAILED' };
    const status = map[p.status];
    if (!status) return undefined;
    return { connectionId: p.id, integration: p.integration, status, ...(p.statusReason ? { reason: p.statusReason } : {}) };
  }

  /**
   * Sleeps up to `ms`, waking early when this process settles the record, saves a connection of the
   * link's user and integration, or the client cancels.
   */
  function nap(ms: number, p: PendingConnect, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        connections.pending.events.off('settled', onSettled);
        connections.events.off('change', onChange);
        signal.removeEventListener('abort', finish);
        resolve();
      };
      const onSettled = (settledId: string): void => {
        if (settledId === p.id) finish();
      };
      const onChange = (c: ConnectionChange): void => {
        if (c.userId === p.userId && c.integration === p.integration && c.status === 'connected') finish();
      };
      const timer = setTimeout(finish, Math.max(1, ms));
      connections.pending.events.on('settled', onSettled);
      connections.events.on('change', onChange);
      signal.addEventListener('abort', finish, { once: true });
    });
  }

  const disconnect: MetaTool<z.ZodObject<{ integration: typeof integrationArg }>> = {
    name: 'disconnect',
    order: 80,
    title: 'Disconnect an integration',
    description: "Remove the user's connection to an integration and revoke its token at the provider when the provider supports revocation.",
    inputSchema: z.strictObject({ integration: integrationArg }),
    annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
    async handler(ctx, args) {
      const m = find(ctx.user, args.integration);
      if (!m) return unknown(ctx.user, args.integration);
      const r = await connections.disconnect(ctx.user.id, m);
      return { json: { integration: m.name, disconnected: r.removed, revocation: r.revocation } };
    },
  };

  return [listIntegrations, connect, waitForConnection, disconnect];
}
