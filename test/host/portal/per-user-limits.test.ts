/**
 * @module test/host/portal/per-user-limits.test
 * What one user can pile up through the portal is bounded: at most MAX_LIVE_API_KEYS active API
 * keys (past it, POST /keys answers 409 with the keys page saying why, and the storage API refuses
 * too, for every other path), and at most MAX_LIVE_SESSIONS live portal sessions (a sign-in past it
 * ends the oldest). Both hold when requests arrive at once. Driven over real HTTP with cookies
 * against a real gateway on a SQLite file in a temp dir.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REVOKED_KEYS_LISTED } from '../../../host/portal/keys-routes.js';
import { MAX_LIVE_SESSIONS } from '../../../host/portal/sessions.js';
import { isApiKeyLimitError, MAX_LIVE_API_KEYS } from '../../../host/storage/users.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { csrfOf, signInWithKey, type WebClient } from '../../helpers/web-client.js';

describe('per-user limits of the portal', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({ plugins: [] });
  });
  after(async () => {
    await gw?.close();
  });

  const liveKeys = async (userId: string): Promise<number> =>
    Number(
      (
        await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ? AND revoked_at IS NULL', [
          userId,
        ])
      )?.n,
    );
  const allKeys = async (userId: string): Promise<number> =>
    Number((await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?', [userId]))?.n);
  const sessionRows = async (userId: string): Promise<number> =>
    Number(
      (await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM portal_sessions WHERE user_id = ?', [userId]))?.n,
    );
  /** whether the client's session still opens the keys page (a signed-out one is sent to /login) */
  const signedIn = async (web: WebClient): Promise<boolean> => {
    const res = await web.get('/keys');
    if (res.status === 303) return false;
    assert.equal(res.status, 200);
    return true;
  };

  it(`API keys: ${MAX_LIVE_API_KEYS} active at most; past it the keys page says why (409) and nothing is made; a revoked key frees a place`, async () => {
    const { user, apiKey } = await gw.createUser('many-keys@example.com');
    const web = await signInWithKey(gw.url, apiKey, '/keys');
    const csrf = csrfOf((await web.get('/keys')).body);
    for (let i = 2; i <= MAX_LIVE_API_KEYS; i++) {
      const made = await web.post('/keys', { _csrf: csrf, label: `key ${i}` });
      assert.equal(made.status, 303, `key ${i}: ${made.body.slice(0, 200)}`);
      assert.equal((await web.get('/keys')).status, 200); // shows (and takes) the new key's notice
    }
    assert.equal(await liveKeys(user.id), MAX_LIVE_API_KEYS);

    const refused = await web.post('/keys', { _csrf: csrf, label: 'one too many' });
    assert.equal(refused.status, 409);
    assert.match(
      refused.body,
      new RegExp(
        `<p class="error" role="alert" id="keys-limit">You already have ${MAX_LIVE_API_KEYS} active API keys, the most an account may have\\. Revoke a key you no longer use`,
      ),
    );
    assert.match(refused.body, /<h2 id="list-h">Your keys<\/h2>/, 'the page lists the keys to revoke');
    assert.ok(!refused.body.includes('one too many'));
    assert.ok(!/class="secret" readonly value="wb_/.test(refused.body), 'no key is shown');
    assert.equal(await allKeys(user.id), MAX_LIVE_API_KEYS, 'no key was made');
    // every other path (the CLI, an embedder, a script) goes through the same store
    await assert.rejects(
      gw.gateway.users.createApiKey(user.id, 'script'),
      (e: unknown) => isApiKeyLimitError(e) && e.limit === MAX_LIVE_API_KEYS,
    );
    assert.equal(await allKeys(user.id), MAX_LIVE_API_KEYS);

    const victim =
      (await gw.db.get<{ id: string }>("SELECT id FROM api_keys WHERE user_id = ? AND label = 'key 2'", [user.id]))
        ?.id ?? assert.fail('no key 2');
    assert.equal((await web.post(`/keys/${victim}/revoke`, { _csrf: csrf })).status, 303);
    assert.equal(
      (await web.post('/keys', { _csrf: csrf, label: 'replacement' })).status,
      303,
      'a revoked key frees its place',
    );
    assert.equal(await liveKeys(user.id), MAX_LIVE_API_KEYS);

    // Ten posts at once for the last five places: five keys, five refusals.
    for (const r of await gw.db.all<{ id: string }>(
      "SELECT id FROM api_keys WHERE user_id = ? AND revoked_at IS NULL AND label LIKE 'key 1%' ORDER BY label LIMIT 5",
      [user.id],
    ))
      assert.ok(await gw.gateway.users.revokeApiKey(user.id, r.id));
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) => web.post('/keys', { _csrf: csrf, label: `burst ${i}` })),
    );
    assert.deepEqual(burst.map((b) => b.status).sort(), [303, 303, 303, 303, 303, 409, 409, 409, 409, 409]);
    assert.equal(await liveKeys(user.id), MAX_LIVE_API_KEYS);
  });

  it(`the keys page lists every active key and the ${REVOKED_KEYS_LISTED} revoked last, and says how many older revoked keys it leaves out`, async () => {
    const { user, apiKey } = await gw.createUser('revoked-many@example.com');
    for (let i = 0; i < REVOKED_KEYS_LISTED + 5; i++) {
      const made = await gw.gateway.users.createApiKey(user.id, `gone ${i}`);
      assert.ok(await gw.gateway.users.revokeApiKey(user.id, made.info.id));
    }
    const kept = await gw.gateway.users.createApiKey(user.id, 'still active');
    const web = await signInWithKey(gw.url, apiKey, '/keys');
    const page = (await web.get('/keys')).body;
    const rows = [...page.matchAll(/<tr><td><code>/g)].length;
    assert.equal(rows, 2 + REVOKED_KEYS_LISTED, 'the first key, the active one and the revoked ones listed');
    assert.ok(page.includes(`>${kept.info.prefix}…<`), 'every active key is listed');
    assert.ok(page.includes('gone 24') && !page.includes('gone 4<'), 'the latest revoked are listed, the oldest not');
    assert.match(page, /5 older revoked keys are not listed \(only the 20 revoked last are\)/);
  });

  it(`portal sessions: ${MAX_LIVE_SESSIONS} live at most; a sign-in past it ends the oldest, and other users' sessions stay`, async () => {
    const other = await gw.createUser('bystander@example.com');
    const bystander = await signInWithKey(gw.url, other.apiKey, '/keys');
    const { user, apiKey } = await gw.createUser('many-sessions@example.com');
    const clients: WebClient[] = [];
    for (let i = 0; i < MAX_LIVE_SESSIONS + 5; i++) clients.push(await signInWithKey(gw.url, apiKey, '/keys'));
    assert.equal(await sessionRows(user.id), MAX_LIVE_SESSIONS, 'the ended sessions are gone, not kept');
    for (const [i, web] of clients.entries())
      assert.equal(await signedIn(web), i >= 5, `session ${i + 1} of ${clients.length}`);
    const page = await (clients.at(-1) as WebClient).get('/keys');
    assert.match(page.body, new RegExp(`You are signed in to the portal in ${MAX_LIVE_SESSIONS} places\\.`));
    assert.equal(await signedIn(bystander), true);

    // ten sign-ins at once: still at most the limit, and the newest ten among them
    const burst = await Promise.all(Array.from({ length: 10 }, () => signInWithKey(gw.url, apiKey, '/keys')));
    assert.equal(await sessionRows(user.id), MAX_LIVE_SESSIONS);
    for (const web of burst) assert.equal(await signedIn(web), true);
    assert.equal((await Promise.all(clients.map(signedIn))).filter(Boolean).length, MAX_LIVE_SESSIONS - burst.length);
  });
});
