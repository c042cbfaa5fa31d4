/**
 * @module host/portal/sign-in
 * What every way of signing in shares: the pre-login CSRF token (a cookie bound to the sign-in
 * form, so no site can sign a browser in to an account of its choosing), the start of a session
 * (a new id at every sign-in: no fixation; the method recorded), and the page of a refused sign-in
 * (what happened, what to do, and the catalogue code to quote to the operator).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../contracts/errors.js';
import type { User } from '../storage/users.js';
import { onlyCookie } from './cookies.js';
import type { PortalContext } from './context.js';
import { html } from './html.js';
import { sweepLoginLinks } from './login-links.js';
import { randomId, type SignInMethod } from './sessions.js';

export const PRELOGIN = 'wb_prelogin';

/** A new pre-login CSRF token for a sign-in form, set as its cookie. */
export function preloginToken(ctx: PortalContext, reply: FastifyReply): string {
  const token = randomId();
  ctx.setCookie(reply, PRELOGIN, token, { maxAgeSec: 1800, sameSite: 'Strict' });
  return token;
}

/** Whether a sign-in form post carries the token of its cookie (and no foreign Origin); answers 403 otherwise. */
export function preloginOk(ctx: PortalContext, req: FastifyRequest, reply: FastifyReply): boolean {
  const expected = onlyCookie(req.headers.cookie, PRELOGIN);
  // checkPost compares the form's _csrf with the cookie's token and refuses foreign origins.
  return ctx.checkPost(req, reply, expected);
}

/**
 * Signs `user` in: a new session (`keyId`: the API key that signed in, which the session ends
 * with; null for a link or single sign-on), its cookie, and a redirect to `next`.
 */
export async function startSession(
  ctx: PortalContext,
  reply: FastifyReply,
  user: User,
  how: { keyId: string | null; method: SignInMethod },
  next: string,
): Promise<FastifyReply> {
  const { id } = await ctx.sessions.create(user.id, how.keyId, how.method);
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

/** The page of a sign-in that was refused: why, a way back to the sign-in page, and the code. */
export function sendSignInRefusal(
  ctx: PortalContext,
  reply: FastifyReply,
  r: { status: number; title: string; reason: string; code: ErrorCode; next?: string },
): FastifyReply {
  const back = r.next && r.next !== '/integrations' ? `/login?next=${encodeURIComponent(r.next)}` : '/login';
  return ctx.sendPage(reply, r.status, {
    title: r.title,
    body: html`<p class="error" role="alert">${r.reason}</p>
<p><a href="${back}">Back to sign-in</a></p>
<p class="hint">Error code: <code>${r.code}</code> (tell your operator if you need help).</p>`,
  });
}
