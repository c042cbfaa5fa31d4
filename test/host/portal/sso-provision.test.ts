/**
 * @module test/host/portal/sso-provision.test
 * Which user a single sign-on signs in as (host/portal/sso/provision.ts), on SQLite and on
 * PostgreSQL: a new person is made where the rule says who may be, in the tenant it places them
 * in; an existing user is linked on the first sign-in and found by the subject afterwards, whatever
 * the email then says; another subject with a linked user's email is refused; with no rule of who
 * may have an account nobody is made; two first sign-ins at once (two replicas) make one user.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parsePolicy } from '../../../host/policy/load.js';
import { resolveSsoUser } from '../../../host/portal/sso/provision.js';
import type { SsoIdentity } from '../../../host/portal/sso/oidc-client.js';
import type { Db } from '../../../host/storage/db.js';
import { UserStore } from '../../../host/storage/users.js';
import { backends, freshPair } from '../../helpers/storage-backends.js';

const ISSUER = 'https://idp.example.test';

const identity = (subject: string, email: string, extra: Record<string, unknown> = {}): SsoIdentity => ({
  issuer: ISSUER,
  subject,
  claims: { sub: subject, email, email_verified: true, ...extra },
});

const rule = parsePolicy(
  { signIn: { sso: { allowedDomains: ['acme.test', 'beta.test'], tenantByDomain: { 'acme.test': 'acme' } } } },
  'test',
).signIn.sso;

for (const backend of backends()) {
  describe(`single sign-on provisioning (${backend.name})`, { skip: backend.skip }, () => {
    let db: Db;
    let other: Db;

    before(async () => {
      await backend.start();
      ({ db, other } = await freshPair(backend));
    });
    after(async () => {
      await other?.close();
      await db?.close();
      await backend.stop();
    });

    const identities = async (email: string) =>
      db.all<{ subject: string }>(
        'SELECT i.subject FROM user_identities i JOIN users u ON u.id = i.user_id WHERE u.email = ? ORDER BY i.subject',
        [email],
      );

    it('makes a new person in the tenant of their domain, then finds them by subject even when the email changed', async () => {
      const first = await resolveSsoUser(db, rule, identity('sub-ada', 'Ada@Acme.test'));
      assert.ok(first.ok && first.how === 'created' && first.tenantBy === 'domain', JSON.stringify(first));
      assert.equal(first.ok && first.user.email, 'ada@acme.test');
      assert.equal(first.ok && first.user.tenant, 'acme');
      const again = await resolveSsoUser(db, rule, identity('sub-ada', 'ada.lovelace@acme.test'));
      assert.ok(again.ok && again.how === 'signed-in' && first.ok && again.user.id === first.user.id);
      assert.equal(await new UserStore(db).byEmail('ada.lovelace@acme.test'), undefined, 'no second user');
    });

    it('links an existing user on the first sign-in and refuses another subject with the same email', async () => {
      const user = await new UserStore(db).create('fay@acme.test', 'ops');
      const linked = await resolveSsoUser(db, rule, identity('sub-fay', 'fay@acme.test'));
      assert.ok(linked.ok && linked.how === 'linked' && linked.user.id === user.id && linked.user.tenant === 'ops');
      const impostor = await resolveSsoUser(db, rule, identity('sub-mallory', 'FAY@acme.test'));
      assert.deepEqual(impostor.ok ? 'ok' : impostor.code, 'GW_ERR_SSO_SUBJECT_MISMATCH');
      assert.deepEqual(await identities('fay@acme.test'), [{ subject: 'sub-fay' }]);
      // the same subject at another issuer (the operator moved to a new provider) is linked anew
      const moved = await resolveSsoUser(db, rule, {
        ...identity('fay-at-new', 'fay@acme.test'),
        issuer: 'https://new.test',
      });
      assert.ok(moved.ok && moved.how === 'linked' && moved.user.id === user.id);
    });

    it('the rule holds for linked users too; without a rule of who may have an account, nobody is made', async () => {
      const narrowed = parsePolicy({ signIn: { sso: { allowedDomains: ['beta.test'] } } }, 'test').signIn.sso;
      const refused = await resolveSsoUser(db, narrowed, identity('sub-ada', 'ada@acme.test'));
      assert.equal(refused.ok ? 'ok' : refused.code, 'GW_ERR_SSO_DOMAIN_NOT_ALLOWED');
      const noRule = parsePolicy({}, 'test').signIn.sso;
      const stranger = await resolveSsoUser(db, noRule, identity('sub-new', 'new@acme.test'));
      assert.equal(stranger.ok ? 'ok' : stranger.code, 'GW_ERR_SSO_NO_ACCOUNT');
      assert.equal(await new UserStore(db).byEmail('new@acme.test'), undefined);
      await new UserStore(db).create('known@acme.test', 'acme');
      const known = await resolveSsoUser(db, noRule, identity('sub-known', 'known@acme.test'));
      assert.ok(known.ok && known.how === 'linked', 'an existing user signs in without a rule');
      const unplaced = await resolveSsoUser(db, rule, identity('sub-bo', 'bo@beta.test'));
      assert.equal(unplaced.ok ? 'ok' : unplaced.code, 'GW_ERR_SSO_NO_TENANT');
    });

    it('first sign-ins at once (two replicas on PostgreSQL) make one user and one link', async () => {
      // SQLite's replicas are processes of their own: two handles in one process would wait on each other
      const handles = backend.name === 'postgres' ? [db, other] : [db];
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          resolveSsoUser(handles[i % handles.length] as Db, rule, identity('sub-race', 'race@acme.test')),
        ),
      );
      assert.ok(
        results.every((r) => r.ok),
        JSON.stringify(results.map((r) => (r.ok ? r.how : r.code))),
      );
      assert.equal(results.filter((r) => r.ok && r.how === 'created').length, 1);
      const ids = new Set(results.map((r) => (r.ok ? r.user.id : '')));
      assert.equal(ids.size, 1);
      assert.deepEqual(await identities('race@acme.test'), [{ subject: 'sub-race' }]);
    });
  });
}
