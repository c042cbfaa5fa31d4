/**
 * @module test/host/storage/contract.test
 * The storage contract, one table-driven suite run against SQLite and a real PostgreSQL server:
 * migrations, users and API keys, audit events (written by the sink, read with the activity page's
 * filters), result continuations, connections through the connection service, connect links (and
 * their per-user limit when requests race on two handles),
 * the refresh lease, needs_reauth verdicts that never land on a connection reconnected meanwhile,
 * portal sessions, login links, the per-user caps on API keys and sessions when requests race, key
 * rotation and transactions. Numbers come
 * back as numbers on both, and conditional updates let exactly one of two handles win.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AUDIT_BATCH_ROWS, createDatabaseAuditSink, type AuditEvent } from '../../../host/audit/audit.js';
import { ConnectionStore } from '../../../host/connections/connection-store.js';
import { CONNECT_LINK_LIMIT } from '../../../host/connections/pending.js';
import { rotateKeys } from '../../../host/connections/key-rotation.js';
import { createConnectionService } from '../../../host/connections/service.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import { consumeLoginLink, createLoginLink, peekLoginLink } from '../../../host/portal/login-links.js';
import { MAX_LIVE_SESSIONS, PortalSessions } from '../../../host/portal/sessions.js';
import { ContinuationStore } from '../../../host/results/continuations.js';
import type { Db } from '../../../host/storage/db.js';
import { MIGRATIONS, migrate } from '../../../host/storage/migrations.js';
import { toPg } from '../../../host/storage/postgres.js';
import { isApiKeyLimitError, MAX_LIVE_API_KEYS, UserStore } from '../../../host/storage/users.js';
import { createLogger } from '../../../host/telemetry/logger.js';
import { apiKeyManifest, oauthManifest } from '../../helpers/connections-db.js';
import { startMockOAuth } from '../../helpers/mock-oauth.js';
import { backends, freshPair } from '../../helpers/storage-backends.js';

const oauth = oauthManifest({ authorizeUrl: 'http://127.0.0.1:9/authorize', tokenUrl: 'http://127.0.0.1:9/token' });
const keyed = apiKeyManifest();
const silent = createLogger({ level: 'silent', destination: 'silent' });

test('toPg numbers placeholders and leaves quoted text and comments alone', () => {
  assert.equal(toPg('SELECT * FROM t WHERE a = ? AND b = ?'), 'SELECT * FROM t WHERE a = $1 AND b = $2');
  assert.equal(
    toPg(`SELECT '?' AS q, "odd?" FROM t WHERE a = ? -- why?\n AND b LIKE ? ESCAPE '\\'`),
    `SELECT '?' AS q, "odd?" FROM t WHERE a = $1 -- why?\n AND b LIKE $2 ESCAPE '\\'`,
  );
});

for (const backend of backends()) {
  describe(`storage contract on ${backend.name}`, { skip: backend.skip }, () => {
    let db: Db;
    let other: Db; // a second handle on the same database: another replica
    let applied: number;
    let users: UserStore;

    before(async () => {
      await backend.start();
      ({ db, other, applied } = await freshPair(backend));
      users = new UserStore(db);
    });
    after(async () => {
      await other?.close();
      await db?.close();
      await backend.stop();
    });

    test('migrations apply once; a second run applies nothing', async () => {
      assert.equal(applied, MIGRATIONS.length);
      assert.equal(await migrate(db), 0);
      assert.equal(await migrate(other), 0);
      const rows = await db.all<{ version: number; applied_at: number }>(
        'SELECT version, applied_at FROM schema_migrations ORDER BY version',
      );
      assert.deepEqual(
        rows.map((r) => r.version),
        MIGRATIONS.map((m) => m.version),
      );
      for (const r of rows) assert.equal(typeof r.applied_at, 'number');
    });

    test('users: create, look up by email (any case) and id, count as a number, unique email', async () => {
      const before = await users.count();
      const u = await users.create('Grace@Example.com', 'navy');
      assert.equal(await users.count(), before + 1);
      assert.equal(typeof (await db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM users'))?.n, 'number');
      assert.deepEqual(await users.byEmail('GRACE@example.COM'), u);
      assert.deepEqual(await new UserStore(other).byId(u.id), u);
      assert.equal(typeof u.createdAt, 'number');
      await assert.rejects(users.create('grace@example.com', 'navy'));
      assert.equal(await users.byEmail('nobody@example.com'), undefined);
    });

    test('API keys: authenticate on either handle, last use recorded, listed, revoked', async () => {
      const u = await users.create('keys@example.com', 'acme');
      const { key, info } = await users.createApiKey(u.id, 'laptop');
      assert.deepEqual(await new UserStore(other).authenticate(key), u);
      const [listed] = await users.listApiKeys(u.id);
      assert.equal(listed?.id, info.id);
      assert.equal(typeof listed?.lastUsedAt, 'number');
      assert.equal(listed?.revokedAt, null);
      assert.equal(await users.authenticate(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')), undefined);
      const stranger = await users.create('stranger@example.com', 'acme');
      assert.equal(await users.revokeApiKey(stranger.id, info.id), false);
      assert.equal(await users.revokeApiKey(u.id, info.id), true);
      assert.equal(await users.revokeApiKey(u.id, info.id), false);
      assert.equal(await new UserStore(other).authenticate(key), undefined);
    });

    test('audit: events from the sink read back typed, with the activity page filters and cursor', async () => {
      const u = await users.create('audit@example.com', 'acme');
      const sink = createDatabaseAuditSink(db, silent);
      const base: AuditEvent = {
        action: 'EXECUTE',
        tenant: 'acme',
        userId: u.id,
        tool: 'keyed_ping',
        integration: 'keyed',
        success: true,
        durationMs: 12.4,
        transport: 'rest',
        requestId: 'r1',
      };
      await sink.record(base);
      await sink.record({
        ...base,
        tool: 'keyed_100%_sure',
        success: false,
        errorCode: 'UPSTREAM_ERROR',
        error: 'boom',
        args: { q: 1 },
        requestId: 'r2',
      });
      await sink.record({ ...base, tool: 'keyedX100Y_sure', requestId: 'r3' });
      assert.equal(sink.failures, 0);
      type Row = {
        id: string;
        at: number;
        tool: string;
        success: number;
        duration_ms: number;
        error_code: string | null;
        args: string | null;
      };
      const all = await other.all<Row>(
        'SELECT id, at, tool, success, duration_ms, error_code, args FROM audit_events WHERE user_id = ? ORDER BY at DESC, id DESC',
        [u.id],
      );
      assert.equal(all.length, 3);
      for (const r of all) {
        assert.equal(typeof r.at, 'number');
        assert.equal(typeof r.success, 'number');
        assert.equal(typeof r.duration_ms, 'number');
      }
      const failed = all.find((r) => r.success === 0);
      assert.deepEqual(
        [failed?.tool, failed?.error_code, failed?.duration_ms, failed?.args],
        ['keyed_100%_sure', 'UPSTREAM_ERROR', 12, '{"q":1}'],
      );
      // The activity page's tool filter escapes LIKE wildcards: "100%_" matches itself only.
      const like = `%${'100%_'.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const matched = await db.all<Row>("SELECT tool FROM audit_events WHERE user_id = ? AND tool LIKE ? ESCAPE '\\'", [
        u.id,
        like,
      ]);
      assert.deepEqual(
        matched.map((r) => r.tool),
        ['keyed_100%_sure'],
      );
      const ok = await db.all<Row>(
        'SELECT tool FROM audit_events WHERE user_id = ? AND success = ? AND at >= ? AND at < ?',
        [u.id, 1, Date.now() - 60_000, Date.now() + 1],
      );
      assert.equal(ok.length, 2);
      const first = all[0] as Row;
      const older = await db.all<Row>(
        'SELECT id FROM audit_events WHERE user_id = ? AND (at < ? OR (at = ? AND id < ?)) ORDER BY at DESC, id DESC LIMIT 51',
        [u.id, first.at, first.at, first.id],
      );
      assert.deepEqual(
        older.map((r) => r.id),
        all.slice(1).map((r) => r.id),
      );
    });

    test('audit: a NUL in a tool name, an error text or a filter neither fails the write nor the query', async () => {
      const u = await users.create('nul@example.com', 'acme');
      const sink = createDatabaseAuditSink(db, silent);
      const tool = 'bad\u0000tool';
      await sink.record({
        action: 'EXECUTE',
        tenant: 'acme',
        userId: u.id,
        tool,
        integration: 'keyed',
        success: false,
        errorCode: 'GW_ERR_TOOL_NOT_FOUND',
        error: 'no tool "bad\u0000tool"',
        durationMs: 1,
        transport: 'rest',
        requestId: 'nul',
      });
      assert.equal(sink.failures, 0, 'the row was stored');
      const rows = await other.all<{ tool: string; error: string }>(
        'SELECT tool, error FROM audit_events WHERE user_id = ? AND tool = ?',
        [u.id, tool],
      );
      assert.equal(rows.length, 1, 'the same value finds its row');
      // PostgreSQL text cannot hold NUL: it is stored as U+FFFD there, as is on SQLite
      const stored = backend.name === 'sqlite' ? tool : 'bad\uFFFDtool';
      assert.deepEqual(rows[0], { tool: stored, error: `no tool "${stored}"` });
    });

    test('audit: events recorded together are written in batches, each resolving once stored; a bad one fails alone', async () => {
      const u = await users.create('batch@example.com', 'acme');
      let statements = 0;
      const counting = new Proxy(db, {
        get(target, key) {
          const value = Reflect.get(target, key) as unknown;
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (key === 'run') statements++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const sink = createDatabaseAuditSink(counting, silent);
      const base: AuditEvent = {
        action: 'EXECUTE',
        tenant: 'acme',
        userId: u.id,
        tool: 'keyed_ping',
        integration: 'keyed',
        success: true,
        durationMs: 1,
        transport: 'mcp',
        requestId: 'b',
      };
      const count = async (): Promise<number> =>
        Number(
          (await other.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM audit_events WHERE user_id = ?', [u.id]))
            ?.n ?? -1,
        );
      // 2.5 batches recorded in one turn: every promise resolves only once its row can be read back
      const n = Math.floor(AUDIT_BATCH_ROWS * 2.5);
      const rows = new Set<string>();
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          sink.record({ ...base, requestId: `b${i}` }).then(async () => {
            const r = await other.get<{ request_id: string }>(
              'SELECT request_id FROM audit_events WHERE user_id = ? AND request_id = ?',
              [u.id, `b${i}`],
            );
            if (r) rows.add(r.request_id);
          }),
        ),
      );
      assert.equal(rows.size, n, 'each event is stored when its record() resolves');
      assert.equal(statements, Math.ceil(n / AUDIT_BATCH_ROWS), 'one INSERT per batch');
      assert.equal(await count(), n);
      assert.equal(sink.failures, 0);
      // a batch with one event the database refuses (no action: NOT NULL): only that one is lost
      const bad = { ...base, action: null } as unknown as AuditEvent;
      await Promise.all([
        sink.record({ ...base, requestId: 'x1' }),
        sink.record(bad),
        sink.record({ ...base, requestId: 'x2' }),
      ]);
      assert.equal(sink.failures, 1);
      assert.equal(await count(), n + 2);
    });

    test('continuations: any handle serves them, only to their user, until they expire', async () => {
      const u = await users.create('pages@example.com', 'acme');
      const v = await users.create('thief@example.com', 'acme');
      const body = JSON.stringify({ big: 'x'.repeat(5000) });
      const id = await new ContinuationStore(db, 60).put(u.id, 'keyed_ping', body);
      const reader = new ContinuationStore(other, 60);
      assert.deepEqual(await reader.get(u.id, id), { id, tool: 'keyed_ping', body });
      assert.equal(await reader.get(v.id, id), undefined);
      // with the part boundaries split when it was stored (any handle slices at them)
      const parts = { budget: 2000, ends: Array.from({ length: 600 }, (_, k) => (k + 1) * 9) };
      const split = await new ContinuationStore(db, 60).put(u.id, 'keyed_ping', 'y'.repeat(5400), parts);
      assert.deepEqual(await reader.get(u.id, split), { id: split, tool: 'keyed_ping', body: 'y'.repeat(5400), parts });
      assert.deepEqual(await reader.page(u.id, split, 600, 2000), {
        id: split,
        tool: 'keyed_ping',
        totalChars: 5400,
        totalParts: 600,
        chunk: 'y'.repeat(9),
      });
      assert.equal(await reader.page(v.id, split, 1, 2000), undefined);
      await db.run('UPDATE result_continuations SET expires_at = ? WHERE id = ?', [Date.now() - 1, id]);
      await db.run('UPDATE result_pages SET expires_at = ? WHERE id = ?', [Date.now() - 1, split]);
      assert.equal(await reader.get(u.id, id), undefined);
      assert.equal(await reader.page(u.id, split, 1, 2000), undefined);
      // the next store's first write sweeps what has expired, parts and all
      const parts600 = async (): Promise<number> =>
        Number(
          (
            await db.get<{ n: number | string }>('SELECT count(*) AS n FROM result_page_parts WHERE page_id = ?', [
              split,
            ])
          )?.n,
        );
      assert.equal(await parts600(), 600);
      await new ContinuationStore(other, 60).put(u.id, 'keyed_ping', 'z');
      assert.equal(await parts600(), 0);
      assert.equal(await db.get('SELECT id FROM result_continuations WHERE id = ?', [id]), undefined);
      assert.equal(await db.get('SELECT id FROM result_pages WHERE id = ?', [split]), undefined);
    });

    test('connections: an instance is stored with the credential, kept by a re-import, and read by another replica', async () => {
      const u = await users.create('instance@example.com', 'acme');
      const vault = createVault(generateKey());
      const a = createConnectionService({ db, vault, clientFor: () => undefined });
      const b = createConnectionService({ db: other, vault, clientFor: () => undefined });
      const selfHosted = oauthManifest(
        { authorizeUrl: 'https://api.mockhub.test/authorize', tokenUrl: 'https://api.mockhub.test/token' },
        { instance: { default: 'https://api.mockhub.test', label: 'Instance' } },
      );
      const at = 'https://93.184.216.34:8443';
      const { connectionId } = await a.importConnection({
        userId: u.id,
        manifest: selfHosted,
        token: 't1',
        instanceUrl: at,
      });
      assert.deepEqual(await b.lookup(u.id, selfHosted), {
        connected: true,
        connectionId,
        config: { instanceUrl: at },
        instance: at,
      });
      assert.deepEqual(await b.credential(u.id, selfHosted), { values: { token: 't1' }, instance: at });
      await b.importConnection({ userId: u.id, manifest: selfHosted, token: 't2' });
      assert.equal((await new ConnectionStore(db).byId(connectionId))?.instance_url, at, 'kept by a re-import');
      const state = (await a.states(u.id)).get(selfHosted.name);
      assert.equal(state?.state === 'connected' ? state.instance : undefined, at);
      await a.importConnection({
        userId: u.id,
        manifest: selfHosted,
        token: 't3',
        instanceUrl: 'https://api.mockhub.test',
      });
      assert.deepEqual(await b.lookup(u.id, selfHosted), { connected: true, connectionId, config: {} });
      assert.deepEqual(await b.credential(u.id, selfHosted), { values: { token: 't3' } });
    });

    test('connections: import, lookup, credential, reconnect keeps the id, states, disconnect', async () => {
      const u = await users.create('conn@example.com', 'acme');
      const vault = createVault(generateKey());
      const a = createConnectionService({ db, vault, clientFor: () => undefined });
      const b = createConnectionService({ db: other, vault, clientFor: () => undefined });
      const { connectionId } = await a.importConnection({
        userId: u.id,
        manifest: oauth,
        token: 'tok-1',
        expiresInSec: 3600,
        config: { org: 'x' },
      });
      assert.deepEqual(await b.lookup(u.id, oauth), { connected: true, connectionId, config: { org: 'x' } });
      assert.deepEqual(await b.credential(u.id, oauth), { values: { token: 'tok-1' } });
      const again = await b.importConnection({ userId: u.id, manifest: oauth, token: 'tok-2' });
      assert.equal(again.connectionId, connectionId);
      assert.deepEqual(await a.credential(u.id, oauth), { values: { token: 'tok-2' } });
      const row = await new ConnectionStore(db).byId(connectionId);
      assert.equal(row?.version, 2);
      assert.equal(row?.expires_at, null);
      assert.equal(typeof row?.updated_at, 'number');
      await a.importConnection({
        userId: u.id,
        manifest: keyed,
        values: { apiKey: 'k_abcdefgh12' },
        config: { region: 'eu' },
      });
      assert.deepEqual(await b.credential(u.id, keyed), { values: { apiKey: 'k_abcdefgh12' } });
      assert.deepEqual((await b.lookup(u.id, keyed)).connected, true);
      const states = await b.states(u.id);
      assert.deepEqual([...states.keys()].sort(), ['keyed', 'mockhub']);
      assert.equal(states.get('mockhub')?.state, 'connected');
      assert.deepEqual(await b.disconnect(u.id, oauth), { removed: true, revocation: 'unsupported' });
      assert.deepEqual(await a.lookup(u.id, oauth), { connected: false });
      assert.equal(await a.credential(u.id, oauth), undefined);
    });

    test('concurrent imports of one connection from two handles leave one row', async () => {
      const u = await users.create('race@example.com', 'acme');
      const vault = createVault(generateKey());
      // SQLite runs one process (its busy wait is synchronous, so two handles in one process would
      // wait on each other's open transaction); PostgreSQL replicas race for real on two pools.
      const peer = backend.name === 'sqlite' ? db : other;
      const a = createConnectionService({ db, vault, clientFor: () => undefined });
      const b = createConnectionService({ db: peer, vault, clientFor: () => undefined });
      const results = await Promise.allSettled(
        [0, 1, 2, 3].map((i) => (i % 2 ? a : b).importConnection({ userId: u.id, manifest: oauth, token: `t${i}` })),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
        JSON.stringify(results.map((r) => (r.status === 'rejected' ? String(r.reason) : ''))),
      );
      const rows = await db.all<{ id: string; version: number }>(
        'SELECT id, version FROM connections WHERE user_id = ?',
        [u.id],
      );
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.version, 4);
      assert.match((await a.credential(u.id, oauth))?.values['token'] ?? '', /^t[0-3]$/);
    });

    test('connect links: created on one handle, opened once across handles, settled once', async () => {
      const u = await users.create('link@example.com', 'acme');
      const vault = createVault(generateKey());
      const a = createConnectionService({ db, vault, clientFor: () => undefined });
      const b = createConnectionService({ db: other, vault, clientFor: () => undefined });
      const p = await a.pending.create(u.id, 'keyed', 'apikey');
      assert.equal(await b.pending.countRecent(u.id, Date.now() - 60_000), 1);
      assert.equal((await b.pending.check(p.id, u.id)).ok, true);
      const opened = await Promise.all([
        a.pending.open(p.id, u.id),
        b.pending.open(p.id, u.id),
        a.pending.open(p.id, u.id),
        b.pending.open(p.id, u.id),
      ]);
      assert.equal(opened.filter((o) => o.ok).length, 1, 'exactly one open wins');
      assert.deepEqual(
        opened.filter((o) => !o.ok).map((o) => (o as { reason: string }).reason),
        ['used', 'used', 'used'],
      );
      assert.equal(await b.pending.settle(p.id, 'connected', null), true);
      assert.equal(await a.pending.settle(p.id, 'failed', 'late'), false);
      const got = await a.pending.get(p.id);
      assert.equal(got?.status, 'connected');
      assert.equal(typeof got?.usedAt, 'number');
      const st = await a.pending.create(u.id, 'mockhub', 'oauth2');
      assert.equal((await a.pending.open(st.id, u.id, { state: 'the-state', codeVerifier: 'v'.repeat(50) })).ok, true);
      const taken = await b.pending.takeByState('the-state', u.id);
      assert.equal(taken.ok && taken.codeVerifier, 'v'.repeat(50));
      assert.deepEqual(await a.pending.takeByState('the-state', u.id), { ok: false, reason: 'used' });
    });

    test('connect-link limit: links made on either handle count together; past the limit, the retry time is when the oldest leaves the window', async () => {
      const u = await users.create('limited@example.com', 'acme');
      const vault = createVault(generateKey());
      const a = createConnectionService({ db, vault, clientFor: () => undefined });
      const b = createConnectionService({ db: other, vault, clientFor: () => undefined });
      const first = await a.pending.createLimited(u.id, 'keyed', 'apikey', 2);
      assert.ok(first.ok);
      assert.equal((await b.pending.createLimited(u.id, 'keyed', 'apikey', 2)).ok, true);
      const refused = await a.pending.createLimited(u.id, 'keyed', 'apikey', 2);
      assert.ok(!refused.ok);
      assert.equal(refused.retryAt, first.pending.createdAt + CONNECT_LINK_LIMIT.windowMs);
      assert.ok(refused.retryAfterSec >= 1 && refused.retryAfterSec <= CONNECT_LINK_LIMIT.windowMs / 1000);
      assert.equal(await a.pending.countRecent(u.id, 0), 2);
    });

    test('connect-link limit under a race: 40 requests at once per user (on PostgreSQL, from two handles: two replicas) make exactly the limit, for each user', async () => {
      const vault = createVault(generateKey());
      // as for concurrent imports: SQLite's two handles in one process would wait on each other's
      // open transaction synchronously; one handle still runs the 80 requests interleaved
      const peer = backend.name === 'sqlite' ? db : other;
      const a = createConnectionService({ db, vault, clientFor: () => undefined });
      const b = createConnectionService({ db: peer, vault, clientFor: () => undefined });
      const racers = [
        await users.create('racer-1@example.com', 'acme'),
        await users.create('racer-2@example.com', 'acme'),
      ];
      const max = 5;
      const made = await Promise.all(
        racers.flatMap((u) =>
          Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).pending.createLimited(u.id, 'keyed', 'apikey', max)),
        ),
      );
      for (const [n, u] of racers.entries()) {
        const mine = made.slice(n * 40, (n + 1) * 40);
        assert.equal(mine.filter((m) => m.ok).length, max, `${u.email}: links made`);
        assert.equal(await a.pending.countRecent(u.id, 0), max, `${u.email}: rows`);
        for (const m of mine)
          if (!m.ok) assert.ok(m.retryAfterSec >= 1 && m.retryAfterSec <= CONNECT_LINK_LIMIT.windowMs / 1000);
      }
    });

    test('refresh lease: one holder at a time across handles; a refreshed secret is stored once, at the version refreshed', async () => {
      const u = await users.create('lease@example.com', 'acme');
      const svc = createConnectionService({ db, vault: createVault(generateKey()), clientFor: () => undefined });
      const { connectionId } = await svc.importConnection({
        userId: u.id,
        manifest: oauth,
        token: 't',
        refreshToken: 'r',
        expiresInSec: 1,
      });
      const now = Date.now();
      const [s1, s2] = [new ConnectionStore(db), new ConnectionStore(other)];
      const won = await Promise.all([
        s1.tryLease(connectionId, 1, 'one', 30_000),
        s2.tryLease(connectionId, 1, 'two', 30_000),
      ]);
      assert.deepEqual(won.filter(Boolean).length, 1);
      const leased = await s2.byId(connectionId);
      assert.ok(
        leased?.refresh_lease_until && leased.refresh_lease_until > now + 20_000,
        'the lease runs for its length from the database clock',
      );
      assert.equal(await s1.commitRefresh(connectionId, 1, 'sealed', 'k', now + 3_600_000, 'repo', now), true);
      assert.equal(
        await s2.commitRefresh(connectionId, 1, 'x', 'k', null, null, now),
        false,
        'a second commit at the same version is refused',
      );
      const row = await s2.byId(connectionId);
      assert.deepEqual(
        [row?.version, row?.secret, row?.refresh_lease_owner, row?.scopes, row?.expires_at],
        [2, 'sealed', null, 'repo', now + 3_600_000],
      );
    });

    test('a replica whose clock runs 31 s ahead waits for the lease another replica holds: the refresh token is spent once', async () => {
      const u = await users.create('skew@example.com', 'acme');
      const vault = createVault(generateKey());
      const mock = await startMockOAuth();
      try {
        const manifest = oauthManifest(mock);
        const clientFor = () => ({ clientId: mock.clientId, clientSecret: mock.clientSecret });
        const a = createConnectionService({ db, vault, clientFor });
        // B's handle reports when B has tried (and failed) to take the lease A holds
        let leaseTried = (): void => undefined;
        const bTried = new Promise<void>((resolve) => (leaseTried = resolve));
        const otherWatched: Db = {
          ...other,
          run: async (sql, params) => {
            const r = await other.run(sql, params);
            if (sql.includes('SET refresh_lease_owner = ?, refresh_lease_until =')) leaseTried();
            return r;
          },
        };
        const b = createConnectionService({ db: otherWatched, vault, clientFor, now: () => Date.now() + 31_000 });
        const pair = mock.issue();
        await a.importConnection({
          userId: u.id,
          manifest,
          token: pair.accessToken,
          refreshToken: pair.refreshToken,
          expiresInSec: 45,
        }); // stale for A (60 s window), and for B
        let arrived = (): void => undefined;
        let release = (): void => undefined;
        const aSent = new Promise<void>((resolve) => (arrived = resolve));
        const released = new Promise<void>((resolve) => (release = resolve));
        let first = true;
        mock.gate = async (grant) => {
          if (grant !== 'refresh_token' || !first) return;
          first = false;
          arrived();
          await released;
        };
        const callA = a.credential(u.id, manifest);
        await aSent; // A holds the lease, its refresh is at the provider
        const callB = b.credential(u.id, manifest);
        await bTried;
        release();
        const [credA, credB] = await Promise.all([callA, callB]);
        mock.gate = undefined;
        assert.equal(mock.counters.refreshTokenUses.get(pair.refreshToken), 1, 'the refresh token was presented once');
        assert.deepEqual(mock.counters.tokenErrors, []);
        assert.ok(credA && credB && credA.values['token'] === credB.values['token'], 'B got the token A refreshed');
        assert.equal((await a.state(u.id, manifest)).state, 'connected');
      } finally {
        mock.gate = undefined;
        await mock.close();
      }
    });

    test('tokens refreshed after the lease ran out are stored; the replica that took the lease over then uses them', async () => {
      const u = await users.create('late@example.com', 'acme');
      const vault = createVault(generateKey());
      const mock = await startMockOAuth();
      try {
        const manifest = oauthManifest(mock);
        const clientFor = () => ({ clientId: mock.clientId, clientSecret: mock.clientSecret });
        const a = createConnectionService({ db, vault, clientFor });
        const b = createConnectionService({ db: other, vault, clientFor });
        const pair = mock.issue();
        const { connectionId } = await a.importConnection({
          userId: u.id,
          manifest,
          token: pair.accessToken,
          refreshToken: pair.refreshToken,
          expiresInSec: 5,
        });
        // the provider holds each refresh until the test lets it go
        const arrivals: (() => void)[] = [];
        const releases: (() => void)[] = [];
        const arrivedAt = [0, 1].map((i) => new Promise<void>((resolve) => (arrivals[i] = resolve)));
        const releaseOf = [0, 1].map((i) => new Promise<void>((resolve) => (releases[i] = resolve)));
        let n = 0;
        mock.gate = async (grant) => {
          if (grant !== 'refresh_token') return;
          const i = n++;
          arrivals[i]?.();
          await releaseOf[i];
        };
        const callA = a.credential(u.id, manifest);
        await arrivedAt[0];
        // A's refresh outlives its lease (a slow provider, a paused process): the lease has run out
        await db.run('UPDATE connections SET refresh_lease_until = 0 WHERE id = ?', [connectionId]);
        const callB = b.credential(u.id, manifest);
        await arrivedAt[1]; // B took the lease and presents the same refresh token
        releases[0]?.(); // A's answer: the provider spent the refresh token and issued new ones
        const credA = await callA;
        releases[1]?.(); // B's answer: invalid_grant, the token was spent by A
        const credB = await callB;
        mock.gate = undefined;
        assert.deepEqual(mock.counters.tokenErrors, ['invalid_grant']);
        assert.ok(credA && credA.values['token'] !== pair.accessToken);
        assert.deepEqual(
          credB,
          credA,
          'B uses the tokens A stored instead of marking the connection for re-authorisation',
        );
        const row = await new ConnectionStore(other).byId(connectionId);
        assert.deepEqual([row?.status, row?.version], ['connected', 2]);
        assert.equal((await b.state(u.id, manifest)).state, 'connected');
        // the rotated refresh token was stored: the next refresh works
        await db.run('UPDATE connections SET expires_at = 1 WHERE id = ?', [connectionId]);
        const later = await b.credential(u.id, manifest);
        assert.ok(
          later &&
            later.values['token'] !== credA?.values['token'] &&
            mock.activeAccessTokens.has(later.values['token'] ?? ''),
        );
      } finally {
        mock.gate = undefined;
        await mock.close();
      }
    });

    test('a refresh refused with invalid_grant leaves a connection reconnected meanwhile connected', async () => {
      const u = await users.create('reconnect-race@example.com', 'acme');
      const vault = createVault(generateKey());
      const mock = await startMockOAuth();
      try {
        const manifest = oauthManifest(mock);
        const clientFor = () => ({ clientId: mock.clientId, clientSecret: mock.clientSecret });
        const svc = createConnectionService({ db, vault, clientFor });
        const portal = createConnectionService({ db: other, vault, clientFor }); // the replica serving the OAuth callback
        const old = mock.issue();
        await svc.importConnection({
          userId: u.id,
          manifest,
          token: old.accessToken,
          refreshToken: old.refreshToken,
          expiresInSec: 5,
        }); // stale
        // the provider holds its answer to the refresh until the user has reconnected, then refuses the old grant
        mock.mode = 'invalid-grant';
        let arrived = (): void => undefined;
        let release = (): void => undefined;
        const refreshSent = new Promise<void>((resolve) => (arrived = resolve));
        const released = new Promise<void>((resolve) => (release = resolve));
        mock.gate = async (grant) => {
          if (grant !== 'refresh_token') return;
          arrived();
          await released;
        };
        const call = svc.credential(u.id, manifest);
        await refreshSent;
        const fresh = mock.issue();
        await portal.saveTokens(u.id, manifest, {
          accessToken: fresh.accessToken,
          refreshToken: fresh.refreshToken,
          expiresInSec: 3600,
        });
        release();
        assert.deepEqual(await call, { values: { token: fresh.accessToken } }, 'the call gets the reconnected token');
        mock.gate = undefined;
        mock.mode = 'normal';
        assert.deepEqual(mock.counters.tokenErrors, ['invalid_grant']);
        const row = await new ConnectionStore(other).byUser(u.id, 'mockhub');
        assert.deepEqual([row?.status, row?.status_reason, row?.refresh_lease_owner], ['connected', null, null]);
        assert.equal((await portal.lookup(u.id, manifest)).connected, true);
        assert.equal((await svc.state(u.id, manifest)).state, 'connected');
        assert.deepEqual(await svc.credential(u.id, manifest), { values: { token: fresh.accessToken } });
        assert.equal(mock.counters.refreshes, 1, 'the new connection needed no refresh');
      } finally {
        await mock.close();
      }
    });

    test('an expired connection without a refresh token, reconnected while its state is read, stays connected', async () => {
      const u = await users.create('state-race@example.com', 'acme');
      const vault = createVault(generateKey());
      let clock = Date.now();
      const reconnecting = createConnectionService({ db: other, vault, clientFor: () => undefined, now: () => clock });
      // the status write of the state check waits until the user has reconnected on another replica
      let reconnected = false;
      const gated: Db = {
        ...db,
        run: async (sql, params) => {
          if (!reconnected && /SET status = \?/.test(sql)) {
            reconnected = true;
            await reconnecting.importConnection({ userId: u.id, manifest: oauth, token: 'new', expiresInSec: 3600 });
          }
          return db.run(sql, params);
        },
      };
      const svc = createConnectionService({ db: gated, vault, clientFor: () => undefined, now: () => clock });
      await svc.importConnection({ userId: u.id, manifest: oauth, token: 'short', expiresInSec: 30 });
      clock += 31_000; // expired, and nothing can refresh it
      const state = await svc.state(u.id, oauth);
      assert.ok(reconnected, 'the reconnect happened between the read and the status write');
      assert.equal(state.state, 'connected');
      assert.equal((await svc.states(u.id)).get('mockhub')?.state, 'connected');
      assert.deepEqual(await svc.credential(u.id, oauth), { values: { token: 'new' } });
      // without a reconnect, the same check does mark it
      clock += 3_601_000;
      assert.equal((await svc.state(u.id, oauth)).state, 'needs_reauth');
    });

    test('portal sessions and login links work across handles and are single-use where they must be', async () => {
      const u = await users.create('portal@example.com', 'acme');
      const { id, session } = await new PortalSessions(db).create(u.id);
      const there = new PortalSessions(other);
      assert.deepEqual(await there.resolve(id), session);
      assert.equal(await there.countActive(u.id), 1);
      assert.equal(await there.revokeAll(u.id), 1);
      assert.equal(await new PortalSessions(db).resolve(id), undefined);
      const link = await createLoginLink(db, u.id, 'http://127.0.0.1:3000');
      const token = link.split('/').pop() as string;
      assert.equal(await peekLoginLink(other, token), u.id);
      const both = await Promise.all([consumeLoginLink(db, token), consumeLoginLink(other, token)]);
      assert.deepEqual(both.filter(Boolean), [u.id]);
      assert.equal(await peekLoginLink(db, token), undefined);
    });

    test('per-user caps under a race (on PostgreSQL, from two handles: two replicas): API keys stop at the limit, live portal sessions too', async () => {
      const peer = backend.name === 'sqlite' ? db : other; // as for concurrent imports
      const u = await users.create('capped@example.com', 'acme');
      const keys = await Promise.allSettled(
        Array.from({ length: MAX_LIVE_API_KEYS + 10 }, (_, i) =>
          new UserStore(i % 2 ? db : peer).createApiKey(u.id, `k${i}`),
        ),
      );
      assert.equal(keys.filter((k) => k.status === 'fulfilled').length, MAX_LIVE_API_KEYS);
      for (const k of keys) if (k.status === 'rejected') assert.ok(isApiKeyLimitError(k.reason), String(k.reason));
      const sessions = await Promise.all(
        Array.from({ length: MAX_LIVE_SESSIONS + 10 }, (_, i) => new PortalSessions(i % 2 ? db : peer).create(u.id)),
      );
      assert.equal(await new PortalSessions(db).countActive(u.id), MAX_LIVE_SESSIONS);
      assert.equal(
        sessions.reduce((n, s) => n + s.ended, 0),
        10,
        'each session past the limit ended one',
      );
      assert.equal(
        Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM portal_sessions WHERE user_id = ?', [u.id]))?.n),
        MAX_LIVE_SESSIONS,
      );
    });

    test('a portal session signed in with an API key ends when another handle revokes the key; a login-link session does not', async () => {
      const u = await users.create('session-key@example.com', 'acme');
      const { info } = await users.createApiKey(u.id, 'k');
      const keyed = await new PortalSessions(db).create(u.id, info.id);
      const linked = await new PortalSessions(db).create(u.id);
      const there = new PortalSessions(other);
      assert.deepEqual(await there.resolve(keyed.id), keyed.session);
      assert.equal(keyed.session.keyId, info.id);
      assert.equal(await there.countActive(u.id), 2);
      assert.equal(await new UserStore(other).revokeApiKey(u.id, info.id), true);
      assert.equal(await new PortalSessions(db).resolve(keyed.id), undefined);
      assert.deepEqual(await new PortalSessions(db).resolve(linked.id), linked.session);
      assert.equal(linked.session.keyId, null);
      assert.equal(await there.countActive(u.id), 1);
    });

    test('key rotation re-encrypts every connection in one transaction', async () => {
      const u = await users.create('rotate@example.com', 'acme');
      const oldVault = createVault(generateKey());
      const svc = createConnectionService({ db, vault: oldVault, clientFor: () => undefined });
      await svc.importConnection({ userId: u.id, manifest: oauth, token: 'secret-token' });
      // Other tests' connections were sealed with other keys: rotation refuses and changes nothing.
      await assert.rejects(rotateKeys(db, oldVault, generateKey()), {
        code: 'VAULT_DECRYPT_FAILED',
        message: /rotation stopped, nothing changed/,
      });
      assert.deepEqual(await svc.credential(u.id, oauth), { values: { token: 'secret-token' } });
      await db.run('DELETE FROM connections WHERE user_id <> ?', [u.id]);
      const r = await rotateKeys(db, oldVault, generateKey());
      assert.equal(r.rotated, 1);
      const after = createConnectionService({ db: other, vault: r.vault, clientFor: () => undefined });
      assert.deepEqual(await after.credential(u.id, oauth), { values: { token: 'secret-token' } });
    });

    // (PostgreSQL only: SQLite's transactions exclude other writers)
    if (backend.name === 'postgres')
      test('key rotation does not write back a secret another server changed meanwhile', async () => {
        const u = await users.create('rotate-race@example.com', 'acme');
        const oldVault = createVault(generateKey());
        const clientFor = (): undefined => undefined;
        await createConnectionService({ db, vault: oldVault, clientFor }).importConnection({
          userId: u.id,
          manifest: oauth,
          token: 'old-token',
        });
        await db.run('DELETE FROM connections WHERE user_id <> ?', [u.id]);
        // another server reconnects (a new token) in a transaction still open when the rotation starts
        let release = (): void => undefined;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const holding = other.transaction(async (tx) => {
          await createConnectionService({ db: tx, vault: oldVault, clientFor }).importConnection({
            userId: u.id,
            manifest: oauth,
            token: 'new-token',
          });
          await gate;
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
        const rotation = rotateKeys(db, oldVault, generateKey());
        await new Promise((resolve) => setTimeout(resolve, 200)); // the rotation has read (or waits to read) the row
        release();
        await holding;
        const r = await rotation;
        assert.equal(r.rotated, 1);
        assert.deepEqual(await createConnectionService({ db, vault: r.vault, clientFor }).credential(u.id, oauth), {
          values: { token: 'new-token' },
        });
      });

    test('transactions roll back on error and nest into the outer one', async () => {
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.run('INSERT INTO users (id, email, tenant, created_at) VALUES (?, ?, ?, ?)', [
            'tx-1',
            'tx1@example.com',
            'acme',
            1,
          ]);
          await tx.transaction(async (inner) =>
            inner.run('INSERT INTO users (id, email, tenant, created_at) VALUES (?, ?, ?, ?)', [
              'tx-2',
              'tx2@example.com',
              'acme',
              2,
            ]),
          );
          throw new Error('abort');
        }),
        /abort/,
      );
      assert.equal(await users.byId('tx-1'), undefined);
      assert.equal(await users.byId('tx-2'), undefined);
      const n = await db.transaction(async (tx) => {
        await tx.run('INSERT INTO users (id, email, tenant, created_at) VALUES (?, ?, ?, ?)', [
          'tx-3',
          'tx3@example.com',
          'acme',
          3,
        ]);
        return (await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM users WHERE id = ?', ['tx-3']))?.n;
      });
      assert.equal(n, 1);
      assert.equal((await new UserStore(other).byId('tx-3'))?.createdAt, 3);
    });

    test(
      'a transaction whose connection is killed fails, and the process and the pool carry on',
      { skip: backend.name !== 'postgres' },
      async () => {
        await assert.rejects(
          db.transaction(async (tx) => {
            const pid = (await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))?.pid;
            await other.get('SELECT pg_terminate_backend(?) AS ok', [pid ?? 0]);
            // the server closed this transaction's connection: pg emits 'error' on the client, which
            // crashed the process when nobody listened
            await new Promise((r) => setTimeout(r, 200));
            await tx.run('INSERT INTO users (id, email, tenant, created_at) VALUES (?, ?, ?, ?)', [
              'killed-1',
              'killed1@example.com',
              'acme',
              5,
            ]);
          }),
        );
        assert.equal(await users.byId('killed-1'), undefined);
        assert.equal(
          (await db.get<{ one: number }>('SELECT 1 AS one'))?.one,
          1,
          'the pool hands out a working connection',
        );
      },
    );

    test('work from outside a transaction that fails is neither rolled back with it nor joined into it', async () => {
      const insert = (q: Db, id: string) =>
        q.run('INSERT INTO users (id, email, tenant, created_at) VALUES (?, ?, ?, ?)', [
          id,
          `${id}@example.com`,
          'acme',
          4,
        ]);
      let started!: () => void;
      const begun = new Promise<void>((r) => (started = r));
      let go!: () => void;
      const release = new Promise<void>((r) => (go = r));
      const failing = db.transaction(async (tx) => {
        await insert(tx, 'own-a1');
        started();
        await release;
        throw new Error('A fails');
      });
      await begun;
      // another request, while A is open: its own transaction, and a plain statement
      const theirs = db.transaction(async (tx) => insert(tx, 'own-b1'));
      const plain = insert(db, 'own-c1');
      go();
      await assert.rejects(failing, /A fails/);
      await theirs;
      await plain;
      assert.equal(await users.byId('own-a1'), undefined, "A's own write is rolled back");
      assert.ok(await new UserStore(other).byId('own-b1'), "B's transaction committed on its own");
      assert.ok(await new UserStore(other).byId('own-c1'), 'the plain statement was not rolled back with A');
    });
  });
}
