/**
 * @module test/host/storage/rate-limits.test
 * Execution rate limits on PostgreSQL hold across replicas: two gateways on one database share one
 * budget per user and per tenant (the N+1th execution is refused on either, with the seconds left
 * in the database clock's window; a refused execution spends nothing), executions fired at once
 * through both at the limit never overspend, windows roll over on the database's clock, ended
 * windows are swept, zero limits cost no round trip, and a database failing during a take lets the
 * execution through (fail open) with a count and a warning.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pg from 'pg';
import pino from 'pino';
import { generateKey } from '../../../host/connections/vault.js';
import { createSharedRateLimiter } from '../../../host/engine/shared-rate-limit.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import type { Db } from '../../../host/storage/db.js';
import { openDatabase } from '../../../host/storage/open.js';
import { startGateway, type Item, type TestGateway } from '../../helpers/gateway.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { waitFor } from '../../helpers/wait-for.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const MINUTE = 60_000;
const USER_LIMIT = 3;
const TENANT_LIMIT = 5;
const LIMITED = 'GW_ERR_POLICY_RATE_LIMITED';
const silent = pino({ level: 'silent' });

const echo = (text: string) => ({ tool: 'echo_args', args: { text } });

/** The database's clock, in epoch milliseconds. */
async function dbNow(db: Db): Promise<number> {
  const row = await db.get<{ now_ms: number }>(
    'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms',
  );
  return Number(row?.now_ms);
}

/**
 * The start of the database clock's current minute, once at least `needMs` of it are left: a test
 * that counts within one window waits for the next when this one is about to end (it never
 * asserts on time; this only keeps a window boundary out of its way).
 */
async function roomInWindow(db: Db, needMs = 20_000): Promise<number> {
  const now = await dbNow(db);
  const left = MINUTE - (now % MINUTE);
  if (left >= needMs) return now - (now % MINUTE);
  await new Promise((r) => setTimeout(r, left + 50));
  return roomInWindow(db, needMs);
}

async function spentOf(db: Db, name: string): Promise<number | undefined> {
  const row = await db.get<{ spent: number }>('SELECT spent FROM rate_limit_windows WHERE name = ?', [name]);
  return row?.spent;
}

async function mcpItem(client: Client, text: string): Promise<Item> {
  const res = (await client.callTool({ name: 'execute_tools', arguments: { executions: [echo(text)] } })) as {
    content: Array<{ text: string }>;
  };
  return JSON.parse(res.content[0]?.text ?? '{}').results[0] as Item;
}

describe('rate limits shared by replicas on one PostgreSQL database', { skip: postgresSkipReason() ?? false }, () => {
  let server: TestPostgres;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    server = await startPostgres();
    const options = {
      databaseUrl: server.url,
      plugins: [],
      pluginDirs: [FIXTURES],
      env: { WORKBENCH_ENCRYPTION_KEY: generateKey().toString('hex') },
      policy: { requests: { perUserPerMinute: USER_LIMIT, perTenantPerMinute: TENANT_LIMIT } },
      workers: 1,
    };
    [a, b] = await Promise.all([startGateway(options), startGateway(options)]);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
  });

  test('per user: N executions spread over both replicas run, the N+1th is refused on either with the seconds left in the window; refused ones spend nothing', async () => {
    const { user, apiKey } = await a.createUser('per-user@example.com', 'per-user');
    const windowStart = await roomInWindow(a.db);
    assert.equal((await a.execute('echo_args', { text: '1' }, apiKey)).result?.text, '1');
    assert.equal((await b.execute('echo_args', { text: '2' }, apiKey)).result?.text, '2');
    assert.equal((await a.execute('echo_args', { text: '3' }, apiKey)).result?.text, '3');

    const before = await dbNow(a.db);
    const onB = await b.execute('echo_args', { text: '4' }, apiKey);
    const afterRefusal = await dbNow(a.db);
    assert.equal(onB.code, LIMITED, JSON.stringify(onB));
    // the seconds until the database clock's minute ends, as read around the refusal
    const end = windowStart + MINUTE;
    assert.ok(
      onB.retryAfterSec >= Math.max(1, Math.ceil((end - afterRefusal) / 1000)) &&
        onB.retryAfterSec <= Math.ceil((end - before) / 1000),
      `retryAfterSec ${onB.retryAfterSec}`,
    );

    // REST single call on A: 429 with Retry-After, as in memory
    const single = await a.rest('fixture-echo', { tool: 'echo_args', args: { text: '5' } }, apiKey);
    assert.equal(single.status, 429);
    assert.equal(single.json.code, LIMITED);
    assert.equal(Number(single.headers.get('retry-after')), single.json.retryAfterSec);
    assert.ok(single.json.retryAfterSec >= 1 && single.json.retryAfterSec <= 60);
    // MCP on B: the item, with retryAfterSec
    const item = await mcpItem(await b.mcpClient(apiKey), '6');
    assert.equal(item.code, LIMITED);
    assert.ok(item.retryAfterSec >= 1 && item.retryAfterSec <= 60);

    assert.equal(await spentOf(a.db, `u:${user.id}`), USER_LIMIT);
    assert.equal(
      await spentOf(a.db, 't:per-user'),
      USER_LIMIT,
      'the three refused executions spent nothing from the tenant',
    );
    const audited = await a.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM audit_events WHERE user_id = ? AND error_code = ?',
      [user.id, LIMITED],
    );
    assert.equal(audited?.n, 3, 'every refused execution is audited');
    assert.match(await fetch(`${a.url}/metrics`).then((r) => r.text()), /^workbench_rate_limit_failures_total 0$/m);
  });

  test('per tenant: the users of a tenant share its budget across replicas; an execution refused by one budget spends nothing from the other; other tenants are unaffected', async () => {
    const first = await a.createUser('tenant-first@example.com', 'per-tenant');
    const second = await b.createUser('tenant-second@example.com', 'per-tenant');
    const other = await a.createUser('tenant-other@example.com', 'other-tenant');
    await roomInWindow(a.db);
    for (const [gw, text] of [
      [a, 'f1'],
      [b, 'f2'],
      [a, 'f3'],
    ] as const)
      assert.equal((await gw.execute('echo_args', { text }, first.apiKey)).result?.text, text);
    assert.equal(
      (await b.execute('echo_args', { text: 'f4' }, first.apiKey)).code,
      LIMITED,
      "the first user's budget is spent",
    );
    assert.equal(await spentOf(a.db, 't:per-tenant'), 3, 'refused by the user budget: the tenant spent nothing');

    assert.equal((await b.execute('echo_args', { text: 's1' }, second.apiKey)).result?.text, 's1');
    assert.equal((await a.execute('echo_args', { text: 's2' }, second.apiKey)).result?.text, 's2');
    const refused = [
      await b.execute('echo_args', { text: 's3' }, second.apiKey),
      await a.execute('echo_args', { text: 's4' }, second.apiKey),
    ];
    assert.deepEqual(
      refused.map((r) => r.code),
      [LIMITED, LIMITED],
      'the tenant spent 5 of 5',
    );
    assert.ok(refused.every((r) => r.retryAfterSec >= 1 && r.retryAfterSec <= 60));
    assert.equal(await spentOf(a.db, `u:${second.user.id}`), 2, 'refused by the tenant budget: the user spent nothing');
    assert.equal(await spentOf(a.db, 't:per-tenant'), TENANT_LIMIT);

    assert.equal((await b.execute('echo_args', { text: 'other' }, other.apiKey)).result?.text, 'other');
  });

  test('executions fired at once through both replicas at the limit never overspend: exactly the budget runs', async () => {
    const alone = await a.createUser('race-alone@example.com', 'race-user');
    const crowd = await Promise.all([1, 2, 3, 4].map((i) => a.createUser(`race-${i}@example.com`, 'race-tenant')));
    await roomInWindow(a.db);
    // every user sends two batches of 5 to each replica, all at once: 20 executions per user
    const fire = (apiKey: string): Promise<Item[]>[] =>
      [a, b, a, b].map(async (gw, k) => {
        const r = await gw.rest('fixture-echo', { executions: [0, 1, 2, 3, 4].map((i) => echo(`${k}.${i}`)) }, apiKey);
        assert.equal(r.status, 200, JSON.stringify(r.json));
        return r.json.results as Item[];
      });
    const batches = await Promise.all([alone, ...crowd].map(async (u) => (await Promise.all(fire(u.apiKey))).flat()));
    const ran = batches.map((items) => items.filter((it) => it.result !== undefined).length);
    for (const items of batches)
      assert.ok(
        items.every((it) => it.result !== undefined || it.code === LIMITED),
        JSON.stringify(items),
      );
    assert.equal(ran[0], USER_LIMIT, 'one user alone in its tenant: exactly its own budget');
    assert.equal(
      ran.slice(1).reduce((s, n) => s + n, 0),
      TENANT_LIMIT,
      `four users of one tenant: exactly the tenant budget (${ran.join(', ')})`,
    );
    assert.ok(ran.every((n) => n <= USER_LIMIT));
    // and the counts stored are what ran
    assert.equal(await spentOf(a.db, `u:${alone.user.id}`), USER_LIMIT);
    assert.equal(await spentOf(a.db, 't:race-tenant'), TENANT_LIMIT);
    for (const [k, u] of crowd.entries()) assert.equal((await spentOf(a.db, `u:${u.user.id}`)) ?? 0, ran[k + 1]);
  });

  test("windows roll over on the database's clock: a budget spent in an ended window (or one ahead of a clock stepped back) is whole again; one spent in the current or next window is not", async () => {
    const { user, apiKey } = await a.createUser('roll@example.com', 'roll');
    const name = `u:${user.id}`;
    const setUser = (windowStart: number, spent: number): Promise<unknown> =>
      a.db.run(
        'INSERT INTO rate_limit_windows (name, window_start, spent) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET window_start = excluded.window_start, spent = excluded.spent',
        [name, windowStart, spent],
      );
    const win = await roomInWindow(a.db);

    await setUser(win - MINUTE, USER_LIMIT);
    assert.equal((await b.execute('echo_args', { text: 'new window' }, apiKey)).result?.text, 'new window');
    assert.deepEqual(await a.db.get('SELECT window_start, spent FROM rate_limit_windows WHERE name = ?', [name]), {
      window_start: win,
      spent: 1,
    });

    await setUser(win, USER_LIMIT);
    assert.equal((await a.execute('echo_args', { text: 'current' }, apiKey)).code, LIMITED);

    // a replica that read the clock a moment later already started the next window: counted in it
    await setUser(win + MINUTE, USER_LIMIT);
    const next = await b.execute('echo_args', { text: 'next' }, apiKey);
    assert.equal(next.code, LIMITED);
    assert.ok(next.retryAfterSec >= 1 && next.retryAfterSec <= 60, `never more than a window: ${next.retryAfterSec}`);

    // the database's clock was stepped back an hour: the row is far ahead and starts afresh
    await setUser(win + 60 * MINUTE, USER_LIMIT);
    assert.equal((await a.execute('echo_args', { text: 'stepped' }, apiKey)).result?.text, 'stepped');
    assert.deepEqual(await a.db.get('SELECT window_start, spent FROM rate_limit_windows WHERE name = ?', [name]), {
      window_start: win,
      spent: 1,
    });
  });

  describe('the limiter on its own database', () => {
    let db: Db;
    let other: Db;
    before(async () => {
      const url = await server.createDatabase();
      db = await openDatabase(url, '');
      other = await openDatabase(url, '');
    });
    after(async () => {
      await db?.close();
      await other?.close();
    });

    test('two replicas (two pools) racing hundreds of takes: exactly the budget is spent, without a failure', async () => {
      const limits = { perUserPerMinute: 25, perTenantPerMinute: 40 };
      const replicas = [
        createSharedRateLimiter({ db, limits, logger: silent }),
        createSharedRateLimiter({ db: other, limits, logger: silent }),
      ];
      await roomInWindow(db);
      const users = ['r1', 'r2', 'r3'];
      const takes = Array.from({ length: 240 }, (_, i) => ({
        user: users[i % 3] as string,
        result: replicas[i % 2]!.take(users[i % 3] as string, 'race'),
      }));
      const allowed = new Map<string, number>();
      for (const t of takes) if ((await t.result) === undefined) allowed.set(t.user, (allowed.get(t.user) ?? 0) + 1);
      const total = [...allowed.values()].reduce((s, n) => s + n, 0);
      assert.equal(total, 40, `allowed per user: ${JSON.stringify([...allowed])}`);
      for (const u of users) {
        assert.ok((allowed.get(u) ?? 0) <= 25);
        assert.equal((await spentOf(db, `u:${u}`)) ?? 0, allowed.get(u) ?? 0);
      }
      assert.equal(await spentOf(db, 't:race'), 40);
      assert.deepEqual(
        replicas.map((r) => r.failures),
        [0, 0],
      );
    });

    test('under a database whose default isolation is REPEATABLE READ, racing takes retry instead of failing open: exactly the budget is spent', async () => {
      // a take losing a race there fails with serialization_failure (40001); let through, 37 of 50
      // takes got past a limit of 5 before they were retried
      const url = await server.createDatabase();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(
        `ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET default_transaction_isolation = 'repeatable read'`,
      );
      await admin.end();
      const strict = [await openDatabase(url, ''), await openDatabase(url, '')];
      try {
        assert.equal(
          (await strict[0]!.get<{ transaction_isolation: string }>('SHOW transaction_isolation'))
            ?.transaction_isolation,
          'repeatable read',
        );
        const limits = { perUserPerMinute: 0, perTenantPerMinute: 5 };
        const replicas = strict.map((d) => createSharedRateLimiter({ db: d, limits, logger: silent }));
        await roomInWindow(strict[0]!);
        const results = await Promise.all(
          // eslint-disable-next-line @typescript-eslint/await-thenable -- take() answers a promise, or undefined at once when both limits are zero
          Array.from({ length: 50 }, (_, i) => replicas[i % 2]!.take(`s${i}`, 'strict')),
        );
        assert.equal(results.filter((r) => r === undefined).length, 5);
        assert.deepEqual(
          replicas.map((r) => r.failures),
          [0, 0],
        );
        assert.equal(await spentOf(strict[0]!, 't:strict'), 5);
      } finally {
        for (const d of strict) await d.close();
      }
    });

    test('a limiter with a prefix (meta-tool calls) counts apart from the execution budgets of the same user', async () => {
      await roomInWindow(db);
      const executions = createSharedRateLimiter({
        db,
        limits: { perUserPerMinute: 1, perTenantPerMinute: 0 },
        logger: silent,
      });
      const meta = createSharedRateLimiter({
        db,
        limits: { perUserPerMinute: 2, perTenantPerMinute: 0 },
        logger: silent,
        prefix: 'm',
      });
      assert.equal(await executions.take('p1', 'prefix'), undefined);
      assert.ok((await executions.take('p1', 'prefix')) !== undefined);
      assert.equal(await meta.take('p1', 'prefix'), undefined);
      assert.equal(await meta.take('p1', 'prefix'), undefined);
      assert.ok((await meta.take('p1', 'prefix')) !== undefined);
      assert.equal(await spentOf(db, 'u:p1'), 1);
      assert.equal(await spentOf(db, 'mu:p1'), 2);
    });

    test('zero limits: both zero answer at once with no round trip; one zero leaves its budget out', async () => {
      await db.run('DELETE FROM rate_limit_windows');
      const off = createSharedRateLimiter({
        db,
        limits: { perUserPerMinute: 0, perTenantPerMinute: 0 },
        logger: silent,
      });
      for (let i = 0; i < 5; i++)
        assert.equal(off.take('z1', 'zero'), undefined, 'undefined itself, not a promise of it');
      const tenantOnly = createSharedRateLimiter({
        db,
        limits: { perUserPerMinute: 0, perTenantPerMinute: 2 },
        logger: silent,
      });
      await roomInWindow(db);
      assert.equal(await tenantOnly.take('z1', 'zero'), undefined);
      assert.equal(await tenantOnly.take('z2', 'zero'), undefined);
      assert.ok((await tenantOnly.take('z3', 'zero')) !== undefined);
      assert.deepEqual(await db.all('SELECT name, spent FROM rate_limit_windows ORDER BY name'), [
        { name: 't:zero', spent: 2 },
      ]);
    });

    test('the sweep deletes ended windows (and ones a window or more ahead of the clock) and keeps the current and next ones; a take starts it', async () => {
      await db.run('DELETE FROM rate_limit_windows');
      const win = await roomInWindow(db);
      const rows: Array<[string, number]> = [
        ['u:ended', win - MINUTE],
        ['u:ancient', 0],
        ['u:ahead', win + 5 * MINUTE],
        ['u:current', win],
        ['t:next', win + MINUTE],
      ];
      for (const [name, start] of rows)
        await db.run('INSERT INTO rate_limit_windows (name, window_start, spent) VALUES (?, ?, 1)', [name, start]);
      const limiter = createSharedRateLimiter({
        db,
        limits: { perUserPerMinute: 10, perTenantPerMinute: 0 },
        logger: silent,
      });
      assert.equal(await limiter.sweep(), 3);
      assert.deepEqual(
        (await db.all<{ name: string }>('SELECT name FROM rate_limit_windows ORDER BY name')).map((r) => r.name),
        ['t:next', 'u:current'],
      );

      // a fresh limiter sweeps on its first take, without being asked
      await db.run('INSERT INTO rate_limit_windows (name, window_start, spent) VALUES (?, ?, 1)', [
        'u:ended',
        win - MINUTE,
      ]);
      const clock = { t: 0 };
      const fresh = createSharedRateLimiter({
        db,
        limits: { perUserPerMinute: 10, perTenantPerMinute: 0 },
        logger: silent,
        now: () => clock.t,
      });
      assert.equal(await fresh.take('s1', 'sweep'), undefined);
      await waitFor('the ended window to be swept', async () => (await spentOf(db, 'u:ended')) === undefined);
      // and again once a window has passed on this replica's clock
      await db.run('INSERT INTO rate_limit_windows (name, window_start, spent) VALUES (?, ?, 1)', [
        'u:ended',
        win - MINUTE,
      ]);
      clock.t = MINUTE;
      assert.equal(await fresh.take('s1', 'sweep'), undefined);
      await waitFor('the ended window to be swept again', async () => (await spentOf(db, 'u:ended')) === undefined);
      assert.equal(await spentOf(db, 'u:s1'), 2);
    });
  });

  test('the database failing during a take lets the execution through (fail open), counted and logged at warn at most once a minute; counting resumes when it answers', async () => {
    const name = 'wb_rate_fail';
    const url = await server.createDatabase(name);
    const db = await openDatabase(url, '');
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${server.port}/postgres` });
    await admin.connect();
    try {
      const lines: Array<{ level: number; msg: string; failures?: number }> = [];
      const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
      const clock = { t: 0 };
      const limiter = createSharedRateLimiter({
        db,
        limits: { perUserPerMinute: 1, perTenantPerMinute: 0 },
        logger,
        now: () => clock.t,
      });
      await roomInWindow(db);
      assert.equal(await limiter.take('f1', 'fail'), undefined);
      assert.ok((await limiter.take('f1', 'fail')) !== undefined, 'the budget of 1 is spent');

      // the database goes away: new connections are refused and the open ones are ended
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      await waitFor(
        'the connections to end',
        async () => (await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name])).rowCount === 0,
      );
      assert.equal(await limiter.take('f1', 'fail'), undefined, 'let through');
      assert.equal(await limiter.take('f1', 'fail'), undefined, 'let through again');
      assert.equal(limiter.failures, 2);
      const warned = (): typeof lines =>
        lines.filter((l) => l.msg.startsWith('rate limit: the database could not count'));
      assert.equal(warned().length, 1, 'logged once');
      assert.equal(warned()[0]?.level, 40);
      assert.equal(warned()[0]?.failures, 1);
      clock.t = MINUTE;
      assert.equal(await limiter.take('f1', 'fail'), undefined);
      assert.equal(warned().length, 2, 'logged again a minute later');
      assert.equal(warned()[1]?.failures, 2, 'with the failures since the last line');

      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      assert.ok(
        (await limiter.take('f1', 'fail')) !== undefined,
        'counting resumed: the budget spent before is still spent',
      );
      assert.equal(limiter.failures, 3);
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
      await db.close();
    }
  });
});
