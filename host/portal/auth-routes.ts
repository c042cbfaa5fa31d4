/**
 * @module host/portal/auth-routes
 * Signing in and out: with an API key, or with a one-time login link (shown as a confirmation
 * button, so fetching the link does not use it); single sign-on is in sso-routes.ts. Either of the
 * first two can be turned off by the policy (signIn.apiKey, signIn.loginLinks): its routes then
 * refuse with GW_ERR_PORTAL_SIGN_IN_DISABLED and the sign-in page does not offer it. Sign-in forms
 * carry a pre-login CSRF token bound to a cookie (no login CSRF); a new session id is issued at
 * every sign-in (no fixation). A session signed in with a key remembers it and ends when the key
 * is revoked.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cookieCount } from './cookies.js';
import type { PortalContext } from './context.js';
import { html } from './html.js';
import { sendLoginPage } from './login-page.js';
import { consumeLoginLink, peekLoginLink } from './login-links.js';
import { PRELOGIN, preloginOk, preloginToken, sendSignInRefusal, startSession } from './sign-in.js';

type Next = { Querystring: { next?: string } };
type Token = { Params: { token: string } };

export function registerAuthRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  scope.get<Next>('/login', async (request, reply) => showLogin(ctx, request, reply));
  scope.post<Next>('/login', async (request, reply) => signInWithKey(ctx, request, reply));
  scope.get<Token>('/login/link/:token', async (request, reply) => confirmLoginLink(ctx, request, reply));
  scope.post<Token>('/login/link/:token', async (request, reply) => signInWithLink(ctx, request, reply));

  // Signing out is a form post (a GET must not end a session: a link or a prefetch could); typing
  // the address shows the form.
  scope.get('/logout', async (request, reply) => confirmLogout(ctx, request, reply));
  scope.post('/logout', async (request, reply) => signOut(ctx, request, reply));

  // a form post on /keys; the address typed or followed leads to that page
  scope.get('/sessions/revoke-others', async (_request, reply) => reply.code(303).header('location', '/keys').send());
  scope.post('/sessions/revoke-others', async (request, reply) => signOutOthers(ctx, request, reply));

  scope.get('/', async (request, reply) =>
    reply
      .code(303)
      .header('location', (await ctx.signedIn(request)) ? '/integrations' : '/login')
      .send(),
  );
}

async function showLogin(
  ctx: PortalContext,
  request: FastifyRequest<Next>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const next = ctx.safeNext(request.query.next);
  if (await ctx.signedIn(request)) return reply.code(303).header('location', next).send();
  return sendLoginPage(ctx, reply, { status: 200, next, twice: doubled(ctx, request) });
}

/** The refusal of a sign-in method the policy turned off. */
function disabled(ctx: PortalContext, reply: FastifyReply, what: 'apiKey' | 'loginLinks'): FastifyReply {
  return sendSignInRefusal(ctx, reply, {
    status: 403,
    title: 'This way of signing in is turned off',
    reason:
      what === 'apiKey'
        ? 'Signing in with an API key is turned off on this server. Use the other ways the sign-in page offers.'
        : 'Signing in with one-time links is turned off on this server. Use the ways the sign-in page offers.',
    code: 'GW_ERR_PORTAL_SIGN_IN_DISABLED',
  });
}

async function signInWithKey(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!ctx.methods.apiKey) return disabled(ctx, reply, 'apiKey');
  if (!preloginOk(ctx, request, reply)) return reply;
  const form = ctx.body(request);
  const next = ctx.safeNext(form['next']);
  const key = (form['apiKey'] ?? '').trim();
  const found = key ? await ctx.deps.users.authenticateKey(key) : undefined;
  if (!found)
    return sendLoginPage(ctx, reply, {
      status: 401,
      next,
      error: key ? 'That API key is not valid: it is unknown or was revoked.' : 'Enter your API key.',
    });
  return startSession(ctx, reply, found.user, { keyId: found.keyId, method: 'api-key' }, next);
}

/** A login link's page asks before it signs in: fetching the link (a preview, a scanner) does not use it. */
async function confirmLoginLink(
  ctx: PortalContext,
  request: FastifyRequest<Token>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (!ctx.methods.loginLinks) return disabled(ctx, reply, 'loginLinks');
  const userId = await peekLoginLink(ctx.deps.db, request.params.token, ctx.deps.connections.now());
  const user = userId ? await ctx.deps.users.byId(userId) : undefined;
  if (!user)
    return ctx.sendError(
      reply,
      410,
      'Sign-in link not valid',
      'This sign-in link is unknown, was already used or has expired. Ask for a new one (workbench login-link --email …).',
    );
  const csrf = preloginToken(ctx, reply);
  return ctx.sendPage(reply, 200, {
    title: 'Sign in',
    body: html`<p>Sign in to Workbench as <strong>${user.email}</strong>?</p>
<form method="post" action="/login/link/${request.params.token}"><input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Sign in as ${user.email}</button></form>`,
  });
}

async function signInWithLink(
  ctx: PortalContext,
  request: FastifyRequest<Token>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (!ctx.methods.loginLinks) return disabled(ctx, reply, 'loginLinks');
  if (!preloginOk(ctx, request, reply)) return reply;
  const userId = await consumeLoginLink(ctx.deps.db, request.params.token, ctx.deps.connections.now());
  const user = userId ? await ctx.deps.users.byId(userId) : undefined;
  if (!user)
    return ctx.sendError(
      reply,
      410,
      'Sign-in link not valid',
      'This sign-in link is unknown, was already used or has expired. Ask for a new one.',
    );
  return startSession(ctx, reply, user, { keyId: null, method: 'login-link' }, '/integrations');
}

async function confirmLogout(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const who = await ctx.signedIn(request);
  if (!who) return reply.code(303).header('location', '/login').send();
  return ctx.sendPage(reply, 200, {
    title: 'Sign out',
    who,
    body: html`<p>Sign out of Workbench (signed in as ${who.user.email})?</p>
<form method="post" action="/logout"><input type="hidden" name="_csrf" value="${who.session.csrf}"><button type="submit">Sign out</button></form>
<p><a href="/integrations">Back to integrations</a></p>`,
  });
}

async function signOut(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const who = await ctx.signedIn(request);
  if (!who) return reply.code(303).header('location', '/login').send();
  if (!ctx.checkPost(request, reply, who.session.csrf)) return reply;
  await ctx.sessions.revoke(who.session.idHash);
  ctx.setCookie(reply, ctx.cookieName, '', { maxAgeSec: 0 });
  // "Sign out and sign in as …" (a connect link of another account) comes back to the link
  const next = ctx.safeNext(ctx.body(request)['next'], '');
  return reply
    .code(303)
    .header('location', next ? `/login?next=${encodeURIComponent(next)}` : '/login')
    .send();
}

async function signOutOthers(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  await ctx.sessions.revokeAll(who.user.id, who.session.idHash);
  await ctx.putFlash(request, who, 'keys', { kind: 'others-signed-out' });
  return reply.code(303).header('location', '/keys').send();
}

/**
 * Whether the browser sends a cookie that says who it is more than once (onlyCookie then reads
 * none): signing in again cannot help while another site's copy stays, so the page says so.
 */
function doubled(ctx: PortalContext, req: FastifyRequest): boolean {
  const twice = [ctx.cookieName, PRELOGIN].filter((name) => cookieCount(req.headers.cookie, name) > 1);
  if (twice.length > 0)
    ctx.deps.logger?.warn(
      { cookies: twice },
      'portal: a request carried a session cookie more than once (one may have been set by another site of the same domain); treated as signed out',
    );
  return twice.length > 0;
}
