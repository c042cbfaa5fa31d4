/**
 * @module test/host/storage/key-chains.test
 * API keys made with other keys, on SQLite and a real PostgreSQL server: each key records what made
 * it (a portal session's key, a sign-in link, an operator); revoking a key revokes every key made
 * with it, down the chain, from either handle (another replica), and ends the portal sessions signed
 * in with them; a key made with a revoked key is refused; the cascade is one transaction (a failure
 * part-way revokes nothing) and is logged with ids only; a user is deleted with its chains.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PortalSessions } from '../../../host/portal/sessions.js';
import type { Db } from '../../../host/storage/db.js';
import { isApiKeyOriginRevokedError, UserStore, type User } from '../../../host/storage/users.js';
import { backends, freshPair } from '../../helpers/storage-backends.js';

for (const backend of backends()) {
  describe(`API key chains on ${backend.name}`, { skip: backend.skip }, () => {
    let db: Db;
    let other: Db; // a second handle on the same database: another replica
    let users: UserStore;

    before(async () => {
      await backend.start();
      ({ db, other } = await freshPair(backend));
      users = new UserStore(db);
    });
    after(async () => {
      await other?.close();
      await db?.close();
      await backend.stop();
    });

    const live = async (id: string): Promise<boolean> =>
      (await db.get<{ revoked_at: number | null }>('SELECT revoked_at FROM api_keys WHERE id = ?', [id]))
        ?.revoked_at === null;

    /** A ← operator, B ← A, C ← B, D ← A, L ← sign-in link, O ← operator */
    async function family(
      email: string,
    ): Promise<{ u: User; keys: Record<'A' | 'B' | 'C' | 'D' | 'L' | 'O', { key: string; id: string }> }> {
      const u = await users.create(email, 'acme');
      const made = async (label: string, origin?: Parameters<UserStore['createApiKey']>[2]) => {
        const { key, info } = await users.createApiKey(u.id, label, origin);
        return { key, id: info.id };
      };
      const A = await made('a');
      const B = await made('b', { via: 'key', keyId: A.id });
      const C = await made('c', { via: 'key', keyId: B.id });
      const D = await made('d', { via: 'key', keyId: A.id });
      const L = await made('l', { via: 'link' });
      const O = await made('o', { via: 'operator' });
      return { u, keys: { A, B, C, D, L, O } };
    }

    test('each key records what made it; keys from before migration 13 say nothing', async () => {
      const { u, keys } = await family('origins@example.com');
      await db.run('UPDATE api_keys SET created_via = NULL, created_with_key_id = NULL WHERE id = ?', [keys.O.id]); // as the migration leaves an earlier key
      const listed = new Map((await users.listApiKeys(u.id)).map((k) => [k.label, k]));
      assert.deepEqual(
        ['a', 'b', 'c', 'd', 'l', 'o'].map((l) => [l, listed.get(l)?.createdVia, listed.get(l)?.createdWithKeyId]),
        [
          ['a', 'operator', null],
          ['b', 'key', keys.A.id],
          ['c', 'key', keys.B.id],
          ['d', 'key', keys.A.id],
          ['l', 'link', null],
          ['o', null, null],
        ],
      );
    });

    test('revoking a key (from the other handle) revokes the keys made with it down the chain, not its parent or unrelated keys; their portal sessions end', async () => {
      const { u, keys } = await family('chain@example.com');
      const lines: { obj: object; msg: string | undefined }[] = [];
      const there = new UserStore(other, { log: { info: (obj, msg) => lines.push({ obj, msg }) } });
      const sessions = new PortalSessions(db);
      const cSession = await sessions.create(u.id, keys.C.id);
      const aSession = await sessions.create(u.id, keys.A.id);

      assert.deepEqual(await there.revokeApiKeyChain(u.id, keys.B.id), { keyId: keys.B.id, alsoRevoked: [keys.C.id] });
      assert.deepEqual(
        [await live(keys.A.id), await live(keys.B.id), await live(keys.C.id), await live(keys.D.id)],
        [true, false, false, true],
      );
      assert.equal(await users.authenticate(keys.C.key), undefined);
      assert.equal(await sessions.resolve(cSession.id), undefined, "C's session ended");
      assert.ok(await sessions.resolve(aSession.id), "A's goes on");

      // A's chain is walked through B (revoked already) to C (revoked already): only D is left to revoke
      assert.deepEqual(await there.revokeApiKeyChain(u.id, keys.A.id), { keyId: keys.A.id, alsoRevoked: [keys.D.id] });
      assert.deepEqual(
        [await live(keys.A.id), await live(keys.D.id), await live(keys.L.id), await live(keys.O.id)],
        [false, false, true, true],
      );
      assert.equal(await sessions.resolve(aSession.id), undefined);
      assert.ok(await users.authenticate(keys.L.key), 'a key made with a sign-in link is not in any chain');
      assert.equal(await there.revokeApiKeyChain(u.id, keys.A.id), undefined, 'a revoked key: nothing to do');

      assert.deepEqual(
        lines.map((l) => l.obj),
        [
          { userId: u.id, keyId: keys.B.id, alsoRevoked: [keys.C.id], alsoRevokedCount: 1 },
          { userId: u.id, keyId: keys.A.id, alsoRevoked: [keys.D.id], alsoRevokedCount: 1 },
        ],
      );
      assert.match(lines[0]?.msg ?? '', /API key revoked, with the 1 key\(s\) made with it/);
      for (const k of Object.values(keys)) assert.ok(!JSON.stringify(lines).includes(k.key), 'no key in the log');
    });

    test("a key is not made with a revoked key, nor with another user's key", async () => {
      const { u, keys } = await family('refused@example.com');
      const stranger = await users.create('stranger-key@example.com', 'acme');
      const { info: theirs } = await users.createApiKey(stranger.id, 'theirs');
      const count = async (): Promise<number> =>
        Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?', [u.id]))?.n);
      const before = await count();
      await assert.rejects(
        users.createApiKey(u.id, 'x', { via: 'key', keyId: theirs.id }),
        (e: unknown) => isApiKeyOriginRevokedError(e) && e.keyId === theirs.id,
      );
      assert.ok(await new UserStore(other).revokeApiKey(u.id, keys.B.id));
      await assert.rejects(
        users.createApiKey(u.id, 'x', { via: 'key', keyId: keys.B.id }),
        (e: unknown) =>
          isApiKeyOriginRevokedError(e) && e.code === 'API_KEY_ORIGIN_REVOKED' && /no key was created/.test(e.message),
      );
      await assert.rejects(
        users.createApiKey(u.id, 'x', { via: 'key', keyId: keys.C.id }),
        isApiKeyOriginRevokedError,
        'C went with B',
      );
      assert.equal(await count(), before, 'nothing was made');
    });

    test('the cascade is one transaction: a failure on a key down the chain revokes none', async () => {
      const { u, keys } = await family('atomic@example.com');
      if (backend.name === 'sqlite')
        await db.run(
          `CREATE TRIGGER refuse_c BEFORE UPDATE OF revoked_at ON api_keys WHEN NEW.id = '${keys.C.id}' BEGIN SELECT RAISE(ABORT, 'disk full'); END`,
        );
      else {
        await db.run(
          `CREATE FUNCTION refuse_c() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`,
        );
        await db.run(
          `CREATE TRIGGER refuse_c BEFORE UPDATE OF revoked_at ON api_keys FOR EACH ROW WHEN (NEW.id = '${keys.C.id}') EXECUTE FUNCTION refuse_c()`,
        );
      }
      try {
        await assert.rejects(users.revokeApiKey(u.id, keys.A.id), /disk full/);
      } finally {
        await db.run(backend.name === 'sqlite' ? 'DROP TRIGGER refuse_c' : 'DROP TRIGGER refuse_c ON api_keys');
      }
      for (const k of [keys.A, keys.B, keys.C, keys.D]) assert.equal(await live(k.id), true);
      assert.ok(await users.authenticate(keys.A.key));
      assert.equal(users.revokedHere(keys.A.id), false, 'not taken for revoked on this server either');
      assert.deepEqual(
        (await users.revokeApiKeyChain(u.id, keys.A.id))?.alsoRevoked.sort(),
        [keys.B.id, keys.C.id, keys.D.id].sort(),
      );
    });

    test('a user is deleted with its chains of keys', async () => {
      const { u } = await family('deleted@example.com');
      await db.run('DELETE FROM users WHERE id = ?', [u.id]);
      assert.equal(
        Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?', [u.id]))?.n),
        0,
      );
    });
  });
}
