/**
 * @module host/portal/keys-routes
 * API-key management: list the user's keys (prefix, label, dates), create one (shown exactly once,
 * on a no-store page; refused, with a 409 page saying why, past MAX_LIVE_API_KEYS active keys),
 * revoke one, and end the user's other portal sessions. The list shows every active key and the
 * REVOKED_KEYS_LISTED revoked last, each with what created it. Keys are stored only
 * as hashes, so a lost key is replaced, never revealed. Revoking a key also ends the portal sessions
 * signed in with it (see sessions.ts), this one included, and revokes the keys created with it:
 * a key made here records the key this session signed in with (none for a sign-in link), and
 * revoking that key revokes it too, down the chain (UserStore.revokeApiKeyChain). Revoking a key
 * that keys were created with first asks for a confirmation that lists them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  isApiKeyLimitError,
  isApiKeyOriginRevokedError,
  type ApiKeyInfo,
  type ApiKeyOrigin,
} from '../storage/users.js';
import type { PortalContext, SignedIn } from './context.js';
import { html, type SafeHtml } from './html.js';
import { grantsSection, registerGrantRoutes } from './oauth-grants.js';

/** revoked keys the page lists (the latest revoked): revoked keys stay stored, and a page listing every one grew without bound */
export const REVOKED_KEYS_LISTED = 20;

const when = (ms: number | null): string =>
  ms === null ? '—' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

const keys = (n: number): string => (n === 1 ? '1 key' : `${n} keys`);

/**
 * For each key, the live keys created with it at any depth (as UserStore.revokeApiKeyChain walks
 * them, through revoked keys too), in creation order: what revoking it revokes as well.
 */
function chainsOf(all: ApiKeyInfo[]): (keyId: string) => ApiKeyInfo[] {
  const children = new Map<string, ApiKeyInfo[]>();
  for (const k of all) {
    if (k.createdWithKeyId === null) continue;
    // pushed, not copied: thousands of keys minted in one session would make a copy per key quadratic
    const siblings = children.get(k.createdWithKeyId);
    if (siblings) siblings.push(k);
    else children.set(k.createdWithKeyId, [k]);
  }
  return (keyId) => {
    const seen = new Set([keyId]);
    const stack = [keyId];
    for (let id = stack.pop(); id !== undefined; id = stack.pop())
      for (const c of children.get(id) ?? [])
        if (!seen.has(c.id)) {
          seen.add(c.id);
          stack.push(c.id);
        }
    return all.filter((k) => k.id !== keyId && seen.has(k.id) && k.revokedAt === null);
  };
}

/** What created a key, as a sentence for the list. */
function originOf(k: ApiKeyInfo, all: ApiKeyInfo[]): SafeHtml | string {
  if (k.createdVia === 'link') return 'Created with a sign-in link';
  if (k.createdVia === 'sso') return 'Created in a single sign-on session';
  if (k.createdVia === 'operator') return 'Created by an operator';
  if (k.createdVia === null) return 'Not recorded (created before origins were kept)';
  const parent = all.find((p) => p.id === k.createdWithKeyId);
  // a parent revoked on its own (by hand, or by a replica of an older release) left this key live: say so
  return parent
    ? html`Created with key <code>${parent.prefix}…</code>${parent.label ? html` (${parent.label})` : ''}${parent.revokedAt !== null && k.revokedAt === null ? html` <strong>(revoked: revoke this one too if it was not yours)</strong>` : ''}`
    : 'Created with a key that is no longer stored';
}

type Id = { Params: { id: string } };

export function registerKeyRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  scope.get('/keys', async (request, reply) => showKeys(ctx, request, reply));
  scope.post('/keys', async (request, reply) => createKey(ctx, request, reply));

  // Revoke is a form post on /keys; its address, typed or followed, leads there.
  scope.get('/keys/:id/revoke', async (_request, reply) => reply.code(303).header('location', '/keys').send());

  // A key that other keys were created with is revoked only once the page that lists them (this
  // post without `confirm`) was confirmed; the revocation takes whatever chain there is by then.
  scope.post<Id>('/keys/:id/revoke', async (request, reply) => revokeKey(ctx, request, reply));

  // the apps allowed by OAuth, listed on the same page
  if (ctx.deps.oauth) registerGrantRoutes(scope, ctx, ctx.deps.oauth);
}

async function showKeys(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who) return reply;
  const notices = (all: ApiKeyInfo[]): Promise<SafeHtml> => keyNotices(ctx, request, who, all);
  return ctx.sendPage(reply, 200, {
    title: 'API keys',
    active: 'keys',
    who,
    body: await keysPage(ctx, who, 200, notices),
  });
}

/** The one-time notices above the list: a key just created (shown this once), a revocation, other sessions signed out. */
async function keyNotices(
  ctx: PortalContext,
  request: FastifyRequest,
  who: SignedIn,
  all: ApiKeyInfo[],
): Promise<SafeHtml> {
  const flashes = await ctx.takeFlash(request, who, 'keys');
  const created = flashes.flatMap((f) => (f.kind === 'key-created' ? [f] : []));
  const sessionKey = all.find((k) => k.id === who.session.keyId);
  const shown = created.map(
    (f, i) => html`<div class="notice" role="status"><h2>Your new key</h2>
<p>Copy it now: it is shown only this once and cannot be recovered.</p>
<p><label for="new-key${i ? `-${i}` : ''}">Key ${f.label ? `"${f.label}"` : ''}</label><input id="new-key${i ? `-${i}` : ''}" class="secret" readonly value="${f.key}"></p>${
      sessionKey
        ? html`
<p class="hint">It was created with key <code>${sessionKey.prefix}…</code>, the key you signed in with: revoking that key revokes this one too. To replace a key that may have leaked, sign in with a one-time sign-in link (an operator makes one) and create the new key there.</p>`
        : ''
    }</div>`,
  );
  // from this session's own posts (flash.ts), not from the URL
  const note = flashes.map((f) =>
    f.kind === 'key-revoked'
      ? (f.alsoRevoked ?? 0) === 0
        ? html`<p class="notice" role="status">The key was revoked. Agents using it are refused from now on, and portal sessions signed in with it are signed out.</p>`
        : html`<p class="notice" role="status">The key was revoked, and with it the ${keys(f.alsoRevoked ?? 0)} created with it. Agents using them are refused from now on, and portal sessions signed in with them are signed out.</p>`
      : f.kind === 'others-signed-out'
        ? html`<p class="notice" role="status">Your other sessions were signed out.</p>`
        : f.kind === 'app-revoked'
          ? html`<p class="notice" role="status">The access of ${f.app} was revoked: its next request is refused.</p>`
          : '',
  );
  return html`${shown}${note}`;
}

async function createKey(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const users = ctx.deps.users;
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const label = (ctx.body(request)['label'] ?? '').trim();
  if (label.length > 60 || /[\u0000-\u001f\u007f]/.test(label))
    return ctx.sendPage(reply, 400, {
      title: 'API keys',
      active: 'keys',
      who,
      body: await keysPage(ctx, who, 400, '', 'The label must be at most 60 characters, without line breaks.'),
    });
  // the key this session signed in with (revoking it revokes the new key too), or a sign-in link
  const origin: ApiKeyOrigin =
    who.session.keyId !== null
      ? { via: 'key', keyId: who.session.keyId }
      : who.session.method === 'sso'
        ? { via: 'sso' }
        : { via: 'link' };
  let made: Awaited<ReturnType<typeof users.createApiKey>>;
  try {
    made = await users.createApiKey(who.user.id, label, origin);
  } catch (err) {
    if (isApiKeyOriginRevokedError(err)) {
      // the session's key was revoked while this request ran (the session was valid when it came):
      // no key, and the signed-out answer the session now gets everywhere
      ctx.deps.logger?.info(
        { userId: who.user.id, keyId: err.keyId },
        'portal: no key created: the key the session signed in with was revoked meanwhile',
      );
      return reply
        .code(303)
        .header('location', `/login?next=${encodeURIComponent('/keys')}`)
        .send();
    }
    if (!isApiKeyLimitError(err)) throw err;
    const refused = html`<p class="error" role="alert" id="keys-limit">You already have ${err.limit} active API keys, the most an account may have. Revoke a key you no longer use (in the list below), then create the new one.</p>`;
    return ctx.sendPage(reply, 409, {
      title: 'API keys',
      active: 'keys',
      who,
      body: await keysPage(ctx, who, 409, refused),
    });
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
}

async function revokeKey(ctx: PortalContext, request: FastifyRequest<Id>, reply: FastifyReply): Promise<FastifyReply> {
  const users = ctx.deps.users;
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const notFound = (): FastifyReply =>
    ctx.sendError(reply, 404, 'Key not found', 'There is no active key with that id in your account.', who);
  const all = await users.listApiKeys(who.user.id);
  const key = all.find((k) => k.id === request.params.id && k.revokedAt === null);
  if (!key) return notFound();
  const chain = chainsOf(all)(key.id);
  if (chain.length > 0 && ctx.body(request)['confirm'] !== 'yes') return confirmPage(ctx, reply, who, key, chain, all);
  const done = await users.revokeApiKeyChain(who.user.id, key.id);
  if (!done) return notFound();
  await ctx.putFlash(request, who, 'keys', { kind: 'key-revoked', alsoRevoked: done.alsoRevoked.length });
  return reply.code(303).header('location', '/keys').send();
}

/** `top` as a function is called once the page's data is loaded (a one-time notice is taken last, so a failed read loses none). */
async function keysPage(
  ctx: PortalContext,
  who: SignedIn,
  status: number,
  top: SafeHtml | string | ((all: ApiKeyInfo[]) => Promise<SafeHtml | string>),
  labelError?: string,
) {
  const all = await ctx.deps.users.listApiKeys(who.user.id);
  const chainOf = chainsOf(all);
  // the latest revoked; among keys revoked in the same millisecond, the latest created (the list comes in creation order)
  const revoked = all.flatMap((k, i) => (k.revokedAt === null ? [] : [{ k, at: k.revokedAt, i }]));
  const listedRevoked = new Set(
    revoked
      .sort((a, b) => b.at - a.at || b.i - a.i)
      .slice(0, REVOKED_KEYS_LISTED)
      .map((r) => r.k),
  );
  const listed = all.filter((k) => k.revokedAt === null || listedRevoked.has(k));
  const shown = listed.map((k) => ({ k, chain: k.revokedAt === null ? chainOf(k.id).length : 0 }));
  const unlisted = all.length - listed.length;
  const csrf = who.session.csrf;
  const sessions = await ctx.sessions.countActive(who.user.id);
  const above = typeof top === 'function' ? await top(all) : top;
  return html`${above}
<section aria-labelledby="create-h"><h2 id="create-h">Create a key</h2>
<form method="post" action="/keys"><input type="hidden" name="_csrf" value="${csrf}">
<label for="k-label">Label</label><p class="hint" id="k-label-hint">Where the key will be used, e.g. "laptop agent". Up to 60 characters.</p>
<input id="k-label" name="label" maxlength="60" aria-describedby="k-label-hint${labelError ? ' k-label-error' : ''}"${labelError ? html` aria-invalid="true"` : ''}>
${labelError ? html`<p class="error" id="k-label-error">${labelError}</p>` : ''}
<p><button type="submit">Create key</button></p></form></section>
<section aria-labelledby="list-h"><h2 id="list-h">Your keys</h2>
${
  listed.length === 0
    ? html`<p>You have no keys.</p>`
    : html`<table><thead><tr><th scope="col">Key</th><th scope="col">Label</th><th scope="col">Created</th><th scope="col">Origin</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col">Action</th></tr></thead><tbody>
${shown.map(({ k, chain }) => keyRow(who, all, k, chain))}</tbody></table>`
}
${unlisted > 0 ? html`<p class="hint">${unlisted} older revoked ${unlisted === 1 ? 'key is' : 'keys are'} not listed (only the ${REVOKED_KEYS_LISTED} revoked last are).</p>` : ''}</section>
${await grantsSection(ctx.deps.oauth, who)}
<section aria-labelledby="sess-h"><h2 id="sess-h">Sign-in sessions</h2><p>You are signed in to the portal in ${sessions} ${sessions === 1 ? 'place' : 'places'}.</p>
<form method="post" action="/sessions/revoke-others"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">Sign out everywhere else</button></form></section>`;
}

/** A key's row in the list; `chain`: how many live keys revoking it revokes too. */
function keyRow(who: SignedIn, all: ApiKeyInfo[], k: ApiKeyInfo, chain: number): SafeHtml {
  const csrf = who.session.csrf;
  return html`<tr><td><code>${k.prefix}…</code></td><td>${k.label}${k.id === who.session.keyId && k.revokedAt === null ? html` <span class="hint">(you signed in with this key: revoking it signs you out)</span>` : ''}</td><td>${when(k.createdAt)}</td><td>${originOf(k, all)}</td><td>${when(k.lastUsedAt)}</td>
<td>${k.revokedAt === null ? 'Active' : html`Revoked ${when(k.revokedAt)}`}</td>
<td>${
    k.revokedAt === null
      ? html`<form method="post" action="/keys/${k.id}/revoke" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" aria-label="Revoke key ${k.prefix}"${chain > 0 ? html` aria-describedby="chain-${k.id}"` : ''}>Revoke</button></form>${
          chain > 0
            ? html` <span class="hint" id="chain-${k.id}">also revokes the ${keys(chain)} created with it</span>`
            : ''
        }`
      : ''
  }</td></tr>`;
}

/** The confirmation asked before revoking a key that other keys were created with: it lists them. */
function confirmPage(
  ctx: PortalContext,
  reply: FastifyReply,
  signed: SignedIn,
  k: ApiKeyInfo,
  also: ApiKeyInfo[],
  list: ApiKeyInfo[],
): FastifyReply {
  const n = also.length;
  const signsOut = signed.session.keyId !== null && [k, ...also].some((x) => x.id === signed.session.keyId);
  return ctx.sendPage(reply, 200, {
    title: 'Revoke API key',
    active: 'keys',
    who: signed,
    body: html`<p>Revoke key <code>${k.prefix}…</code>${k.label ? html` (${k.label})` : ''}?</p>
<p id="revoke-chain"><strong>${keys(n)} created with it will be revoked too</strong>: ${n === 1 ? 'it was' : 'they were'} created in portal sessions signed in with this key, or with a key created that way.</p>
<ul>${also.map((x) => html`<li><code>${x.prefix}…</code>${x.label ? html` (${x.label})` : ''}: ${originOf(x, list)}, ${when(x.createdAt)}</li>`)}</ul>
<p>Agents using any of these ${n + 1} keys are refused from then on, and portal sessions signed in with them are signed out.</p>
${signsOut ? html`<p class="warn">You signed in with one of these keys: revoking them signs you out.</p>` : ''}
<form method="post" action="/keys/${k.id}/revoke"><input type="hidden" name="_csrf" value="${signed.session.csrf}"><input type="hidden" name="confirm" value="yes">
<button type="submit" aria-describedby="revoke-chain">Revoke ${n + 1} keys</button></form>
<p><a href="/keys">Cancel: keep them</a></p>`,
  });
}
