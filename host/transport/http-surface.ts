/**
 * @module host/transport/http-surface
 * What every route shares: the JSON body parser (an empty body is {}, except on POST /mcp), errors
 * mapped to the catalogue (JSON-RPC shaped on /mcp), DNS-rebinding checks on loopback binds, HTTP
 * metrics with a bounded route label, and the operational routes /healthz, /readyz and /metrics.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config.js';
import type { Db } from '../storage/db.js';
import type { Metrics } from '../telemetry/metrics.js';
import { createHostChecker, isLoopbackBind } from './host-check.js';
import { fail } from '../../contracts/errors.js';

export interface HttpSurfaceDeps {
  metrics: Metrics;
  db: Db;
  sandbox: { stats(): unknown };
  config: GatewayConfig;
}

const CODE_BY_STATUS: Record<number, string> = {
  400: 'GW_ERR_TRANSPORT_BAD_BODY',
  413: 'GW_ERR_TRANSPORT_BODY_TOO_LARGE',
  415: 'GW_ERR_TRANSPORT_UNSUPPORTED_MEDIA',
  503: 'GW_ERR_TRANSPORT_SHUTTING_DOWN',
};

/**
 * The largest body of a request that carries no key: the app's body limit, which every route but
 * POST /mcp and /rest/:integration (key first, then up to requests.bodyLimitBytes) keeps. The
 * portal's forms are the largest such bodies (a few KiB).
 */
export const KEYLESS_BODY_LIMIT = 64 * 1024;

export function registerHttpSurface(app: FastifyInstance, deps: HttpSurfaceDeps): void {
  parseJsonBodies(app);

  // every answer is per caller (or live state): no shared cache may keep it (a key sent as
  // x-workbench-api-key is not "Authorization", which caches already treat as private), and none
  // is to be sniffed as another type. Routes that want otherwise (portal assets) set their own.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
  });

  app.setErrorHandler(answerError);
  closeUnreadBodies(app);
  app.setNotFoundHandler((request, reply) => {
    void reply
      .code(404)
      .send({ error: `No route ${request.method} ${request.url.split('?')[0]}`, code: 'GW_ERR_TRANSPORT_NOT_FOUND' });
  });
  if (isLoopbackBind(deps.config.host))
    checkHosts(app, deps.config.publicUrl, deps.config.jotsUrl ? [deps.config.jotsUrl] : []);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    deps.metrics.httpRequests.inc(labels);
    deps.metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => readiness(deps, request, reply));
  app.get('/metrics', async (_request, reply) => {
    void reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}

/** Bodies are JSON only (text/plain is refused as any other type): an empty one is {}, except on POST /mcp. */
function parseJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // JSON-RPC has no empty message: on POST /mcp an empty body is a parse error (-32700), not {}.
    if (text.trim() === '' && req.method === 'POST' && req.url.startsWith('/mcp'))
      return done(
        Object.assign(fail('GW_ERR_TRANSPORT_BAD_BODY', { message: 'The body is empty: send a JSON-RPC message' }), {
          statusCode: 400,
        }),
        undefined,
      );
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(
        Object.assign(
          fail('GW_ERR_TRANSPORT_BAD_BODY', { message: `The body is not valid JSON: ${(err as Error).message}` }),
          { statusCode: 400 },
        ),
        undefined,
      );
    }
  });
}

/** An error thrown by a route or by Fastify, answered with its catalogue code (JSON-RPC shaped on /mcp). */
function answerError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
  if (status >= 500) request.log.error({ err }, 'request failed');
  const message = status >= 500 ? 'Internal server error' : err.message;
  const code = CODE_BY_STATUS[status] ?? (status >= 500 ? 'GW_ERR_ENGINE_INTERNAL' : 'GW_ERR_TRANSPORT_BAD_BODY');
  // a body refused before it was read whole (too large, or of a type this route does not take):
  // close the connection, or Node would read the rest of it to keep the connection alive
  if (status === 413 || status === 415) void reply.header('connection', 'close');
  if (request.url.startsWith('/mcp')) {
    void reply
      .code(status)
      .send({ jsonrpc: '2.0', error: { code: status === 400 ? -32700 : -32000, message }, id: null });
    return;
  }
  void reply.code(status).send({ error: message, code });
}

function closeUnreadBodies(app: FastifyInstance): void {
  // a body sent to a route that does not exist is never read: the answer goes at once and the
  // connection is closed behind it (a keyless client could otherwise make the server read and parse
  // bodies for nothing, or hold slow ones open)
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404 || !hasBody(request.headers)) return;
    return reply
      .code(404)
      .header('connection', 'close')
      .send({ error: `No route ${request.method} ${request.url.split('?')[0]}`, code: 'GW_ERR_TRANSPORT_NOT_FOUND' });
  });

  // any answer given before the request's body was read (a GET to the portal's catch-all, a Host
  // check, a refusal): close the connection behind it, or Node reads the rest of the body to keep the
  // connection alive (1 GB announced on a GET was read whole, and a withheld one kept the connection
  // for receiveTimeoutMs)
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.raw.complete && hasBody(request.headers)) void reply.header('connection', 'close');
    return payload;
  });
}

/** On a loopback bind, requests whose Host or Origin is not the gateway's are refused (DNS rebinding). */
function checkHosts(app: FastifyInstance, publicUrl: string, otherUrls: readonly string[]): void {
  const check = createHostChecker(publicUrl, otherUrls);
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    const problem = check(request.headers.host, typeof origin === 'string' ? origin : undefined);
    if (!problem) return;
    const body = request.url.startsWith('/mcp')
      ? { jsonrpc: '2.0', error: { code: -32000, message: problem }, id: null }
      : { error: problem, code: 'GW_ERR_TRANSPORT_HOST_NOT_ALLOWED' };
    return reply.code(403).send(body);
  });
}

async function readiness(deps: HttpSurfaceDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const checks: Record<string, string> = {};
  try {
    await deps.db.get('SELECT 1 AS ok');
    checks['database'] = 'ok';
  } catch (err) {
    // unauthenticated: the driver's text (addresses, database and user names) goes to the log only
    checks['database'] = 'failed';
    request.log.warn({ error: (err as Error).message }, 'readiness: the database check failed');
  }
  const stats = deps.sandbox.stats() as { ready?: boolean } | undefined;
  checks['sandbox'] = stats && stats.ready === false ? 'starting' : 'ok';
  const ready = Object.values(checks).every((v) => v === 'ok');
  return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
}

/** Whether a request says it has a body (a length above 0, or a chunked one). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
