/**
 * @module test/host/connections/meta-tools.test
 * connect, wait_for_connection, list_integrations and disconnect called as the MCP transport calls
 * them: links in the database (completed by another service instance, as another replica would),
 * waiting without busy polling, progress, timeout, expiry, cancellation and other users' ids.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConnectionMetaTools } from '../../../host/connections/meta-tools.js';
import { createConnectionService, type FullConnectionService } from '../../../host/connections/service.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import type { MetaTool, MetaToolContext } from '../../../host/meta-tools/types.js';
import { manifestSchema, type PluginManifest } from '../../../contracts/manifest.js';
import type { User } from '../../../host/storage/users.js';
import { startMockOAuth, type MockOAuth } from '../../helpers/mock-oauth.js';
import { apiKeyManifest, oauthManifest, openTestDb, type TestDb } from '../../helpers/connections-db.js';

describe('connection meta-tools', () => {
  let t: TestDb;
  let mock: MockOAuth;
  let manifests: PluginManifest[];
  let svc: FullConnectionService;
  let replica: FullConnectionService;
  let tools: Map<string, MetaTool>;
  let dbQueries = 0;
  const vault = createVault(generateKey());

  before(async () => {
    t = await openTestDb();
    mock = await startMockOAuth();
    const noAuth = manifestSchema.parse({
      name: 'clock',
      version: '1.0.0',
      displayName: 'Clock',
      description: 'Time',
      auth: { type: 'none' },
      tools: [{ name: 'clock_now', description: 'now', inputSchema: { type: 'object' } }],
    });
    const noClient = { ...oauthManifest(mock), name: 'noclient', displayName: 'No Client' };
    manifests = [oauthManifest(mock, { revocationUrl: mock.revokeUrl }), apiKeyManifest(), noAuth, noClient];
    const clientFor = (n: string) =>
      n === 'noclient' ? undefined : { clientId: mock.clientId, clientSecret: mock.clientSecret };
    // Count the pending-record reads of the waiting service to prove it does not busy-poll.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion is what lets a non-generic get stand in for Db's generic one
    const countingDb = {
      ...t.db,
      get: (sql: string, p?: readonly (string | number | bigint | null)[]) => (
        (dbQueries += sql.includes('pending_connects') ? 1 : 0),
        t.db.get(sql, p)
      ),
    } as typeof t.db;
    svc = createConnectionService({ db: countingDb, vault, clientFor });
    replica = createConnectionService({ db: t.db, vault, clientFor });
    const list = createConnectionMetaTools({
      connections: svc,
      registry: { plugins: () => manifests, plugin: (n) => manifests.find((m) => m.name === n) },
      publicUrl: 'https://wb.example.com/',
    });
    tools = new Map(list.map((x) => [x.name, x]));
  });
  after(async () => {
    await mock.close();
    await t.close();
  });

  function context(user: User = t.user, signal = new AbortController().signal) {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const ctx: MetaToolContext = {
      user,
      transport: 'mcp',
      signal,
      cancelled: signal,
      requestId: 'req-1',
      progress: async (p, total, message) =>
        void progress.push({
          progress: p,
          ...(total !== undefined ? { total } : {}),
          ...(message !== undefined ? { message } : {}),
        }),
    };
    return { ctx, progress };
  }
  const call = async (name: string, args: Record<string, unknown>, ctx = context().ctx) => {
    const tool = tools.get(name)!;
    return tool.handler(ctx, tool.inputSchema.parse(args));
  };

  it('lists the tools in a stable order with schemas', () => {
    assert.deepEqual(
      [...tools.values()].sort((a, b) => a.order - b.order).map((x) => x.name),
      ['list_integrations', 'connect', 'wait_for_connection', 'disconnect'],
    );
    assert.throws(() => tools.get('wait_for_connection')!.inputSchema.parse({ connectionId: 'x', timeoutSec: 301 }));
    assert.equal(
      (tools.get('wait_for_connection')!.inputSchema.parse({ connectionId: 'x' }) as { timeoutSec: number }).timeoutSec,
      120,
    );
  });

  it('connect returns a link on the public URL, stored in the database', async () => {
    const r = await call('connect', { integration: 'mockhub' });
    const j = r.json as { connectionId: string; type: string; url: string; expiresAt: string };
    assert.equal(r.isError, undefined);
    assert.equal(j.type, 'oauth2');
    assert.equal(j.url, `https://wb.example.com/connect/${j.connectionId}`);
    assert.ok(j.connectionId.length >= 32);
    assert.ok(Date.parse(j.expiresAt) - Date.now() > 9 * 60_000);
    const row = await t.db.get<{ user_id: string; status: string }>(
      'SELECT user_id, status FROM pending_connects WHERE id = ?',
      [j.connectionId],
    );
    assert.deepEqual(row, { user_id: t.user.id, status: 'pending' });
    assert.equal(((await call('connect', { integration: 'keyed' })).json as { type: string }).type, 'apikey');
  });

  it('connect explains unknown integrations, missing OAuth clients and integrations without auth', async () => {
    const unknown = await call('connect', { integration: 'nope' });
    assert.equal(unknown.isError, true);
    assert.match(JSON.stringify(unknown.json), /list_integrations/);
    const noClient = await call('connect', { integration: 'noclient' });
    assert.equal(noClient.isError, true);
    assert.match(JSON.stringify(noClient.json), /NOCLIENT_CLIENT_ID/);
    assert.equal(
      (await call('connect', { integration: 'clock' })).json &&
        ((await call('connect', { integration: 'clock' })).json as { status: string }).status,
      'NOT_REQUIRED',
    );
  });

  it('wait_for_connection returns CONNECTED when another replica completes the link, without busy polling', async () => {
    const { connectionId } = (await call('connect', { integration: 'keyed' })).json as { connectionId: string };
    const { ctx, progress } = context();
    dbQueries = 0;
    const started = Date.now();
    const waiting = call('wait_for_connection', { connectionId, timeoutSec: 30 }, ctx);
    setTimeout(() => {
      void (async () => {
        await replica.pending.open(connectionId, t.user.id);
        await replica.saveApiKey(t.user.id, manifests[1]!, { apiKey: 'k_abcdefgh12' });
        await replica.pending.settle(connectionId, 'connected', null);
      })();
    }, 2500);
    const r = await waiting;
    const elapsed = Date.now() - started;
    assert.deepEqual(r.json, { connectionId, integration: 'keyed', status: 'CONNECTED' });
    assert.ok(elapsed >= 2400 && elapsed < 4000, `noticed within ~1 s (${elapsed} ms)`);
    assert.ok(dbQueries <= 10, `polled ${dbQueries} times in 2.5 s`);
    assert.ok(progress.length >= 1 && progress[0]?.total === 30);
    assert.match(progress[0]?.message ?? '', /waiting for the user to connect keyed/);
  });

  it("answers CONNECTED for the agent's link when the user connected the integration through the portal's own link", async () => {
    const { user } = { user: await t.users.create('portal-connect@example.com', 'acme') };
    const ctx = context(user).ctx;
    const a = (await call('connect', { integration: 'keyed' }, ctx)).json as { connectionId: string };
    // the user ignores link A and uses the portal's Connect button (link B), served by another replica
    const b = await replica.pending.createLimited(user.id, 'keyed', 'apikey');
    assert.ok(b.ok);
    assert.ok((await replica.pending.open(b.pending.id, user.id)).ok);
    await replica.saveApiKey(user.id, apiKeyManifest(), { apiKey: 'k_fromportal1' });
    await replica.pending.settle(b.pending.id, 'connected', null);
    const r = await call('wait_for_connection', { connectionId: a.connectionId, timeoutSec: 5 }, ctx);
    assert.equal((r.json as { status: string }).status, 'CONNECTED', JSON.stringify(r.json));
    assert.equal((r.json as { integration: string }).integration, 'keyed');
  });

  it('does not count a connection older than the link as the link being finished', async () => {
    const user = await t.users.create('reconnecting@example.com', 'acme');
    await replica.saveApiKey(user.id, apiKeyManifest(), { apiKey: 'k_oldconnection' });
    await t.db.run(
      'UPDATE connections SET updated_at = updated_at - 1000, connected_at = connected_at - 1000 WHERE user_id = ?',
      [user.id],
    );
    const ctx = context(user).ctx;
    const a = (await call('connect', { integration: 'keyed', reconnect: true }, ctx)).json as { connectionId: string };
    const r = await call('wait_for_connection', { connectionId: a.connectionId, timeoutSec: 1 }, ctx);
    assert.equal((r.json as { status: string }).status, 'TIMEOUT');
  });

  it('a token refresh during the wait is no answer to a re-consent link; a reconnect through the portal is', async () => {
    const user = await t.users.create('reconsenting@example.com', 'acme');
    const hub = manifests[0]!;
    const pair = mock.issue();
    // connected a while ago, with a token that is about to expire
    await replica.importConnection({
      userId: user.id,
      manifest: hub,
      token: pair.accessToken,
      refreshToken: pair.refreshToken,
      expiresInSec: 30,
    });
    await t.db.run(
      'UPDATE connections SET created_at = created_at - 5000, updated_at = updated_at - 5000, connected_at = connected_at - 5000 WHERE user_id = ?',
      [user.id],
    );
    const ctx = context(user).ctx;
    const a = (await call('connect', { integration: 'mockhub', reconnect: true }, ctx)).json as {
      connectionId: string;
    };
    const before = (await t.db.get<{ updated_at: number; version: number }>(
      'SELECT updated_at, version FROM connections WHERE user_id = ?',
      [user.id],
    ))!;
    const waiting = call('wait_for_connection', { connectionId: a.connectionId, timeoutSec: 2 }, ctx);
    // another replica refreshes the token (a call, or the sweep) while the agent waits for the re-consent
    assert.ok(await replica.credential(user.id, hub));
    const refreshed = (await t.db.get<{ updated_at: number; version: number }>(
      'SELECT updated_at, version FROM connections WHERE user_id = ?',
      [user.id],
    ))!;
    assert.equal(refreshed.version, Number(before.version) + 1);
    assert.ok(Number(refreshed.updated_at) >= (await svc.pending.get(a.connectionId))!.createdAt);
    assert.equal(
      ((await waiting).json as { status: string }).status,
      'TIMEOUT',
      'a refresh is not the user connecting',
    );
    // the user then reconnects through the portal's own link, served by another replica
    const b = await replica.pending.createLimited(user.id, 'mockhub', 'oauth2');
    assert.ok(b.ok);
    await replica.saveTokens(user.id, hub, { accessToken: mock.issue().accessToken, expiresInSec: 3600 });
    await replica.pending.settle(b.pending.id, 'connected', null);
    const r = await call('wait_for_connection', { connectionId: a.connectionId, timeoutSec: 2 }, ctx);
    assert.equal((r.json as { status: string }).status, 'CONNECTED', JSON.stringify(r.json));
  });

  it('connect on a connected integration says so and makes no link; reconnect: true makes one, as does needs_reauth', async () => {
    const user = await t.users.create('already@example.com', 'acme');
    await replica.saveApiKey(user.id, apiKeyManifest(), { apiKey: 'k_connected01' });
    const ctx = context(user).ctx;
    const links = async () =>
      Number(
        (await t.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM pending_connects WHERE user_id = ?', [user.id]))?.n,
      );
    const r = await call('connect', { integration: 'keyed' }, ctx);
    const j = r.json as { status: string; connectedAt: string; message: string; url?: string };
    assert.equal(r.isError, undefined);
    assert.equal(j.status, 'ALREADY_CONNECTED');
    assert.ok(Math.abs(Date.parse(j.connectedAt) - Date.now()) < 60_000, j.connectedAt);
    assert.match(j.message, /already connected.*reconnect: true/);
    assert.equal(j.url, undefined);
    assert.equal(await links(), 0, 'no link was made');
    const again = (await call('connect', { integration: 'keyed', reconnect: true }, ctx)).json as { url: string };
    assert.match(again.url, /\/connect\//);
    assert.equal(await links(), 1);
    await t.db.run("UPDATE connections SET status = 'needs_reauth', status_reason = 'revoked' WHERE user_id = ?", [
      user.id,
    ]);
    const reauth = (await call('connect', { integration: 'keyed' }, ctx)).json as { url: string };
    assert.match(reauth.url, /\/connect\//, 'a connection that needs re-authorisation gets its link');
  });

  it('answers CONNECTED for the link itself when its connection is saved a moment before it is settled (the race)', async () => {
    // What the portal does when the person finishes the link: the link is taken (the API-key form
    // opens it; the OAuth callback moves it to exchanging), the connection is saved (its event
    // wakes the wait), then the link is settled. Here the settle comes late, so the woken wait
    // reads the link before it: it used to answer that the link "is no longer needed".
    const hub = manifests[0]!;
    const cases = [
      {
        integration: 'keyed',
        take: async (id: string, userId: string) => assert.ok((await svc.pending.open(id, userId)).ok),
        save: (userId: string) => svc.saveApiKey(userId, apiKeyManifest(), { apiKey: 'k_raceraceAB' }),
      },
      {
        integration: 'mockhub',
        take: async (id: string, userId: string) => {
          assert.ok(
            (await svc.pending.open(id, userId, { state: 'race-state-0123456789', codeVerifier: undefined })).ok,
          );
          assert.ok((await svc.pending.takeByState('race-state-0123456789', userId)).ok);
        },
        save: (userId: string) => svc.saveTokens(userId, hub, { accessToken: mock.issue().accessToken }),
      },
    ];
    for (const c of cases) {
      const user = await t.users.create(`race-${c.integration}@example.com`, 'acme');
      const ctx = context(user).ctx;
      const { connectionId } = (await call('connect', { integration: c.integration }, ctx)).json as {
        connectionId: string;
      };
      const waiting = call('wait_for_connection', { connectionId, timeoutSec: 20 }, ctx);
      let answered = false;
      void waiting.then(() => (answered = true));
      await new Promise((r) => setTimeout(r, 300));
      await c.take(connectionId, user.id);
      await c.save(user.id);
      await new Promise((r) => setTimeout(r, 400));
      await svc.pending.settle(connectionId, 'connected', null);
      const r = await waiting;
      assert.deepEqual(r.json, { connectionId, integration: c.integration, status: 'CONNECTED' }, c.integration);
      assert.ok(answered, 'answered');
    }
  });

  it('wakes at once when this process settles the link', async () => {
    const { connectionId } = (await call('connect', { integration: 'mockhub' })).json as { connectionId: string };
    const waiting = call('wait_for_connection', { connectionId, timeoutSec: 30 });
    await new Promise((r) => setTimeout(r, 1500));
    const t0 = Date.now();
    await svc.pending.settle(connectionId, 'denied', 'MockHub answered access_denied');
    const r = await waiting;
    assert.ok(Date.now() - t0 < 200);
    assert.deepEqual(r.json, {
      connectionId,
      integration: 'mockhub',
      status: 'DENIED',
      reason: 'MockHub answered access_denied',
    });
  });

  it("returns TIMEOUT, EXPIRED, and an error for another user's id", async () => {
    const { connectionId } = (await call('connect', { integration: 'mockhub' })).json as { connectionId: string };
    const timeout = await call('wait_for_connection', { connectionId, timeoutSec: 1 });
    assert.equal((timeout.json as { status: string }).status, 'TIMEOUT');
    await t.db.run('UPDATE pending_connects SET expires_at = ? WHERE id = ?', [Date.now() + 300, connectionId]);
    const expired = await call('wait_for_connection', { connectionId, timeoutSec: 5 });
    assert.equal((expired.json as { status: string }).status, 'EXPIRED');
    const eve = await t.users.create('eve@example.com', 'acme');
    const other = await call('wait_for_connection', { connectionId, timeoutSec: 1 }, context(eve).ctx);
    assert.equal(other.isError, true);
    assert.match(JSON.stringify(other.json), /Unknown connectionId/);
  });

  it('stops waiting when the client cancels', async () => {
    const { connectionId } = (await call('connect', { integration: 'mockhub' })).json as { connectionId: string };
    const abort = new AbortController();
    const t0 = Date.now();
    setTimeout(() => abort.abort(), 300);
    const r = await call('wait_for_connection', { connectionId, timeoutSec: 60 }, context(t.user, abort.signal).ctx);
    assert.ok(Date.now() - t0 < 1000);
    assert.equal((r.json as { status: string }).status, 'TIMEOUT');
  });

  it('list_integrations tells the truth about each connection, and disconnect revokes', async () => {
    const pair = mock.issue();
    const hub = manifests[0]!;
    await svc.importConnection({
      userId: t.user.id,
      manifest: hub,
      token: pair.accessToken,
      refreshToken: pair.refreshToken,
      expiresInSec: 3600,
    });
    type Row = {
      name: string;
      connection: string;
      reason?: string;
      tools: number;
      authType: string;
      connectable?: boolean;
    };
    const list = async () => ((await call('list_integrations', {})).json as { integrations: Row[] }).integrations;
    let rows = await list();
    assert.deepEqual(
      rows.map((r) => [r.name, r.connection]),
      [
        ['clock', 'not_required'],
        ['keyed', 'connected'],
        ['mockhub', 'connected'],
        ['noclient', 'not_connected'],
      ],
    );
    assert.equal(rows.find((r) => r.name === 'noclient')?.connectable, false);
    assert.equal(rows.find((r) => r.name === 'mockhub')?.tools, 1);
    await t.db.run(
      "UPDATE connections SET status = 'needs_reauth', status_reason = 'the provider no longer accepts it' WHERE integration = 'mockhub'",
    );
    rows = await list();
    assert.deepEqual(
      rows.find((r) => r.name === 'mockhub'),
      {
        ...rows.find((r) => r.name === 'mockhub'),
        connection: 'needs_reauth',
        reason: 'the provider no longer accepts it',
      },
    );
    const r = await call('disconnect', { integration: 'mockhub' });
    assert.deepEqual(r.json, { integration: 'mockhub', disconnected: true, revocation: 'revoked' });
    assert.ok(mock.revoked.has(pair.refreshToken) && mock.revoked.has(pair.accessToken));
    assert.equal((await list()).find((x) => x.name === 'mockhub')?.connection, 'not_connected');
    assert.deepEqual((await call('disconnect', { integration: 'mockhub' })).json, {
      integration: 'mockhub',
      disconnected: false,
      revocation: 'unsupported',
    });
  });
});
