/**
 * @module host/storage/sandbox-strikes
 * The sandbox's StrikeStore over PostgreSQL (table `sandbox_strikes`, migration 12): the crash
 * strikes of every replica's sandbox, so that a plugin that keeps bringing sandbox processes down
 * is quarantined on all of them after `sandbox.quarantineAfterCrashes` crashes in all
 * (host/supervisor/strike-sync.ts decides when to write and read; admission never waits here).
 * Wired by host/app.ts on PostgreSQL only: a single SQLite server counts strikes in memory.
 *
 * - A strike is dated by the database's clock (`clock_timestamp()`) when written, and read back
 *   with its age on that clock, so replicas whose clocks disagree agree on the window.
 * - A read (`recent`) is one statement: it answers the other origins' strikes within the window
 *   and deletes the rows older than the window or a day, whichever is longer (and any dated more
 *   than that ahead, should the database's clock be stepped back), so the table holds about a day's
 *   strikes. Not just the reader's window: while replicas run with different
 *   `quarantineWindowMs` (a change being rolled out), the shorter must not delete what the longer
 *   still counts. The rows
 *   another replica is deleting at that moment are skipped (SKIP LOCKED): a read never waits for
 *   one, and two reads cannot deadlock.
 */
import { randomUUID } from 'node:crypto';
import type { SharedStrike, StrikeStore } from '../supervisor/index.js';
import type { Db } from './db.js';
import { fail } from '../../contracts/errors.js';

const NOW_MS = 'floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint';
/** rows are kept at least this long, whatever the reader's window */
const KEEP_MS = 24 * 60 * 60 * 1000;

export function createStrikeStore(db: Db): StrikeStore {
  if (db.kind !== 'postgres')
    throw fail('GW_ERR_INTERNAL_INVARIANT', {
      message: 'shared sandbox strikes need PostgreSQL (one SQLite server counts them in memory)',
    });
  return {
    async record(origin, plugin) {
      await db.run(
        `INSERT INTO sandbox_strikes (id, plugin, version, source_hash, origin, at) VALUES (?, ?, ?, ?, ?, ${NOW_MS})`,
        [randomUUID(), plugin.name, plugin.version, plugin.sourceHash, origin],
      );
    },
    async recent(origin, windowMs): Promise<SharedStrike[]> {
      const rows = await db.all<{ plugin: string; version: string; source_hash: string; age_ms: number }>(
        `WITH clock AS (SELECT ${NOW_MS} AS now_ms),
         old AS (
           SELECT id FROM sandbox_strikes, clock WHERE at <= clock.now_ms - ? OR at > clock.now_ms + ?
           FOR UPDATE OF sandbox_strikes SKIP LOCKED),
         gone AS (DELETE FROM sandbox_strikes WHERE id IN (SELECT id FROM old))
         SELECT plugin, version, source_hash, greatest(clock.now_ms - at, 0) AS age_ms FROM sandbox_strikes, clock
         WHERE origin <> ? AND at > clock.now_ms - ? AND at <= clock.now_ms + ?`,
        [Math.max(windowMs, KEEP_MS), Math.max(windowMs, KEEP_MS), origin, windowMs, windowMs],
      );
      return rows.map((r) => ({
        plugin: { name: r.plugin, version: r.version, sourceHash: r.source_hash },
        ageMs: Number(r.age_ms),
      }));
    },
  };
}
