/**
 * @module host/wiring/rate-limits
 * The budgets of executions and of meta-tool calls, per user and per tenant: shared by the replicas
 * through PostgreSQL, counted in memory by one SQLite server; with the counters that say when the
 * database could not count, and how many meta-tool calls were refused.
 */
import { createRateLimiter, type ExecutionRateLimiter } from '../engine/rate-limit.js';
import { createSharedRateLimiter } from '../engine/shared-rate-limit.js';
import type { Policy } from '../policy/schema.js';
import type { Db } from '../storage/db.js';
import type { Logger } from '../telemetry/logger.js';
import { registerReadCounter, type Metrics } from '../telemetry/metrics.js';

export interface RateLimits {
  /** executions (execute_tools, REST) */
  rateLimiter: ExecutionRateLimiter;
  /** meta-tool calls (search_tools, get_tool_schema, …) per user, apart from executions */
  metaCalls: ExecutionRateLimiter & { readonly refused: number };
}

export function createRateLimits(policy: Policy, db: Db, logger: Logger, metrics: Metrics): RateLimits {
  // replicas on PostgreSQL share one budget per user and per tenant; one SQLite server counts in memory
  const shared = db.kind === 'postgres' ? createSharedRateLimiter({ db, limits: policy.requests, logger }) : undefined;
  const rateLimiter: ExecutionRateLimiter = shared ?? createRateLimiter(policy.requests);
  // meta-tool calls (search_tools, get_tool_schema, …) per user, apart from executions
  const metaLimits = { perUserPerMinute: policy.requests.metaCallsPerUserPerMinute, perTenantPerMinute: 0 };
  const sharedMeta =
    db.kind === 'postgres' ? createSharedRateLimiter({ db, limits: metaLimits, logger, prefix: 'm' }) : undefined;
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
  return { rateLimiter, metaCalls };
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
