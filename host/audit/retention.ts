/**
 * @module host/audit/retention
 * Deletes audit rows older than `audit.retentionDays` (0, the default, keeps them for ever and
 * deletes nothing). A sweep runs when the gateway starts and then every hour (the timer does not
 * keep the process alive, and stops on close). It deletes by the row's time (`at`, epoch ms on the
 * writing server's clock) against a cutoff on this server's clock, through the index on `at`
 * (migration 14), oldest first, at most RETENTION_BATCH_ROWS rows per statement: on SQLite each
 * statement holds the write lock and the event loop only for that long, and between two
 * statements the sweep pauses as long as the last one took, so requests keep at least half the
 * event loop while a large backlog drains. It stops at the first statement that deletes fewer
 * rows than a batch. On PostgreSQL the rows of a batch are taken with SKIP LOCKED: replicas
 * sweeping at once delete different rows and never wait for each other; all they ever delete is
 * rows past the cutoff, so concurrent sweeps are harmless. A sweep that fails is logged at warn
 * and counted; the next one (an hour later) starts again from the oldest rows left. With the
 * stdout audit sink no row is written, so a sweep finds nothing (or only rows stored while the
 * sink was `database`).
 */
import type { Db } from '../storage/db.js';
import type { Logger } from '../telemetry/logger.js';

export const DAY_MS = 86_400_000;

/**
 * Most rows one DELETE removes. On SQLite (25-45 µs a row: each row leaves four indexes) a backlog
 * swept in batches of 500 delayed the event loop by 22-30 ms at the 99th percentile, against
 * 34-37 ms for batches of 1000, at about the same overall rate; see docs/operations.md, "Audit
 * retention".
 */
export const RETENTION_BATCH_ROWS = 500;

/** Time between the end of one sweep and the start of the next. */
export const RETENTION_INTERVAL_MS = 3_600_000;

export interface AuditRetentionOptions {
  db: Db;
  /** audit.retentionDays; 0 deletes nothing */
  retentionDays: number;
  logger: Logger;
  /** between sweeps, ms (default one hour; tests) */
  intervalMs?: number;
  /** rows per DELETE (default RETENTION_BATCH_ROWS; tests) */
  batchRows?: number;
  /** the wall clock, epoch ms (default Date.now; tests) */
  now?: () => number;
}

export interface AuditRetention {
  /** the time before which rows are deleted now, epoch ms, or undefined when nothing is (retentionDays 0) */
  cutoff(): number | undefined;
  /**
   * Deletes every row older than the cutoff, batch by batch, after any sweep already running;
   * resolves to how many it deleted, or rejects with the database's error (what it deleted before
   * stays deleted and counted).
   */
  sweep(): Promise<number>;
  /** sweeps now and then every intervalMs (nothing when retentionDays is 0) */
  start(): void;
  /** no further sweep starts; a sweep running stops after its current statement; resolves once it has */
  stop(): Promise<void>;
  /** rows deleted since start */
  readonly deleted: number;
  /** scheduled sweeps that failed since start */
  readonly failures: number;
}

/** SKIP LOCKED (PostgreSQL only): a replica's batch leaves out the rows another replica's holds. */
const deleteSql = (kind: Db['kind']): string =>
  `DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < ? ORDER BY at LIMIT ?${kind === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''})`;

export function createAuditRetention(options: AuditRetentionOptions): AuditRetention {
  const { db, logger, retentionDays } = options;
  const intervalMs = options.intervalMs ?? RETENTION_INTERVAL_MS;
  const batchRows = options.batchRows ?? RETENTION_BATCH_ROWS;
  const now = options.now ?? Date.now;
  const sql = deleteSql(db.kind);
  let deleted = 0;
  let failures = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** the sweep running or queued last: each sweep starts after the one before it ends */
  let last: Promise<unknown> = Promise.resolve();

  const cutoff = (): number | undefined => (retentionDays > 0 ? now() - retentionDays * DAY_MS : undefined);

  const sweepOnce = async (): Promise<number> => {
    const before = cutoff();
    if (before === undefined) return 0;
    let total = 0;
    try {
      while (!stopped) {
        const started = performance.now();
        const { changes } = await db.run(sql, [before, batchRows]);
        total += changes;
        deleted += changes;
        if (changes < batchRows) break;
        // as long again as the statement took: requests get at least half the event loop
        const took = performance.now() - started;
        await new Promise((r) => setTimeout(r, Math.max(1, Math.ceil(took))));
      }
    } finally {
      if (total > 0)
        logger.info(
          { deleted: total, cutoff: new Date(before).toISOString(), retentionDays },
          `audit retention: deleted ${total} audit rows older than ${new Date(before).toISOString()} (audit.retentionDays ${retentionDays})`,
        );
    }
    return total;
  };

  const retention: AuditRetention = {
    get deleted() {
      return deleted;
    },
    get failures() {
      return failures;
    },
    cutoff,
    sweep() {
      const run = last.then(sweepOnce);
      last = run.catch(() => undefined);
      return run;
    },
    start() {
      if (retentionDays === 0 || stopped || timer) return;
      const scheduled = async (): Promise<void> => {
        try {
          await retention.sweep();
        } catch (err) {
          failures++;
          logger.warn(
            { err, retentionDays },
            `audit retention: the sweep failed; it is tried again in ${intervalMs >= 60_000 ? `${Math.round(intervalMs / 60_000)} minutes` : `${intervalMs} ms`}; failures are counted in workbench_audit_retention_failures_total`,
          );
        }
        if (!stopped) timer = setTimeout(() => void scheduled(), intervalMs).unref();
      };
      timer = setTimeout(() => void scheduled(), 0).unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await last;
    },
  };
  return retention;
}
