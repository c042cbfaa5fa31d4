/**
 * @module host/wiring/http
 * The HTTP server: fastify configured from the policy's request limits, and every route on it in
 * order (health and metrics, MCP, REST, the portal). fastify is created here; the routes
 * themselves live in host/transport and host/portal.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../config.js';
import type { PluginCatalog } from '../connections/meta-tools.js';
import type { FullConnectionService } from '../connections/service.js';
import type { EngineDeps } from '../engine/execute-single.js';
import type { ExecutionRateLimiter } from '../engine/rate-limit.js';
import type { MetaTool } from '../meta-tools/types.js';
import type { Policy } from '../policy/schema.js';
import { registerPortal } from '../portal/portal.js';
import type { Db } from '../storage/db.js';
import type { UserStore, User } from '../storage/users.js';
import type { Sandbox } from '../supervisor/index.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { UserRequests } from '../transport/caller-auth.js';
import { KEYLESS_BODY_LIMIT, registerHttpSurface } from '../transport/http-surface.js';
import { registerMcpRoutes } from '../transport/mcp-http.js';
import { registerRestRoutes } from '../transport/rest.js';
import { VERSION } from '../version.js';

export function createHttpApp(policy: Policy, logger: Logger): FastifyInstance {
  const receiveMs = policy.requests.receiveTimeoutMs;
  return Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // what anyone may send without a key (the portal's forms, and anything to a route that does not
    // exist, which is refused before it is read): POST /mcp and /rest/:integration check the key
    // before the body and set requests.bodyLimitBytes themselves
    bodyLimit: Math.min(KEYLESS_BODY_LIMIT, policy.requests.bodyLimitBytes),
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    // a request (headers and body) must arrive within receiveTimeoutMs, or Node answers 408 and
    // closes the connection: fastify turns Node's limit off, and a client trickling a body held its
    // connection (and the body so far) for ever, and a shutdown with it
    requestTimeout: receiveMs,
    http: { headersTimeout: Math.min(60_000, receiveMs), connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(receiveMs / 4))) },
  });
}

export interface RouteWiring {
  config: GatewayConfig;
  policy: Policy;
  db: Db;
  users: UserStore;
  sandbox: Sandbox;
  metrics: Metrics;
  logger: Logger;
  engine: EngineDeps;
  connections: FullConnectionService;
  metaTools: MetaTool[];
  catalog: PluginCatalog;
  pluginAllowed(user: User, plugin: string): boolean;
  requests: UserRequests;
  metaCalls: ExecutionRateLimiter;
}

export function registerRoutes(app: FastifyInstance, w: RouteWiring): void {
  const { config, policy } = w;
  registerHttpSurface(app, { metrics: w.metrics, db: w.db, sandbox: w.sandbox, config });
  registerMcpRoutes(app, {
    users: w.users,
    metaTools: () => w.metaTools,
    version: VERSION,
    logger: w.logger,
    metaCalls: w.metaCalls,
    bodyLimit: policy.requests.bodyLimitBytes,
    maxBatch: policy.requests.maxBatch,
    maxBatchResultBytes: policy.requests.maxBatchResultBytes,
    requests: w.requests,
  });
  registerRestRoutes(app, { engine: w.engine, users: w.users, connections: w.connections, publicUrl: config.publicUrl, requests: w.requests, bodyLimit: policy.requests.bodyLimitBytes, metaCalls: w.metaCalls });
  registerPortal(app, { db: w.db, users: w.users, connections: w.connections, registry: w.catalog, publicUrl: config.publicUrl, allowed: w.pluginAllowed, logger: w.logger });
}
