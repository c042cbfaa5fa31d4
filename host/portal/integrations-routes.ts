/**
 * @module host/portal/integrations-routes
 * The integrations page: every integration the user may use, with its true connection state
 * (connected, needs reconnecting with the reason, not connected, no account needed; and the
 * connection's own instance, when it names one) and the
 * actions: connect (the same link flow the agent uses, under the same per-user link limit) and
 * disconnect (revoking at the provider).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PluginManifest } from '../../contracts/manifest.js';
import type { IntegrationConnectionState } from '../connections/service.js';
import { whyNotConnectable } from '../connections/connectable.js';
import type { PortalContext, SignedIn } from './context.js';
import { html, type SafeHtml } from './html.js';

const AUTH_LABEL: Record<PluginManifest['auth']['type'], string> = {
  none: 'No account',
  apikey: 'API key',
  oauth2: 'OAuth',
  cookie: 'Sign-in session',
};

function stateCell(m: PluginManifest, s: IntegrationConnectionState | undefined): SafeHtml {
  if (m.auth.type === 'none') return html`<span>No account needed</span>`;
  // the host the credential goes to: worth seeing, it is where the agents' calls go
  const at =
    s !== undefined && s.state !== 'not_connected' && s.instance !== undefined
      ? html`<p class="hint">at <span class="instance">${new URL(s.instance).host}</span></p>`
      : '';
  if (s?.state === 'connected') return html`<span class="ok">Connected</span>${at}`;
  if (s?.state === 'needs_reauth')
    return html`<span class="warn">Needs reconnecting</span>${at}<p class="hint">${s.reason}</p>`;
  return html`<span>Not connected</span>`;
}

type Name = { Params: { name: string } };

export function registerIntegrationRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  scope.get('/integrations', async (request, reply) => showIntegrations(ctx, request, reply));

  // Connect and Disconnect are form posts on /integrations; their addresses, typed or followed, lead there.
  for (const action of ['connect', 'disconnect'])
    scope.get(`/integrations/:name/${action}`, async (_request, reply) =>
      reply.code(303).header('location', '/integrations').send(),
    );

  scope.post<Name>('/integrations/:name/connect', async (request, reply) => startConnect(ctx, request, reply));
  scope.post<Name>('/integrations/:name/disconnect', async (request, reply) => disconnect(ctx, request, reply));
}

const allowed = (ctx: PortalContext, who: SignedIn, name: string): boolean => ctx.mayUse(who.user, name);

function find(ctx: PortalContext, who: SignedIn, name: string): PluginManifest | undefined {
  const m = ctx.deps.registry.plugin(name);
  return m && allowed(ctx, who, name) ? m : undefined;
}

async function showIntegrations(
  ctx: PortalContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { connections, registry } = ctx.deps;
  const who = await ctx.requireUser(request, reply);
  if (!who) return reply;
  const states = await connections.states(who.user.id);
  const plugins = registry
    .plugins()
    .filter((m) => allowed(ctx, who, m.name))
    .sort((a, b) => a.displayName.localeCompare(b.displayName));
  const flash = await notices(ctx, request, who);
  const rows = plugins.map((m) => integrationRow(ctx, m, states.get(m.name), who.session.csrf));
  return ctx.sendPage(reply, 200, {
    title: 'Integrations',
    active: 'integrations',
    who,
    body: html`${flash}<table><caption class="hint">Connect the accounts your agents may use on your behalf.</caption>
<thead><tr><th scope="col">Integration</th><th scope="col">Sign-in</th><th scope="col">Tools</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  });
}

/**
 * Notices come from this session's own form posts (flash.ts), never from the URL, where anyone
 * could write "… was disconnected" into a link.
 */
async function notices(ctx: PortalContext, request: FastifyRequest, who: SignedIn): Promise<(SafeHtml | string)[]> {
  const { registry } = ctx.deps;
  return (await ctx.takeFlash(request, who, 'integrations')).map((f) => {
    if (f.kind !== 'disconnected') return '';
    const name = registry.plugin(f.integration)?.displayName ?? f.integration;
    if (!f.removed)
      return html`<p class="notice" role="status">${name} was not connected: there was nothing to disconnect.</p>`;
    return html`<p class="notice" role="status">${name} was disconnected.${
      f.revocation === 'failed'
        ? html` Workbench could not revoke its access at ${name}, though: revoke it in your ${name} account settings too.`
        : ''
    }</p>`;
  });
}

function integrationRow(
  ctx: PortalContext,
  m: PluginManifest,
  s: IntegrationConnectionState | undefined,
  csrf: string,
): SafeHtml {
  const connected = s !== undefined && s.state !== 'not_connected';
  const notConnectable = whyNotConnectable(m, ctx.deps.connections.clientFor);
  const actions =
    m.auth.type === 'none'
      ? ''
      : html`${
          notConnectable
            ? html`<p class="hint">Not available: ${notConnectable}.</p>`
            : html`<form method="post" action="/integrations/${m.name}/connect" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
<button type="submit" aria-label="${connected ? 'Reconnect' : 'Connect'} ${m.displayName}">${connected ? 'Reconnect' : 'Connect'}</button></form>`
        }
${
  connected
    ? html` <form method="post" action="/integrations/${m.name}/disconnect" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
<button type="submit" aria-label="Disconnect ${m.displayName}">Disconnect</button></form>`
    : ''
}`;
  return html`<tr><th scope="row">${m.displayName}<p class="hint">${m.description}</p></th>
<td>${AUTH_LABEL[m.auth.type]}</td><td>${m.tools.length}</td><td>${stateCell(m, s)}</td><td>${actions}</td></tr>`;
}

/** Connect: a new link (the same flow the agent's connect tool starts), and its page. */
async function startConnect(
  ctx: PortalContext,
  request: FastifyRequest<Name>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { connections } = ctx.deps;
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const m = find(ctx, who, request.params.name);
  if (!m || m.auth.type === 'none')
    return ctx.sendError(
      reply,
      404,
      'Unknown integration',
      `There is no integration "${request.params.name}" to connect.`,
      who,
    );
  const notConnectable = whyNotConnectable(m, connections.clientFor);
  if (notConnectable)
    return ctx.sendError(reply, 409, 'Not available', `${m.displayName} cannot be connected: ${notConnectable}.`, who);
  // The same per-user link limit as the agent's connect tool (one count for both).
  const made = await connections.pending.createLimited(who.user.id, m.name, m.auth.type);
  if (!made.ok) {
    const minutes = Math.ceil(made.retryAfterSec / 60);
    const at = new Date(made.retryAt).toISOString().slice(11, 16);
    void reply.header('retry-after', String(made.retryAfterSec));
    return ctx.sendError(
      reply,
      429,
      'Too many connect links',
      `You (or your agents) started ${made.limit} connections in the last ${made.windowMs / 60_000} minutes, the most allowed. ` +
        `Try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'} (after ${at} UTC), or finish a link you already have.`,
      who,
    );
  }
  return reply.code(303).header('location', `/connect/${made.pending.id}`).send();
}

async function disconnect(
  ctx: PortalContext,
  request: FastifyRequest<Name>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const m = find(ctx, who, request.params.name);
  if (!m)
    return ctx.sendError(reply, 404, 'Unknown integration', `There is no integration "${request.params.name}".`, who);
  const { removed, revocation } = await ctx.deps.connections.disconnect(who.user.id, m);
  await ctx.putFlash(request, who, 'integrations', { kind: 'disconnected', integration: m.name, removed, revocation });
  return reply.code(303).header('location', '/integrations').send();
}
