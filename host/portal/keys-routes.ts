/**
 * @module host/portal/keys-routes
 * API-key management: list the user's keys (prefix, label, dates), create one (shown exactly once,
 * on a no-store page; refused, with a 409 page saying why, past MAX_LIVE_API_KEYS active keys),
 * revoke one, and end the user's other portal sessions. The list shows every active key and the
 * REVOKED_KEYS_LISTED revoked last. Keys are stored only
 * as hashes, so a lost key is replaced, never revealed. Revoking a key also ends the portal sessions
 * signed in with it (see sessions.ts), this one included.
 */
import type { FastifyInstance } from 'fastify';
import { isApiKeyLimitError } from '../storage/users.js';
import type { PortalContext, SignedIn } from './context.js';
import { html, type SafeHtml } from './html.js';

/** revoked keys the page lists (the latest revoked): revoked keys stay stored, and a page listing every one grew without bound */
export const REVOKED_KEYS_LISTED = 20;

const when = (ms: number | null): string => (ms === null ? '—' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC');

export function registerKeyRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  const users = ctx.deps.users;

  /** `top` as a function is called once the page's data is loaded (a one-time notice is taken last, so a failed read loses none). */
  async function keysPage(who: SignedIn, status: number, top: SafeHtml | string | (() => Promise<SafeHtml | string>), labelError?: string) {
    const all = await users.listApiKeys(who.user.id);
    // the latest revoked; among keys revoked in the same millisecond, the latest created (the list comes in creation order)
    const revoked = all.flatMap((k, i) => (k.revokedAt === null ? [] : [{ k, at: k.revokedAt, i }]));
    const listedRevoked = new Set(revoked.sort((a, b) => b.at - a.at || b.i - a.i).slice(0, REVOKED_KEYS_LISTED).map((r) => r.k));
    const keys = all.filter((k) => k.revokedAt === null || listedRevoked.has(k));
    const unlisted = all.length - keys.length;
    const csrf = who.session.csrf;
    const sessions = await ctx.sessions.countActive(who.user.id);
    const above = typeof top === 'function' ? await top() : top;
    return html`${above}
<section aria-labelledby="create-h"><h2 id="create-h">Create a key</h2>
<form method="post" action="/keys"><input type="hidden" name="_csrf" value="${csrf}">
<label for="k-label">Label</label><p class="hint" id="k-label-hint">Where the key will be used, e.g. "laptop agent". Up to 60 characters.</p>
<input id="k-label" name="label" maxlength="60" aria-describedby="k-label-hint${labelError ? ' k-label-error' : ''}"${labelError ? html` aria-invalid="true"` : ''}>
${labelError ? html`<p class="error" id="k-label-error">${labelError}</p>` : ''}
<p><button type="submit">Create key</button></p></form></section>
<section aria-labelledby="list-h"><h2 id="list-h">Your keys</h2>
${keys.length === 0
  ? html`<p>You have no keys.</p>`
  : html`<table><thead><tr><th scope="col">Key</th><th scope="col">Label</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col">Action</th></tr></thead><tbody>
${keys.map(
  (k) => html`<tr><td><code>${k.prefix}…</code></td><td>${k.label}${k.id === who.session.keyId && k.revokedAt === null ? html` <span class="hint">(you signed in with this key: revoking it signs you out)</span>` : ''}</td><td>${when(k.createdAt)}</td><td>${when(k.lastUsedAt)}</td>
<td>${k.revokedAt === null ? 'Active' : html`Revoked ${when(k.revokedAt)}`}</td>
<td>${k.revokedAt === null
    ? html`<form method="post" action="/keys/${k.id}/revoke" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" aria-label="Revoke key ${k.prefix}">Revoke</button></form>`
    : ''}</td></tr>`,
)}</tbody></table>`}
${unlisted > 0 ? html`<p class="hint">${unlisted} older revoked ${unlisted === 1 ? 'key is' : 'keys are'} not listed (only the ${REVOKED_KEYS_LISTED} revoked last are).</p>` : ''}</section>
<section aria-labelledby="sess-h"><h2 id="sess-h">Sign-in sessions</h2><p>You are signed in to the portal in ${sessions} ${sessions === 1 ? 'place' : 'places'}.</p>
<form method="post" action="/sessions/revoke-others"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">Sign out everywhere else</button></form></section>`;
  }

  scope.get('/keys', async (request, reply) => {
    const who = await ctx.requireUser(request, reply);
    if (!who) return reply;
    const notices = async (): Promise<SafeHtml> => {
      const flashes = await ctx.takeFlash(request, who, 'keys');
      const created = flashes.flatMap((f) => (f.kind === 'key-created' ? [f] : []));
      const shown = created.map(
        (f, i) => html`<div class="notice" role="status"><h2>Your new key</h2>
<p>Copy it now: it is shown only this once and cannot be recovered.</p>
<p><label for="new-key${i ? `-${i}` : ''}">Key ${f.label ? `"${f.label}"` : ''}</label><input id="new-key${i ? `-${i}` : ''}" class="secret" readonly value="${f.key}"></p></div>`,
      );
      // from this session's own posts (flash.ts), not from the URL
      const note = flashes.map((f) =>
        f.kind === 'key-revoked'
          ? html`<p class="notice" role="status">The key was revoked. Agents using it are refused from now on, and portal sessions signed in with it are signed out.</p>`
          : f.kind === 'others-signed-out'
            ? html`<p class="notice" role="status">Your other sessions were signed out.</p>`
            : '',
      );
      return html`${shown}${note}`;
    };
    return ctx.sendPage(reply, 200, { title: 'API keys', active: 'keys', who, body: await keysPage(who, 200, notices) });
  });

  scope.post('/keys', async (request, reply) => {
    const who = await ctx.requireUser(request, reply);
    if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
    const label = (ctx.body(request)['label'] ?? '').trim();
    if (label.length > 60 || /[\u0000-\u001f\u007f]/.test(label))
      return ctx.sendPage(reply, 400, { title: 'API keys', active: 'keys', who, body: await keysPage(who, 400, '', 'The label must be at most 60 characters, without line breaks.') });
    let made: Awaited<ReturnType<typeof users.createApiKey>>;
    try {
      made = await users.createApiKey(who.user.id, label);
    } catch (err) {
      if (!isApiKeyLimitError(err)) throw err;
      const refused = html`<p class="error" role="alert" id="keys-limit">You already have ${err.limit} active API keys, the most an account may have. Revoke a key you no longer use (in the list below), then create the new one.</p>`;
      return ctx.sendPage(reply, 409, { title: 'API keys', active: 'keys', who, body: await keysPage(who, 409, refused) });
    }
    const { key, info } = made;
    // Post, redirect, get: reloading the page that shows the key must not post again (and make a
    // second key). The key waits for that GET in this session only, sealed, and never in the URL.
    try {
      await ctx.putFlash(request, who, 'keys', { kind: 'key-created', key, label: info.label });
    } catch (err) {
      // a key that can never be shown must not stay live: revoke it, and answer the failure
      await users.revokeApiKey(who.user.id, info.id).catch(() => undefined);
      throw err;
    }
    return reply.code(303).header('location', '/keys').send();
  });

  // Revoke is a form post on /keys; its address, typed or followed, leads there.
  scope.get('/keys/:id/revoke', async (_request, reply) => reply.code(303).header('location', '/keys').send());

  scope.post<{ Params: { id: string } }>('/keys/:id/revoke', async (request, reply) => {
    const who = await ctx.requireUser(request, reply);
    if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
    const ok = await users.revokeApiKey(who.user.id, request.params.id);
    if (!ok) return ctx.sendError(reply, 404, 'Key not found', 'There is no active key with that id in your account.', who);
    await ctx.putFlash(request, who, 'keys', { kind: 'key-revoked' });
    return reply.code(303).header('location', '/keys').send();
  });
}
