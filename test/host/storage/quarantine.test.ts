/**
 * @module test/host/storage/quarantine.test
 * Sandbox quarantine on PostgreSQL holds across replicas: two gateways on one database with
 * quarantineAfterCrashes 2, one crash blamed on a plugin on each (as when V8 loses its isolate, while
 * a call of it waits on its upstream), and the plugin is quarantined on both while an innocent
 * plugin is not; a replica running another version of its code (another source hash) is not
 * affected. On the store of its own database, a sandbox ignores and deletes the strikes older than
 * the window (and its own strikes are not counted twice), logs at warn a quarantine other
 * replicas' strikes had a part in, and, with the database refusing connections, quarantines on its
 * own strikes alone, counting and logging the failures without failing a call. A crash whose cause
 * is unknown (a signal) strikes the plugins in flight on that replica only.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { generateKey } from '../../../host/connections/vault.js';
import type { Db } from '../../../host/storage/db.js';
import { openDatabase } from '../../../host/storage/open.js';
import { createStrikeStore } from '../../../host/storage/sandbox-strikes.js';
import { createSandbox, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { waitFor } from '../../helpers/wait-for.js';
import {
  callTool,
  captureLogger,
  egressPolicy,
  errorCode,
  hashOf,
  type CallSpec,
  type LogLine,
} from '../../helpers/sandbox/harness.js';
import {
  startUpstream as startSandboxUpstream,
  type Upstream as SandboxUpstream,
} from '../../helpers/sandbox/upstream.js';

const QUARANTINED = 'GW_ERR_SANDBOX_QUARANTINED';
const CRASHED = 'GW_ERR_SANDBOX_CRASHED';
const WINDOW_MS = 600_000;
const HOUR = 3_600_000;

const CRASHER = `export default {
  async crasher_hold(ctx) { const r = await ctx.http('https://api.hold.test/hold'); return r.status; },
  async crasher_ping() { return 'pong'; },
};
`;

/** Writes a plugin folder (no auth; its calls may reach https://api.hold.test) under `root`. */
function writePlugin(root: string, name: string, version: string, tools: string[], source: string): void {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  const manifest = {
    name,
    version,
    displayName: name,
    description: `Test plugin ${name}.`,
    auth: { type: 'none' },
    egress: ['api.hold.test'],
    tools: tools.map((t) => ({ name: t, description: `${t}.`, inputSchema: { type: 'object', properties: {} } })),
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  fs.writeFileSync(path.join(dir, 'plugin.js'), source);
}

const quarantinedOn = (gw: TestGateway): string[] => gw.gateway.sandbox.stats().quarantined.map((q) => q.plugin);
const metric = async (gw: TestGateway, name: string): Promise<number> => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(await fetch(`${gw.url}/metrics`).then((r) => r.text()));
  return Number(m?.[1]);
};

describe(
  'sandbox quarantine shared by replicas on one PostgreSQL database',
  { skip: postgresSkipReason() ?? false },
  () => {
    let server: TestPostgres;
    let upstream: Upstream;
    let plugins: string;
    let a: TestGateway;
    let b: TestGateway;
    /** answers the requests the upstream holds */
    let release: () => void = () => undefined;

    const options = (pluginDir: string) => ({
      databaseUrl: server.url,
      plugins: [],
      pluginDirs: [pluginDir],
      upstreams: { 'https://api.hold.test': upstream.origin },
      env: { WORKBENCH_ENCRYPTION_KEY: key },
      policy: { sandbox: { quarantineAfterCrashes: 2, quarantineWindowMs: WINDOW_MS, maxWorkerShare: 1 } },
      workers: 1,
      strikeRefreshMs: 50,
      faultInjection: true,
    });
    const key = generateKey().toString('hex');

    before(async () => {
      server = await startPostgres();
      let held: Array<() => void> = [];
      release = () => {
        for (const r of held) r();
        held = [];
      };
      upstream = await startUpstream(
        () => new Promise((resolve) => held.push(() => resolve({ json: { held: true } }))),
      );
      plugins = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-quarantine-'));
      writePlugin(path.join(plugins, 'v1'), 'crasher', '1.0.0', ['crasher_hold', 'crasher_ping'], CRASHER);
      writePlugin(
        path.join(plugins, 'v1'),
        'innocent',
        '1.0.0',
        ['innocent_ping'],
        `export default { async innocent_ping() { return 'fine'; } };\n`,
      );
      [a, b] = await Promise.all([
        startGateway(options(path.join(plugins, 'v1'))),
        startGateway(options(path.join(plugins, 'v1'))),
      ]);
    });
    after(async () => {
      release();
      await a?.close();
      await b?.close();
      await upstream?.close();
      await server?.stop();
      if (plugins) fs.rmSync(plugins, { recursive: true, force: true });
    });

    /**
     * Brings `gw`'s sandbox process down, blamed on crasher (as when V8 loses its isolate: only such
     * strikes are shared), while a call of crasher waits on the upstream.
     */
    async function crash(gw: TestGateway): Promise<void> {
      const seen = upstream.requests.length;
      const call = gw.execute('crasher_hold');
      await waitFor('the call to reach the upstream', () => upstream.requests.length > seen);
      const plugin = gw.gateway.registry.plugin('crasher');
      assert.ok(plugin);
      gw.gateway.sandbox.injectFault?.({
        kind: 'catastrophic',
        culprit: { name: 'crasher', version: plugin.manifest.version, sourceHash: plugin.sourceHash },
      });
      const item = await call;
      release();
      assert.equal(item.code, CRASHED, JSON.stringify(item));
      await waitFor('the sandbox process to be back', () => gw.gateway.sandbox.stats().ready);
    }

    test('one crash on A and one on B: the plugin is quarantined on both, an innocent plugin is not', async () => {
      await crash(a);
      assert.deepEqual(quarantinedOn(a), [], 'one crash of two');
      assert.equal((await b.execute('crasher_ping')).result, 'pong', 'nor on B');

      await crash(b);
      await waitFor('B to quarantine crasher', () => quarantinedOn(b).includes('crasher@1.0.0'));
      await waitFor('A to learn it from the database', () => quarantinedOn(a).includes('crasher@1.0.0'));
      for (const gw of [a, b]) {
        const refused = await gw.execute('crasher_ping');
        assert.equal(refused.code, QUARANTINED, JSON.stringify(refused));
        assert.match(refused.error ?? '', /crasher@1\.0\.0 crashed the sandbox 2 times/);
        assert.deepEqual(quarantinedOn(gw), ['crasher@1.0.0']);
        assert.equal(await metric(gw, 'workbench_sandbox_quarantined_plugins'), 1);
        assert.equal(await metric(gw, 'workbench_sandbox_strike_sync_failures_total'), 0);
        assert.equal((await gw.execute('innocent_ping')).result, 'fine', 'the innocent plugin runs');
      }
      // one row per crash, written by two replicas
      const rows = await a.db.all<{ plugin: string; origin: string }>('SELECT plugin, origin FROM sandbox_strikes');
      assert.deepEqual(
        rows.map((r) => r.plugin),
        ['crasher', 'crasher'],
      );
      assert.equal(new Set(rows.map((r) => r.origin)).size, 2);
    });

    test('a replica running another version of the code (another source hash) runs it: strikes count per source hash', async () => {
      // after the test above: crasher@1.0.0 is quarantined on the database
      const v2 = path.join(plugins, 'v2');
      writePlugin(v2, 'crasher', '1.0.1', ['crasher_hold', 'crasher_ping'], CRASHER.replace("'pong'", "'pong 2'"));
      const c = await startGateway(options(v2));
      try {
        assert.deepEqual(
          quarantinedOn(c),
          ['crasher@1.0.0'],
          'it knows the quarantine of the other version (read as it started)',
        );
        assert.equal((await c.execute('crasher_ping')).result, 'pong 2');
        assert.equal(
          (await a.execute('crasher_ping')).code,
          QUARANTINED,
          'and the quarantined version stays quarantined',
        );
      } finally {
        await c.close();
      }
    });
  },
);

describe(
  'a sandbox sharing strikes through its own PostgreSQL database',
  { skip: postgresSkipReason() ?? false },
  () => {
    let server: TestPostgres;
    let up: SandboxUpstream;
    let bridge: Bridge;
    const SLOW = `export default { async run(ctx) { await ctx.http('https://api.example.com/slow?ms=4000'); return 'slept'; }, async quick() { return 'quick'; } };`;
    const LONG = { wallMsPerCall: 8000 };

    before(async () => {
      server = await startPostgres();
      up = await startSandboxUpstream();
      bridge = createBridge(
        egressPolicy({ upstreams: { 'https://api.example.com': up.origin }, requestTimeoutMs: 8000 }),
      );
    });
    after(async () => {
      await bridge?.close();
      await up?.close();
      await server?.stop();
    });

    /**
     * Brings `sandbox`'s process down while a call of each plugin named waits on the upstream: blamed
     * on `culprit` (one of them, as when V8 loses its isolate: a strike shared with other replicas),
     * or, without one, killed by a signal (every plugin in flight struck, here only).
     */
    async function crashWith(sandbox: Sandbox, names: string[], culprit?: string): Promise<void> {
      const seen = up.received.length;
      const calls = names.map((name) => callTool(sandbox, bridge, { name, source: SLOW, limits: LONG }));
      await waitFor('the calls to reach the upstream', () => up.received.length >= seen + names.length);
      if (culprit)
        sandbox.injectFault?.({
          kind: 'catastrophic',
          culprit: { name: culprit, version: '1.0.0', sourceHash: hashOf(SLOW) },
        });
      else process.kill(sandbox.stats().pid as number, 'SIGKILL');
      assert.deepEqual(
        (await Promise.all(calls)).map(errorCode),
        names.map(() => CRASHED),
      );
    }
    const quick = (sandbox: Sandbox, name: string): ReturnType<typeof callTool> =>
      callTool(sandbox, bridge, { name, source: SLOW, tool: 'quick' } satisfies CallSpec);

    async function dbNow(db: Db): Promise<number> {
      const row = await db.get<{ now_ms: number }>(
        'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms',
      );
      return Number(row?.now_ms);
    }

    test("the store answers the other origins' strikes within the window, with their age on the database's clock, and deletes those older than a day (a replica with a longer window may still count the others)", async () => {
      const db = await openDatabase(await server.createDatabase(), '');
      try {
        const store = createStrikeStore(db);
        const now = await dbNow(db);
        const rows: Array<[string, string, number]> = [
          ['ended', 'other', now - 25 * HOUR],
          ['ahead', 'other', now + 25 * HOUR], // dated by a clock since stepped back a day
          ['outside', 'other', now - 61_000], // out of this reader's window, not of a longer one's: kept
          ['recent', 'other', now - 30_000],
          ['mine', 'me', now - 1_000],
        ];
        for (const [id, origin, at] of rows)
          await db.run(
            'INSERT INTO sandbox_strikes (id, plugin, version, source_hash, origin, at) VALUES (?, ?, ?, ?, ?, ?)',
            [id, `p-${id}`, '2.0.0', 'ab12', origin, at],
          );
        await store.record('other', { name: 'p-now', version: '1.0.0', sourceHash: 'cd34' });
        const read = await store.recent('me', 60_000);
        const after = await dbNow(db);
        assert.deepEqual(
          read.map((s) => s.plugin).sort((x, y) => x.name.localeCompare(y.name)),
          [
            { name: 'p-now', version: '1.0.0', sourceHash: 'cd34' },
            { name: 'p-recent', version: '2.0.0', sourceHash: 'ab12' },
          ],
        );
        const age = read.find((s) => s.plugin.name === 'p-recent')?.ageMs ?? -1;
        assert.ok(age >= 30_000 && age <= after - now + 30_000, `age ${age}`);
        assert.deepEqual(
          (await db.all<{ plugin: string }>('SELECT plugin FROM sandbox_strikes ORDER BY plugin')).map((r) => r.plugin),
          ['p-mine', 'p-now', 'p-outside', 'p-recent'],
        );
      } finally {
        await db.close();
      }
    });

    /** a sandbox sharing strikes through `db` (2 crashes in a minute quarantine), read every 50 ms, logging into `lines` */
    const sharingSandbox = (db: Db, lines: LogLine[]) =>
      createSandbox({
        workers: 2,
        maxQueue: 10,
        maxWorkerShare: 1,
        quarantineAfterCrashes: 2,
        quarantineWindowMs: 60_000,
        strikes: createStrikeStore(db),
        strikeRefreshMs: 50,
        logger: captureLogger(lines),
        faultInjection: true,
      });

    test("strikes older than the window are ignored and deleted; its own strikes count once; another replica's strike within the window counts, and the quarantine it causes is logged at warn", async () => {
      const db = await openDatabase(await server.createDatabase(), '');
      const lines: LogLine[] = [];
      const sandbox = await sharingSandbox(db, lines);
      try {
        const now = await dbNow(db);
        const insert = (id: string, plugin: string, at: number): Promise<unknown> =>
          db.run(
            'INSERT INTO sandbox_strikes (id, plugin, version, source_hash, origin, at) VALUES (?, ?, ?, ?, ?, ?)',
            [id, plugin, '1.0.0', hashOf(SLOW), 'another-replica', at],
          );
        await insert('ended', 'aged', now - 25 * HOUR);
        await insert('ahead', 'aged', now + 25 * HOUR); // dated by a clock since stepped back a day
        await insert('outside', 'aged', now - 61_000); // out of the window: not counted, kept a day
        await insert('recent', 'fresh', now - 30_000);

        const struckFrom = Date.now();
        await crashWith(sandbox, ['aged'], 'aged');
        await crashWith(sandbox, ['fresh'], 'fresh');
        await waitFor('fresh to be quarantined', () =>
          sandbox.stats().quarantined.some((q) => q.plugin === 'fresh@1.0.0'),
        );
        assert.deepEqual(
          sandbox.stats().quarantined.map((q) => q.plugin),
          ['fresh@1.0.0'],
          'aged has one strike within the window, its own, counted once',
        );
        assert.equal(errorCode(await quick(sandbox, 'fresh')), QUARANTINED);
        assert.equal((await quick(sandbox, 'aged')).result, 'quick');
        // the quarantine ends a window after the later strike: this one, not the other replica's
        const until = Date.parse(sandbox.stats().quarantined[0]?.until ?? '');
        assert.ok(until >= struckFrom + 60_000 && until <= Date.now() + 60_000, new Date(until).toISOString());

        await waitFor(
          'the rows out of the window to be deleted',
          async () =>
            (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM sandbox_strikes WHERE id IN ('ended', 'ahead')"))
              ?.n === 0,
        );
        const rows = await db.all<{ plugin: string; origin: string }>(
          'SELECT plugin, origin FROM sandbox_strikes ORDER BY plugin, origin',
        );
        assert.equal(rows.length, 4, JSON.stringify(rows));
        assert.deepEqual(
          rows.map((r) => r.plugin),
          ['aged', 'aged', 'fresh', 'fresh'],
        );

        const warned = lines.filter(
          (l) => l.level === 'warn' && l.msg.startsWith('plugin quarantined by crashes on other replicas'),
        );
        assert.equal(warned.length, 1, JSON.stringify(lines));
        assert.deepEqual(
          { ...warned[0]?.obj, until: undefined },
          { plugin: 'fresh@1.0.0', until: undefined, strikesHere: 1, strikesElsewhere: 1 },
        );
        assert.equal(sandbox.stats().strikeSyncFailures, 0);
      } finally {
        await sandbox.close();
        await db.close();
      }
    });

    test('a crash whose cause is unknown strikes every plugin in flight here only: nothing is written for other replicas', async () => {
      const db = await openDatabase(await server.createDatabase(), '');
      const sandbox = await sharingSandbox(db, []);
      try {
        await crashWith(sandbox, ['unexplained-a', 'unexplained-b']);
        await crashWith(sandbox, ['unexplained-a']);
        // two strikes here (quarantined here), none in the store
        assert.deepEqual(
          sandbox.stats().quarantined.map((q) => q.plugin),
          ['unexplained-a@1.0.0'],
        );
        // a crash with a known culprit is written, and it is the only row
        await crashWith(sandbox, ['explained'], 'explained');
        await waitFor(
          'the strike to be written',
          async () => (await db.all('SELECT plugin FROM sandbox_strikes')).length > 0,
        );
        await sandbox.close();
        assert.deepEqual(await db.all('SELECT plugin FROM sandbox_strikes'), [{ plugin: 'explained' }]);
      } finally {
        await sandbox.close();
        await db.close();
      }
    });

    test('the database refusing connections: quarantine goes on with local strikes, no call fails for it, failures are counted and logged once', async () => {
      const name = 'wb_strikes_fail';
      const db = await openDatabase(await server.createDatabase(name), '');
      const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${server.port}/postgres` });
      await admin.connect();
      const lines: LogLine[] = [];
      const sandbox = await sharingSandbox(db, lines);
      try {
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
        await waitFor(
          'the connections to end',
          async () => (await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name])).rowCount === 0,
        );
        await waitFor('a read to fail', () => sandbox.stats().strikeSyncFailures > 0);

        await crashWith(sandbox, ['local-only'], 'local-only');
        assert.equal((await quick(sandbox, 'local-only')).result, 'quick', 'one crash of two');
        await crashWith(sandbox, ['local-only'], 'local-only');
        assert.equal(errorCode(await quick(sandbox, 'local-only')), QUARANTINED);
        assert.deepEqual(
          sandbox.stats().quarantined.map((q) => q.plugin),
          ['local-only@1.0.0'],
        );
        assert.equal((await quick(sandbox, 'bystander')).result, 'quick');

        const warned = lines.filter(
          (l) =>
            l.level === 'warn' &&
            l.msg.startsWith('quarantine: the crash strikes shared with other replicas could not be written or read'),
        );
        assert.equal(warned.length, 1, 'logged once a minute at most');
        assert.equal(warned[0]?.obj['failures'], 1);

        // the database answers again: the next strike is written (the ones before are not: see strike-sync.ts)
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
        await crashWith(sandbox, ['after-outage'], 'after-outage');
        await waitFor(
          'the strike to be written',
          async () => (await db.all('SELECT plugin FROM sandbox_strikes').catch(() => [])).length > 0,
        );
        assert.deepEqual(await db.all('SELECT plugin FROM sandbox_strikes'), [{ plugin: 'after-outage' }]);
        assert.deepEqual(
          sandbox.stats().quarantined.map((q) => q.plugin),
          ['local-only@1.0.0'],
          'the local quarantine stands',
        );
      } finally {
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => undefined);
        await admin.end();
        await sandbox.close();
        await db.close();
      }
    });
  },
);
