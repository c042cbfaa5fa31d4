/**
 * @module host/portal/consent-routes
 * /authorize, the authorization endpoint of the gateway's OAuth server (host/oauth-server), as a
 * portal page: a person signed in (else /login?next=back here) is asked whether an app may act as
 * them on /mcp. The page names the app (its name, which for a registered app is its own claim, and
 * its client_id, whose host for a client_id URL is where its details are published), the exact
 * redirect URI the answer goes to, and what the app gets. Allow and Deny are one form post with
 * the session's CSRF token; the post checks the whole request again (the form's fields are the
 * person's browser's, not ours) and answers with a redirect to that URI: a new code and the state,
 * or error=access_denied. The page's CSP lets its form lead to that URI's origin and no other.
 *
 * Before the client and its redirect URI are known good, a problem is an error page and nothing is
 * sent anywhere; after, it goes back to the redirect URI as the RFC error (host/oauth-server/authorize.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AUTHORIZATION_PARAMS,
  displayName,
  type AuthorizationCheck,
  type AuthorizationRequest,
  type OAuthServer,
} from '../oauth-server/server.js';
import type { PortalContext, SignedIn } from './context.js';
import { html } from './html.js';
import { renderPage } from './layout.js';
import { securityHeaders } from './security-headers.js';

type Query = { Querystring: Record<string, unknown> };

export function registerConsentRoutes(scope: FastifyInstance, ctx: PortalContext, oauth: OAuthServer): void {
  scope.get<Query>('/authorize', async (request, reply) => showConsent(ctx, oauth, request, reply));
  scope.post('/authorize', async (request, reply) => decide(ctx, oauth, request, reply));
}

async function showConsent(
  ctx: PortalContext,
  oauth: OAuthServer,
  request: FastifyRequest<Query>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who) return reply;
  const check = await oauth.checkAuthorization(request.query, request.ip);
  if (check.kind !== 'valid') return answerRefusal(ctx, reply, check, who);
  return consentPage(ctx, oauth, reply, who, check.request);
}

async function decide(
  ctx: PortalContext,
  oauth: OAuthServer,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const form = rawForm(request);
  const who = await ctx.signedIn(request);
  // signed out meanwhile (the session ended): sign in, then see the same question again
  if (!who)
    return reply
      .code(303)
      .header('location', `/login?next=${encodeURIComponent(askAgain(form))}`)
      .send();
  if (!ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const check = await oauth.checkAuthorization(form, request.ip);
  if (check.kind !== 'valid') return answerRefusal(ctx, reply, check, who);
  const decision = form['decision'];
  if (decision !== 'allow' && decision !== 'deny')
    return ctx.sendError(reply, 400, 'Bad request', 'Choose Allow or Deny on the page.', who);
  const location =
    decision === 'allow'
      ? await oauth.approve(check.request, who.user.id, who.session.keyId)
      : oauth.deny(check.request);
  request.log.info(
    { userId: who.user.id, clientId: check.request.client.clientId, decision },
    'oauth: authorization answered',
  );
  return reply.code(303).header('location', location).send();
}

/** The form's fields as posted (a field sent twice stays an array, which the check refuses). */
function rawForm(request: FastifyRequest): Record<string, unknown> {
  const b = request.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

/** GET /authorize with the form's authorization parameters: where a person signed out meanwhile comes back to. */
function askAgain(form: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const name of AUTHORIZATION_PARAMS) {
    const v = form[name];
    if (typeof v === 'string') q.set(name, v);
  }
  return `/authorize?${q.toString()}`;
}

function answerRefusal(
  ctx: PortalContext,
  reply: FastifyReply,
  check: Exclude<AuthorizationCheck, { kind: 'valid' }>,
  who: SignedIn,
): FastifyReply {
  if (check.kind === 'redirect') return reply.code(303).header('location', check.location).send();
  // the person sees why; the operator finds it in the log by its code
  reply.log.info(
    { code: 'GW_ERR_OAUTH_AUTHORIZE_REFUSED', userId: who.user.id, reason: check.message },
    'oauth: authorization request refused',
  );
  if (check.retryAfterSec !== undefined) void reply.header('retry-after', String(check.retryAfterSec));
  return ctx.sendError(reply, check.status, 'This app cannot be authorized', check.message, who);
}

const minutes = (sec: number): string => (sec % 3600 === 0 ? `${sec / 3600} h` : `${Math.round(sec / 60)} min`);

function consentPage(
  ctx: PortalContext,
  oauth: OAuthServer,
  reply: FastifyReply,
  who: SignedIn,
  r: AuthorizationRequest,
): FastifyReply {
  const { client } = r;
  const name = displayName(client.clientId, client.metadata.client_name);
  const redirect = new URL(r.redirectUri);
  const local = redirect.protocol === 'http:';
  const lifetimes = oauth.lifetimes;
  // the request as checked, carried by the form and checked again when it comes back
  const fields: Record<(typeof AUTHORIZATION_PARAMS)[number], string | undefined> = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: r.redirectUri,
    code_challenge: r.codeChallenge,
    code_challenge_method: 'S256',
    state: r.state,
    resource: r.resource,
    scope: r.scope,
  };
  const hidden = Object.entries(fields).map(([k, v]) =>
    v === undefined ? '' : html`<input type="hidden" name="${k}" value="${v}">`,
  );
  const body = html`<p id="consent-lead"><strong>${name}</strong> asks to use Workbench as you (${who.user.email}).</p>
<dl class="consent">
<dt>App</dt><dd><strong>${name}</strong>, client_id <code>${client.clientId}</code><br><span class="hint">${
    client.kind === 'cimd'
      ? html`Its details are published by <strong>${new URL(client.clientId).host}</strong>.`
      : 'It registered itself with this server: its name is its own claim, not checked by anyone.'
  }</span></dd>
<dt>Your answer goes to</dt><dd><code id="consent-redirect">${r.redirectUri}</code>${local ? html`<br><span class="hint">An app on this computer (a loopback address).</span>` : ''}</dd>
<dt>What it gets</dt><dd>It may act as you on this server's MCP endpoint (<code>${r.resource}</code>): every tool you can use, with the accounts you connected, until you revoke it on the <a href="/keys">API keys</a> page. Its access tokens last ${minutes(lifetimes.accessSec)}; it renews them for up to ${Math.round(lifetimes.refreshSec / 86_400)} days after its last use.</dd>
</dl>
<p>Allow only an app you set up yourself. If you did not just ask to add Workbench to an app, choose Deny.</p>
<form method="post" action="/authorize"><input type="hidden" name="_csrf" value="${who.session.csrf}">${hidden}
<button type="submit" name="decision" value="allow">Allow</button> <button type="submit" name="decision" value="deny">Deny</button></form>`;
  const page = renderPage({ title: `Allow ${name}?`, body, user: who.user, csrf: who.session.csrf });
  return reply
    .code(200)
    .headers(securityHeaders(ctx.secure, [redirect.origin]))
    .type('text/html; charset=utf-8')
    .send(page);
}
