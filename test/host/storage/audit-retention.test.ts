/**
 * @module test/host/storage/audit-retention.test
 * The audit retention sweep (host/audit/retention.ts) on a SQLite file and on a real PostgreSQL
 * server: rows older than the cutoff are deleted and the rest kept (rows are written with an old
 * `at` directly, and by the audit sink now), in statements of at most a batch each, oldest first;
 * retentionDays 0 deletes nothing; two replicas sweeping at once delete each old row once and
 * nothing else; a sweep that fails is logged at warn and counted, and the next one deletes what is
 * left. The clock and the interval are injected: nothing waits for an hour.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { createDatabaseAuditSink } from '../../../host/audit/audit.js';
import { createAuditRetention, DAY_MS } from '../../../host/audit/retention.js';
import type { Db } from '../../../host/storage/db.js';
import { migrate } from '../../../host/storage/migrations.js';
import { createLogger, type Logger } from '../../../host/telemetry/logger.js';
import { waitFor } from '../../helpers/wait-for.js';
import { backends } from '../../helpers/storage-backends.js';

const silent = createLogger({ level: 'silent', destination: 'silent' });
/** "now" for every sweep here: a fixed day, so the cutoff is known exactly */
const NOW = Date.UTC(2026, 0, 31, 12, 0, 0);

/** A logger whose lines are kept, parsed. */
function capturingLogger(): { logger: Logger; lines: Array<{ level: number; msg: string; [k: string]: unknown }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  const stream = new PassThrough();
  stream.on('data', (d: Buffer) =>
    lines.push(
      ...d
        .toString()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: number; msg: string }),
    ),
  );
  return { logger: pino({ level: 'info' }, stream), lines };
}

let seq = 0;
/** Writes audit rows straight into the table, `at` as given. */
async function insertAt(db: Db, ats: number[], tag: string): Promise<void> {
  for (let i = 0; i < ats.length; i += 100) {
    const part = ats.slice(i, i + 100);
    await db.run(
      `INSERT INTO audit_events (id, at, action, tenant, user_id, tool, success, duration_ms, transport, request_id) VALUES ${part.map(() => "(?, ?, 'EXECUTE', 'acme', 'u1', ?, 1, 1, 'test', 'r')").join(', ')}`,
      part.flatMap((at) => [`${tag}-${String(++seq).padStart(6, '0')}`, at, tag]),
    );
  }
}

const countTool = async (db: Db, tool: string): Promise<number> =>
  Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM audit_events WHERE tool = ?', [tool]))?.n);

for (const backend of backends()) {
  describe(`audit retention on ${backend.name}`, { skip: backend.skip }, () => {
    let db: Db;
    let url: string;

    before(async () => {
      await backend.start();
      url = await backend.freshUrl();
      db = await backend.open(url);
      await migrate(db);
    });
    after(async () => {
      await db?.close();
      await backend.stop();
    });

    test('rows older than retentionDays are deleted, the rest (the cutoff itself, rows written now) kept; the info line says how many and the cutoff', async () => {
      const cutoff = NOW - 30 * DAY_MS;
      await insertAt(db, [0, NOW - 400 * DAY_MS, cutoff - 60_000, cutoff - 1], 'expired');
      await insertAt(db, [cutoff, cutoff + 1, NOW - DAY_MS, NOW + DAY_MS], 'kept');
      const sink = createDatabaseAuditSink(db, silent);
      await sink.record({
        action: 'EXECUTE',
        tenant: 'acme',
        userId: 'u1',
        tool: 'written_now',
        success: true,
        durationMs: 3,
        transport: 'test',
        requestId: 'r-now',
      });
      const { logger, lines } = capturingLogger();
      const retention = createAuditRetention({ db, retentionDays: 30, logger, now: () => NOW });
      assert.equal(retention.cutoff(), cutoff);

      assert.equal(await retention.sweep(), 4);
      assert.equal(retention.deleted, 4);
      assert.equal(await countTool(db, 'expired'), 0);
      assert.equal(await countTool(db, 'kept'), 4);
      assert.equal(await countTool(db, 'written_now'), 1);
      const info = lines.filter((l) => l.msg.startsWith('audit retention: deleted'));
      assert.equal(info.length, 1, JSON.stringify(lines));
      assert.equal(info[0]?.level, 30);
      assert.equal(info[0]?.['deleted'], 4);
      assert.equal(info[0]?.['cutoff'], new Date(cutoff).toISOString());
      assert.match(
        info[0]?.msg ?? '',
        /deleted 4 audit rows older than 2026-01-01T12:00:00\.000Z \(audit\.retentionDays 30\)/,
      );

      // nothing left to delete: no row goes, and no line is logged
      assert.equal(await retention.sweep(), 0);
      assert.equal(retention.deleted, 4);
      assert.equal(lines.filter((l) => l.msg.startsWith('audit retention: deleted')).length, 1);
      await db.run("DELETE FROM audit_events WHERE tool IN ('kept', 'written_now')");
    });

    test('more rows than one batch: deleted in statements of at most a batch each, oldest first, until one deletes fewer', async () => {
      const old = Array.from({ length: 45 }, (_, i) => NOW - 100 * DAY_MS + i * 1000);
      await insertAt(db, old, 'batched');
      await insertAt(db, [NOW - DAY_MS], 'recent');
      // the real database, with each DELETE's count and the oldest row left after it noted
      const perStatement: Array<{ changes: number; oldestLeft: number }> = [];
      const watched: Db = {
        ...db,
        kind: db.kind,
        async run(sql, params) {
          const out = await db.run(sql, params);
          if (sql.startsWith('DELETE FROM audit_events')) {
            const oldest = await db.get<{ at: number }>(
              "SELECT MIN(at) AS at FROM audit_events WHERE tool = 'batched'",
            );
            perStatement.push({ changes: out.changes, oldestLeft: Number(oldest?.at ?? -1) });
          }
          return out;
        },
      };
      const retention = createAuditRetention({
        db: watched,
        retentionDays: 7,
        logger: silent,
        now: () => NOW,
        batchRows: 10,
      });
      assert.equal(await retention.sweep(), 45);
      assert.deepEqual(
        perStatement.map((s) => s.changes),
        [10, 10, 10, 10, 5],
      );
      // oldest first: after each statement, the oldest row left is the next one in time
      assert.deepEqual(
        perStatement.slice(0, 4).map((s) => s.oldestLeft),
        [old[10], old[20], old[30], old[40]],
      );
      assert.equal(await countTool(db, 'batched'), 0);
      assert.equal(await countTool(db, 'recent'), 1);
      await db.run("DELETE FROM audit_events WHERE tool = 'recent'");
    });

    test('retentionDays 0 (the default) deletes nothing, not even a row from 1970, and schedules no sweep', async () => {
      await insertAt(db, [0, 1, NOW - 10_000 * DAY_MS], 'forever');
      let statements = 0;
      const watched: Db = {
        ...db,
        kind: db.kind,
        run(sql, params) {
          statements++;
          return db.run(sql, params);
        },
      };
      const retention = createAuditRetention({
        db: watched,
        retentionDays: 0,
        logger: silent,
        now: () => NOW,
        intervalMs: 1,
      });
      assert.equal(retention.cutoff(), undefined);
      assert.equal(await retention.sweep(), 0);
      retention.start();
      // a few of its 1 ms intervals: a sweep scheduled anyway would have run a statement by now
      await new Promise((resolve) => setTimeout(resolve, 30));
      await retention.stop();
      assert.equal(statements, 0);
      assert.equal(retention.deleted, 0);
      assert.equal(await countTool(db, 'forever'), 3);
      await db.run("DELETE FROM audit_events WHERE tool = 'forever'");
    });

    test('the sweep finds old rows through the index on at (migration 14)', async () => {
      if (db.kind === 'sqlite') {
        const plan = await db.all<{ detail: string }>(
          'EXPLAIN QUERY PLAN SELECT id FROM audit_events WHERE at < ? ORDER BY at LIMIT ?',
          [NOW, 10],
        );
        assert.match(plan.map((p) => p.detail).join('\n'), /USING INDEX audit_events_at/);
      } else {
        const idx = await db.get<{ indexdef: string }>(
          "SELECT indexdef FROM pg_indexes WHERE tablename = 'audit_events' AND indexname = 'audit_events_at'",
        );
        assert.match(idx?.indexdef ?? '', /\(at\)/);
      }
    });

    test('two replicas sweeping at once: each old row is deleted once, nothing else, no error', async () => {
      const replicas = [await backend.open(url), await backend.open(url)];
      try {
        const old = Array.from({ length: 600 }, (_, i) => NOW - 40 * DAY_MS - i);
        await insertAt(db, old, 'raced');
        await insertAt(db, [NOW - 29 * DAY_MS], 'young');
        const sweeps = replicas.map((r) =>
          createAuditRetention({ db: r, retentionDays: 30, logger: silent, now: () => NOW, batchRows: 25 }),
        );
        const deleted = await Promise.all(sweeps.map((s) => s.sweep()));
        assert.equal(deleted[0]! + deleted[1]!, 600, `deleted by each: ${deleted.join(', ')}`);
        assert.equal(await countTool(db, 'raced'), 0);
        assert.equal(await countTool(db, 'young'), 1);
        await db.run("DELETE FROM audit_events WHERE tool = 'young'");
      } finally {
        for (const r of replicas) await r.close();
      }
    });

    test(
      'PostgreSQL: a sweep passes over old rows another transaction holds instead of waiting for it, and a later sweep deletes them',
      { skip: backend.name !== 'postgres' && 'SQLite has one writer at a time' },
      async () => {
        const holder = await backend.open(url);
        let release = (): void => undefined;
        const released = new Promise<void>((r) => (release = r));
        try {
          await insertAt(db, [NOW - 90 * DAY_MS, NOW - 90 * DAY_MS + 1], 'held');
          await insertAt(
            db,
            Array.from({ length: 12 }, (_, i) => NOW - 80 * DAY_MS + i),
            'free',
          );
          let holding = (): void => undefined;
          const held = new Promise<void>((r) => (holding = r));
          const tx = holder.transaction(async (t) => {
            await t.all("SELECT id FROM audit_events WHERE tool = 'held' FOR UPDATE");
            holding();
            await released;
          });
          await held;
          const retention = createAuditRetention({
            db,
            retentionDays: 30,
            logger: silent,
            now: () => NOW,
            batchRows: 5,
          });
          let bound: NodeJS.Timeout | undefined;
          const waited = new Promise<never>((_, reject) => {
            bound = setTimeout(
              () => reject(new Error('the sweep waited for the rows another transaction holds')),
              15_000,
            );
          });
          try {
            assert.equal(await Promise.race([retention.sweep(), waited]), 12);
          } finally {
            clearTimeout(bound);
          }
          assert.equal(await countTool(db, 'free'), 0);
          assert.equal(await countTool(db, 'held'), 2);
          release();
          await tx;
          assert.equal(await retention.sweep(), 2);
          assert.equal(await countTool(db, 'held'), 0);
        } finally {
          release();
          await holder.close();
        }
      },
    );

    test('a sweep that fails is logged at warn and counted; the next one deletes what is left', async () => {
      await insertAt(
        db,
        Array.from({ length: 30 }, (_, i) => NOW - 50 * DAY_MS + i),
        'retried',
      );
      // the table is out of reach for a while (as a real failure: every statement on it fails)
      await db.run('ALTER TABLE audit_events RENAME TO audit_events_away');
      const { logger, lines } = capturingLogger();
      const retention = createAuditRetention({
        db,
        retentionDays: 30,
        logger,
        now: () => NOW,
        intervalMs: 5,
        batchRows: 10,
      });
      try {
        retention.start();
        await waitFor('a failed sweep', () => retention.failures >= 1);
        const warn = lines.find((l) => l.level === 40);
        assert.ok(warn, JSON.stringify(lines));
        assert.match(
          warn.msg,
          /^audit retention: the sweep failed; it is tried again in 5 ms; failures are counted in workbench_audit_retention_failures_total$/,
        );
        assert.ok(warn['err'], 'the error is logged');
        assert.equal(retention.deleted, 0);
      } finally {
        await db.run('ALTER TABLE audit_events_away RENAME TO audit_events');
      }
      await waitFor('the next sweep to delete the rows', () => retention.deleted === 30);
      await retention.stop();
      assert.equal(await countTool(db, 'retried'), 0);
      assert.ok(
        lines.some((l) => l.level === 30 && l['deleted'] === 30),
        JSON.stringify(lines),
      );
    });
  });
}
