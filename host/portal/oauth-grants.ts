/**
 * @module host/portal/oauth-grants
 * The apps a person allowed by OAuth (host/oauth-server grants), on the API keys page: each app's
 * name and client_id, where its answer went, when it was allowed and last used, and a Revoke
 * button. Revoking ends the grant in the database: the app's next request to /mcp is refused on
 * every replica (access tokens are looked up on each request), and its refresh token with it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GrantInfo, OAuthServer } from '../oauth-server/server.js';
import type { PortalContext, SignedIn } from './context.js';
import { html, type SafeHtml } from './html.js';

type Id = { Params: { id: string } };

const when = (ms: number | null): string =>
  ms === null ? '—' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

export function registerGrantRoutes(scope: FastifyInstance, ctx: PortalContext, oauth: OAuthServer): void {
  // a form post on /keys; the address, typed or followed, leads there
  scope.get('/keys/apps/:id/revoke', async (_request, reply) => reply.code(303).header('location', '/keys').send());
  scope.post<Id>('/keys/apps/:id/revoke', async (request, reply) => revokeGrant(ctx, oauth, request, reply));
}

async function revokeGrant(
  ctx: PortalContext,
  oauth: OAuthServer,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const grant = (await oauth.listGrants(who.user.id)).find((g) => g.id === request.params.id);
  if (!grant || !(await oauth.revokeGrant(who.user.id, grant.id)))
    return ctx.sendError(reply, 404, 'App not found', 'There is no app with access by that id in your account.', who);
  request.log.info(
    { userId: who.user.id, grantId: grant.id, clientId: grant.clientId },
    'oauth: grant revoked by its user',
  );
  await ctx.putFlash(request, who, 'keys', { kind: 'app-revoked', app: grant.clientName });
  return reply.code(303).header('location', '/keys').send();
}

/** The section of the keys page listing the apps with access (nothing when the gateway is not an authorization server). */
export async function grantsSection(oauth: OAuthServer | undefined, who: SignedIn): Promise<SafeHtml | string> {
  if (!oauth) return '';
  const grants = await oauth.listGrants(who.user.id);
  return html`<section aria-labelledby="apps-h"><h2 id="apps-h">Apps with access (OAuth)</h2>
<p class="hint">Apps you allowed to act as you on the MCP endpoint, without an API key. Revoking one ends its access at its next request.</p>
${
  grants.length === 0
    ? html`<p>No app has access.</p>`
    : html`<table><thead><tr><th scope="col">App</th><th scope="col">Answer sent to</th><th scope="col">Allowed</th><th scope="col">Last used</th><th scope="col">Action</th></tr></thead><tbody>
${grants.map((g) => grantRow(who, g))}</tbody></table>`
}</section>`;
}

function grantRow(who: SignedIn, g: GrantInfo): SafeHtml {
  return html`<tr><td><strong>${g.clientName}</strong><br><code class="hint">${g.clientId}</code></td><td><code>${g.redirectUri}</code></td><td>${when(g.createdAt)}</td><td>${when(g.lastUsedAt)}</td>
<td><form method="post" action="/keys/apps/${g.id}/revoke" class="inline"><input type="hidden" name="_csrf" value="${who.session.csrf}"><button type="submit" aria-label="Revoke access of ${g.clientName}">Revoke</button></form></td></tr>`;
}
