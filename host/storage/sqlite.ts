/**
 * @module host/storage/sqlite
 * The embedded default: one SQLite file (WAL mode) through better-sqlite3. Statements are
 * synchronous underneath; transactions are serialised by a queue so that two async transactions
 * never interleave on the one connection.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { Db, SqlValue } from './db.js';

export function openSqlite(file: string): Db {
  // the database holds emails, audit arguments and session secrets: a new one is the owner's only
  // (its -wal and -shm files take the database file's permissions)
  if (file !== ':memory:') {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
    try {
      fs.closeSync(fs.openSync(file, 'wx', 0o600));
    } catch {
      // it exists (kept as it is), or it cannot be created: opening it below says so, with the path
    }
  }
  let raw: Database.Database;
  try {
    raw = new Database(file);
    raw.pragma('journal_mode = WAL');
    raw.pragma('busy_timeout = 5000');
    raw.pragma('foreign_keys = ON');
    raw.pragma('synchronous = NORMAL');
  } catch (err) {
    // better-sqlite3 does not say which file: an operator needs the path and the likely causes
    const e = err as Error & { code?: string };
    throw new Error(`cannot open the SQLite database ${file}: ${e.message}${e.code ? ` (${e.code})` : ''}; check that its directory is writable (not a read-only file system) and that the disk has space`);
  }
  const cache = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = raw.prepare(sql);
      if (cache.size > 500) cache.clear();
      cache.set(sql, stmt);
    }
    return stmt;
  };
  let queue: Promise<unknown> = Promise.resolve();
  let inTx = false;

  const base = {
    kind: 'sqlite' as const,
    async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
      return prepare(sql).all(...params) as T[];
    },
    async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
      return prepare(sql).get(...params) as T | undefined;
    },
    async run(sql: string, params: readonly SqlValue[] = []): Promise<{ changes: number }> {
      const stmt = prepare(sql);
      if (!stmt.reader) return { changes: stmt.run(...params).changes };
      stmt.all(...params);
      return { changes: 0 };
    },
    async close(): Promise<void> {
      await queue.catch(() => undefined);
      raw.close();
    },
  };
  const db: Db = {
    ...base,
    transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (inTx) return fn(db); // nested: join the outer transaction
      const next = queue.then(async () => {
        inTx = true;
        raw.exec('BEGIN IMMEDIATE');
        try {
          const out = await fn(db);
          raw.exec('COMMIT');
          return out;
        } catch (err) {
          if (raw.inTransaction) raw.exec('ROLLBACK');
          throw err;
        } finally {
          inTx = false;
        }
      });
      queue = next.catch(() => undefined);
      return next;
    },
  };
  return db;
}
