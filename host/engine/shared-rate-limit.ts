/**
 * @module host/engine/shared-rate-limit
 * The per-user and per-tenant execution budgets of replicas sharing one PostgreSQL database,
 * counted in the database (table `rate_limit_windows`, function `workbench_rate_limit_take`,
 * migration 11) so that every replica spends from one budget per user and per tenant. SQLite (one
 * server) keeps the in-memory limiter of host/engine/rate-limit.ts.
 *
 * - Windows are fixed, one minute long, aligned on the database's clock (`clock_timestamp()`), so
 *   replicas whose clocks disagree still agree on when a window ends. Zero means unlimited: a take
 *   with both limits zero answers at once, without a round trip.
 * - One take is one statement, one round trip (more only when it loses a race under an isolation
 *   stricter than PostgreSQL's default READ COMMITTED: it is retried): the function spends from both budgets under their
 *   row locks and gives both back when either is over its limit, so a refused execution spends
 *   nothing, and two replicas racing for the last unit cannot both get it (the second waits for the
 *   first's lock and counts what it spent).
 * - A refusal answers the seconds until the refusing window ends (at least 1), as in memory.
 * - Ended windows are deleted by `sweep()`: a take starts one (not awaited) when this replica has
 *   not swept for a window's length, so the table holds about the users and tenants that executed
 *   in the last two minutes. A sweep skips the rows takes hold locked, so it never waits for one. Only replicas with a limit set take, and so sweep; with every limit
 *   back at zero the rows left stay until a limit is set again (a row per user and tenant at most).
 * - The database failing during a take (unreachable, pool exhausted, a failover) lets the execution
 *   through: fail open. Everything else an execution needs (the caller's key, its connection and
 *   credential, the audit) is read from or written to the same database, so an outage fails those
 *   executions anyway, while refusing on a blip would answer "rate limited" to callers within their
 *   budget. Each failure is counted (`failures`, exported as workbench_rate_limit_failures_total)
 *   and logged at warn, at most once per window with the count since the last line.
 */
import type { Db } from '../storage/db.js';
import type { Logger } from '../telemetry/logger.js';
import type { ExecutionRateLimiter, RateLimits } from './rate-limit.js';

const WINDOW_MS = 60_000;

/**
 * A take that loses a race under a database whose default isolation is stricter than READ
 * COMMITTED fails with serialization_failure (40001); a deadlock (40P01) should not happen (rows
 * are locked in name order) but is retried alike. Each retry is a new transaction, which sees
 * what the winner spent.
 */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_RETRIES = 8;

export interface SharedRateLimiterOptions {
  db: Db;
  limits: RateLimits;
  logger: Logger;
  /** the length of a window in milliseconds (default 60 s; tests) */
  windowMs?: number;
  /** a monotonic clock in milliseconds, for when to sweep and to log again (tests) */
  now?: () => number;
  /** put before every budget's name, so that two limiters of one database count apart ("m" for meta-tool calls) */
  prefix?: string;
}

export interface SharedRateLimiter extends ExecutionRateLimiter {
  /** undefined when allowed, else the seconds to wait; answered at once (no round trip) when both limits are zero */
  take(userId: string, tenant: string): Promise<number | undefined> | undefined;
  /** deletes the windows that have ended (and any started a window or more ahead of the database's clock); resolves to how many */
  sweep(): Promise<number>;
  /** takes that failed on the database and were let through */
  readonly failures: number;
}

/** A limit as a BIGINT parameter: the policy accepts any non-negative integer. */
const asBigint = (n: number): number => Math.min(n, Number.MAX_SAFE_INTEGER);

export function createSharedRateLimiter(options: SharedRateLimiterOptions): SharedRateLimiter {
  const { db, logger } = options;
  const windowMs = options.windowMs ?? WINDOW_MS;
  const prefix = options.prefix ?? '';
  const now = options.now ?? (() => performance.now());
  const userLimit = asBigint(options.limits.perUserPerMinute);
  const tenantLimit = asBigint(options.limits.perTenantPerMinute);
  let failures = 0;
  let unlogged = 0;
  let loggedAt: number | undefined;
  let sweptAt: number | undefined;

  const failed = (err: unknown): undefined => {
    failures++;
    unlogged++;
    const t = now();
    if (loggedAt === undefined || t - loggedAt >= windowMs) {
      logger.warn(
        { err, failures: unlogged },
        'rate limit: the database could not count this call; calls are let through (fail open) until it answers again; failures are counted in workbench_rate_limit_failures_total, logged at most once a minute',
      );
      loggedAt = t;
      unlogged = 0;
    }
    return undefined;
  };

  const limiter: SharedRateLimiter = {
    get failures() {
      return failures;
    },
    take(userId, tenant) {
      if (userLimit === 0 && tenantLimit === 0) return undefined;
      const t = now();
      if (sweptAt === undefined || t - sweptAt >= windowMs) {
        sweptAt = t;
        limiter
          .sweep()
          .catch((err: unknown) =>
            logger.warn({ err }, 'rate limit: could not delete the ended windows; tried again in a minute'),
          );
      }
      const params = [
        tenantLimit > 0 ? `${prefix}t:${tenant}` : null,
        tenantLimit,
        userLimit > 0 ? `${prefix}u:${userId}` : null,
        userLimit,
        windowMs,
      ];
      const attempt = (retriesLeft: number): Promise<number | undefined> =>
        db.get<{ wait_ms: number | null }>('SELECT workbench_rate_limit_take(?, ?, ?, ?, ?) AS wait_ms', params).then(
          (row) => {
            const waitMs = row?.wait_ms;
            return waitMs === null || waitMs === undefined ? undefined : Math.max(1, Math.ceil(Number(waitMs) / 1000));
          },
          (err: unknown) =>
            retriesLeft > 0 && RETRYABLE.has((err as { code?: unknown }).code as string)
              ? attempt(retriesLeft - 1)
              : failed(err),
        );
      return attempt(MAX_RETRIES);
    },
    async sweep() {
      // SKIP LOCKED: rows a take holds are being spent (so not ended), and a sweep that waited for
      // one while holding another that take waits for next would deadlock with it
      const { changes } = await db.run(
        `WITH clock AS (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms),
         ended AS (
           SELECT name FROM rate_limit_windows, clock WHERE window_start + ? <= clock.now_ms OR window_start > clock.now_ms + ?
           FOR UPDATE OF rate_limit_windows SKIP LOCKED)
         DELETE FROM rate_limit_windows WHERE name IN (SELECT name FROM ended)`,
        [windowMs, windowMs],
      );
      return changes;
    },
  };
  return limiter;
}
