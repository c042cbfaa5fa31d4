/**
 * @module host/portal/login-page
 * The sign-in page: the methods the policy turns on (single sign-on first, then the API-key form,
 * then a word about one-time links), each bringing the person back to `next`. When `next` is a
 * connect link, the page first says what is being connected and for whom (the link owner's email,
 * masked: whoever holds the link sees whose it is without learning the address).
 */
import type { FastifyReply } from 'fastify';
import type { PortalContext } from './context.js';
import { html, type SafeHtml } from './html.js';
import { preloginToken } from './sign-in.js';

/** "ada@example.com" → "a***@example.com": enough to recognise one's own address, not to learn another's. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email.slice(0, 1)}***${email.slice(at)}`;
}

const CONNECT_PATH = /^\/connect\/([A-Za-z0-9_-]{1,64})(?:\/form)?$/;

/** What a connect link in `next` is about, while it can still be used: the integration and whose it is. */
export async function connectContextOf(
  ctx: PortalContext,
  next: string,
): Promise<{ integration: string; owner: string } | undefined> {
  const id = CONNECT_PATH.exec(next)?.[1];
  if (!id) return undefined;
  const p = await ctx.deps.connections.pending.get(id);
  if (!p || p.status !== 'pending') return undefined;
  const owner = await ctx.deps.users.byId(p.userId);
  if (!owner) return undefined;
  const integration = ctx.deps.registry.plugin(p.integration)?.displayName ?? p.integration;
  return { integration, owner: maskEmail(owner.email) };
}

export async function sendLoginPage(
  ctx: PortalContext,
  reply: FastifyReply,
  o: { status: number; next: string; error?: string; twice?: boolean },
): Promise<FastifyReply> {
  const { apiKey, loginLinks, sso } = ctx.methods;
  const connecting = await connectContextOf(ctx, o.next);
  const intro = connecting
    ? html`<p class="notice" role="status">Sign in to connect <strong>${connecting.integration}</strong> for <strong>${connecting.owner}</strong>. Once you are signed in, you come straight back to finish connecting.</p>`
    : '';
  const twice = o.twice
    ? html`<p class="error" role="alert">Your browser sent more than one Workbench sign-in cookie, which another site under the same domain can cause, so you are signed out. Clear this site's cookies in your browser, then sign in.</p>`
    : '';
  const error = o.error ? html`<p class="error" role="alert" id="key-error">${o.error}</p>` : '';
  const ssoPart = sso
    ? html`<p><a class="button" href="/login/sso?next=${encodeURIComponent(o.next)}">Sign in with ${sso.client.displayName}</a></p>`
    : '';
  const keyPart = apiKey ? keyForm(preloginToken(ctx, reply), o.next, o.error, loginLinks, sso !== undefined) : '';
  const linkPart =
    loginLinks && !apiKey ? html`<p class="hint">An operator can also send you a one-time sign-in link.</p>` : '';
  const none =
    !sso && !apiKey && !loginLinks
      ? html`<p class="error" role="alert">No way of signing in is turned on on this server. Ask its operator.</p>`
      : '';
  return ctx.sendPage(reply, o.status, {
    title: connecting ? `Sign in to connect ${connecting.integration}` : 'Sign in',
    body: html`${intro}${twice}${error}${ssoPart}${keyPart}${linkPart}${none}`,
  });
}

function keyForm(csrf: string, next: string, error: string | undefined, links: boolean, afterSso: boolean): SafeHtml {
  const hint = `The key your agent uses (starts with wb_).${links ? ' An operator can also send you a one-time sign-in link.' : ''}`;
  return html`${afterSso ? html`<p class="hint">Or sign in with an API key:</p>` : ''}
<form method="post" action="/login">
<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="next" value="${next}">
<label for="apiKey">Your Workbench API key</label>
<p class="hint" id="key-hint">${hint}</p>
<input id="apiKey" name="apiKey" type="password" autocomplete="current-password" required aria-describedby="key-hint${error ? ' key-error' : ''}"${error ? html` aria-invalid="true"` : ''}>
<p><button type="submit">Sign in</button></p></form>`;
}
