/**
 * @module host/wiring/sandbox
 * The bridge (plugins' ctx.http, with credentials) and the sandbox process (plugins' code), both
 * configured from the policy. The bridge comes first: it may still refuse the policy, and must not
 * leave a sandbox process behind.
 */
import { createBridge, type Bridge, type Resolver } from '../bridge/index.js';
import type { Policy } from '../policy/schema.js';
import type { Db } from '../storage/db.js';
import { createStrikeStore } from '../storage/sandbox-strikes.js';
import { createSandbox, type Sandbox } from '../supervisor/index.js';
import type { Logger } from '../telemetry/logger.js';

export interface SandboxWiringOptions {
  /** how often the sandbox reads the other replicas' crash strikes on PostgreSQL, ms */
  strikeRefreshMs?: number;
  /** lets tests inject sandbox faults */
  sandboxFaultInjection?: boolean;
  /** answers the bridge's DNS lookups instead of the system resolver */
  resolver?: Resolver;
}

export async function startBridgeAndSandbox(
  policy: Policy,
  db: Db,
  logger: Logger,
  options: SandboxWiringOptions,
): Promise<{ bridge: Bridge; sandbox: Sandbox }> {
  // the bridge first: it may still refuse the policy, and must not leave a sandbox process behind
  const bridge = createBridge(
    {
      upstreams: policy.upstreams,
      allowPrivateCidrs: policy.http.allowPrivateCidrs,
      denyHosts: policy.http.denyHosts,
      allowHttpInstances: policy.http.allowHttpInstances,
      requestTimeoutMs: policy.http.requestTimeoutMs,
      maxResponseBytes: policy.http.maxResponseBytes,
      maxRequestBodyBytes: policy.http.maxRequestBodyBytes,
      maxRedirects: policy.http.maxRedirects,
      maxBufferedBytes: policy.http.maxBufferedBytes,
      // "the largest share one plugin may hold", of workers and of the bodies the bridge holds alike
      maxBufferedShare: policy.sandbox.maxWorkerShare,
    },
    options.resolver ? { resolver: options.resolver } : {},
  );
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
  return { bridge, sandbox };
}
