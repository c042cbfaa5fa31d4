/**
 * @module host/storage/sqlite
 * The embedded default: one SQLite file (WAL mode) through better-sqlite3. Statements are
 * synchronous underneath; transactions are serialised by a queue so that two async transactions
 * never interleave on the one connection.
 *
 * One connection means one transaction for everything on it: while a transaction awaits, a
 * statement from another request would run inside it, and be rolled back with it (or be told it
 * committed when it was not). So while a transaction is open, statements and transactions that do
 * not come from inside it (told apart by their async context) wait until it ends; those from
 * inside join it, as the `tx` handle's do.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { Db, SqlValue } from './db.js';
import { fail } from '../../contracts/errors.js';

export function openSqlite(file: string): Db {
  if (file !== ':memory:') createOwnerOnly(file);
  const raw = openDatabase(file);
  const prepare = statementCache(raw);
  let queue: Promise<unknown> = Promise.resolve();
  /** the open transaction (set while one runs), and the async context its statements run in */
  let open: object | undefined;
  const inside = new AsyncLocalStorage<object>();
  /** true when a transaction is open and the caller is not part of it: it must wait its turn */
  const mustWait = (): boolean => open !== undefined && inside.getStore() !== open;

  const all = <T>(sql: string, params: readonly SqlValue[]): T[] => prepare(sql).all(...params) as T[];
  const get = <T>(sql: string, params: readonly SqlValue[]): T | undefined =>
    prepare(sql).get(...params) as T | undefined;
  const run = (sql: string, params: readonly SqlValue[]): { changes: number } => {
    const stmt = prepare(sql);
    if (!stmt.reader) return { changes: stmt.run(...params).changes };
    stmt.all(...params);
    return { changes: 0 };
  };
  /** Runs a statement now, or after the open transaction (and those queued before it) when the caller is outside it. */
  const statement = <R>(exec: () => R): Promise<R> => {
    if (mustWait()) return queue.then(exec);
    // at once, as before: a caller that does not await still has its statement run when it returns
    try {
      return Promise.resolve(exec());
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on what the statement threw, unchanged
      return Promise.reject(err);
    }
  };

  const db: Db = {
    kind: 'sqlite' as const,
    all: (sql, params = []) => statement(() => all(sql, params)),
    get: (sql, params = []) => statement(() => get(sql, params)),
    run: (sql, params = []) => statement(() => run(sql, params)),
    async close(): Promise<void> {
      await queue.catch(() => undefined);
      raw.close();
    },
    transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (open !== undefined && !mustWait()) return fn(db); // nested: join the outer transaction
      const next = queue.then(async () => {
        const me = {};
        open = me;
        raw.exec('BEGIN IMMEDIATE');
        try {
          const out = await inside.run(me, () => fn(db));
          raw.exec('COMMIT');
          return out;
        } catch (err) {
          if (raw.inTransaction) raw.exec('ROLLBACK');
          throw err;
        } finally {
          open = undefined;
        }
      });
      queue = next.catch(() => undefined);
      return next;
    },
  };
  return db;
}

/**
 * The database holds emails, audit arguments and session secrets: a new one is the owner's only
 * (its -wal and -shm files take the database file's permissions).
 */
function createOwnerOnly(file: string): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch {
    // it exists (kept as it is), or it cannot be created: opening it below says so, with the path
  }
}

function openDatabase(file: string): Database.Database {
  try {
    const raw = new Database(file);
    raw.pragma('journal_mode = WAL');
    raw.pragma('busy_timeout = 5000');
    raw.pragma('foreign_keys = ON');
    raw.pragma('synchronous = NORMAL');
    return raw;
  } catch (err) {
    // better-sqlite3 does not say which file: an operator needs the path and the likely causes
    const e = err as Error & { code?: string };
    throw fail('GW_ERR_STORAGE_UNAVAILABLE', {
      message: `cannot open the SQLite database ${file}: ${e.message}${e.code ? ` (${e.code})` : ''}; check that its directory is writable (not a read-only file system) and that the disk has space`,
    });
  }
}

/** Prepared statements kept by their SQL (the cache starts over past 500). */
function statementCache(raw: Database.Database): (sql: string) => Database.Statement {
  const cache = new Map<string, Database.Statement>();
  return (sql) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = raw.prepare(sql);
      if (cache.size > 500) cache.clear();
      cache.set(sql, stmt);
    }
    return stmt;
  };
}
