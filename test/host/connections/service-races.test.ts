/**
 * @module test/host/connections/service-races
 * The connection service when things happen at once, against a real loopback provider and a SQLite
 * file: a disconnect racing a reconnect, a reconnect whose token response has no refresh token, and
 * the background refresh sweep when some connections cannot be refreshed.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { openSecret } from '../../../host/connections/sealed-secret.js';
import { createConnectionService, type ConnectionServiceDeps } from '../../../host/connections/service.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import { startMockOAuth, type MockOAuth } from '../../helpers/mock-oauth.js';
import { oauthManifest, openTestDb, type TestDb } from '../../helpers/connections-db.js';

describe('connection service races', () => {
  let t: TestDb | undefined;
  let mock: MockOAuth;
  const vault = createVault(generateKey());

  before(async () => {
    mock = await startMockOAuth();
  });
  after(async () => {
    await t?.close();
    await mock.close();
  });
  beforeEach(async () => {
    await t?.close();
    t = await openTestDb();
  });

  const db = (): TestDb => {
    if (!t) throw new Error('no database');
    return t;
  };
  const service = (extra: Partial<ConnectionServiceDeps> = {}) =>
    createConnectionService({
      db: db().db,
      vault,
      clientFor: () => ({ clientId: mock.clientId, clientSecret: mock.clientSecret }),
      ...extra,
    });

  it('a disconnect whose revocation is slow does not delete the connection the user made meanwhile', async () => {
    // the provider's revocation endpoint answers only when the test lets it
    let revokeArrived = (): void => undefined;
    let releaseRevoke = (): void => undefined;
    const arrived = new Promise<void>((resolve) => (revokeArrived = resolve));
    const released = new Promise<void>((resolve) => (releaseRevoke = resolve));
    const heldFetch: typeof fetch = async (url, init) => {
      if (String(url).includes('/revoke')) {
        revokeArrived();
        await released;
      }
      return fetch(url, init);
    };
    const agent = service({ fetch: heldFetch });
    const portal = service();
    const manifest = oauthManifest(mock);
    const old = mock.issue();
    await agent.importConnection({
      userId: db().user.id,
      manifest,
      token: old.accessToken,
      refreshToken: old.refreshToken,
      expiresInSec: 3600,
    });
    const disconnecting = agent.disconnect(db().user.id, manifest);
    await arrived;
    const fresh = mock.issue();
    await portal.saveTokens(db().user.id, manifest, {
      accessToken: fresh.accessToken,
      refreshToken: fresh.refreshToken,
      expiresInSec: 3600,
    });
    releaseRevoke();
    assert.deepEqual(await disconnecting, { removed: true, revocation: 'revoked' });
    assert.equal((await portal.state(db().user.id, manifest)).state, 'connected', 'the new connection stands');
    assert.deepEqual(await portal.credential(db().user.id, manifest), { values: { token: fresh.accessToken } });
    assert.ok(mock.activeRefreshTokens.has(fresh.refreshToken), 'the new grant is live at the provider');
    assert.ok(mock.revoked.has(old.refreshToken) && mock.revoked.has(old.accessToken), 'the old tokens were revoked');
  });

  it('a disconnect that read the connection before a reconnect removes and revokes the reconnected one, not the old secret', async () => {
    const manifest = oauthManifest(mock);
    const portal = service();
    const old = mock.issue();
    const fresh = mock.issue();
    let reconnected = false;
    // the reconnect lands between the disconnect's read and its delete
    const racing: TestDb['db'] = {
      ...db().db,
      run: async (sql: string, params?: readonly (string | number | bigint | null)[]) => {
        if (!reconnected && sql.startsWith('DELETE FROM connections')) {
          reconnected = true;
          await portal.saveTokens(db().user.id, manifest, {
            accessToken: fresh.accessToken,
            refreshToken: fresh.refreshToken,
            expiresInSec: 3600,
          });
        }
        return db().db.run(sql, params);
      },
    };
    const agent = service({ db: racing });
    await agent.importConnection({
      userId: db().user.id,
      manifest,
      token: old.accessToken,
      refreshToken: old.refreshToken,
      expiresInSec: 3600,
    });
    assert.deepEqual(await agent.disconnect(db().user.id, manifest), { removed: true, revocation: 'revoked' });
    assert.ok(reconnected);
    assert.equal((await portal.state(db().user.id, manifest)).state, 'not_connected');
    assert.ok(
      mock.revoked.has(fresh.refreshToken) && mock.revoked.has(fresh.accessToken),
      'the tokens deleted are the ones revoked',
    );
    assert.ok(
      !mock.revoked.has(old.refreshToken),
      'the old secret, replaced before the delete, is not what was reported revoked',
    );
  });

  it('a reconnect through OAuth whose token response has no refresh token keeps the stored one', async () => {
    let clock = Date.now();
    const svc = service({ now: () => clock });
    const manifest = oauthManifest(mock);
    const first = mock.issue();
    await svc.importConnection({
      userId: db().user.id,
      manifest,
      token: first.accessToken,
      refreshToken: first.refreshToken,
      expiresInSec: 3600,
    });
    // re-consent at a provider that sends a new access token only (the earlier refresh token stays valid there)
    await svc.saveTokens(db().user.id, manifest, { accessToken: 'at-reconsent', expiresInSec: 3600 });
    const row = await db().db.get<{ id: string; secret: string }>('SELECT id, secret FROM connections');
    assert.ok(row);
    assert.deepEqual(openSecret(vault, row.id, row.secret, 'mockhub'), {
      values: { token: 'at-reconsent' },
      refreshToken: first.refreshToken,
    });
    clock += 3_600_000; // an hour later the token has expired: refreshed with the kept refresh token
    const cred = await svc.credential(db().user.id, manifest);
    assert.ok(
      cred && cred.values['token'] !== 'at-reconsent' && mock.activeAccessTokens.has(cred.values['token'] ?? ''),
    );
    assert.equal((await svc.state(db().user.id, manifest)).state, 'connected');
    // a reconnect that does bring a refresh token replaces it
    const second = mock.issue();
    await svc.saveTokens(db().user.id, manifest, {
      accessToken: second.accessToken,
      refreshToken: second.refreshToken,
      expiresInSec: 3600,
    });
    const again = await db().db.get<{ id: string; secret: string }>('SELECT id, secret FROM connections');
    assert.equal(again && openSecret(vault, again.id, again.secret, 'mockhub').refreshToken, second.refreshToken);
  });
  it("a reconnect without a refresh token does not keep a needs_reauth connection's dead one", async () => {
    let clock = Date.now();
    const svc = service({ now: () => clock });
    const manifest = oauthManifest(mock);
    const first = mock.issue();
    await svc.importConnection({
      userId: db().user.id,
      manifest,
      token: first.accessToken,
      refreshToken: first.refreshToken,
      expiresInSec: 3600,
    });
    mock.activeRefreshTokens.delete(first.refreshToken); // the grant was revoked at the provider
    clock += 3_600_000;
    assert.equal(await svc.credential(db().user.id, manifest), undefined, 'invalid_grant: needs re-authorisation');
    assert.equal((await svc.state(db().user.id, manifest)).state, 'needs_reauth');
    // the user reconnects at a provider that sends a new access token only
    await svc.saveTokens(db().user.id, manifest, { accessToken: 'at-after-reauth', expiresInSec: 3600 });
    const row = await db().db.get<{ id: string; secret: string }>('SELECT id, secret FROM connections');
    assert.ok(row);
    assert.deepEqual(
      openSecret(vault, row.id, row.secret, 'mockhub'),
      { values: { token: 'at-after-reauth' } },
      'the refused refresh token is not kept',
    );
    clock += 3_600_000; // at expiry: no refresh with the dead token (it would end in invalid_grant again)
    assert.equal(await svc.credential(db().user.id, manifest), undefined);
    assert.equal(
      mock.counters.refreshTokenUses.get(first.refreshToken),
      1,
      'the dead refresh token was presented only once',
    );
  });
  it('the sweep backs off a connection whose refresh the provider failed, though its token has not expired yet', async () => {
    let clock = Date.now();
    const svc = service({ now: () => clock });
    const manifest = oauthManifest(mock);
    const pair = mock.issue();
    await svc.importConnection({
      userId: db().user.id,
      manifest,
      token: pair.accessToken,
      refreshToken: pair.refreshToken,
      expiresInSec: 240,
    });
    mock.mode = 'unavailable';
    try {
      assert.deepEqual(
        await svc.refreshExpiring([manifest]),
        { usable: 0, needsReauth: 0, failed: 1 },
        'a provider failure is a failure',
      );
    } finally {
      mock.mode = 'normal';
    }
    clock += 61_000; // a minute later (not yet at its expiry) the sweep tries it again
    assert.deepEqual(await svc.refreshExpiring([manifest]), { usable: 1, needsReauth: 0, failed: 0 });
    assert.equal(mock.counters.refreshTokenUses.get(pair.refreshToken), 2);
  });
  it('the refresh sweep reaches a due connection behind connections of an uninstalled plugin and ones whose refresh keeps failing', async () => {
    let clock = Date.now();
    const svc = service({ now: () => clock });
    const live = oauthManifest(mock);
    const retired = { ...live, name: 'retired' }; // a plugin since uninstalled
    // a provider whose token endpoint is gone (connection refused)
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const broken = {
      ...oauthManifest({ authorizeUrl: mock.authorizeUrl, tokenUrl: `http://127.0.0.1:${port}/token` }),
      name: 'brokenhub',
    };
    for (let i = 0; i < 3; i++) {
      const u = await db().users.create(`stuck${i}@example.com`, 'acme');
      const a = mock.issue();
      await svc.importConnection({
        userId: u.id,
        manifest: retired,
        token: a.accessToken,
        refreshToken: a.refreshToken,
        expiresInSec: 1,
      });
      const b = mock.issue();
      await svc.importConnection({
        userId: u.id,
        manifest: broken,
        token: b.accessToken,
        refreshToken: b.refreshToken,
        expiresInSec: 2,
      });
    }
    clock += 5_000; // those have expired; this one is due within the sweep's window
    const pair = mock.issue();
    await svc.importConnection({
      userId: db().user.id,
      manifest: live,
      token: pair.accessToken,
      refreshToken: pair.refreshToken,
      expiresInSec: 120,
    });
    const installed = [live, broken];
    assert.deepEqual(
      await svc.refreshExpiring(installed, 5 * 60_000, 3),
      { usable: 0, needsReauth: 0, failed: 3 },
      'the failing ones first (the retired plugin is left out)',
    );
    assert.deepEqual(
      await svc.refreshExpiring(installed, 5 * 60_000, 3),
      { usable: 1, needsReauth: 0, failed: 0 },
      'then the due one: the failed ones are put off',
    );
    assert.equal(mock.counters.refreshTokenUses.get(pair.refreshToken), 1);
    assert.notEqual((await svc.credential(db().user.id, live))?.values['token'], pair.accessToken);
    clock += 60_000; // the failed ones are tried again after a minute
    assert.deepEqual(await svc.refreshExpiring(installed, 5 * 60_000, 3), { usable: 0, needsReauth: 0, failed: 3 });
  });
});
