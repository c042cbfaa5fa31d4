/**
 * @module host/storage/postgres
 * PostgreSQL for scale-out: the same interface over a `pg` pool. `?` placeholders are rewritten to
 * `$n`; a transaction holds one pooled client for its duration. BIGINT (COUNT(*), epoch ms) comes
 * back as a number, as it does from SQLite. NUL in text parameters becomes U+FFFD (pgParams).
 */
import pg from 'pg';
import type { Db, SqlValue } from './db.js';
import { fail } from '../../contracts/errors.js';

/** Connections per replica; a replica's statements are short, so a small pool goes a long way. */
export const POOL_MAX = 10;
const START_TIMEOUT_MS = 30_000;

/** Rewrites `?` to `$1, $2, …`, leaving quoted strings, quoted identifiers and comments alone. */
export function toPg(sql: string): string {
  let out = '';
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i] as string;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end === -1 ? sql.length : end + 1;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === '?') out += `$${++n}`;
    else out += c;
  }
  return out;
}

// Per-pool type parsers (not the process-wide pg.types): int8 as a number. Our int8 values are
// epoch milliseconds and counts, far inside 2^53.
const INT8 = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 && format !== 'binary') return (v: string) => Number(v);
    // eslint-disable-next-line @typescript-eslint/no-unsafe-return -- pg's own parser for every other type, typed any by @types/pg
    return pg.types.getTypeParser(oid, format);
  },
};

type Queryable = Pick<pg.Pool, 'query'>;

/**
 * PostgreSQL text cannot hold NUL (U+0000): the statement fails. Values come from requests (tool
 * names, error texts quoting user input, query filters), and an audit row or a query must not fail
 * on one, so in every text parameter NUL becomes U+FFFD, the replacement character — in writes and
 * in lookups alike, so a value still finds itself. (SQLite stores NUL as is.)
 */
export const pgParams = (params: readonly SqlValue[]): SqlValue[] =>
  params.map((v) => (typeof v === 'string' && v.includes('\u0000') ? v.replaceAll('\u0000', '\uFFFD') : v));

function wrap(q: Queryable, pool: pg.Pool): Db {
  const db: Db = {
    kind: 'postgres',
    async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
      return (await q.query(toPg(sql), pgParams(params))).rows as T[];
    },
    async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
      return (await q.query(toPg(sql), pgParams(params))).rows[0] as T | undefined;
    },
    async run(sql: string, params: readonly SqlValue[] = []): Promise<{ changes: number }> {
      return { changes: (await q.query(toPg(sql), pgParams(params))).rowCount ?? 0 };
    },
    async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (q !== pool) return fn(db); // nested: join the outer transaction
      const client = await pool.connect();
      let broken: Error | undefined;
      // A client handed out is no longer covered by the pool's idle 'error' listener: if the server
      // drops its connection (failover, restart, an admin's kill), pg emits 'error' on it, which
      // with nobody listening is an uncaught exception that ends the process. The query in flight
      // rejects on its own; the client is dropped, not returned to the pool.
      const onError = (e: Error): void => {
        broken = e;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client, pool));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => {
          broken = e; // the connection is unusable: drop it instead of returning it to the pool
        });
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    async close(): Promise<void> {
      if (q === pool) await pool.end();
    },
  };
  return db;
}

/** The URL without its password, for messages. */
function describe(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

const TRANSIENT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EAI_AGAIN',
  '57P03' /* cannot_connect_now: starting up */,
]);

/**
 * Opens a pool and checks one round trip. A server that is still starting (or not reachable yet,
 * as when replicas and the database start together) is retried for up to 30 seconds.
 */
export async function openPostgres(url: string, options: { startTimeoutMs?: number } = {}): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_MAX,
    types,
    application_name: 'workbench',
    connectionTimeoutMillis: 10_000,
  });
  // An idle client losing its connection (server restart, failover) must not crash the process:
  // the pool drops it and the next query opens a new one.
  pool.on('error', () => undefined);
  const deadline = Date.now() + (options.startTimeoutMs ?? START_TIMEOUT_MS);
  for (let wait = 250; ; wait = Math.min(wait * 2, 2000)) {
    try {
      await pool.query('SELECT 1');
      return wrap(pool, pool);
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (!TRANSIENT.has(code) || Date.now() + wait > deadline) {
        await pool.end().catch(() => undefined);
        throw fail(
          'GW_ERR_STORAGE_UNAVAILABLE',
          { message: `PostgreSQL at ${describe(url)} is not usable: ${(err as Error).message}` },
          { cause: err },
        );
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
