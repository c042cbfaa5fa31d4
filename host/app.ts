/**
 * @module host/app
 * Wires one gateway, in the order it starts: policy and logger → storage (database, users, vault)
 * → bridge and sandbox → connections → metrics, audit and rate limits → engine → meta-tools →
 * plugins → the OAuth authorization server → HTTP routes → audit retention; and closes it in the
 * order that loses nothing. Each
 * step is a function of host/wiring, but for the HTTP server and its routes: fastify appears here,
 * in host/transport and in host/portal only.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Bridge, Resolver } from './bridge/index.js';
import type { AuditLineWriter } from './audit/audit.js';
import type { AuditRetention, AuditRetentionOptions } from './audit/retention.js';
import type { GatewayConfig } from './config.js';
import type { PluginCatalog } from './connections/meta-tools.js';
import type { FullConnectionService } from './connections/service.js';
import type { ExecutionRateLimiter } from './engine/rate-limit.js';
import type { EngineDeps } from './engine/execute-single.js';
import { loadPolicyFile } from './policy/load.js';
import type { Policy } from './policy/schema.js';
import type { PluginLoadError } from './registry/load-plugins.js';
import type { PluginLoader, PluginReport, ReloadOutcome } from './registry/plugin-loader.js';
import type { LoadedPlugin } from './registry/loaded-plugin.js';
import { Registry } from './registry/registry.js';
import { ContinuationStore } from './results/continuations.js';
import type { Db } from './storage/db.js';
import type { User, UserStore } from './storage/users.js';
import type { Sandbox } from './supervisor/index.js';
import { registerBridgeMetrics } from './telemetry/bridge-metrics.js';
import { createLogger, type Logger } from './telemetry/logger.js';
import { createMetrics, type Metrics } from './telemetry/metrics.js';
import { registerPluginMetrics } from './telemetry/plugin-metrics.js';
import { registerSandboxMetrics } from './telemetry/sandbox-metrics.js';
import type { MetaTool } from './meta-tools/types.js';
import type { OAuthServer } from './oauth-server/server.js';
import { registerPortal, type PortalSignIn } from './portal/portal.js';
import { UserRequests } from './transport/caller-auth.js';
import { KEYLESS_BODY_LIMIT, registerHttpSurface } from './transport/http-surface.js';
import { registerMcpRoutes } from './transport/mcp-http.js';
import { registerOAuthRoutes } from './transport/oauth-routes.js';
import { registerRestRoutes } from './transport/rest.js';
import { guardJotsHost, registerJotRoutes } from './transport/jots-routes.js';
import { trackConnections, type ConnectionDrain } from './transport/connection-drain.js';
import { createAudit, startAuditRetention } from './wiring/audit.js';
import { createBuiltins, type Builtins } from './wiring/builtins.js';
import type { BuiltinIntegration } from './builtins/types.js';
import { createConnections } from './wiring/connections.js';
import { createMetaTools, pluginCatalog, policyAccess } from './wiring/meta-tools.js';
import { createOAuth } from './wiring/oauth-server.js';
import { createPlugins, warnAboutPluginRoots } from './wiring/plugins.js';
import { createRateLimits } from './wiring/rate-limits.js';
import { startBridgeAndSandbox } from './wiring/sandbox.js';
import { closeOnce } from './wiring/shutdown.js';
import { createPortalSignIn } from './wiring/sign-in.js';
import { openStorage } from './wiring/storage.js';
import { VERSION } from './version.js';

export interface GatewayOptions {
  /** a parsed policy instead of reading config.policyFile (tests) */
  policy?: Policy;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /** where the stdout audit sink writes (default process.stdout) */
  writeAuditLine?: AuditLineWriter;
  /** how often the sandbox reads the other replicas' crash strikes on PostgreSQL, ms (default 2000; tests) */
  strikeRefreshMs?: number;
  /** lets tests inject sandbox faults (sandbox.injectFault); never set by the CLI */
  sandboxFaultInjection?: boolean;
  /** the audit retention sweep's interval, batch size and clock (tests) */
  auditRetention?: Pick<AuditRetentionOptions, 'intervalMs' | 'batchRows' | 'now'>;
  /** built-in integrations served besides the configured ones (tests); closed with the gateway */
  extraBuiltins?: readonly BuiltinIntegration[];
  /**
   * answers the DNS lookups of the bridge, the browser and the instance checks instead of the system resolver (the security report: names
   * that resolve to private addresses without asking a DNS server); never set by `serve`
   */
  resolver?: Resolver;
}

export interface Gateway {
  config: GatewayConfig;
  app: FastifyInstance;
  db: Db;
  users: UserStore;
  /** the plugins serving now (a reload replaces them in place) */
  registry: Registry;
  /** the plugin folders the latest load or reload refused */
  readonly pluginErrors: PluginLoadError[];
  /** reads the plugin folders again and serves what they hold now (host/registry/plugin-loader.ts) */
  reloadPlugins(): Promise<PluginReport>;
  policy: Policy;
  sandbox: Sandbox;
  connections: FullConnectionService;
  metrics: Metrics;
  logger: Logger;
  engine: EngineDeps;
  metaTools: MetaTool[];
  /** each user's POST requests in flight on this server (requests.maxInFlightPerUser) */
  requests: UserRequests;
  /** each user's budget of meta-tool calls (requests.metaCallsPerUserPerMinute), for every MCP transport */
  metaCalls: ExecutionRateLimiter;
  /** the OAuth authorization server of /mcp; undefined when the policy turns it off (oauthServer.enabled) */
  oauth: OAuthServer | undefined;
  /** deletes audit rows older than audit.retentionDays (started with the gateway, stopped by close) */
  auditRetention: AuditRetention;
  /** starts listening; resolves to the bound URL */
  listen(): Promise<string>;
  /** stops intake, lets calls in flight finish, then closes the sandbox and the database */
  close(): Promise<void>;
}

export async function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const env = options.env ?? process.env;
  const policy = options.policy ?? loadPolicyFile(config.policyFile);
  // With the stdout audit sink, stdout is the audit stream: logs (and its own failure reports) go to stderr.
  const logger =
    options.logger ??
    createLogger({ level: config.logLevel, destination: policy.audit.sink === 'stdout' ? 'stderr' : 'stdout' });
  // before anything starts: a configuration nobody could sign in with stops here
  const signIn = await createPortalSignIn(config, policy, env, logger);
  const { db, users, vault } = await openStorage(config, env, logger);
  warnAboutPluginRoots(config.pluginDirs, logger);
  const { bridge, sandbox } = await startBridgeAndSandbox(policy, db, logger, options);
  // filled below, once the meta-tools whose names no plugin tool may take exist
  const registry = new Registry([]);
  const connections = createConnections(policy, db, vault, env, logger, options.resolver);

  const metrics = createMetrics();
  const { audit, auditRetention } = createAudit(policy, db, logger, metrics, options);
  const { rateLimiter, metaCalls } = createRateLimits(policy, db, logger, metrics);
  const countReload = registerRuntimeMetrics(metrics, sandbox, bridge, registry);

  const engineParts = { registry, policy, connections, sandbox, bridge, audit, metrics, logger, rateLimiter };
  const engine: EngineDeps = { ...engineParts, publicUrl: config.publicUrl };
  const testHooks = { resolver: options.resolver, extra: options.extraBuiltins };
  const builtins = createBuiltins({ config, policy, db, logger, env, ...testHooks });
  const catalog = pluginCatalog(registry);
  const access = policyAccess(policy, registry);
  /** aborted when close() begins */
  const closing = new AbortController();
  const { metaTools, plugins } = await loadTools(
    { config, policy, logger, db, registry, connections, engine, sandbox },
    { access, catalog, closing: closing.signal, builtins: builtins.plugins, countReload },
  );
  const oauth = createOAuth(policy, db, config.publicUrl, logger);

  const app = createHttpApp(policy, logger);
  const served = {
    config,
    policy,
    db,
    users,
    sandbox,
    metrics,
    logger,
    engine,
    connections,
    metaTools,
    metaCalls,
    oauth,
  };
  const requests = new UserRequests(policy.requests.maxInFlightPerUser);
  registerRoutes(app, { ...served, requests, catalog, pluginAllowed: access.pluginAllowed, signIn, builtins });
  const drain = trackConnections(app.server);
  startAuditRetention(policy, auditRetention, logger);

  return gatewayOf(
    app,
    { ...served, requests, registry, auditRetention },
    { plugins, closing, drain, bridge, builtins },
  );
}

/** The meta-tools, and the plugin loader that has filled the registry with the folders' plugins beside the built-ins. */
async function loadTools(
  parts: Pick<EngineDeps, 'policy' | 'logger' | 'registry'> & {
    config: GatewayConfig;
    db: Db;
    connections: FullConnectionService;
    engine: EngineDeps;
    sandbox: Sandbox;
  },
  wiring: {
    access: ReturnType<typeof policyAccess>;
    catalog: PluginCatalog;
    closing: AbortSignal;
    builtins: LoadedPlugin[];
    countReload: (outcome: ReloadOutcome) => void;
  },
): Promise<{ metaTools: MetaTool[]; plugins: PluginLoader }> {
  const { config, policy, logger, registry, sandbox } = parts;
  const metaTools = createMetaTools({
    policy,
    registry,
    connections: parts.connections,
    engine: parts.engine,
    continuations: continuationStore(parts.db, policy),
    access: wiring.access,
    catalog: wiring.catalog,
    publicUrl: config.publicUrl,
    closing: wiring.closing,
  });
  const plugins = createPlugins({
    roots: config.pluginDirs,
    metaTools,
    registry,
    builtins: wiring.builtins,
    sandbox,
    policy,
    logger,
    countReload: wiring.countReload,
  });
  await plugins.load();
  return { metaTools, plugins };
}

/** Where results over the response budget wait for continue_tool_result. */
function continuationStore(db: Db, policy: Policy): ContinuationStore {
  const { continuationTtlSec, maxStoredCharsPerUser } = policy.resultCap;
  return new ContinuationStore(db, continuationTtlSec, maxStoredCharsPerUser);
}

/** The gauges read at each scrape: the sandbox's workers, the bridge's buffers, the plugins served. */
function registerRuntimeMetrics(
  metrics: Metrics,
  sandbox: Sandbox,
  bridge: Bridge,
  registry: Registry,
): ReturnType<typeof registerPluginMetrics> {
  registerSandboxMetrics(metrics.registry, () => sandbox.stats());
  registerBridgeMetrics(metrics.registry, () => bridge.bufferStats());
  return registerPluginMetrics(metrics.registry, () => ({
    plugins: registry.plugins().length,
    tools: registry.toolCount,
  }));
}

/** What the gateway serves, as a Gateway's plain fields. */
type Served = Omit<Gateway, 'app' | 'pluginErrors' | 'reloadPlugins' | 'listen' | 'close'>;

/** The gateway handed to its caller: what it serves, plus its plugin reloads, listen and close. */
function gatewayOf(
  app: FastifyInstance,
  served: Served,
  running: {
    plugins: PluginLoader;
    closing: AbortController;
    drain: ConnectionDrain;
    bridge: Bridge;
    builtins: Builtins;
  },
): Gateway {
  const { plugins, closing, drain, bridge, builtins } = running;
  const { config, sandbox, db, auditRetention } = served;
  return {
    ...served,
    app,
    get pluginErrors() {
      return plugins.errors();
    },
    reloadPlugins: () => plugins.reload(),
    async listen() {
      return app.listen({ port: config.port, host: config.host });
    },
    close: closeOnce({ closing, auditRetention, sandbox, app, drain, bridge, builtins, db }),
  };
}

/** fastify, configured from the policy's request limits. */
function createHttpApp(policy: Policy, logger: Logger): FastifyInstance {
  const receiveMs = policy.requests.receiveTimeoutMs;
  return Fastify({
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- pino's Logger and fastify's base logger differ under exactOptionalPropertyTypes; the assertion makes the instance's logger type FastifyBaseLogger
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
    http: {
      headersTimeout: Math.min(60_000, receiveMs),
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(receiveMs / 4))),
    },
  });
}

interface RouteWiring {
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
  signIn: PortalSignIn;
  oauth: OAuthServer | undefined;
  /** the built-ins whose pages the gateway serves: the jots' sites under /jots/ */
  builtins: Builtins;
}

/** Every route, in order: health and metrics, MCP, the OAuth server, REST, the portal, the jots. */
function registerRoutes(app: FastifyInstance, w: RouteWiring): void {
  const { config, policy } = w;
  const jots = w.builtins.jots;
  // first: on the jots origin nothing but the jots is served
  if (jots) guardJotsHost(app, config.jotsUrl);
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
    tokens: w.oauth,
  });
  if (w.oauth) registerOAuthRoutes(app, w.oauth);
  registerRestRoutes(app, {
    engine: w.engine,
    users: w.users,
    connections: w.connections,
    publicUrl: config.publicUrl,
    requests: w.requests,
    bodyLimit: policy.requests.bodyLimitBytes,
    metaCalls: w.metaCalls,
  });
  const portal = registerPortal(app, {
    db: w.db,
    users: w.users,
    connections: w.connections,
    registry: w.catalog,
    publicUrl: config.publicUrl,
    allowed: w.pluginAllowed,
    logger: w.logger,
    signIn: w.signIn,
    oauth: w.oauth,
    ...(w.builtins.browser ? { browser: w.builtins.browser.liveViews } : {}),
    ...(w.builtins.cookieSignIn ? { cookieBrowser: w.builtins.cookieSignIn } : {}),
  });
  if (jots)
    registerJotRoutes(app, {
      jots: jots.service,
      users: w.users,
      publicUrl: config.publicUrl,
      base: jots.base,
      ...(config.jotsUrl ? { jotsUrl: config.jotsUrl } : {}),
      signedIn: async (request) => (await portal.signedIn(request))?.user,
    });
}
