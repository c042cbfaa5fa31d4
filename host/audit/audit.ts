/**
 * @module host/audit/audit
 * One audit event per execution, on every path. Events go to the database (default) or to stdout
 * as JSON lines. Arguments are stored only when the policy says so. A failure to write an event is
 * logged loudly and counted; it never fails the call the event describes.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/db.js';
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

export function createDatabaseAuditSink(db: Db, logger: Logger): AuditSink {
  let failures = 0;
  return {
    get failures() {
      return failures;
    },
    async record(e) {
      try {
        await db.run(
          `INSERT INTO audit_events (id, at, action, tenant, user_id, tool, integration, success, error_code, error, duration_ms, transport, request_id, args)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [
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
          ],
        );
      } catch (err) {
        failures++;
        logger.error({ err, event: { ...e, args: undefined } }, 'audit event could not be written');
      }
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
