/**
 * @module host/audit/audit
 * One audit event per execution, on every path. Events go to the database (default) or to stdout
 * as JSON lines. Arguments are stored only when the policy says so. A failure to write an event is
 * logged loudly and counted; it never fails the call the event describes. Events of one turn of
 * the event loop go to the database in one INSERT (createDatabaseAuditSink).
 */
import { randomUUID } from 'node:crypto';
import type { Db, SqlValue } from '../storage/db.js';
import type { Logger } from '../telemetry/logger.js';

export interface AuditEvent {
  action: 'EXECUTE';
  tenant: string;
  userId: string;
  tool: string;
  /** absent only when the tool name resolves to nothing */
  integration?: string;
  success: boolean;
  errorCode?: string;
  error?: string;
  durationMs: number;
  transport: string;
  requestId: string;
  args?: unknown;
}

export interface AuditSink {
  record(event: AuditEvent): Promise<void>;
  /** events that could not be written */
  readonly failures: number;
}

const MAX_ERROR_CHARS = 2000;

/** Most events one INSERT writes (14 parameters each: well under SQLite's and PostgreSQL's limits). */
export const AUDIT_BATCH_ROWS = 100;

const AUDIT_COLUMNS = '(id, at, action, tenant, user_id, tool, integration, success, error_code, error, duration_ms, transport, request_id, args)';
const ROW_PLACEHOLDERS = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

function auditRow(e: AuditEvent): SqlValue[] {
  return [
    randomUUID(),
    Date.now(),
    e.action,
    e.tenant,
    e.userId,
    e.tool.slice(0, 200),
    e.integration ?? null,
    e.success ? 1 : 0,
    e.errorCode ?? null,
    e.error ? e.error.slice(0, MAX_ERROR_CHARS) : null,
    Math.round(e.durationMs),
    e.transport,
    e.requestId,
    e.args === undefined ? null : JSON.stringify(e.args).slice(0, 64 * 1024),
  ];
}

interface Pending {
  event: AuditEvent;
  row: SqlValue[];
  written: () => void;
}

/**
 * Events recorded in the same turn of the event loop (a batch's executions, or many callers' under
 * load) are written by one multi-row INSERT: one commit instead of one per event, which on SQLite
 * is most of an event's cost (each commit appends every page it touched to the WAL). `record`
 * still resolves only once its event is written (or has failed), so a caller answers after its
 * event is stored, as before. If a multi-row INSERT fails, its events are written one by one, so
 * that exactly the events that cannot be written are counted and logged.
 */
export function createDatabaseAuditSink(db: Db, logger: Logger): AuditSink {
  let failures = 0;
  let queue: Pending[] = [];
  let scheduled = false;

  /** the INSERT for n rows, by n (built once each) */
  const sql: string[] = [];
  const insert = (rows: readonly Pending[]): Promise<unknown> => {
    const n = rows.length;
    sql[n] ??= `INSERT INTO audit_events ${AUDIT_COLUMNS} VALUES ${Array.from({ length: n }, () => ROW_PLACEHOLDERS).join(', ')}`;
    return db.run(sql[n], n === 1 ? (rows[0] as Pending).row : rows.flatMap((p) => p.row));
  };

  const lost = (event: AuditEvent, err: unknown): void => {
    failures++;
    logger.error({ err, event: { ...event, args: undefined } }, 'audit event could not be written');
  };

  const flush = async (): Promise<void> => {
    scheduled = false;
    const batch = queue;
    queue = [];
    for (let i = 0; i < batch.length; i += AUDIT_BATCH_ROWS) {
      const part = batch.slice(i, i + AUDIT_BATCH_ROWS);
      try {
        await insert(part);
      } catch (err) {
        if (part.length === 1) lost((part[0] as Pending).event, err);
        else for (const p of part) await insert([p]).catch((e: unknown) => lost(p.event, e));
      }
      for (const p of part) p.written();
    }
  };

  return {
    get failures() {
      return failures;
    },
    record(e) {
      let row: SqlValue[];
      try {
        row = auditRow(e);
      } catch (err) {
        lost(e, err);
        return Promise.resolve();
      }
      return new Promise<void>((written) => {
        queue.push({ event: e, row, written });
        if (!scheduled) {
          scheduled = true;
          setImmediate(() => void flush());
        }
      });
    },
  };
}

export function createStdoutAuditSink(write: (line: string) => void = (l) => process.stdout.write(l)): AuditSink {
  return {
    failures: 0,
    async record(e) {
      write(JSON.stringify({ audit: true, at: new Date().toISOString(), ...e, error: e.error?.slice(0, MAX_ERROR_CHARS) }) + '\n');
    },
  };
}
