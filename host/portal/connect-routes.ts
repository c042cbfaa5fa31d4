/**
 * @module host/portal/connect-routes
 * The human side of `connect`: the link page (signed in, and only for the user who asked), the
 * OAuth2 round trip (state + PKCE S256 to the provider, the callback exchanging the code), the
 * API-key form, and the result page. Each step moves the pending record atomically, so a link or a
 * provider answer is used at most once; the agent's wait_for_connection sees the outcome. A step
 * that fails after the link was used (the exchange, storing the connection) settles it `failed`
 * with the reason, so neither the agent's wait nor the user's retry is left facing a stuck link.
 *
 * "Continue" (a form post, for CSRF and single use) is answered with a page that goes on to the
 * provider by a meta refresh (with a link as fallback), not with a redirect. Chromium checks the
 * page's CSP form-action against every redirect of a form submission, and providers redirect on to
 * origins of their own (auth.atlassian.com sends signed-out people to id.atlassian.com), which the
 * portal cannot know: a redirect there would be blocked after the link was used. A navigation the
 * page starts is not a form submission, so form-action stays 'self' on every portal page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PluginAuth, PluginManifest } from '../../contracts/manifest.js';
import { validateApiKeyFields } from '../connections/apikey-fields.js';
import { ConnectionError } from '../connections/errors.js';
import { authorizationUrl, exchangeCode, OAuthError, randomToken } from '../connections/oauth.js';
import { TERMINAL, type OpenResult, type PendingConnect } from '../connections/pending.js';
import type { PortalContext, SignedIn } from './context.js';
import {
  apiKeyFormBody,
  oauthContinueBody,
  oauthStartBody,
  otherAccountBody,
  resultBody,
  RESULT_TEXT,
} from './connect-views.js';
import { maskEmail } from './login-page.js';
import { showCookieLink } from './cookie-connect.js';

type Refusal = Extract<OpenResult, { ok: false }>['reason'];

/** The reason a link fails with when the connection could not be saved (the database refused, …). */
export const STORE_FAILED_REASON = 'the connection could not be stored on the server; try again with a new link';

/** Worded for a link from an agent or from the integrations page alike (see RESULT_TEXT). */
const AGAIN = 'start again from the integrations page, or ask your agent for a new link';
const REFUSALS: Record<Refusal, { status: number; title: string; text: string }> = {
  unknown: { status: 404, title: 'Link not found', text: `This connect link is unknown: ${AGAIN}.` },
  other_user: {
    status: 403,
    title: 'Link belongs to another account',
    text: 'This link was created for a different Workbench account. Sign in as that account, or connect from the integrations page of this one.',
  },
  used: {
    status: 410,
    title: 'Link already used',
    text: `This link was already used. If you did not finish connecting, ${AGAIN}.`,
  },
  expired: { status: 410, title: 'Link expired', text: `This link has expired: ${AGAIN}.` },
};

type Id = { Params: { id: string } };
type Callback = { Querystring: Record<string, string | undefined> };

export function registerConnectRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  scope.get<Id>('/connect/:id', async (request, reply) => showConnectLink(ctx, request, reply));
  scope.post<Id>('/connect/:id', async (request, reply) => continueToProvider(ctx, request, reply));
  scope.get<Callback>('/oauth/callback', async (request, reply) => finishOAuth(ctx, request, reply));

  // The API-key form posts here; the address, typed or reloaded, leads back to the link's page.
  scope.get<Id>('/connect/:id/form', async (request, reply) =>
    reply
      .code(303)
      .header('location', `/connect/${encodeURIComponent(request.params.id)}`)
      .send(),
  );
  scope.post<Id>('/connect/:id/form', async (request, reply) => saveApiKeyForm(ctx, request, reply));
}

function refuse(ctx: PortalContext, reply: FastifyReply, reason: Refusal, who?: SignedIn): FastifyReply {
  const r = REFUSALS[reason];
  return ctx.sendError(reply, r.status, r.title, r.text, who);
}

/** the link's integration, if it exists and the user may still use it (policy may change while a link is open) */
function pluginFor(ctx: PortalContext, name: string, who: SignedIn): PluginManifest | undefined {
  const m = ctx.deps.registry.plugin(name);
  return m && ctx.mayUse(who.user, name) ? m : undefined;
}

const redirectUriOf = (ctx: PortalContext): string => `${ctx.base}/oauth/callback`;

/** A link's POST that may go on: its signed-in owner, the link still open, an integration of `type`. */
interface LinkPost<T extends PluginAuth['type']> {
  who: SignedIn;
  pending: PendingConnect;
  m: PluginManifest;
  auth: Extract<PluginAuth, { type: T }>;
}

/** Checks a POST on a connect link (session, CSRF, the link, the integration); answers the refusal itself. */
async function linkPost<T extends PluginAuth['type']>(
  ctx: PortalContext,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
  type: T,
): Promise<LinkPost<T> | FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const checked = await ctx.deps.connections.pending.check(request.params.id, who.user.id);
  if (!checked.ok) return refuse(ctx, reply, checked.reason, who);
  const m = pluginFor(ctx, checked.pending.integration, who);
  if (!m || m.auth.type !== type) return refuse(ctx, reply, 'unknown', who);
  return { who, pending: checked.pending, m, auth: m.auth as Extract<PluginAuth, { type: T }> };
}

/** The link's page: its result once settled, else the API-key form, the sign-in steps of a cookie link, or the button that goes on to the provider. */
async function showConnectLink(
  ctx: PortalContext,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who) return reply;
  const p = await ctx.deps.connections.pending.get(request.params.id);
  if (!p) return refuse(ctx, reply, 'unknown', who);
  if (p.userId !== who.user.id) return otherAccount(ctx, reply, p, who);
  const m = pluginFor(ctx, p.integration, who);
  if (TERMINAL.has(p.status)) {
    const status = p.status as keyof typeof RESULT_TEXT;
    return ctx.sendPage(reply, 200, { title: RESULT_TEXT[status].title, body: resultBody(m, p, status), who });
  }
  if (m?.auth.type === 'cookie' && (p.status === 'pending' || p.status === 'opened'))
    return showCookieLink(ctx, reply, who, { ...m, auth: m.auth }, p);
  if (p.status !== 'pending') return refuse(ctx, reply, 'used', who);
  if (!m) return refuse(ctx, reply, 'unknown', who);
  const title = `Connect ${m.displayName}`;
  if (m.auth.type === 'apikey')
    return ctx.sendPage(reply, 200, { title, body: apiKeyFormBody({ ...m, auth: m.auth }, p, who.session.csrf), who });
  return ctx.sendPage(reply, 200, { title, body: oauthStartBody(m, p, who.user.email, who.session.csrf), who });
}

/**
 * A link of another account, opened while signed in: says whose it is (masked) and who is signed
 * in, and offers to sign out and come back to the link as its owner.
 */
async function otherAccount(
  ctx: PortalContext,
  reply: FastifyReply,
  p: PendingConnect,
  who: SignedIn,
): Promise<FastifyReply> {
  const owner = await ctx.deps.users.byId(p.userId);
  const integration = ctx.deps.registry.plugin(p.integration)?.displayName ?? p.integration;
  return ctx.sendPage(reply, REFUSALS.other_user.status, {
    title: REFUSALS.other_user.title,
    body: otherAccountBody(
      { integration, owner: owner ? maskEmail(owner.email) : 'another account', signedIn: who.user.email },
      `/connect/${p.id}`,
      who.session.csrf,
    ),
    who,
  });
}

/** "Continue" on an OAuth link: opens it (state, PKCE) and answers the page that moves on to the provider. */
async function continueToProvider(
  ctx: PortalContext,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { connections } = ctx.deps;
  const pending = connections.pending;
  const post = await linkPost(ctx, request, reply, 'oauth2');
  if (!('who' in post)) return post;
  const { who, m, auth, pending: link } = post;
  const client = connections.clientFor(m.name);
  if (!client)
    return ctx.sendError(
      reply,
      409,
      'Not available',
      `${m.displayName} cannot be connected until the operator configures its OAuth client.`,
      who,
    );
  const state = randomToken();
  const codeVerifier = auth.pkce ? randomToken(48) : undefined;
  const opened = await pending.open(link.id, who.user.id, { state, codeVerifier });
  if (!opened.ok) return refuse(ctx, reply, opened.reason, who);
  const mapUrl = connections.http.mapUrl;
  const url = authorizationUrl(auth, client, {
    redirectUri: redirectUriOf(ctx),
    state,
    ...(codeVerifier ? { codeVerifier } : {}),
    ...(mapUrl ? { mapUrl } : {}),
  });
  // A page that moves on, not a 303: see the module comment (form-action and provider redirects).
  return ctx.sendPage(reply, 200, {
    title: `Continue to ${m.displayName}`,
    body: oauthContinueBody(m, url),
    who,
    continueTo: url,
  });
}

/** The provider's answer: the link it belongs to is settled (connected, denied or failed), then its page shows the outcome. */
async function finishOAuth(
  ctx: PortalContext,
  request: FastifyRequest<Callback>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { connections } = ctx.deps;
  const pending = connections.pending;
  const who = await ctx.requireUser(request, reply);
  if (!who) return reply;
  const q = request.query;
  if (typeof q['state'] !== 'string' || q['state'] === '')
    return ctx.sendError(
      reply,
      400,
      'Sign-in response not valid',
      "The provider sent no state parameter; connect again from the integrations page or from your agent's link.",
      who,
    );
  const taken = await pending.takeByState(q['state'], who.user.id);
  if (!taken.ok && taken.reason === 'failed')
    return reply.code(303).header('location', `/connect/${taken.pending.id}`).send();
  if (!taken.ok) return refuse(ctx, reply, taken.reason, who);
  const p = taken.pending;
  const done = (): FastifyReply => reply.code(303).header('location', `/connect/${p.id}`).send();
  const m = pluginFor(ctx, p.integration, who);
  const client = m ? connections.clientFor(m.name) : undefined;
  if (typeof q['error'] === 'string') {
    const detail = typeof q['error_description'] === 'string' ? `: ${q['error_description'].slice(0, 200)}` : '';
    const denied = q['error'] === 'access_denied';
    await pending.settle(
      p.id,
      denied ? 'denied' : 'failed',
      `${m?.displayName ?? p.integration} answered ${q['error'].slice(0, 60)}${detail}`,
    );
    return done();
  }
  if (!m || m.auth.type !== 'oauth2' || !client || typeof q['code'] !== 'string' || q['code'] === '') {
    await pending.settle(
      p.id,
      'failed',
      !m
        ? 'the integration is not available to this account'
        : !client
          ? 'the OAuth client is no longer configured on the server'
          : 'the provider sent no authorization code',
    );
    return done();
  }
  try {
    const tokens = await exchangeCode(
      m.auth,
      client,
      {
        code: q['code'],
        redirectUri: redirectUriOf(ctx),
        ...(taken.codeVerifier ? { codeVerifier: taken.codeVerifier } : {}),
      },
      connections.http,
    );
    await connections.saveTokens(who.user.id, m, tokens);
    await pending.settle(p.id, 'connected', null);
  } catch (err) {
    const reason = err instanceof OAuthError ? err.message : STORE_FAILED_REASON;
    ctx.deps.logger?.warn({ pendingId: p.id, integration: p.integration, error: reason }, 'OAuth callback failed');
    await pending.settle(p.id, 'failed', reason);
  }
  return done();
}

/** The API-key form: shown again with what is wrong, or the secret is stored and the link settled. */
async function saveApiKeyForm(
  ctx: PortalContext,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { connections } = ctx.deps;
  const pending = connections.pending;
  const post = await linkPost(ctx, request, reply, 'apikey');
  if (!('who' in post)) return post;
  const { who, m, auth, pending: link } = post;
  const { _csrf: _ignored, ...input } = ctx.body(request);
  const v = validateApiKeyFields(auth.fields, input);
  if (Object.keys(v.errors).length === 0 && Object.keys(v.secret).length === 0)
    v.errors['form'] = 'Fill in at least one secret field.';
  if (Object.keys(v.errors).length > 0)
    return ctx.sendPage(reply, 400, {
      title: `Connect ${m.displayName}`,
      body: apiKeyFormBody({ ...m, auth }, link, who.session.csrf, input, v.errors),
      who,
    });
  const opened = await pending.open(link.id, who.user.id);
  if (!opened.ok) return refuse(ctx, reply, opened.reason, who);
  // the link is used now: whatever happens, it must end in a terminal status the agent's wait sees
  try {
    await connections.saveApiKey(who.user.id, m, input);
    await pending.settle(link.id, 'connected', null);
  } catch (err) {
    const reason = err instanceof ConnectionError ? `${m.displayName}: ${err.message}` : STORE_FAILED_REASON;
    ctx.deps.logger?.warn(
      { pendingId: link.id, integration: m.name, error: (err as Error).message },
      'storing an API-key connection failed',
    );
    await pending.settle(link.id, 'failed', reason);
  }
  return reply.code(303).header('location', `/connect/${link.id}`).send();
}
