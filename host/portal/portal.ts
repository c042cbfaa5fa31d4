/**
 * @module host/portal/portal
 * The portal, served by the gateway itself: server-rendered, script-free HTML pages for signing
 * in, connecting integrations, reading activity and managing API keys. Everything is registered in
 * one encapsulated fastify scope, so its form parser, security headers and HTML error pages apply
 * to these routes only and never to /mcp or /rest.
 */
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { registerActivityRoutes } from './activity-routes.js';
import { registerAuthRoutes } from './auth-routes.js';
import { registerConnectRoutes } from './connect-routes.js';
import { createPortalContext, type PortalContext, type PortalDeps } from './context.js';
import { registerIntegrationRoutes } from './integrations-routes.js';
import { registerKeyRoutes } from './keys-routes.js';
import { PORTAL_CSS } from './layout.js';
import { securityHeaders } from './security-headers.js';

export type { PortalDeps } from './context.js';
export { createLoginLink } from './login-links.js';

const FORM_BODY_LIMIT = 64 * 1024;

/** Registers the portal's routes on `app` (call before listen). Returns the shared context (tests, sweeps). */
export function registerPortal(app: FastifyInstance, deps: PortalDeps): PortalContext {
  const ctx = createPortalContext(deps);
  void app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: FORM_BODY_LIMIT });

    scope.addHook('onSend', async (_request, reply, payload) => {
      for (const [k, v] of Object.entries(securityHeaders(ctx.secure))) if (!reply.hasHeader(k)) void reply.header(k, v);
      return payload;
    });

    scope.setErrorHandler((err: FastifyError, request, reply) => {
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
      if (status >= 500) request.log.error({ err }, 'portal request failed');
      const message =
        status === 413 ? 'The form was too large.' : status === 415 ? 'Submit the form from the page.' : status >= 500 ? 'Something went wrong on our side. Try again.' : 'The request was not understood.';
      return ctx.sendError(reply, status, status >= 500 ? 'Server error' : 'Bad request', message);
    });

    scope.get('/portal.css', async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(PORTAL_CSS),
    );

    registerAuthRoutes(scope, ctx);
    registerIntegrationRoutes(scope, ctx);
    registerConnectRoutes(scope, ctx);
    registerActivityRoutes(scope, ctx);
    registerKeyRoutes(scope, ctx);
  });
  return ctx;
}
