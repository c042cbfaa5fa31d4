/**
 * @module host/portal/portal
 * The portal, served by the gateway itself: server-rendered, script-free HTML pages for signing
 * in, connecting integrations, reading activity and managing API keys (and the live browser view,
 * whose page alone runs a script of ours: browser-routes.ts). Everything is registered in
 * one encapsulated fastify scope, so its form parser, security headers and HTML error pages apply
 * to these routes only and never to /mcp or /rest.
 */
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { registerActivityRoutes } from './activity-routes.js';
import { registerAuthRoutes } from './auth-routes.js';
import { registerBrowserRoutes } from './browser-routes.js';
import { registerConnectRoutes } from './connect-routes.js';
import { registerConsentRoutes } from './consent-routes.js';
import { registerCookieConnectRoutes } from './cookie-connect.js';
import { createPortalContext, type PortalContext, type PortalDeps } from './context.js';
import { registerIntegrationRoutes } from './integrations-routes.js';
import { html } from './html.js';
import { registerKeyRoutes } from './keys-routes.js';
import { PORTAL_CSS } from './layout.js';
import { securityHeaders } from './security-headers.js';
import { registerSsoRoutes } from './sso-routes.js';

export type { PortalDeps, PortalSignIn } from './context.js';
export type { CookieSignInBrowser } from './cookie-browser.js';
export { createLoginLink } from './login-links.js';

const FORM_BODY_LIMIT = 64 * 1024;

/**
 * Paths the portal never answers for, however the request is made: the API and operational
 * routes keep the gateway's own JSON 404 (`reply.callNotFound()`), byte for byte.
 */
const API_PREFIXES = ['/mcp', '/rest', '/healthz', '/readyz', '/metrics', '/.well-known'];

const isApiPath = (path: string): boolean => API_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));

/** Whether the request names text/html among the types it accepts (a browser navigating; not `*\/*` alone). */
function acceptsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (typeof accept !== 'string') return false;
  return accept.split(',').some((range) => {
    const [type = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return type === 'text/html' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** A route pattern ("/connect/:id") as a regular expression for a concrete path. */
function patternOf(url: string): RegExp {
  const parts = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/\\\\]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${parts.join('/')}$`);
}

/** Registers the portal's routes on `app` (call before listen). Returns the shared context (tests, sweeps). */
export function registerPortal(app: FastifyInstance, deps: PortalDeps): PortalContext {
  const ctx = createPortalContext(deps);
  void app.register(async (scope) => {
    // forms only: the JSON parser the gateway's API routes use is not the portal's (an unauthenticated
    // JSON body to /login was read and walked whole); any other type is refused unread (415)
    scope.removeAllContentTypeParsers();
    await scope.register(formbody, { bodyLimit: FORM_BODY_LIMIT });

    // Requests the catch-all below hands to the gateway's 404 keep that answer as it is, headers too
    // (fastify keeps a route's onSend hooks for reply.callNotFound()).
    const notOurs = new WeakSet<FastifyRequest>();
    scope.addHook('onSend', async (request, reply, payload) => {
      if (notOurs.has(request)) return payload;
      for (const [k, v] of Object.entries(securityHeaders(ctx.secure)))
        if (!reply.hasHeader(k)) void reply.header(k, v);
      return payload;
    });

    // Every GET route of the portal, for the canonical-path redirect below.
    const pages: RegExp[] = [];
    scope.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.includes('GET') && !route.url.includes('*')) pages.push(patternOf(route.url));
    });

    scope.setErrorHandler((err: FastifyError, request, reply) => answerError(ctx, err, request, reply));

    scope.get('/portal.css', async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(PORTAL_CSS),
    );

    registerAuthRoutes(scope, ctx);
    registerSsoRoutes(scope, ctx);
    registerIntegrationRoutes(scope, ctx);
    registerConnectRoutes(scope, ctx);
    registerCookieConnectRoutes(scope, ctx);
    registerActivityRoutes(scope, ctx);
    registerKeyRoutes(scope, ctx);
    if (deps.browser) registerBrowserRoutes(scope, ctx, deps.browser);
    if (deps.oauth) registerConsentRoutes(scope, ctx, deps.oauth);

    // any other GET: a redirect to a page's canonical address, the portal's 404 page, or the gateway's own 404
    scope.get('/*', async (request, reply) => answerOtherGet(ctx, pages, notOurs, request, reply));
  });
  return ctx;
}

/** The portal's HTML error page for a request that failed: a status and a sentence the user can act on. */
function answerError(
  ctx: PortalContext,
  err: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
  if (status >= 500) request.log.error({ err }, 'portal request failed');
  const message =
    status === 413
      ? 'The form was too large.'
      : status === 415
        ? 'Submit the form from the page.'
        : status >= 500
          ? 'Something went wrong on our side. Try again.'
          : 'The request was not understood.';
  // the body was refused before it was read whole: close the connection, or Node would read the rest
  if (status === 413 || status === 415) void reply.header('connection', 'close');
  return ctx.sendError(reply, status, status >= 500 ? 'Server error' : 'Bad request', message);
}

/**
 * Any other GET. A portal page with a trailing slash goes to its canonical address; a browser
 * (Accept: text/html) gets the portal's "not found" page with a way back; everything else, and
 * every API path whatever it accepts, gets the gateway's own 404 (JSON on the gateway).
 */
async function answerOtherGet(
  ctx: PortalContext,
  pages: readonly RegExp[],
  notOurs: WeakSet<FastifyRequest>,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const notFound = (): FastifyReply => {
    notOurs.add(request);
    reply.callNotFound();
    return reply;
  };
  const q = request.url.indexOf('?');
  const path = q === -1 ? request.url : request.url.slice(0, q);
  const search = q === -1 ? '' : request.url.slice(q);
  if (isApiPath(path)) return notFound();
  const canonical = path.replace(/\/+$/, '');
  if (canonical !== path && canonical !== '' && pages.some((p) => p.test(canonical))) {
    const to = ctx.safeNext(canonical + search, '');
    if (to !== '') return reply.code(308).header('location', to).send();
  }
  if (!acceptsHtml(request)) return notFound();
  const who = await ctx.signedIn(request);
  return ctx.sendPage(reply, 404, {
    title: 'Page not found',
    body: html`<p class="error" role="alert">There is no page at this address.</p><p><a href="/">Go to the Workbench start page</a></p>`,
    ...(who ? { who } : {}),
  });
}
