/**
 * @module test/host/connections/refresh.test
 * Stale OAuth2 tokens against a real loopback provider: one refresh under 20 concurrent calls (and
 * across two service instances sharing the database, as two replicas would), rotation persisted,
 * invalid_grant → needs_reauth, and a provider that is down or answers garbage.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createConnectionService, type ConnectionServiceDeps } from '../../../host/connections/service.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import { INVALID_GRANT_REASON, NO_REFRESH_REASON } from '../../../host/connections/refresh.js';
import { openSecret } from '../../../host/connections/sealed-secret.js';
import { startMockOAuth, type MockOAuth } from '../../helpers/mock-oauth.js';
import { oauthManifest, openTestDb, type TestDb } from '../../helpers/connections-db.js';

describe('OAuth2 refresh', () => {
  let t: TestDb;
  let mock: MockOAuth;
  const vault = createVault(generateKey());
  const logs: string[] = [];
  const logger = {
    info: (o: object, m?: string) => void logs.push(JSON.stringify(o) + (m ?? '')),
    warn: (o: object, m?: string) => void logs.push(JSON.stringify(o) + (m ?? '')),
  };

  before(async () => {
    mock = await startMockOAuth({ refreshDelayMs: 50 });
  });
  after(async () => {
    await mock.close();
  });
  beforeEach(async () => {
    if (t) await t.close();
    t = await openTestDb();
    mock.mode = 'normal';
  });
  after(async () => t && (await t.close()));

  const service = (extra: Partial<ConnectionServiceDeps> = {}) =>
    createConnectionService({
      db: t.db,
      vault,
      clientFor: () => ({ clientId: mock.clientId, clientSecret: mock.clientSecret }),
      logger,
      ...extra,
    });

  async function staleConnection(svc = service(), expiresInSec = 5) {
    const pair = mock.issue();
    const manifest = oauthManifest(mock);
    await svc.importConnection({
      userId: t.user.id,
      manifest,
      token: pair.accessToken,
      refreshToken: pair.refreshToken,
      expiresInSec,
    });
    return { pair, manifest };
  }

  it('refreshes a stale token once under 20 concurrent calls and persists the rotated refresh token', async () => {
    const svc = service();
    const { pair, manifest } = await staleConnection(svc);
    const before = mock.counters.refreshes;
    const creds = await Promise.all(Array.from({ length: 20 }, () => svc.credential(t.user.id, manifest)));
    assert.equal(mock.counters.refreshes - before, 1, 'exactly one refresh request');
    assert.equal(mock.counters.refreshTokenUses.get(pair.refreshToken), 1);
    const tokens = new Set(creds.map((c) => c?.values['token']));
    assert.equal(tokens.size, 1);
    const fresh = [...tokens][0] as string;
    assert.notEqual(fresh, pair.accessToken);
    assert.ok(mock.activeAccessTokens.has(fresh));

    const row = await t.db.get<{ id: string; secret: string; expires_at: number; version: number }>(
      'SELECT * FROM connections',
    );
    assert.ok(row);
    const stored = openSecret(vault, row.id, row.secret, 'mockhub');
    assert.equal(stored.values['token'], fresh);
    assert.ok(
      stored.refreshToken && mock.activeRefreshTokens.has(stored.refreshToken),
      'the rotated refresh token is stored',
    );
    assert.ok(!mock.activeRefreshTokens.has(pair.refreshToken));
    assert.ok(Number(row.expires_at) > Date.now() + 3_000_000);
    // Fresh now: no further refresh.
    await svc.credential(t.user.id, manifest);
    assert.equal(mock.counters.refreshes - before, 1);
    // Nothing logged carries a token.
    for (const line of logs)
      for (const secret of [pair.accessToken, pair.refreshToken, fresh, stored.refreshToken])
        assert.ok(!line.includes(secret), line);
  });

  it('uses the rotated refresh token for the next refresh (rotation persisted)', async () => {
    let clock = Date.now();
    const svc = service({ now: () => clock });
    const { manifest } = await staleConnection(svc);
    const first = await svc.credential(t.user.id, manifest);
    clock += 3_600_000; // the refreshed token is now stale too
    const second = await svc.credential(t.user.id, manifest);
    assert.ok(second && first && second.values['token'] !== first.values['token']);
    assert.deepEqual(
      mock.counters.tokenErrors.filter((e) => e === 'invalid_grant'),
      [],
    );
    assert.ok(
      [...mock.counters.refreshTokenUses.values()].every((n) => n === 1),
      'no refresh token presented twice',
    );
  });

  it('spends the refresh token once across two service instances sharing the database (replicas)', async () => {
    const a = service();
    const b = service();
    const { pair, manifest } = await staleConnection(a);
    const before = mock.counters.refreshes;
    const creds = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).credential(t.user.id, manifest)),
    );
    assert.equal(mock.counters.refreshes - before, 1);
    assert.equal(mock.counters.refreshTokenUses.get(pair.refreshToken), 1);
    assert.equal(new Set(creds.map((c) => c?.values['token'])).size, 1);
  });

  it('turns invalid_grant into needs_reauth with a reason, seen by lookup and state', async () => {
    const svc = service();
    const { manifest } = await staleConnection(svc);
    mock.mode = 'invalid-grant';
    const results = await Promise.all(Array.from({ length: 5 }, () => svc.credential(t.user.id, manifest)));
    assert.deepEqual(results, [undefined, undefined, undefined, undefined, undefined]);
    const look = await svc.lookup(t.user.id, manifest);
    assert.deepEqual(look, { connected: false, reason: INVALID_GRANT_REASON });
    const state = await svc.state(t.user.id, manifest);
    assert.equal(state.state, 'needs_reauth');
    // Reconnecting (a new token) brings it back.
    const pair = mock.issue();
    mock.mode = 'normal';
    await svc.importConnection({
      userId: t.user.id,
      manifest,
      token: pair.accessToken,
      refreshToken: pair.refreshToken,
      expiresInSec: 3600,
    });
    assert.equal((await svc.lookup(t.user.id, manifest)).connected, true);
    assert.equal((await svc.credential(t.user.id, manifest))?.values['token'], pair.accessToken);
  });

  it('a failed write of the refreshed tokens is retried; the call gets its token either way', async () => {
    // the database refuses the first write of the refreshed secret (e.g. busy), then accepts
    let refusals = 1;
    const db: typeof t.db = {
      ...t.db,
      run: (sql, params) => {
        if (sql.includes('SET secret = ?') && sql.includes('AND version = ?') && refusals-- > 0)
          return Promise.reject(new Error('database is locked'));
        return t.db.run(sql, params);
      },
    };
    const svc = service({ db });
    const { manifest } = await staleConnection(svc);
    const cred = await svc.credential(t.user.id, manifest);
    assert.equal(refusals, -1, 'the write was refused once');
    const fresh = cred?.values['token'];
    assert.ok(typeof fresh === 'string' && mock.activeAccessTokens.has(fresh), 'the call got a refreshed token');
    // stored by the retry: a later call reads it without refreshing again
    const before = mock.counters.refreshes;
    assert.equal((await service().credential(t.user.id, manifest))?.values['token'], fresh);
    assert.equal(mock.counters.refreshes, before);
    assert.ok(logs.some((l) => l.includes('storing the refreshed token failed')));
  });

  it("reconnecting through OAuth (saveTokens) keeps the connection's config", async () => {
    const svc = service();
    const manifest = oauthManifest(mock);
    const first = mock.issue();
    await svc.importConnection({
      userId: t.user.id,
      manifest,
      token: first.accessToken,
      refreshToken: first.refreshToken,
      expiresInSec: 3600,
      config: { site: 'team-a' },
    });
    const second = mock.issue();
    await svc.saveTokens(t.user.id, manifest, {
      accessToken: second.accessToken,
      refreshToken: second.refreshToken,
      expiresInSec: 3600,
    });
    const look = await svc.lookup(t.user.id, manifest);
    assert.ok(look.connected);
    assert.deepEqual(look.config, { site: 'team-a' });
    assert.equal((await svc.credential(t.user.id, manifest))?.values['token'], second.accessToken);
  });

  it('marks an expired token without a refresh token as needs_reauth', async () => {
    let clock = Date.now();
    const svc = service({ now: () => clock });
    const manifest = oauthManifest(mock);
    await svc.importConnection({ userId: t.user.id, manifest, token: 'short-lived', expiresInSec: 30 });
    assert.equal(
      (await svc.credential(t.user.id, manifest))?.values['token'],
      'short-lived',
      'still valid for 30 s: used as is',
    );
    clock += 31_000;
    assert.equal(await svc.credential(t.user.id, manifest), undefined);
    assert.deepEqual(await svc.lookup(t.user.id, manifest), { connected: false, reason: NO_REFRESH_REASON });
  });

  for (const [label, mode, pattern] of [
    ['is down (HTTP 503)', 'unavailable', /HTTP 503/],
    ['answers HTML', 'html', /text\/html that is not a token response/],
    ['answers JSON without a token', 'garbage-json', /no access_token/],
  ] as const) {
    it(`gives a clear error and keeps the connection when the provider ${label}`, async () => {
      let clock = Date.now();
      const svc = service({ now: () => clock });
      const { pair, manifest } = await staleConnection(svc, 1);
      clock += 2_000; // now really expired
      mock.mode = mode;
      const rowBefore = await t.db.get<{ secret: string; version: number }>('SELECT secret, version FROM connections');
      await assert.rejects(svc.credential(t.user.id, manifest), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'GW_ERR_ENGINE_CREDENTIAL_FAILED');
        assert.match(err.message, pattern);
        assert.match(err.message, /connection is kept/);
        assert.ok(!err.message.includes(pair.refreshToken));
        return true;
      });
      const rowAfter = await t.db.get<{
        secret: string;
        version: number;
        status: string;
        refresh_lease_owner: string | null;
      }>('SELECT * FROM connections');
      assert.equal(rowAfter?.status, 'connected');
      assert.equal(rowAfter?.secret, rowBefore?.secret);
      assert.equal(rowAfter?.refresh_lease_owner, null, 'lease released');
      // When the provider recovers, the same refresh token still works.
      mock.mode = 'normal';
      const cred = await svc.credential(t.user.id, manifest);
      assert.ok(cred && cred.values['token'] !== pair.accessToken);
    });
  }

  it('gives a clear error when the token endpoint cannot be reached at all', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    let clock = Date.now();
    const svc = service({ now: () => clock });
    const pair = mock.issue();
    const manifest = oauthManifest({ authorizeUrl: mock.authorizeUrl, tokenUrl: `http://127.0.0.1:${port}/token` });
    await svc.importConnection({
      userId: t.user.id,
      manifest,
      token: pair.accessToken,
      refreshToken: pair.refreshToken,
      expiresInSec: 1,
    });
    clock += 2_000;
    await assert.rejects(svc.credential(t.user.id, manifest), {
      code: 'GW_ERR_ENGINE_CREDENTIAL_FAILED',
      message: /unreachable \(ECONNREFUSED\).*connection is kept/,
    });
    assert.equal((await svc.lookup(t.user.id, manifest)).connected, true);
  });

  it('uses the current token when a refresh fails but the token has not expired yet', async () => {
    const svc = service();
    const { pair, manifest } = await staleConnection(svc, 30); // inside the 60 s window, still valid
    mock.mode = 'unavailable';
    assert.equal((await svc.credential(t.user.id, manifest))?.values['token'], pair.accessToken);
  });

  it('reads a form-encoded token response', async () => {
    const svc = service();
    const { manifest } = await staleConnection(svc);
    mock.mode = 'form-encoded';
    const cred = await svc.credential(t.user.id, manifest);
    assert.match(cred?.values['token'] ?? '', /^mock_at_/);
  });
});
