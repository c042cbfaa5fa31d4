/**
 * @module test/host/storage/migrations.test
 * Replicas starting together migrate one database at once: several processes (and several handles
 * in one process) run the migrations on an empty SQLite file and an empty PostgreSQL database at
 * the same instant. None fails, each migration is applied exactly once in total, and the schema is
 * complete.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { partCharsFor, splitParts } from '../../../host/results/parts.js';
import { ContinuationStore } from '../../../host/results/continuations.js';
import { MIGRATIONS, migrate } from '../../../host/storage/migrations.js';
import { backends } from '../../helpers/storage-backends.js';

const run = promisify(execFile);
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrate-child.js');
const PROCESSES = 3;

for (const backend of backends()) {
  describe(`concurrent migrations on ${backend.name}`, { skip: backend.skip }, () => {
    before(() => backend.start());
    after(() => backend.stop());

    test(`${PROCESSES} processes migrating an empty database at the same instant: no error, each migration applied once`, async () => {
      const url = await backend.freshUrl();
      const startAt = Date.now() + 1500; // after every process has loaded and connected
      const outs = await Promise.all(
        Array.from({ length: PROCESSES }, () =>
          run(process.execPath, [CHILD, url, String(startAt)], { timeout: 30_000 }),
        ),
      );
      const applied = outs.map((o) => (JSON.parse(o.stdout.trim()) as { applied: number }).applied);
      assert.equal(
        applied.reduce((s, n) => s + n, 0),
        MIGRATIONS.length,
        `applied per process: ${applied.join(', ')}`,
      );
      const db = await backend.open(url);
      try {
        const rows = await db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
        assert.deepEqual(
          rows.map((r) => r.version),
          MIGRATIONS.map((m) => m.version),
        );
        // The last migrations' columns exist: the schema is complete.
        assert.deepEqual(await db.all('SELECT key_id FROM portal_sessions'), []);
        assert.deepEqual(await db.all('SELECT part_budget, part_ends FROM result_continuations'), []);
        assert.deepEqual(
          await db.all(
            'SELECT id, user_id, tool, part_budget, total_chars, total_parts, created_at, expires_at FROM result_pages',
          ),
          [],
        );
        assert.deepEqual(await db.all('SELECT page_id, part, chunk FROM result_page_parts'), []);
        assert.deepEqual(await db.all('SELECT name, window_start, spent FROM rate_limit_windows'), []);
        // PostgreSQL alone has migration 11's function (SQLite counts rate limits in memory)
        if (backend.name === 'postgres')
          assert.deepEqual(await db.get(`SELECT workbench_rate_limit_take('t:x', 1, NULL, 0, 60000) AS wait_ms`), {
            wait_ms: null,
          });
        assert.deepEqual(await db.all('SELECT id, plugin, version, source_hash, origin, at FROM sandbox_strikes'), []);
      } finally {
        await db.close();
      }
    });

    test('migration 4 on a database in use: sessions opened before it (their key unknown) end, the rest of the data stays', async () => {
      const url = await backend.freshUrl();
      const db = await backend.open(url);
      try {
        assert.equal(
          await migrate(
            db,
            MIGRATIONS.filter((m) => m.version < 4),
          ),
          3,
        );
        const now = Date.now();
        await db.run(`INSERT INTO users (id, email, tenant, created_at) VALUES ('u1', 'old@example.com', 'acme', ?)`, [
          now,
        ]);
        await db.run(
          `INSERT INTO api_keys (id, user_id, hash, prefix, label, created_at) VALUES ('k1', 'u1', 'h1', 'wb_abcdefg', 'old', ?)`,
          [now],
        );
        await db.run(
          `INSERT INTO portal_sessions (id_hash, user_id, csrf, created_at, expires_at, revoked_at) VALUES ('open', 'u1', 'c', ?, ?, NULL)`,
          [now, now + 3_600_000],
        );
        await db.run(
          `INSERT INTO portal_sessions (id_hash, user_id, csrf, created_at, expires_at, revoked_at) VALUES ('ended', 'u1', 'c', ?, ?, ?)`,
          [now - 10, now + 3_600_000, now - 5],
        );
        assert.equal(await migrate(db), MIGRATIONS.length - 3);
        const sessions = await db.all<{ id_hash: string; key_id: string | null; revoked_at: number | null }>(
          'SELECT id_hash, key_id, revoked_at FROM portal_sessions ORDER BY id_hash',
        );
        assert.deepEqual(sessions, [
          { id_hash: 'ended', key_id: null, revoked_at: now - 5 },
          { id_hash: 'open', key_id: null, revoked_at: now },
        ]);
        assert.deepEqual(await db.all('SELECT id, label, revoked_at FROM api_keys'), [
          { id: 'k1', label: 'old', revoked_at: null },
        ]);
        // New sessions record their key, which must exist.
        await db.run(
          `INSERT INTO portal_sessions (id_hash, user_id, key_id, csrf, created_at, expires_at) VALUES ('new', 'u1', 'k1', 'c', ?, ?)`,
          [now, now + 1],
        );
        await assert.rejects(
          db.run(
            `INSERT INTO portal_sessions (id_hash, user_id, key_id, csrf, created_at, expires_at) VALUES ('bad', 'u1', 'nokey', 'c', ?, ?)`,
            [now, now + 1],
          ),
        );
      } finally {
        await db.close();
      }
    });

    test('migration 5 on a database in use: continuations stored before it stay whole and are still served', async () => {
      const url = await backend.freshUrl();
      const db = await backend.open(url);
      try {
        assert.equal(
          await migrate(
            db,
            MIGRATIONS.filter((m) => m.version < 5),
          ),
          4,
        );
        const now = Date.now();
        const body = JSON.stringify({ rows: 'r\u2028"é😀'.repeat(20_000) });
        await db.run(
          `INSERT INTO result_continuations (id, user_id, tool, body, created_at, expires_at) VALUES ('cont_old', 'u1', 'list_rows', ?, ?, ?)`,
          [body, now, now + 3_600_000],
        );
        assert.equal(await migrate(db), MIGRATIONS.length - 4);
        const row = await db.get<Record<string, unknown>>(
          `SELECT id, user_id, tool, body, created_at, expires_at, part_budget, part_ends FROM result_continuations`,
        );
        assert.deepEqual(row, {
          id: 'cont_old',
          user_id: 'u1',
          tool: 'list_rows',
          body,
          created_at: now,
          expires_at: now + 3_600_000,
          part_budget: null,
          part_ends: null,
        });
        // served as before (no boundaries: split on read); a new one keeps its boundaries
        const store = new ContinuationStore(db, 60);
        assert.deepEqual(await store.get('u1', 'cont_old'), { id: 'cont_old', tool: 'list_rows', body });
        const parts = {
          budget: partCharsFor(60_000),
          ends: splitParts(body, partCharsFor(60_000)).map(([, to]) => to),
        };
        const id = await store.put('u1', 'list_rows', body, parts);
        assert.deepEqual(await store.get('u1', id), { id, tool: 'list_rows', body, parts });
      } finally {
        await db.close();
      }
    });

    test('migration 6 on a database in use: continuations stored whole, with or without boundaries, are still paged; new ones are stored a part per row, out of sight of an earlier version', async () => {
      const url = await backend.freshUrl();
      const db = await backend.open(url);
      try {
        assert.equal(
          await migrate(
            db,
            MIGRATIONS.filter((m) => m.version < 6),
          ),
          5,
        );
        const now = Date.now();
        const budget = partCharsFor(60_000);
        const body = JSON.stringify({ rows: 'r\u2028"é😀'.repeat(30_000) });
        const ends = splitParts(body, budget).map(([, to]) => to);
        // migration 5's layout: the body whole, and where its parts end (here: thirds of them, so
        // that paging shows they, not a new split, decide the parts)
        const thirds = splitParts(body, Math.floor(budget / 3)).map(([, to]) => to);
        await db.run(
          `INSERT INTO result_continuations (id, user_id, tool, body, created_at, expires_at) VALUES ('cont_whole', 'u1', 'list_rows', ?, ?, ?)`,
          [body, now, now + 3_600_000],
        );
        await db.run(
          `INSERT INTO result_continuations (id, user_id, tool, body, created_at, expires_at, part_budget, part_ends) VALUES ('cont_bounded', 'u1', 'list_rows', ?, ?, ?, ?, ?)`,
          [body, now, now + 3_600_000, budget, thirds.join(',')],
        );
        assert.equal(await migrate(db), MIGRATIONS.length - 5);
        const store = new ContinuationStore(db, 60);
        const pages = async (id: string): Promise<string[]> => {
          const first = await store.page('u1', id, 1, budget);
          assert.ok(first);
          const chunks: string[] = [];
          for (let part = 1; part <= first.totalParts; part++) {
            const p = await store.page('u1', id, part, budget);
            assert.equal(p?.totalChars, body.length);
            chunks.push(p?.chunk as string);
          }
          assert.equal((await store.page('u1', id, first.totalParts + 1, budget))?.chunk, undefined);
          return chunks;
        };
        const slices = (at: number[]): string[] => at.map((to, k) => body.slice(at[k - 1] ?? 0, to));
        assert.deepEqual(await pages('cont_whole'), slices(ends));
        assert.deepEqual(await pages('cont_bounded'), slices(thirds));
        assert.deepEqual(await db.all('SELECT page_id FROM result_page_parts'), []);
        // a new one: its head in result_pages (where a replica of an earlier version does not look),
        // and one row per part
        const id = await store.put('u1', 'list_rows', body, { budget, ends });
        assert.equal(await db.get('SELECT id FROM result_continuations WHERE id = ?', [id]), undefined);
        assert.deepEqual(
          await db.get('SELECT user_id, tool, part_budget, total_chars, total_parts FROM result_pages WHERE id = ?', [
            id,
          ]),
          { user_id: 'u1', tool: 'list_rows', part_budget: budget, total_chars: body.length, total_parts: ends.length },
        );
        const rows = await db.all<{ part: number; chunk: string }>(
          'SELECT part, chunk FROM result_page_parts WHERE page_id = ? ORDER BY part',
          [id],
        );
        assert.deepEqual(
          rows,
          slices(ends).map((chunk, k) => ({ part: k + 1, chunk })),
        );
        assert.deepEqual(await pages(id), slices(ends));
        assert.deepEqual(await store.get('u1', id), { id, tool: 'list_rows', body, parts: { budget, ends } });
      } finally {
        await db.close();
      }
    });

    test('handles in one process migrating together (PostgreSQL pools; SQLite serialises on its one writer)', async () => {
      const url = await backend.freshUrl();
      const count = backend.name === 'postgres' ? 4 : 1;
      const dbs = await Promise.all(Array.from({ length: count }, () => backend.open(url)));
      try {
        const applied = await Promise.all(dbs.map((db) => migrate(db)));
        assert.equal(
          applied.reduce((s, n) => s + n, 0),
          MIGRATIONS.length,
        );
        assert.deepEqual(
          await Promise.all(dbs.map((db) => migrate(db))),
          dbs.map(() => 0),
        );
      } finally {
        await Promise.all(dbs.map((db) => db.close()));
      }
    });
  });
}
