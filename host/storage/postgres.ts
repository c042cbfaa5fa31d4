/**
 * @module host/storage/postgres
 * PostgreSQL for scale-out: the same interface over a `pg` pool. `?` placeholders are rewritten to
 * `$n`; a transaction holds one pooled client for its duration.
 */
import pg from 'pg';
import type { Db, SqlValue } from './db.js';

function toPg(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

type Queryable = Pick<pg.Pool, 'query'>;

function wrap(q: Queryable, pool: pg.Pool): Db {
  const db: Db = {
    kind: 'postgres',
    async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
      return (await q.query(toPg(sql), params as SqlValue[])).rows as T[];
    },
    async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
      return (await q.query(toPg(sql), params as SqlValue[])).rows[0] as T | undefined;
    },
    async run(sql: string, params: readonly SqlValue[] = []): Promise<{ changes: number }> {
      return { changes: (await q.query(toPg(sql), params as SqlValue[])).rowCount ?? 0 };
    },
    async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (q !== pool) return fn(db);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client, pool));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async close(): Promise<void> {
      if (q === pool) await pool.end();
    },
  };
  return db;
}

export async function openPostgres(url: string): Promise<Db> {
  // BIGINT columns come back as strings by default; our values are epoch ms, well inside 2^53.
  pg.types.setTypeParser(20, (v) => Number(v));
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query('SELECT 1');
  return wrap(pool, pool);
}
