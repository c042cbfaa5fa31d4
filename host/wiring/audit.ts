/**
 * @module host/wiring/audit
 * Where audit events go (the database or stdout, as the policy says), the retention sweep that
 * deletes old audit rows, and the counters that say when either fails.
 */
import {
  createDatabaseAuditSink,
  createStdoutAuditSink,
  type AuditLineWriter,
  type AuditSink,
} from '../audit/audit.js';
import { createAuditRetention, type AuditRetention, type AuditRetentionOptions } from '../audit/retention.js';
import type { Policy } from '../policy/schema.js';
import type { Db } from '../storage/db.js';
import type { Logger } from '../telemetry/logger.js';
import { registerReadCounter, type Metrics } from '../telemetry/metrics.js';

export interface AuditWiringOptions {
  /** where the stdout audit sink writes (default process.stdout) */
  writeAuditLine?: AuditLineWriter;
  /** the audit retention sweep's interval, batch size and clock */
  auditRetention?: Pick<AuditRetentionOptions, 'intervalMs' | 'batchRows' | 'now'>;
}

export function createAudit(
  policy: Policy,
  db: Db,
  logger: Logger,
  metrics: Metrics,
  options: AuditWiringOptions,
): { audit: AuditSink; auditRetention: AuditRetention } {
  const audit =
    policy.audit.sink === 'stdout'
      ? createStdoutAuditSink({ logger, ...(options.writeAuditLine ? { write: options.writeAuditLine } : {}) })
      : createDatabaseAuditSink(db, logger);
  registerReadCounter(
    metrics.registry,
    'workbench_audit_write_failures_total',
    'Audit events that could not be written (database locked, read-only or full; stdout closed or its reader too far behind; not serialisable) since start.',
    () => audit.failures,
  );
  // rows older than audit.retentionDays are deleted now and every hour (none with the default 0)
  const auditRetention = createAuditRetention({
    db,
    retentionDays: policy.audit.retentionDays,
    logger,
    ...options.auditRetention,
  });
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
  return { audit, auditRetention };
}

/** Starts the retention sweep, the last step of a start (after the routes are registered). */
export function startAuditRetention(policy: Policy, auditRetention: AuditRetention, logger: Logger): void {
  if (policy.audit.retentionDays > 0 && policy.audit.sink === 'stdout')
    logger.info(
      { retentionDays: policy.audit.retentionDays },
      'audit.retentionDays applies to the audit rows in the database; with audit.sink "stdout" none are written, so a sweep deletes only rows stored while the sink was "database" (how long audit lines are kept is up to what collects stdout)',
    );
  auditRetention.start();
}
