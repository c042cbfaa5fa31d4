/**
 * @module host/app
 * Wires one gateway: policy → database → vault → plugins → sandbox and bridge → connections →
 * engine → meta-tools → fastify routes. fastify appears here and in host/transport only.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createSandbox, probePlugin, type Sandbox } from './supervisor/index.js';
import { createBridge, createUpstreamMapper, type Resolver } from './bridge/index.js';
import { createDatabaseAuditSink, createStdoutAuditSink, type AuditLineWriter } from './audit/audit.js';
import { createAuditRetention, type AuditRetention, type AuditRetentionOptions } from './audit/retention.js';
import type { GatewayConfig } from './config.js';
import { clientFromEnv } from './connections/oauth.js';
import { createConnectionService, type FullConnectionService } from './connections/service.js';
import { createProviderFetch } from './connections/provider-fetch.js';
import { isUsable } from './connections/types.js';
import { requireSharedKey } from './connections/vault.js';
import { loadVaultWithPending } from './connections/key-files.js';
import { keyUsage, keyUsageWarnings } from './connections/key-rotation.js';
import { createRateLimiter, type ExecutionRateLimiter } from './engine/rate-limit.js';
import { createSharedRateLimiter } from './engine/shared-rate-limit.js';
import type { EngineDeps } from './engine/execute-single.js';
import { loadPolicyFile } from './policy/load.js';
import type { Policy } from './policy/schema.js';
import { pluginRootProblem, type PluginLoadError } from './registry/load-plugins.js';
import { createPluginLoader, type PluginReport } from './registry/plugin-loader.js';
import { sandboxLimits } from './policy/limits.js';
import { Registry } from './registry/registry.js';
import { ContinuationStore } from './results/continuations.js';
import type { Db } from './storage/db.js';
import { openDatabase } from './storage/open.js';
import { createStrikeStore } from './storage/sandbox-strikes.js';
import { UserStore, type User } from './storage/users.js';
import { registerBridgeMetrics } from './telemetry/bridge-metrics.js';
import { createLogger, type Logger } from './telemetry/logger.js';
import { createMetrics, registerReadCounter, type Metrics } from './telemetry/metrics.js';
import { registerSandboxMetrics } from './telemetry/sandbox-metrics.js';
import { registerPluginMetrics } from './telemetry/plugin-metrics.js';
import { createEngineMetaTools } from './meta-tools/engine-tools.js';
import { createConnectionMetaTools } from './connections/meta-tools.js';
import { decideToolAccess, unknownPolicyNames } from './policy/tenancy.js';
import { createDiscoveryMetaTools } from './discovery/meta-tools.js';
import { whyNotConnectable } from './connections/connectable.js';
import type { MetaTool } from './meta-tools/types.js';
import { UserRequests } from './transport/caller-auth.js';
import { KEYLESS_BODY_LIMIT, registerHttpSurface } from './transport/http-surface.js';
import { trackConnections } from './transport/connection-drain.js';
import { registerMcpRoutes } from './transport/mcp-http.js';
import { registerRestRoutes } from './transport/rest.js';
import { registerPortal } from './portal/portal.js';
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
  /**
   * answers the bridge's DNS lookups instead of the system resolver (the security report: names
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
  /** deletes audit rows older than audit.retentionDays (started with the gateway, stopped by close) */
  auditRetention: AuditRetention;
  /** starts listening; resolves to the bound URL */
  listen(): Promise<string>;
  /** stops intake, lets calls in flight finish, then closes the sandbox and the database */
  close(): Promise<void>;
}

export async function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const policy = options.policy ?? loadPolicyFile(config.policyFile);
  // With the stdout audit sink, stdout is the audit stream: logs (and its own failure reports) go to stderr.
  const logger = options.logger ?? createLogger({ level: config.logLevel, destination: policy.audit.sink === 'stdout' ? 'stderr' : 'stdout' });
  // before anything is opened or created: a replica must not generate a key of its own
  requireSharedKey(config.databaseUrl, config.dataDir, options.env ?? process.env);
  const db = await openDatabase(config.databaseUrl, config.dataDir);
  const users = new UserStore(db, { log: logger });
  const vault = loadVaultWithPending({ dataDir: config.dataDir, env: options.env ?? process.env, onWarning: (message) => logger.warn({}, message) });
  // connections a rotation left on an older key (a replica sealed them meanwhile), or on a key this
  // server lacks, or a server started with the key from before the last rotation: say so at start,
  // while the older key can still be kept or restored
  const usage = await keyUsage(db, vault);
  for (const message of keyUsageWarnings(usage, vault))
    logger.warn({ keyId: vault.keyId, rotatedTo: usage.rotatedTo?.keyId, older: usage.older, unknown: usage.unknown }, message);

  // a misspelt WORKBENCH_PLUGINS_DIR, or one naming a plugin folder itself, loaded nothing without a word
  for (const dir of config.pluginDirs) {
    const problem = pluginRootProblem(dir);
    if (problem) logger.warn({ dir }, problem);
  }

  // the bridge first: it may still refuse the policy, and must not leave a sandbox process behind
  const bridge = createBridge({
    upstreams: policy.upstreams,
    allowPrivateCidrs: policy.http.allowPrivateCidrs,
    denyHosts: policy.http.denyHosts,
    requestTimeoutMs: policy.http.requestTimeoutMs,
    maxResponseBytes: policy.http.maxResponseBytes,
    maxRequestBodyBytes: policy.http.maxRequestBodyBytes,
    maxRedirects: policy.http.maxRedirects,
    maxBufferedBytes: policy.http.maxBufferedBytes,
    // "the largest share one plugin may hold", of workers and of the bodies the bridge holds alike
    maxBufferedShare: policy.sandbox.maxWorkerShare,
  }, options.resolver ? { resolver: options.resolver } : {});
  const sandbox = await createSandbox({
    workers: policy.sandbox.workers,
    callsPerWorker: policy.sandbox.callsPerWorker,
    maxQueue: policy.sandbox.maxQueue,
    quarantineAfterCrashes: policy.sandbox.quarantineAfterCrashes,
    quarantineWindowMs: policy.sandbox.quarantineWindowMs,
    maxWorkerShare: policy.sandbox.maxWorkerShare,
    maxUserShare: policy.sandbox.maxUserShare,
    logger,
    // replicas on PostgreSQL share crash strikes: a plugin is quarantined on all of them at once;
    // one SQLite server counts them in memory
    ...(db.kind === 'postgres' ? { strikes: createStrikeStore(db) } : {}),
    ...(options.strikeRefreshMs !== undefined ? { strikeRefreshMs: options.strikeRefreshMs } : {}),
    ...(options.sandboxFaultInjection ? { faultInjection: true } : {}),
  });
  // filled below, once the meta-tools whose names no plugin tool may take exist
  const registry = new Registry([]);
  const mapUrl = createUpstreamMapper(policy.upstreams);
  const providerFetch = createProviderFetch({
    mappedOrigins: Object.values(policy.upstreams),
    allowPrivateCidrs: policy.http.allowPrivateCidrs,
    timeoutMs: policy.http.requestTimeoutMs,
  });
  const connections = createConnectionService({ db, vault, clientFor: clientFromEnv(options.env ?? process.env), mapUrl, logger, fetch: providerFetch });
  const metrics = createMetrics();
  const audit = policy.audit.sink === 'stdout'
      ? createStdoutAuditSink({ logger, ...(options.writeAuditLine ? { write: options.writeAuditLine } : {}) })
      : createDatabaseAuditSink(db, logger);
  registerReadCounter(
    metrics.registry,
    'workbench_audit_write_failures_total',
    'Audit events that could not be written (database locked, read-only or full; stdout closed or its reader too far behind; not serialisable) since start.',
    () => audit.failures,
  );
  // rows older than audit.retentionDays are deleted now and every hour (none with the default 0)
  const auditRetention = createAuditRetention({ db, retentionDays: policy.audit.retentionDays, logger, ...options.auditRetention });
  registerReadCounter(
    metrics.registry,
    'workbench_audit_rows_deleted_total',
    'Audit rows this server deleted because they were older than audit.retentionDays, since start.',
    () => auditRetention.deleted,
  );
  registerReadCounter(
    metrics.registry,
    'workbench_audit_retention_failures_total',
    'Audit retention sweeps that failed (database locked, read-only or unreachable), since start; the next sweep tries again.',
    () => auditRetention.failures,
  );
  // replicas on PostgreSQL share one budget per user and per tenant; one SQLite server counts in memory
  const shared = db.kind === 'postgres' ? createSharedRateLimiter({ db, limits: policy.requests, logger }) : undefined;
  const rateLimiter: ExecutionRateLimiter = shared ?? createRateLimiter(policy.requests);
  // meta-tool calls (search_tools, get_tool_schema, …) per user, apart from executions
  const metaLimits = { perUserPerMinute: policy.requests.metaCallsPerUserPerMinute, perTenantPerMinute: 0 };
  const sharedMeta = db.kind === 'postgres' ? createSharedRateLimiter({ db, limits: metaLimits, logger, prefix: 'm' }) : undefined;
  const metaCalls = countRefusals(sharedMeta ?? createRateLimiter(metaLimits));
  registerReadCounter(
    metrics.registry,
    'workbench_rate_limit_failures_total',
    'Executions and meta-tool calls whose rate limits the database could not count (PostgreSQL unreachable or failing), let through (fail open), since start.',
    () => (shared?.failures ?? 0) + (sharedMeta?.failures ?? 0),
  );
  registerReadCounter(
    metrics.registry,
    'workbench_meta_calls_refused_total',
    'Meta-tool calls (and REST catalog reads) refused with GW_ERR_POLICY_RATE_LIMITED because their user spent requests.metaCallsPerUserPerMinute, since start.',
    () => metaCalls.refused,
  );
  registerSandboxMetrics(metrics.registry, () => sandbox.stats());
  registerBridgeMetrics(metrics.registry, () => bridge.bufferStats());
  const countReload = registerPluginMetrics(metrics.registry, () => ({ plugins: registry.plugins().length, tools: registry.toolCount }));
  const engine: EngineDeps = {
    registry,
    policy,
    connections,
    sandbox,
    bridge,
    audit,
    metrics,
    logger,
    rateLimiter,
  };
  const continuations = new ContinuationStore(db, policy.resultCap.continuationTtlSec, policy.resultCap.maxStoredCharsPerUser);
  const catalogOfPlugins = { plugins: () => registry.manifests(), plugin: (name: string) => registry.plugin(name)?.manifest };
  /** aborted when close() begins */
  const closing = new AbortController();
  const toolAllowed = (user: User, plugin: string, tool: string): boolean => decideToolAccess(policy, user.tenant, plugin, tool).allowed;
  const pluginAllowed = (user: User, plugin: string): boolean => [...(registry.plugin(plugin)?.tools.keys() ?? [])].some((t) => toolAllowed(user, plugin, t));
  const metaTools: MetaTool[] = [
    ...createDiscoveryMetaTools({
      catalog: () => registry.catalog(),
      isAllowed: (user, tool) => toolAllowed(user, tool.integration, tool.name),
      isConnected: async (user, integration) => {
        const manifest = registry.plugin(integration)?.manifest;
        return manifest !== undefined && (await isUsable(connections, user.id, manifest));
      },
      metaTools: () => metaTools,
      whyNotConnectable: (integration) => {
        const manifest = registry.plugin(integration)?.manifest;
        return manifest && whyNotConnectable(manifest, connections.clientFor);
      },
    }),
    ...createEngineMetaTools({ engine, continuations, maxChars: policy.resultCap.maxChars, maxBatch: policy.requests.maxBatch }),
    ...createConnectionMetaTools({
      connections,
      registry: catalogOfPlugins,
      publicUrl: config.publicUrl,
      allowed: pluginAllowed,
      toolAllowed,
      closing: closing.signal,
    }),
  ];
  const plugins = createPluginLoader({
    roots: config.pluginDirs,
    metaToolNames: metaTools.map((m) => m.name),
    registry,
    // plugin.js is only ever evaluated in the sandbox: ask it whether each module loads and exports
    // every tool of its manifest, with the limits its calls get, before listing any tool
    probe: (p) =>
      probePlugin(sandbox, { name: p.manifest.name, version: p.manifest.version, source: p.source, sourceHash: p.sourceHash }, [...p.tools.keys()], sandboxLimits(policy, p.manifest.name)),
    logger,
    onLoaded: () => {
      for (const name of unknownPolicyNames(policy, registry))
        logger.warn({ field: name }, `policy names no loaded plugin or tool: ${name} (it applies to nothing until one is installed)`);
    },
    countReload,
  });
  await plugins.load();

  const receiveMs = policy.requests.receiveTimeoutMs;
  const app: FastifyInstance = Fastify({
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- without it Fastify's type takes pino's Logger and app no longer fits FastifyInstance
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
  registerHttpSurface(app, { metrics, db, sandbox, config });
  const requests = new UserRequests(policy.requests.maxInFlightPerUser);
  registerMcpRoutes(app, {
    users,
    metaTools: () => metaTools,
    version: VERSION,
    logger,
    metaCalls,
    bodyLimit: policy.requests.bodyLimitBytes,
    maxBatch: policy.requests.maxBatch,
    maxBatchResultBytes: policy.requests.maxBatchResultBytes,
    requests,
  });
  registerRestRoutes(app, { engine, users, connections, publicUrl: config.publicUrl, requests, bodyLimit: policy.requests.bodyLimitBytes, metaCalls });
  registerPortal(app, { db, users, connections, registry: catalogOfPlugins, publicUrl: config.publicUrl, allowed: pluginAllowed, logger });
  const drain = trackConnections(app.server);
  if (policy.audit.retentionDays > 0 && policy.audit.sink === 'stdout')
    logger.info(
      { retentionDays: policy.audit.retentionDays },
      'audit.retentionDays applies to the audit rows in the database; with audit.sink "stdout" none are written, so a sweep deletes only rows stored while the sink was "database" (how long audit lines are kept is up to what collects stdout)',
    );
  auditRetention.start();

  let closed = false;
  return {
    config,
    app,
    db,
    users,
    registry,
    get pluginErrors() {
      return plugins.errors();
    },
    reloadPlugins: () => plugins.reload(),
    policy,
    sandbox,
    connections,
    metrics,
    logger,
    engine,
    metaTools,
    requests,
    metaCalls,
    auditRetention,
    async listen() {
      return app.listen({ port: config.port, host: config.host });
    },
    async close() {
      if (closed) return;
      closed = true;
      // waits (wait_for_connection) answer at once instead of holding the drain for minutes
      closing.abort();
      // no sweep starts from here; one running ends after its current statement
      const retentionStopped = auditRetention.stop();
      // from here a sandbox process that dies is not restarted nor blamed on a plugin
      sandbox.beginShutdown();
      await Promise.all([app.close(), drain.endIdleOnceClosed()]);
      await sandbox.close();
      await bridge.close();
      await retentionStopped;
      await db.close();
    },
  };
}

/** A limiter that also counts the takes it refused (for a metric: these refusals are not audited). */
function countRefusals(limiter: ExecutionRateLimiter): ExecutionRateLimiter & { readonly refused: number } {
  let refused = 0;
  const seen = (wait: number | undefined): number | undefined => {
    if (wait !== undefined) refused++;
    return wait;
  };
  return {
    get refused() {
      return refused;
    },
    take(userId, tenant) {
      const wait = limiter.take(userId, tenant);
      return wait instanceof Promise ? wait.then(seen) : seen(wait);
    },
  };
}
