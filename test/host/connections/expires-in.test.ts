/**
 * @module test/host/connections/expires-in.test
 * Providers' odd `expires_in` values (a fraction, 1e300, a string) through the real OAuth callback
 * of the portal and the refresh, on SQLite and on PostgreSQL, where `connections.expires_at` is a
 * BIGINT that refuses anything but an integer: the connection is stored, its expiry a whole number
 * of milliseconds within [1 s, 10 years] from now, and a rotated refresh token is never lost.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { ConnectionStore } from '../../../host/connections/connection-store.js';
import { openSecret } from '../../../host/connections/sealed-secret.js';
import { createConnectionService, type FullConnectionService } from '../../../host/connections/service.js';
import { MAX_EXPIRES_IN_SEC } from '../../../host/connections/token-response.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import { registerPortal } from '../../../host/portal/portal.js';
import type { Db } from '../../../host/storage/db.js';
import { migrate } from '../../../host/storage/migrations.js';
import { UserStore, type User } from '../../../host/storage/users.js';
import { startMockOAuth, type MockOAuth } from '../../helpers/mock-oauth.js';
import { browser, csrfOf, providerUrlOf } from '../../helpers/portal.js';
import { backends } from '../../helpers/storage-backends.js';
import { oauthManifest } from '../../helpers/connections-db.js';

for (const backend of backends()) {
  describe(`provider expires_in values on ${backend.name}`, { skip: backend.skip }, () => {
    let db: Db;
    let mock: MockOAuth;
    let app: FastifyInstance;
    let svc: FullConnectionService;
    let user: User;
    let apiKey: string;
    let clock = Date.now();
    const vault = createVault(generateKey());

    before(async () => {
      await backend.start();
      db = await backend.open(await backend.freshUrl());
      await migrate(db);
      mock = await startMockOAuth();
      const manifests = [oauthManifest(mock)];
      svc = createConnectionService({
        db,
        vault,
        clientFor: () => ({ clientId: mock.clientId, clientSecret: mock.clientSecret }),
        now: () => clock,
      });
      const users = new UserStore(db);
      user = await users.create('ada@example.com', 'acme');
      apiKey = (await users.createApiKey(user.id, 'test')).key;
      app = Fastify();
      registerPortal(app, {
        db,
        users,
        connections: svc,
        registry: { plugins: () => manifests, plugin: (n) => manifests.find((m) => m.name === n) },
        publicUrl: 'http://127.0.0.1:3999',
      });
      await app.ready();
    });
    after(async () => {
      await app?.close();
      await mock?.close();
      await db?.close();
      await backend.stop();
    });

    /** connects through the portal's link page, the mock provider's consent and the OAuth callback */
    async function connectThroughPortal(): Promise<void> {
      const b = browser(app);
      const login = await b.get('/login');
      assert.equal((await b.post('/login', { _csrf: csrfOf(login.body), apiKey, next: '/integrations' })).status, 303);
      const p = await svc.pending.create(user.id, 'mockhub', 'oauth2');
      const page = await b.get(`/connect/${p.id}`);
      const auth = providerUrlOf(await b.post(`/connect/${p.id}`, { _csrf: csrfOf(page.body) }));
      const consent = await fetch(`${mock.origin}/authorize/decision`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({
          decision: 'allow',
          redirect_uri: auth.searchParams.get('redirect_uri') ?? '',
          state: auth.searchParams.get('state') ?? '',
          code_challenge: auth.searchParams.get('code_challenge') ?? '',
        }),
      });
      const back = new URL(consent.headers.get('location') ?? '');
      assert.equal((await b.get(`/oauth/callback${back.search}`)).status, 303);
      const settled = await svc.pending.get(p.id);
      assert.equal(settled?.status, 'connected', settled?.statusReason ?? '');
    }

    const stored = async () => {
      const row = await new ConnectionStore(db).byUser(user.id, 'mockhub');
      assert.ok(row);
      return { row, secret: openSecret(vault, row.id, row.secret, 'mockhub') };
    };

    it('stores a connection whose provider answered expires_in 3599.0001, with a whole-millisecond expiry', async () => {
      mock.expiresIn = 3599.0001;
      await connectThroughPortal();
      const { row, secret } = await stored();
      assert.equal(row.status, 'connected');
      assert.equal(row.expires_at, clock + 3_599_000);
      assert.ok(mock.activeAccessTokens.has(secret.values['token'] ?? ''));
    });

    it('a refresh answered with expires_in 1e300 is stored, its expiry clamped to 10 years, the rotated refresh token kept', async () => {
      mock.expiresIn = 1e300;
      clock += 3_599_000; // the token is due
      const cred = await svc.credential(user.id, oauthManifest(mock));
      const { row, secret } = await stored();
      assert.equal(secret.values['token'], cred?.values['token'], 'the refreshed token is stored');
      assert.ok(
        secret.refreshToken && mock.activeRefreshTokens.has(secret.refreshToken),
        'the rotated refresh token is stored',
      );
      assert.equal(row.version, 2);
      assert.equal(row.expires_at, clock + MAX_EXPIRES_IN_SEC * 1000);
      assert.ok(Number.isSafeInteger(row.expires_at));
    });

    it('a string with a fraction ("7200.9") and a fraction below one second are floored and clamped', async () => {
      mock.expiresIn = '7200.9';
      await connectThroughPortal();
      assert.equal((await stored()).row.expires_at, clock + 7_200_000);
      mock.expiresIn = 0.25;
      await connectThroughPortal();
      assert.equal((await stored()).row.expires_at, clock + 1_000);
      // imported by the operator (connections import) with a lifetime beyond the clamp
      await svc.importConnection({
        userId: user.id,
        manifest: oauthManifest(mock),
        token: 'imported',
        expiresInSec: 1e30,
      });
      assert.equal((await stored()).row.expires_at, clock + MAX_EXPIRES_IN_SEC * 1000);
    });
  });
}
