/**
 * @module host/portal/connect-routes
 * The human side of `connect`: the link page (signed in, and only for the user who asked), the
 * API-key form, and the result page; the OAuth2 round trip and the personal token are in
 * connect-oauth.ts, what the steps share in connect-link.ts. Each step moves the pending record
 * atomically, so a link or a provider answer is used at most once; the agent's wait_for_connection
 * sees the outcome. A step that fails after the link was used (the exchange, storing the
 * connection) settles it `failed` with the reason, so neither the agent's wait nor the user's retry
 * is left facing a stuck link. An integration that takes an instance asks for its URL on the same
 * page (empty: the provider's default), prefilled with the one the agent suggested or the
 * connection has.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INSTANCE_CONFIG_KEY, type PluginManifest } from '../../contracts/manifest.js';
import { validateApiKeyFields } from '../connections/apikey-fields.js';
import { ConnectionError, isConnectionError } from '../connections/errors.js';
import { checkInstanceUrl } from '../connections/instance-url.js';
import { TERMINAL, type PendingConnect } from '../connections/pending.js';
import type { PortalContext, SignedIn } from './context.js';
import { linkPost, pluginFor, REFUSALS, refuse, startState, STORE_FAILED_REASON, type Id } from './connect-link.js';
import { continueOAuthLink, finishOAuth, oauthOffered } from './connect-oauth.js';
import { apiKeyFormBody, oauthStartBody, otherAccountBody, resultBody, RESULT_TEXT } from './connect-views.js';
import { maskEmail } from './login-page.js';
import { showCookieLink } from './cookie-connect.js';

export { STORE_FAILED_REASON } from './connect-link.js';

type Callback = { Querystring: Record<string, string | undefined> };

export function registerConnectRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  scope.get<Id>('/connect/:id', async (request, reply) => showConnectLink(ctx, request, reply));
  scope.post<Id>('/connect/:id', async (request, reply) => continueOAuthLink(ctx, request, reply));
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
  if (!m || (m.auth.type !== 'apikey' && m.auth.type !== 'oauth2')) return refuse(ctx, reply, 'unknown', who);
  const title = `Connect ${m.displayName}`;
  const state = await startState(ctx, who, m, p);
  if (m.auth.type === 'apikey')
    return ctx.sendPage(reply, 200, {
      title,
      body: apiKeyFormBody({ ...m, auth: m.auth }, p, who.session.csrf, {}, {}, state),
      who,
    });
  const offered = oauthOffered(ctx.deps.connections, m);
  return ctx.sendPage(reply, 200, {
    title,
    body: oauthStartBody({ ...m, auth: m.auth }, p, who.user.email, who.session.csrf, { ...state, ...offered }),
    who,
  });
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
  // the instance field is the form's own, not one of the manifest's fields
  const { [INSTANCE_CONFIG_KEY]: instanceUrl, ...fields } = auth.instance ? input : { ...input };
  const v = validateApiKeyFields(auth.fields, auth.instance ? fields : input);
  if (Object.keys(v.errors).length === 0 && Object.keys(v.secret).length === 0)
    v.errors['form'] = 'Fill in at least one secret field.';
  if (auth.instance) Object.assign(v.errors, await instanceProblem(ctx, m, instanceUrl));
  if (Object.keys(v.errors).length > 0)
    return ctx.sendPage(reply, 400, {
      title: `Connect ${m.displayName}`,
      body: apiKeyFormBody({ ...m, auth }, link, who.session.csrf, input, v.errors, {
        instanceUrl: instanceUrl ?? '',
        suggested: link.instanceUrl !== null && instanceUrl === link.instanceUrl,
      }),
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

/** The instance field's problem, if it has one ({} when it is fine or empty). */
async function instanceProblem(
  ctx: PortalContext,
  m: PluginManifest,
  instanceUrl: string | undefined,
): Promise<Record<string, string>> {
  try {
    await checkInstanceUrl(m, instanceUrl, ctx.deps.connections.instanceRules);
    return {};
  } catch (err) {
    if (isConnectionError(err)) return err.fields;
    throw err;
  }
}
