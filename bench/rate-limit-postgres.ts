/**
 * @module bench/rate-limit-postgres
 * What a rate-limit take costs on PostgreSQL (host/engine/shared-rate-limit.ts): the latency of
 * one take (per-user and per-tenant limits both set) next to a bare `SELECT 1` on the same pool,
 * one caller at a time, then takes per second with N callers at once, spread over many users of
 * many tenants and all on one user of one tenant (every take waits for the same row locks).
 * The server is a throwaway one from test/helpers/postgres.ts (Debian's `postgresql` binaries,
 * fsync and synchronous_commit off, as in the tests), on 127.0.0.1.
 * Run: `npx tsc -p . && node dist/bench/rate-limit-postgres.js [--takes 5000] [--callers 16]`.
 */
import { parseArgs } from 'node:util';
import { createSharedRateLimiter } from '../host/engine/shared-rate-limit.js';
import { openDatabase } from '../host/storage/open.js';
import { createLogger } from '../host/telemetry/logger.js';
import { startPostgres } from '../test/helpers/postgres.js';

const { values } = parseArgs({
  options: { takes: { type: 'string', default: '5000' }, callers: { type: 'string', default: '16' } },
});
const takes = Number(values.takes);
const callers = Number(values.callers);

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const us = (ms: number): string => `${(ms * 1000).toFixed(0)} µs`;

/** Runs `op` `n` times one after the other; the per-call latencies in ms, sorted. */
async function serial(n: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await op(i);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

/** Runs `op` `n` times with `c` callers at once; operations per second. */
async function parallel(n: number, c: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      for (let i = next++; i < n; i = next++) await op(i);
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const server = await startPostgres();
  const db = await openDatabase(server.url, '');
  try {
    // limits no take reaches: every take is spent and counted, none refused
    const limiter = createSharedRateLimiter({
      db,
      limits: { perUserPerMinute: 1e9, perTenantPerMinute: 1e9 },
      logger: createLogger({ destination: 'silent' }),
    });
    const take = (i: number): Promise<unknown> =>
      limiter.take(`user-${i % 1000}`, `tenant-${i % 50}`) ?? Promise.resolve();
    const select1 = (): Promise<unknown> => db.get('SELECT 1 AS one');
    // warm-up: connections opened, plans cached, rows created
    await serial(1000, take);
    await serial(1000, select1);

    const bare = await serial(takes, select1);
    const taken = await serial(takes, take);
    console.log(
      `one caller, ${takes} each: SELECT 1 median ${us(quantile(bare, 0.5))}, p99 ${us(quantile(bare, 0.99))}; take median ${us(quantile(taken, 0.5))}, p99 ${us(quantile(taken, 0.99))}`,
    );
    console.log(
      `added by a take over a bare round trip: median ${us(quantile(taken, 0.5) - quantile(bare, 0.5))}; the whole take: median ${us(quantile(taken, 0.5))}`,
    );

    const spread = await parallel(takes, callers, take);
    const hot = await parallel(takes, callers, () => limiter.take('one-user', 'one-tenant') ?? Promise.resolve());
    console.log(
      `${callers} callers at once: ${spread.toFixed(0)} takes/s over 1000 users of 50 tenants; ${hot.toFixed(0)} takes/s all on one user of one tenant`,
    );
    console.log(
      `failures: ${limiter.failures}; rows: ${(await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM rate_limit_windows'))?.n}`,
    );
  } finally {
    await db.close();
    await server.stop();
  }
}

void main();
