/**
 * @module host/portal/auth-routes
 * Signing in and out: with an API key, or with a one-time login link (shown as a confirmation
 * button, so fetching the link does not use it). Sign-in forms carry a pre-login CSRF token bound
 * to a cookie (no login CSRF); a new session id is issued at every sign-in (no fixation). A session
 * signed in with a key remembers it and ends when the key is revoked.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../storage/users.js';
import { cookieCount, onlyCookie } from './cookies.js';
import type { PortalContext } from './context.js';
import { html } from './html.js';
import { consumeLoginLink, peekLoginLink, sweepLoginLinks } from './login-links.js';
import { randomId } from './sessions.js';

const PRELOGIN = 'wb_prelogin';

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
  return loginPage(ctx, reply, 200, next, undefined, doubled(ctx, request));
}

async function signInWithKey(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!preloginOk(ctx, request, reply)) return reply;
  const form = ctx.body(request);
  const next = ctx.safeNext(form['next']);
  const key = (form['apiKey'] ?? '').trim();
  const found = key ? await ctx.deps.users.authenticateKey(key) : undefined;
  if (!found)
    return loginPage(
      ctx,
      reply,
      401,
      next,
      key ? 'That API key is not valid: it is unknown or was revoked.' : 'Enter your API key.',
    );
  return signIn(ctx, reply, found.user, found.keyId, next);
}

/** A login link's page asks before it signs in: fetching the link (a preview, a scanner) does not use it. */
async function confirmLoginLink(
  ctx: PortalContext,
  request: FastifyRequest<Token>,
  reply: FastifyReply,
): Promise<FastifyReply> {
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
  return signIn(ctx, reply, user, null, '/integrations');
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
  return reply.code(303).header('location', '/login').send();
}

async function signOutOthers(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  await ctx.sessions.revokeAll(who.user.id, who.session.idHash);
  await ctx.putFlash(request, who, 'keys', { kind: 'others-signed-out' });
  return reply.code(303).header('location', '/keys').send();
}

function preloginToken(ctx: PortalContext, reply: FastifyReply): string {
  const token = randomId();
  ctx.setCookie(reply, PRELOGIN, token, { maxAgeSec: 1800, sameSite: 'Strict' });
  return token;
}

function preloginOk(ctx: PortalContext, req: FastifyRequest, reply: FastifyReply): boolean {
  const expected = onlyCookie(req.headers.cookie, PRELOGIN);
  // checkPost compares the form's _csrf with the cookie's token and refuses foreign origins.
  return ctx.checkPost(req, reply, expected);
}

/** `keyId`: the API key that signed in (the session ends when it is revoked), null for a login link. */
async function signIn(
  ctx: PortalContext,
  reply: FastifyReply,
  user: User,
  keyId: string | null,
  next: string,
): Promise<FastifyReply> {
  const { id } = await ctx.sessions.create(user.id, keyId);
  // Housekeeping rides on sign-ins (rare, and on whichever replica): old sessions, links and pending connects.
  void Promise.all([
    ctx.sessions.sweep(),
    ctx.flashes.sweep(),
    sweepLoginLinks(ctx.deps.db),
    ctx.deps.connections.pending.sweep(),
  ]).catch((err: unknown) => ctx.deps.logger?.warn({ error: (err as Error).message }, 'portal sweep failed'));
  ctx.setCookie(reply, ctx.cookieName, id, { maxAgeSec: ctx.sessions.ttlMs / 1000, httpOnly: true, sameSite: 'Lax' });
  ctx.setCookie(reply, PRELOGIN, '', { maxAgeSec: 0, sameSite: 'Strict' });
  return reply.code(303).header('location', next).send();
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

function loginPage(
  ctx: PortalContext,
  reply: FastifyReply,
  status: number,
  next: string,
  error?: string,
  twice = false,
): FastifyReply {
  const csrf = preloginToken(ctx, reply);
  return ctx.sendPage(reply, status, {
    title: 'Sign in',
    body: html`${twice ? html`<p class="error" role="alert">Your browser sent more than one Workbench sign-in cookie, which another site under the same domain can cause, so you are signed out. Clear this site's cookies in your browser, then sign in.</p>` : ''}${error ? html`<p class="error" role="alert" id="key-error">${error}</p>` : ''}
<form method="post" action="/login">
<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="next" value="${next}">
<label for="apiKey">Your Workbench API key</label>
<p class="hint" id="key-hint">The key your agent uses (starts with wb_). An operator can also send you a one-time sign-in link.</p>
<input id="apiKey" name="apiKey" type="password" autocomplete="current-password" required aria-describedby="key-hint${error ? ' key-error' : ''}"${error ? html` aria-invalid="true"` : ''}>
<p><button type="submit">Sign in</button></p></form>`,
  });
}
