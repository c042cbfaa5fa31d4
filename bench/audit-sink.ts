/**
 * @module bench/audit-sink
 * CPU per audit event written to a real SQLite file (temp dir, migrated schema), with N events
 * recorded in the same turn of the event loop (8: one batch's executions; 1: a lone call).
 * Run: `npx tsc -p . && node dist/bench/audit-sink.js [--rounds 2500] [--per-turn 1,8,64]`.
 * To compare two versions, run it from both builds one after the other.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createDatabaseAuditSink, type AuditEvent } from '../host/audit/audit.js';
import { migrate } from '../host/storage/migrations.js';
import { openSqlite } from '../host/storage/sqlite.js';
import { createLogger } from '../host/telemetry/logger.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '2500' }, 'per-turn': { type: 'string', default: '1,8,64' } },
});
const rounds = Number(values.rounds);
const event: AuditEvent = {
  action: 'EXECUTE',
  tenant: 'acme',
  userId: 'u1',
  tool: 'github_get_issue',
  integration: 'github',
  success: true,
  durationMs: 3,
  transport: 'mcp',
  requestId: 'r',
};

async function main(): Promise<void> {
  for (const perTurn of String(values['per-turn']).split(',').map(Number)) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-audit-bench-'));
    const db = openSqlite(path.join(dir, 'audit.db'));
    try {
      await migrate(db);
      const sink = createDatabaseAuditSink(db, createLogger({ level: 'silent', destination: 'silent' }));
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < rounds; i++) await Promise.all(Array.from({ length: perTurn }, () => sink.record(event)));
      const cpu = process.cpuUsage(c0);
      const events = rounds * perTurn;
      const stored = Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM audit_events'))?.n);
      console.log(
        `${perTurn} per turn: CPU ${((cpu.user + cpu.system) / events).toFixed(1)} µs per event, wall ${(((performance.now() - t0) * 1000) / events).toFixed(1)} µs; ${stored} stored, ${sink.failures} failed`,
      );
    } finally {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

void main();
