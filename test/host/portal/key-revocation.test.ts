/**
 * @module test/host/portal/key-revocation.test
 * Revoking an API key ends the portal sessions signed in with it. A leaked key must not leave its
 * holder a 12-hour portal session that survives the revocation and can mint a new key. Driven over
 * real HTTP against a real gateway (SQLite file in a temp dir): the key is revoked from another
 * portal session and through the storage API (as another replica or a script would), and a
 * login-link session, which has no key, is unaffected by revoking a key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLoginLink } from '../../../host/portal/login-links.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { csrfOf, signInWithKey as signIn, WebClient } from '../../helpers/web-client.js';

describe('revoking an API key ends the portal sessions signed in with it', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({ plugins: [] });
  });
  after(async () => {
    await gw?.close();
  });

  const signInWithKey = (apiKey: string): Promise<WebClient> => signIn(gw.url, apiKey, '/keys');

  async function signInWithLink(userId: string): Promise<WebClient> {
    const web = new WebClient(gw.url);
    const link = new URL(await createLoginLink(gw.db, userId, gw.url));
    const page = await web.get(link.pathname);
    assert.equal(page.status, 200);
    const res = await web.post(link.pathname, { _csrf: csrfOf(page.body) });
    assert.equal(res.status, 303, res.body.slice(0, 300));
    return web;
  }

  const keyIdOf = async (apiKey: string): Promise<string> =>
    (await gw.db.get<{ id: string }>('SELECT id FROM api_keys WHERE prefix = ?', [apiKey.slice(0, 10)]))?.id ??
    assert.fail('no such key');
  const keyCount = async (userId: string): Promise<number> =>
    Number((await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?', [userId]))?.n);

  /** The answers of a session whose key was revoked: signed out on GET /keys, and POST /keys refused without a new key. */
  async function assertSignedOut(web: WebClient, csrf: string, userId: string): Promise<void> {
    const keys = await web.get('/keys');
    assert.equal(keys.status, 303, 'GET /keys is the signed-out answer');
    assert.equal(keys.location, `/login?next=${encodeURIComponent('/keys')}`);
    const before = await keyCount(userId);
    const minted = await web.post('/keys', { _csrf: csrf, label: 'attacker' });
    assert.equal(minted.status, 303, 'POST /keys is refused');
    assert.match(minted.location ?? '', /^\/login\?next=/);
    assert.equal(await keyCount(userId), before, 'no key was created');
  }

  it('a key revoked from another portal session: its session is signed out and can no longer create keys', async () => {
    const { user, apiKey: leaked } = await gw.createUser('victim@example.com');
    const { key: own } = await gw.gateway.users.createApiKey(user.id, 'own');
    const attacker = await signInWithKey(leaked);
    const attackerPage = await attacker.get('/keys');
    assert.equal(attackerPage.status, 200);
    assert.match(attackerPage.body, /you signed in with this key/);
    const attackerCsrf = csrfOf(attackerPage.body);

    const victim = await signInWithKey(own);
    const page = await victim.get('/keys');
    assert.match(page.body, /signed in to the portal in 2 places/);
    const revoked = await victim.post(`/keys/${await keyIdOf(leaked)}/revoke`, { _csrf: csrfOf(page.body) });
    assert.equal(revoked.status, 303);
    assert.equal(revoked.location, '/keys');

    await assertSignedOut(attacker, attackerCsrf, user.id);
    const after = await victim.get('/keys');
    assert.equal(after.status, 200, 'the session signed in with another key goes on');
    assert.match(after.body, /portal sessions signed in with it are signed out/);
    assert.match(after.body, /signed in to the portal in 1 place\./);
  });

  it('a key revoked through the storage API (another replica, a script): its session is signed out too', async () => {
    const { user, apiKey } = await gw.createUser('scripted@example.com');
    const web = await signInWithKey(apiKey);
    const page = await web.get('/keys');
    assert.equal(page.status, 200);
    assert.equal(await gw.gateway.users.revokeApiKey(user.id, await keyIdOf(apiKey)), true);
    await assertSignedOut(web, csrfOf(page.body), user.id);
  });

  it('a session that revokes its own key is signed out by it', async () => {
    const { user, apiKey } = await gw.createUser('self@example.com');
    const web = await signInWithKey(apiKey);
    const page = await web.get('/keys');
    const revoked = await web.post(`/keys/${await keyIdOf(apiKey)}/revoke`, { _csrf: csrfOf(page.body) });
    assert.equal(revoked.status, 303);
    await assertSignedOut(web, csrfOf(page.body), user.id);
  });

  it('a login-link session is unaffected by revoking a key', async () => {
    const { user, apiKey } = await gw.createUser('linked@example.com');
    const linked = await signInWithLink(user.id);
    const keyed = await signInWithKey(apiKey);
    const page = await keyed.get('/keys');
    assert.equal((await keyed.post(`/keys/${await keyIdOf(apiKey)}/revoke`, { _csrf: csrfOf(page.body) })).status, 303);
    assert.equal((await keyed.get('/keys')).status, 303, 'the key-signed session ended');

    const keys = await linked.get('/keys');
    assert.equal(keys.status, 200, 'the login-link session goes on');
    assert.doesNotMatch(keys.body, /you signed in with this key/);
    const created = await linked.post('/keys', { _csrf: csrfOf(keys.body), label: 'new laptop' });
    assert.equal(created.status, 303);
    assert.match((await linked.get('/keys')).body, /id="new-key" class="secret" readonly value="wb_/);
  });
});
