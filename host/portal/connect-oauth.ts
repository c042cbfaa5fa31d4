/**
 * @module host/portal/connect-oauth
 * An OAuth2 link's two ways in. The round trip: "Continue" opens the link (state, PKCE S256, and
 * the instance it goes to) and answers a page that moves on to the provider, or to the instance's
 * own authorization endpoint with the client the operator registered there; the callback exchanges
 * the code at that same instance's token endpoint and stores the tokens bound to it. Or, for an
 * integration that takes one, a personal token pasted on the page, stored bound to the instance
 * named beside it. A refused post (a bad instance URL, no client for that instance, an empty
 * token) shows the page again with what to change, and leaves the link unused.
 *
 * "Continue" (a form post, for CSRF and single use) is answered with a page that goes on to the
 * provider by a meta refresh (with a link as fallback), not with a redirect. Chromium checks the
 * page's CSP form-action against every redirect of a form submission, and providers redirect on to
 * origins of their own (auth.atlassian.com sends signed-out people to id.atlassian.com), which the
 * portal cannot know: a redirect there would be blocked after the link was used. A navigation the
 * page starts is not a form submission, so form-action stays 'self' on every portal page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INSTANCE_CONFIG_KEY, type PluginManifest } from '../../contracts/manifest.js';
import { isConnectionError } from '../connections/errors.js';
import { checkInstanceUrl } from '../connections/instance-url.js';
import {
  authorizationUrl,
  clientEnvPrefix,
  exchangeCode,
  OAuthError,
  oauthForInstance,
  randomToken,
} from '../connections/oauth.js';
import { checkPersonalToken } from '../connections/personal-token.js';
import type { FullConnectionService } from '../connections/service.js';
import { linkPost, pluginFor, refuse, STORE_FAILED_REASON, type Id, type LinkPost } from './connect-link.js';
import { oauthContinueBody, oauthStartBody } from './connect-views.js';
import type { PortalContext } from './context.js';

type Callback = { Querystring: Record<string, string | undefined> };
type Post = LinkPost<'oauth2'>;

const redirectUriOf = (ctx: PortalContext): string => `${ctx.base}/oauth/callback`;

/**
 * What the page offers of the OAuth sign-in: whether it can work at all (a client for the default,
 * or one registered on an instance the integration has endpoints for), and the instances it works on.
 */
export function oauthOffered(
  connections: Pick<FullConnectionService, 'clientFor' | 'instanceOrigins'>,
  m: PluginManifest,
): { oauth: boolean; oauthInstances: string[] } {
  if (m.auth.type !== 'oauth2') return { oauth: false, oauthInstances: [] };
  const instances = m.auth.instance?.oauth ? connections.instanceOrigins(m.name) : [];
  const atDefault = connections.clientFor(m.name) ? [m.auth.instance?.default ?? ''] : [];
  return { oauth: atDefault.length + instances.length > 0, oauthInstances: [...atDefault, ...instances] };
}

/** A POST on an OAuth2 link: the personal token when one was chosen (or typed: Enter submits the first button), else the round trip. */
export async function continueOAuthLink(
  ctx: PortalContext,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const post = await linkPost(ctx, request, reply, 'oauth2');
  if (!('who' in post)) return post;
  const body = ctx.body(request);
  const byToken = post.auth.personalToken !== undefined && (body['method'] === 'token' || !!body['token']?.trim());
  return byToken ? connectWithToken(ctx, reply, post, body) : continueToProvider(ctx, reply, post, body);
}

/** The link's page again, with the instance URL as posted and what is wrong; the link stays unused. */
function formAgain(
  ctx: PortalContext,
  reply: FastifyReply,
  post: Post,
  body: Record<string, string>,
  errors: Record<string, string>,
): FastifyReply {
  const { who, m, auth, pending } = post;
  const instanceUrl = body[INSTANCE_CONFIG_KEY] ?? '';
  return ctx.sendPage(reply, 400, {
    title: `Connect ${m.displayName}`,
    body: oauthStartBody({ ...m, auth }, pending, who.user.email, who.session.csrf, {
      instanceUrl,
      suggested: pending.instanceUrl !== null && instanceUrl === pending.instanceUrl,
      errors,
      ...oauthOffered(ctx.deps.connections, m),
    }),
    who,
  });
}

/** The instance posted, checked (undefined: the provider's default), or the problems to show. */
async function postedInstance(
  ctx: PortalContext,
  m: PluginManifest,
  body: Record<string, string>,
): Promise<{ instance: string | undefined } | { errors: Record<string, string> }> {
  try {
    return { instance: await checkInstanceUrl(m, body[INSTANCE_CONFIG_KEY], ctx.deps.connections.instanceRules) };
  } catch (err) {
    if (isConnectionError(err)) return { errors: err.fields };
    throw err;
  }
}

/** Why the round trip cannot start for `instance` on this server, in words that say what to do instead. */
function noSignIn(post: Post, instance: string | undefined, hasEndpoints: boolean): string {
  const { m, auth } = post;
  const instead = auth.personalToken ? `: use a ${auth.personalToken.label.toLowerCase()} instead` : '';
  if (instance === undefined)
    return `${m.displayName} sign-in is not set up on this server (the operator sets ${clientEnvPrefix(m.name)}_CLIENT_ID)${instead}`;
  if (!hasEndpoints) return `${m.displayName} cannot sign in to ${instance} through OAuth${instead}`;
  return `This server has no OAuth application registered on ${instance} (the operator lists it in ${clientEnvPrefix(m.name)}_INSTANCE_CLIENTS)${instead}`;
}

/** "Continue": opens the link (state, PKCE, instance) and answers the page that moves on to the provider. */
async function continueToProvider(
  ctx: PortalContext,
  reply: FastifyReply,
  post: Post,
  body: Record<string, string>,
): Promise<FastifyReply> {
  const { connections } = ctx.deps;
  const { who, m, auth, pending: link } = post;
  const checked = await postedInstance(ctx, m, body);
  if ('errors' in checked) return formAgain(ctx, reply, post, body, checked.errors);
  const { instance } = checked;
  const endpoints = oauthForInstance(auth, instance);
  const client = endpoints && connections.clientFor(m.name, instance);
  if (!endpoints || !client) {
    if (!auth.instance && !auth.personalToken)
      return ctx.sendError(
        reply,
        409,
        'Not available',
        `${m.displayName} cannot be connected until the operator configures its OAuth client.`,
        who,
      );
    return formAgain(ctx, reply, post, body, {
      [auth.instance ? INSTANCE_CONFIG_KEY : 'form']: noSignIn(post, instance, endpoints !== undefined),
    });
  }
  const state = randomToken();
  const codeVerifier = auth.pkce ? randomToken(48) : undefined;
  const opened = await connections.pending.open(link.id, who.user.id, { state, codeVerifier, instance });
  if (!opened.ok) return refuse(ctx, reply, opened.reason, who);
  const mapUrl = connections.http.mapUrl;
  const url = authorizationUrl(endpoints, client, {
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

/** A personal token: checked with its instance, then the link is used and the token stored. */
async function connectWithToken(
  ctx: PortalContext,
  reply: FastifyReply,
  post: Post,
  body: Record<string, string>,
): Promise<FastifyReply> {
  const { connections } = ctx.deps;
  const { who, m, pending: link } = post;
  const errors: Record<string, string> = {};
  try {
    checkPersonalToken(m, body['token']);
  } catch (err) {
    if (!isConnectionError(err)) throw err;
    Object.assign(errors, err.fields);
  }
  const checked = await postedInstance(ctx, m, body);
  if ('errors' in checked) Object.assign(errors, checked.errors);
  if (Object.keys(errors).length > 0 || 'errors' in checked) return formAgain(ctx, reply, post, body, errors);
  const opened = await connections.pending.open(link.id, who.user.id);
  if (!opened.ok) return refuse(ctx, reply, opened.reason, who);
  // the link is used now: whatever happens, it must end in a terminal status the agent's wait sees
  try {
    await connections.savePersonalToken(who.user.id, m, body['token'], checked.instance);
    await connections.pending.settle(link.id, 'connected', null);
  } catch (err) {
    const reason = isConnectionError(err) ? `${m.displayName}: ${err.message}` : STORE_FAILED_REASON;
    ctx.deps.logger?.warn(
      { pendingId: link.id, integration: m.name, error: (err as Error).message },
      'storing a personal token failed',
    );
    await connections.pending.settle(link.id, 'failed', reason);
  }
  return reply.code(303).header('location', `/connect/${link.id}`).send();
}

/** The provider's answer: the link it belongs to is settled (connected, denied or failed), then its page shows the outcome. */
export async function finishOAuth(
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
  // the instance the round trip went to: its token endpoint, its client
  const instance = p.instanceUrl ?? undefined;
  const endpoints = m?.auth.type === 'oauth2' ? oauthForInstance(m.auth, instance) : undefined;
  const client = m && endpoints ? connections.clientFor(m.name, instance) : undefined;
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
  if (!m || !endpoints || !client || typeof q['code'] !== 'string' || q['code'] === '') {
    await pending.settle(
      p.id,
      'failed',
      !m || !endpoints
        ? 'the integration is not available to this account'
        : !client
          ? 'the OAuth client is no longer configured on the server'
          : 'the provider sent no authorization code',
    );
    return done();
  }
  try {
    const tokens = await exchangeCode(
      endpoints,
      client,
      {
        code: q['code'],
        redirectUri: redirectUriOf(ctx),
        ...(taken.codeVerifier ? { codeVerifier: taken.codeVerifier } : {}),
      },
      connections.http,
    );
    await connections.saveTokens(who.user.id, m, tokens, instance);
    await pending.settle(p.id, 'connected', null);
  } catch (err) {
    const reason = err instanceof OAuthError ? err.message : STORE_FAILED_REASON;
    ctx.deps.logger?.warn({ pendingId: p.id, integration: p.integration, error: reason }, 'OAuth callback failed');
    await pending.settle(p.id, 'failed', reason);
  }
  return done();
}
