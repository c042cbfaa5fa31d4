/**
 * @module host/audit/audit
 * One audit event per execution, on every path. Events go to the database (default) or to stdout
 * as JSON lines. Arguments are stored only when the policy says so. A failure to write an event is
 * logged loudly and counted; it never fails the call the event describes. Events of one turn of
 * the event loop go to the database in one INSERT (createDatabaseAuditSink). The stdout sink counts
 * the same way, but reports through the logger only once per kind of failure (a closed stdout
 * fails every event after it), and never on stdout itself. It also drops (and counts) lines while
 * stdout's reader lags too far behind, so a stalled collector cannot make the gateway buffer audit
 * lines in memory without bound.
 */
import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
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

const AUDIT_COLUMNS =
  '(id, at, action, tenant, user_id, tool, integration, success, error_code, error, duration_ms, transport, request_id, args)';
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
    sql[n] ??=
      `INSERT INTO audit_events ${AUDIT_COLUMNS} VALUES ${Array.from({ length: n }, () => ROW_PLACEHOLDERS).join(', ')}`;
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

/**
 * Writes one audit line. A failure is reported by throwing, or later through `done` (a stream's
 * write callback): process.stdout reports EPIPE there once its reader has gone.
 */
export type AuditLineWriter = (line: string, done: (err?: Error | null) => void) => void;

/**
 * The most bytes the stdout sink lets wait in its stream's buffer (written by the sink, not yet
 * taken by stdout's reader). While the buffer holds this much or more, each new line is dropped
 * and counted as a failure; once the reader catches up below it, lines are written again. So a
 * stalled collector costs at most this plus one line of memory, rather than every line since it
 * stalled. 8 MiB is thousands of lines: a reader that is merely slow for a moment loses nothing.
 */
export const STDOUT_AUDIT_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Streams that already have the listener below (one each, however many sinks write to them). */
const guardedStreams = new WeakSet<Writable>();

/**
 * A failed write is counted through its callback; the 'error' event the stream emits for the same
 * failure would otherwise be unhandled and end the process, so it gets a listener that only keeps
 * it handled.
 */
function guard(out: Writable): void {
  if (guardedStreams.has(out)) return;
  guardedStreams.add(out);
  out.on('error', () => {
    // handled: the write callback of the line that failed counts and reports it
  });
}

export interface StdoutAuditSinkOptions {
  /** where the lines go, with a cap on what may wait in its buffer; default: process.stdout */
  stream?: Writable;
  /** writes each line instead of `stream` (no buffer to cap: the writer keeps what it is given) */
  write?: AuditLineWriter;
  /** where a failure is reported, once per kind; never stdout's own stream */
  logger?: Logger;
}

type FailureKind = 'serialise' | 'write' | 'backpressure';

const FAILURE_MESSAGES: Record<FailureKind, string> = {
  serialise: 'an audit event could not be serialised as JSON',
  write: 'an audit line could not be written to stdout',
  backpressure: `an audit line was dropped: stdout's reader has fallen ${STDOUT_AUDIT_MAX_BUFFERED_BYTES} bytes behind`,
};

export function createStdoutAuditSink(options: StdoutAuditSinkOptions = {}): AuditSink {
  const stream = options.write ? undefined : (options.stream ?? process.stdout);
  if (stream) guard(stream);
  const write: AuditLineWriter = options.write ?? ((line, done) => void stream?.write(line, done));
  let failures = 0;
  const reported = new Set<FailureKind>();

  const lost = (kind: FailureKind, event: AuditEvent, err: unknown): void => {
    failures++;
    if (reported.has(kind)) return;
    reported.add(kind);
    options.logger?.error(
      { err, event: { ...event, args: undefined } },
      `${FAILURE_MESSAGES[kind]}; further failures are counted in workbench_audit_write_failures_total, not logged`,
    );
  };

  return {
    get failures() {
      return failures;
    },
    async record(e) {
      if (stream && stream.writableLength >= STDOUT_AUDIT_MAX_BUFFERED_BYTES) {
        lost('backpressure', e, undefined);
        return;
      }
      let line: string;
      try {
        line =
          JSON.stringify({
            audit: true,
            at: new Date().toISOString(),
            ...e,
            error: e.error?.slice(0, MAX_ERROR_CHARS),
          }) + '\n';
      } catch (err) {
        // a BigInt or a circular value in the arguments
        lost('serialise', e, err);
        return;
      }
      try {
        write(line, (err) => {
          if (err) lost('write', e, err);
        });
      } catch (err) {
        lost('write', e, err);
      }
    },
  };
}
