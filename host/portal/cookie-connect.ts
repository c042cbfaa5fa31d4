/**
 * @module host/portal/cookie-connect
 * The human side of connecting a cookie integration (auth type `cookie`). The link's page names
 * the provider's sign-in page; "Sign in" opens it in a live browser session in the user's own
 * browser context and takes the person to its live view, where they sign in; "I'm signed in"
 * captures the cookies of the integration's domains (connections.captureCookies) and settles the
 * link connected. A capture that finds no signed-in session leaves the link open for another
 * try; a live browser or a store that fails settles it failed with the reason.
 *
 * The live browser is the browser built-in's: it fills the seam `CookieSignInBrowser`
 * (cookie-browser.ts, given as PortalDeps.cookieBrowser). Without it the page says a live browser is needed here, and that
 * an operator can move a signed-in session in with `workbench connections import --cookies`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CookieAuth, PluginManifest } from '../../contracts/manifest.js';
import { isConnectionError } from '../connections/errors.js';
import type { PendingConnect } from '../connections/pending.js';
import type { PortalContext, SignedIn } from './context.js';
import { html, type SafeHtml } from './html.js';

type Id = { Params: { id: string } };
type CookieManifest = PluginManifest & { auth: CookieAuth };

export function registerCookieConnectRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  scope.post<Id>('/connect/:id/sign-in', async (request, reply) => openSignIn(ctx, request, reply));
  scope.post<Id>('/connect/:id/capture', async (request, reply) => capture(ctx, request, reply));
  // posted to only; the addresses, typed or reloaded, lead back to the link's page
  for (const step of ['sign-in', 'capture'])
    scope.get<Id>(`/connect/:id/${step}`, async (request, reply) =>
      reply
        .code(303)
        .header('location', `/connect/${encodeURIComponent(request.params.id)}`)
        .send(),
    );
}

/** The page of an open cookie link: the first step (pending), or the capture step (opened). */
export function showCookieLink(
  ctx: PortalContext,
  reply: FastifyReply,
  who: SignedIn,
  m: CookieManifest,
  p: PendingConnect,
): FastifyReply {
  const title = `Connect ${m.displayName}`;
  const live = ctx.deps.cookieBrowser !== undefined;
  if (p.status === 'opened') return ctx.sendPage(reply, 200, { title, body: captureBody(m, p, who.session.csrf), who });
  return ctx.sendPage(reply, 200, { title, body: startBody(m, p, who.session.csrf, live), who });
}

/** A POST on a cookie link: its signed-in owner, a cookie integration they may use, the link still open. */
async function cookiePost(
  ctx: PortalContext,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
): Promise<{ who: SignedIn; m: CookieManifest; p: PendingConnect } | FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const p = await ctx.deps.connections.pending.get(request.params.id);
  const m = p ? ctx.deps.registry.plugin(p.integration) : undefined;
  if (!p || p.userId !== who.user.id || !m || m.auth.type !== 'cookie' || !ctx.mayUse(who.user, m.name))
    return ctx.sendError(reply, 404, 'Link not found', 'This sign-in link is unknown: start again.', who);
  if (p.status !== 'pending' && p.status !== 'opened')
    return reply.code(303).header('location', `/connect/${p.id}`).send();
  return { who, m: m as CookieManifest, p };
}

/** "Sign in": uses the link (once), opens the sign-in page in the live browser and goes to its live view. */
async function openSignIn(ctx: PortalContext, request: FastifyRequest<Id>, reply: FastifyReply): Promise<FastifyReply> {
  const post = await cookiePost(ctx, request, reply);
  if (!('who' in post)) return post;
  const { who, m, p } = post;
  const browser = ctx.deps.cookieBrowser;
  if (!browser) return ctx.sendError(reply, 409, 'No live browser', NO_BROWSER_TEXT, who);
  const { connections } = ctx.deps;
  if (p.status === 'pending') {
    const opened = await connections.pending.open(p.id, who.user.id);
    if (!opened.ok) return reply.code(303).header('location', `/connect/${p.id}`).send();
  }
  const url = connections.http.mapUrl?.(m.auth.loginUrl) ?? m.auth.loginUrl;
  let liveViewPath: string;
  try {
    ({ liveViewPath } = await browser.openSignIn({ userId: who.user.id, linkId: p.id, integration: m.name, url }));
  } catch (err) {
    const reason = `the live browser could not open ${m.displayName}'s sign-in page: ${(err as Error).message.slice(0, 200)}`;
    ctx.deps.logger?.warn({ pendingId: p.id, integration: m.name, error: reason }, 'cookie sign-in failed to open');
    await connections.pending.settle(p.id, 'failed', reason);
    return reply.code(303).header('location', `/connect/${p.id}`).send();
  }
  return reply
    .code(303)
    .header('location', ctx.safeNext(liveViewPath, `/connect/${p.id}`))
    .send();
}

/** "I'm signed in": the cookies of the live browser's context become the connection. */
async function capture(ctx: PortalContext, request: FastifyRequest<Id>, reply: FastifyReply): Promise<FastifyReply> {
  const post = await cookiePost(ctx, request, reply);
  if (!('who' in post)) return post;
  const { who, m, p } = post;
  const browser = ctx.deps.cookieBrowser;
  if (!browser || p.status !== 'opened') return reply.code(303).header('location', `/connect/${p.id}`).send();
  const { connections } = ctx.deps;
  const link = { userId: who.user.id, linkId: p.id };
  try {
    await connections.captureCookies(who.user.id, m, await browser.readCookies(link));
  } catch (err) {
    if (isConnectionError(err))
      // not signed in yet (or nothing usable): the link stays open for another try
      return ctx.sendPage(reply, 400, {
        title: `Connect ${m.displayName}`,
        body: captureBody(m, p, who.session.csrf, err.message),
        who,
      });
    ctx.deps.logger?.warn(
      { pendingId: p.id, integration: m.name, error: (err as Error).message },
      'cookie capture failed',
    );
    await connections.pending.settle(p.id, 'failed', CAPTURE_FAILED_REASON);
    return reply.code(303).header('location', `/connect/${p.id}`).send();
  }
  await connections.pending.settle(p.id, 'connected', null);
  await browser.closeSignIn(link).catch((err: unknown) => {
    // the connection is stored: a live session that fails to close is only logged
    ctx.deps.logger?.warn({ pendingId: p.id, error: (err as Error).message }, 'closing the live sign-in failed');
  });
  return reply.code(303).header('location', `/connect/${p.id}`).send();
}

/** The reason a link fails with when the cookies could not be read or stored. */
export const CAPTURE_FAILED_REASON =
  'the signed-in session could not be read from the live browser or stored on the server; try again with a new link';

const NO_BROWSER_TEXT =
  'This Workbench server has no live browser to sign in with yet. An operator can move a signed-in session in with `workbench connections import --cookies`.';

function startBody(m: CookieManifest, p: PendingConnect, csrf: string, live: boolean): SafeHtml {
  const intro = html`<p>Connect your <strong>${m.displayName}</strong> account by signing in to it: the session you sign in to becomes the connection. Only the cookies of ${m.auth.domains.join(', ')} are kept, encrypted, and plugins never see them.</p>
<p>Sign-in page: <code>${m.auth.loginUrl}</code></p>
${m.auth.instructions ? html`<p class="hint">${m.auth.instructions}</p>` : ''}`;
  if (!live) return html`${intro}<p class="warn" role="status">${NO_BROWSER_TEXT}</p>`;
  return html`${intro}<p>The sign-in page opens in a live browser on this server, which you watch and drive from here. Once you are signed in, press "I'm signed in".</p>
<form method="post" action="/connect/${p.id}/sign-in"><input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Sign in to ${m.displayName}</button></form>`;
}

function captureBody(m: CookieManifest, p: PendingConnect, csrf: string, problem?: string): SafeHtml {
  return html`${problem ? html`<div class="error" role="alert"><p>${problem}</p></div>` : ''}
<p>Sign in to <strong>${m.displayName}</strong> in the live browser, then press "I'm signed in".</p>
<form method="post" action="/connect/${p.id}/sign-in" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Open the live browser</button></form>
<form method="post" action="/connect/${p.id}/capture" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">I'm signed in</button></form>`;
}
