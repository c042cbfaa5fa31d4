/**
 * @module test/host/connections/cookie-storage.test
 * Cookie connections in storage, on SQLite and on PostgreSQL: the cookies are sealed in the
 * connection's secret (no new column), read back whole by another replica, their session's end
 * stored in `expires_at` (a BIGINT on PostgreSQL) and judged there, two replicas capturing at
 * once (PostgreSQL) leave one connection, and a connect link of type `cookie` is stored and read
 * back as one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manifestSchema } from '../../../contracts/manifest.js';
import type { StoredCookie } from '../../../host/bridge/index.js';
import { COOKIES_EXPIRED_REASON } from '../../../host/connections/connection-reads.js';
import { createConnectionService, type FullConnectionService } from '../../../host/connections/service.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import type { Db } from '../../../host/storage/db.js';
import { UserStore, type User } from '../../../host/storage/users.js';
import { backends, freshPair } from '../../helpers/storage-backends.js';

const manifest = manifestSchema.parse({
  name: 'cookied',
  version: '1.0.0',
  displayName: 'Cookied',
  description: 'A cookie connection under test.',
  auth: {
    type: 'cookie',
    loginUrl: 'https://app.example.com/login',
    domains: ['example.com'],
    signedInCheck: { cookies: ['sid'] },
  },
  egress: ['app.example.com'],
  tools: [{ name: 'cookied_get', description: 'Gets.', inputSchema: { type: 'object' } }],
});
const T0 = Date.UTC(2031, 5, 1);

const cookies = (value: string, expires: number): StoredCookie[] => [
  { name: 'sid', value, domain: '.example.com', path: '/', expires, httpOnly: true, secure: true, sameSite: 'Strict' },
  {
    name: 'lang',
    value: 'en-GB',
    domain: 'app.example.com',
    path: '/app',
    expires: -1,
    httpOnly: false,
    secure: false,
    sameSite: 'Lax',
  },
];

for (const backend of backends()) {
  describe(`cookie connections on ${backend.name}`, { skip: backend.skip }, () => {
    let db: Db;
    let other: Db;
    let one: FullConnectionService;
    let two: FullConnectionService;
    let user: User;
    let clock = T0;
    const vault = createVault(generateKey());

    before(async () => {
      await backend.start();
      ({ db, other } = await freshPair(backend));
      const deps = { vault, clientFor: () => undefined, now: () => clock };
      one = createConnectionService({ db, ...deps });
      two = createConnectionService({ db: other, ...deps });
      user = await new UserStore(db).create('ada@example.com', 'acme');
    });
    after(async () => {
      await db?.close();
      await other?.close();
      await backend.stop();
    });

    it('a capture on one replica is read whole, sealed, by another; its end is a BIGINT judged on either', async () => {
      const end = Math.floor(T0 / 1000) + 3600;
      const r = await one.captureCookies(user.id, manifest, cookies('sid-value-on-one', end));
      assert.equal(r.expiresAt, end * 1000);
      assert.deepEqual((await two.credential(user.id, manifest))?.cookies, cookies('sid-value-on-one', end));
      const row = await db.get<{ secret: string; expires_at: number | string }>(
        'SELECT secret, expires_at FROM connections WHERE id = ?',
        [r.connectionId],
      );
      assert.ok(row && !row.secret.includes('sid-value-on-one') && !row.secret.includes('lang'));
      assert.equal(Number(row.expires_at), end * 1000);
      clock = end * 1000;
      assert.deepEqual(await two.lookup(user.id, manifest), { connected: false, reason: COOKIES_EXPIRED_REASON });
      assert.equal((await one.state(user.id, manifest)).state, 'needs_reauth');
      clock = T0;
    });

    // (two SQLite handles in one process would block each other's write transaction: SQLite
    // replicas are processes on one host, and those that run at once share PostgreSQL)
    const sqlite = backend.name === 'sqlite' && 'two handles of one SQLite file in one process block each other';
    it(
      'two replicas capturing at once leave one connection, connected, holding one of the two sessions',
      { skip: sqlite },
      async () => {
        const end = Math.floor(T0 / 1000) + 7200;
        const [a, b] = await Promise.all([
          one.captureCookies(user.id, manifest, cookies('sid-from-replica-a', end)),
          two.captureCookies(user.id, manifest, cookies('sid-from-replica-b', end)),
        ]);
        assert.equal(a.connectionId, b.connectionId);
        const rows = await db.all<{ status: string }>('SELECT status FROM connections WHERE user_id = ?', [user.id]);
        assert.deepEqual(
          rows.map((x) => x.status),
          ['connected'],
        );
        const sid = (await one.credential(user.id, manifest))?.cookies?.[0]?.value;
        assert.ok(sid === 'sid-from-replica-a' || sid === 'sid-from-replica-b', sid);
      },
    );

    it('a connect link of type cookie is stored and read back as one, on any replica', async () => {
      const p = await one.pending.create(user.id, 'cookied', 'cookie');
      assert.equal((await two.pending.get(p.id))?.type, 'cookie');
    });
  });
}
