/**
 * @module host/portal/sso-routes
 * Single sign-on with the OpenID Connect provider of WORKBENCH_OIDC_ISSUER: `/login/sso` sends the
 * browser to the provider (a link, not a form: a form's redirect to another origin would meet the
 * pages' CSP form-action), `/login/sso/callback` (the redirect URI registered at the provider, on
 * the public URL) takes the answer (host/portal/sso/oidc-client.ts), finds or makes the user by the
 * policy's rule (host/portal/sso/provision.ts) and starts an ordinary portal session. Every refusal
 * is a page that says why, with its catalogue code, and a `warn` line in the log with the same code.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorSpec, type ErrorCode } from '../../contracts/errors.js';
import { onlyCookie } from './cookies.js';
import type { PortalContext } from './context.js';
import { sendSignInRefusal, startSession } from './sign-in.js';
import type { SsoIdentity } from './sso/oidc-client.js';
import { SSO_SIGN_IN_TTL_MS } from './sso/sso-config.js';
import { resolveSsoUser } from './sso/provision.js';

type Next = { Querystring: { next?: string } };

export function registerSsoRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  scope.get<Next>('/login/sso', async (request, reply) => startSso(ctx, request, reply));
  scope.get('/login/sso/callback', async (request, reply) => finishSso(ctx, request, reply));
}

/** The cookie that holds a sign-in in progress (`__Host-`: no sibling site can plant one on https). */
const cookieOf = (ctx: PortalContext): string => (ctx.secure ? '__Host-wb_sso' : 'wb_sso');

function refuse(
  ctx: PortalContext,
  reply: FastifyReply,
  code: ErrorCode,
  reason: string,
  next: string | undefined,
): FastifyReply {
  const title =
    code === 'GW_ERR_SSO_PROVIDER_UNAVAILABLE'
      ? 'The identity provider is unavailable'
      : code === 'GW_ERR_SSO_RESPONSE_INVALID' || code === 'GW_ERR_SSO_PROVIDER_REFUSED'
        ? 'Sign-in did not complete'
        : code === 'GW_ERR_SSO_NOT_CONFIGURED'
          ? 'Single sign-on is not set up'
          : 'Sign-in refused';
  const spec = errorSpec(code);
  if (spec.retryAfterSec !== undefined) void reply.header('retry-after', String(spec.retryAfterSec));
  return sendSignInRefusal(ctx, reply, {
    status: spec.status ?? 400,
    title,
    reason,
    code,
    ...(next !== undefined ? { next } : {}),
  });
}

function notConfigured(ctx: PortalContext, reply: FastifyReply): FastifyReply {
  return refuse(
    ctx,
    reply,
    'GW_ERR_SSO_NOT_CONFIGURED',
    'Single sign-on is not configured on this server. Use another way of signing in.',
    undefined,
  );
}

async function startSso(ctx: PortalContext, request: FastifyRequest<Next>, reply: FastifyReply): Promise<FastifyReply> {
  const sso = ctx.methods.sso;
  if (!sso) return notConfigured(ctx, reply);
  const next = ctx.safeNext(request.query.next);
  if (await ctx.signedIn(request)) return reply.code(303).header('location', next).send();
  try {
    const { url, cookie } = await sso.client.start(next, ctx.deps.connections.now());
    // Lax: the provider's answer comes back as a top-level GET from its own site
    ctx.setCookie(reply, cookieOf(ctx), cookie, { maxAgeSec: SSO_SIGN_IN_TTL_MS / 1000, sameSite: 'Lax' });
    return reply.code(303).header('location', url).send();
  } catch (err) {
    return refuse(ctx, reply, codeOf(err), messageOf(err), next);
  }
}

async function finishSso(ctx: PortalContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const sso = ctx.methods.sso;
  if (!sso) return notConfigured(ctx, reply);
  const cookie = onlyCookie(request.headers.cookie, cookieOf(ctx));
  // the sign-in in progress is used up, whatever its outcome
  ctx.setCookie(reply, cookieOf(ctx), '', { maxAgeSec: 0, sameSite: 'Lax' });
  const next = sso.client.nextOf(cookie);
  // the answer as the provider addressed it: the registered redirect URI (on the public URL) and this query
  const callback = new URL(sso.client.redirectUri);
  const q = request.url.indexOf('?');
  callback.search = q === -1 ? '' : request.url.slice(q);
  let identity: SsoIdentity & { next: string };
  try {
    identity = await sso.client.finish(callback, cookie, ctx.deps.connections.now());
  } catch (err) {
    ctx.deps.logger?.warn({ code: codeOf(err) }, 'single sign-on: sign-in not completed');
    return refuse(ctx, reply, codeOf(err), messageOf(err), next);
  }
  const found = await resolveSsoUser(ctx.deps.db, sso.rule, identity, ctx.deps.connections.now());
  if (!found.ok) {
    ctx.deps.logger?.warn(
      { code: found.code, issuer: identity.issuer, subject: identity.subject },
      'single sign-on: sign-in refused',
    );
    return refuse(ctx, reply, found.code, found.reason, identity.next);
  }
  ctx.deps.logger?.info(
    {
      userId: found.user.id,
      tenant: found.user.tenant,
      how: found.how,
      ...(found.tenantBy ? { tenantBy: found.tenantBy } : {}),
    },
    found.how === 'created' ? 'single sign-on: user created' : 'single sign-on: signed in',
  );
  return startSession(ctx, reply, found.user, { keyId: null, method: 'sso' }, ctx.safeNext(identity.next));
}

function codeOf(err: unknown): ErrorCode {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('GW_ERR_SSO_')) return code as ErrorCode;
  throw err;
}

function messageOf(err: unknown): string {
  return (err as Error).message;
}
