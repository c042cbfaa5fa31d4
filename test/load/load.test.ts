/**
 * @module test/load/load
 * A bounded load run: the real server process and a second process driving 200 concurrent MCP
 * sessions over Streamable HTTP on loopback, sending execute_tools batches for ~20 s. Zero lost or
 * misaligned results, no 5xx, no failed item, and after a clean SIGTERM the audit rows equal the
 * executions. The figures are printed. (The several-minute variant is bench/load/run.mjs.)
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { runDriver } from './run-driver.js';
import { spawnServer } from '../helpers/server-process.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const SESSIONS = Number(process.env['WORKBENCH_LOAD_SESSIONS'] ?? 200);
const DURATION_MS = Number(process.env['WORKBENCH_LOAD_MS'] ?? 20_000);

describe('load', () => {
  it(
    `${SESSIONS} MCP sessions for ${DURATION_MS / 1000} s: nothing lost or misaligned, no 5xx, audit rows = executions`,
    { timeout: DURATION_MS + 90_000 },
    async () => {
      const server = await spawnServer({
        pluginDirs: [FIXTURES],
        policy: { sandbox: { workers: 2 }, requests: { maxInFlightPerUser: SESSIONS } },
      });
      try {
        const s = await runDriver({
          url: server.url,
          apiKey: server.apiKey,
          sessions: SESSIONS,
          durationMs: DURATION_MS,
          batch: 4,
          timeoutMs: DURATION_MS + 60_000,
        });
        console.log(
          `load: ${s.sessions} sessions, ${s.calls} calls (${s.executions} executions) in ${s.durationMs} ms: ` +
            `${s.callsPerSec} calls/s, ${s.executionsPerSec} executions/s, p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, max ${s.maxMs} ms`,
        );
        assert.ok(s.calls >= SESSIONS, `every session sent at least one batch (${s.calls} calls)`);
        assert.deepEqual(s.callErrors, {}, 'no call failed');
        assert.equal(s.http5xx, 0);
        assert.deepEqual(s.itemErrors, {}, 'no item failed');
        assert.equal(s.misaligned, 0, 'no result lost or misaligned');
        assert.equal(s.okItems, s.executions);
        const code = await server.stop(true);
        assert.equal(code, 0, server.output().stderr.slice(-2000));
        const db = new Database(server.dbFile, { readonly: true });
        try {
          const rows = (
            db.prepare("SELECT COUNT(*) AS n FROM audit_events WHERE tool = 'echo_args' AND success = 1").get() as {
              n: number;
            }
          ).n;
          const all = (db.prepare('SELECT COUNT(*) AS n FROM audit_events').get() as { n: number }).n;
          assert.equal(rows, s.executions, 'one audit row per execution');
          assert.equal(all, s.executions, 'and no other rows');
        } finally {
          db.close();
        }
      } finally {
        await server.stop();
      }
    },
  );
});
