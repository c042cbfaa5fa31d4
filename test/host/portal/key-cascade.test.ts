/**
 * @module test/host/portal/key-cascade.test
 * A leaked key cannot leave keys behind it. Someone holding a key can sign in to the portal and
 * mint keys; revoking the key revokes every key minted in a session signed in with it, down the
 * chain, and ends their portal sessions, while keys minted in a sign-in-link session survive.
 * Driven over real HTTP against a real gateway (SQLite file in a temp dir): keys minted through the
 * keys page, revoked through it (with the confirmation that counts the chain), and checked where
 * agents use them (MCP and REST answer 401). On a real PostgreSQL server, two replicas' worth of
 * handles race a mint against the revocation of its parent: the minted key never survives.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKey } from '../../../host/connections/vault.js';
import { createLoginLink } from '../../../host/portal/login-links.js';
import type { Db } from '../../../host/storage/db.js';
import { openPostgres } from '../../../host/storage/postgres.js';
import { UserStore } from '../../../host/storage/users.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { csrfOf, signInWithKey, WebClient, type Answer } from '../../helpers/web-client.js';

/** What a gateway needs for the checks below, on either database. */
function helpers(gw: () => TestGateway) {
  const signIn = (apiKey: string): Promise<WebClient> => signInWithKey(gw().url, apiKey, '/keys');

  async function signInWithLink(userId: string): Promise<WebClient> {
    const web = new WebClient(gw().url);
    const link = new URL(await createLoginLink(gw().db, userId, gw().url));
    const page = await web.get(link.pathname);
    const res = await web.post(link.pathname, { _csrf: csrfOf(page.body) });
    assert.equal(res.status, 303, res.body.slice(0, 300));
    return web;
  }

  const keyIdOf = async (apiKey: string): Promise<string> =>
    (await gw().db.get<{ id: string }>('SELECT id FROM api_keys WHERE prefix = ?', [apiKey.slice(0, 10)]))?.id ??
    assert.fail('no such key');

  /** Creates a key on the keys page of `web`'s session: the key, as the page shows it once. */
  async function mint(web: WebClient, label: string): Promise<string> {
    const page = await web.get('/keys');
    assert.equal(page.status, 200);
    const posted = await web.post('/keys', { _csrf: csrfOf(page.body), label });
    assert.equal(posted.status, 303, posted.body.slice(0, 300));
    assert.equal(posted.location, '/keys');
    return (
      /id="new-key" class="secret" readonly value="([^"]+)"/.exec((await web.get('/keys')).body)?.[1] ??
      assert.fail('no new key shown')
    );
  }

  /** How /mcp answers a tools/list with the key: 200 while it is valid, 401 once revoked. */
  async function mcpStatus(apiKey: string): Promise<number> {
    const res = await fetch(`${gw().url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${apiKey}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await res.text();
    return res.status;
  }

  /** Whether the session still opens the keys page (a signed-out one is sent to /login). */
  async function signedIn(web: WebClient): Promise<boolean> {
    const res = await web.get('/keys');
    if (res.status === 303 && res.location === `/login?next=${encodeURIComponent('/keys')}`) return false;
    assert.equal(res.status, 200, res.body.slice(0, 300));
    return true;
  }

  /** Revokes a key on the keys page of `web`'s session, confirming when a chain is listed; the confirmation page if any. */
  async function revoke(web: WebClient, apiKey: string): Promise<{ confirmation: Answer | undefined; done: Answer }> {
    const id = await keyIdOf(apiKey);
    const csrf = csrfOf((await web.get('/keys')).body);
    const first = await web.post(`/keys/${id}/revoke`, { _csrf: csrf });
    if (first.status === 303) return { confirmation: undefined, done: first };
    assert.equal(first.status, 200, first.body.slice(0, 300));
    const done = await web.post(`/keys/${id}/revoke`, { _csrf: csrfOf(first.body), confirm: 'yes' });
    assert.equal(done.status, 303);
    assert.equal(done.location, '/keys');
    return { confirmation: first, done };
  }

  return { signIn, signInWithLink, keyIdOf, mint, mcpStatus, signedIn, revoke };
}

describe('a leaked key cannot leave keys behind it', () => {
  let gw: TestGateway;
  const h = helpers(() => gw);

  before(async () => {
    gw = await startGateway({ plugins: [] });
  });
  after(async () => {
    await gw?.close();
  });

  it('a key minted in a session signed in with A dies when A is revoked: agents get 401, its portal sessions end', async () => {
    const { user, apiKey: leaked } = await gw.createUser('victim@example.com');
    const { key: own } = await gw.gateway.users.createApiKey(user.id, 'own');
    const attacker = await h.signIn(leaked);
    const minted = await h.mint(attacker, 'persistence');
    const mintedSession = await h.signIn(minted);
    assert.equal(await h.mcpStatus(minted), 200);

    const victim = await h.signIn(own);
    const { confirmation, done } = await h.revoke(victim, leaked);
    assert.match(confirmation?.body ?? '', /<strong>1 key created with it will be revoked too<\/strong>/);
    assert.ok(
      confirmation?.body.includes(`<code>${minted.slice(0, 10)}…</code> (persistence)`),
      'the confirmation lists the minted key',
    );
    assert.equal(done.location, '/keys');
    assert.match(
      (await victim.get('/keys')).body,
      /class="notice" role="status">The key was revoked, and with it the 1 key created with it\. Agents using them are refused from now on/,
    );

    assert.equal(await h.mcpStatus(minted), 401, 'the minted key is refused over MCP');
    assert.equal((await gw.rest('none', { executions: [] }, minted)).status, 401, 'and over REST');
    assert.equal(await h.mcpStatus(leaked), 401);
    assert.equal(await h.signedIn(mintedSession), false, "the minted key's portal session ended");
    assert.equal(await h.signedIn(attacker), false);
    assert.equal(await h.mcpStatus(own), 200, "the owner's other key goes on");
    assert.equal(await h.signedIn(victim), true);
  });

  it('a chain A → B → C dies whole when A is revoked', async () => {
    const { apiKey: a } = await gw.createUser('chain-a@example.com');
    const aWeb = await h.signIn(a);
    const b = await h.mint(aWeb, 'b');
    const bWeb = await h.signIn(b);
    const c = await h.mint(bWeb, 'c');
    const cWeb = await h.signIn(c);
    for (const k of [a, b, c]) assert.equal(await h.mcpStatus(k), 200);

    const { confirmation } = await h.revoke(aWeb, a);
    assert.match(
      confirmation?.body ?? '',
      /<strong>2 keys created with it will be revoked too<\/strong>/,
      'the whole chain is counted',
    );
    assert.match(
      confirmation?.body ?? '',
      /<button type="submit" aria-describedby="revoke-chain">Revoke 3 keys<\/button>/,
    );
    for (const k of [a, b, c]) assert.equal(await h.mcpStatus(k), 401);
    for (const web of [aWeb, bWeb, cWeb]) assert.equal(await h.signedIn(web), false);
  });

  it('revoking B in a chain A → B → C revokes C but not A', async () => {
    const { apiKey: a } = await gw.createUser('chain-b@example.com');
    const aWeb = await h.signIn(a);
    const b = await h.mint(aWeb, 'b');
    const bWeb = await h.signIn(b);
    const c = await h.mint(bWeb, 'c');
    const cWeb = await h.signIn(c);
    const sibling = await h.mint(aWeb, 'sibling of b');

    const { confirmation } = await h.revoke(aWeb, b);
    assert.match(confirmation?.body ?? '', /<strong>1 key created with it will be revoked too<\/strong>/);
    assert.deepEqual(
      [await h.mcpStatus(a), await h.mcpStatus(b), await h.mcpStatus(c), await h.mcpStatus(sibling)],
      [200, 401, 401, 200],
    );
    assert.deepEqual([await h.signedIn(aWeb), await h.signedIn(bWeb), await h.signedIn(cWeb)], [true, false, false]);
  });

  it('keys minted in a sign-in-link session survive revoking any other key', async () => {
    const { user, apiKey: a } = await gw.createUser('linked@example.com');
    const linked = await h.signInWithLink(user.id);
    const l = await h.mint(linked, 'made with a link');
    const aWeb = await h.signIn(a);
    const b = await h.mint(aWeb, 'made with a');
    const { key: operatorKey } = await gw.gateway.users.createApiKey(user.id, 'cli');

    const { confirmation } = await h.revoke(linked, a);
    assert.match(confirmation?.body ?? '', /<strong>1 key created with it will be revoked too<\/strong>/);
    assert.doesNotMatch(confirmation?.body ?? '', /made with a link/);
    assert.equal(
      (await h.revoke(linked, operatorKey)).confirmation,
      undefined,
      'no key was made with it: revoked at once',
    );
    assert.deepEqual(
      [await h.mcpStatus(a), await h.mcpStatus(b), await h.mcpStatus(operatorKey), await h.mcpStatus(l)],
      [401, 401, 401, 200],
    );
    assert.equal(await h.signedIn(linked), true);
    assert.ok(await h.mint(linked, 'another'), 'the link session still mints keys');
  });

  it('the keys page shows what created each key and how many keys revoking it takes along; the confirmation lists them, escaped', async () => {
    const { user, apiKey: a } = await gw.createUser('page@example.com');
    const aId = await h.keyIdOf(a);
    await gw.db.run("UPDATE api_keys SET label = '<b>first</b>' WHERE id = ?", [aId]);
    const aWeb = await h.signIn(a);
    const b = await h.mint(aWeb, 'b <i>tag</i>');
    const bWeb = await h.signIn(b); // a session signed in with B, a key in A's chain
    await h.mint(bWeb, 'c');
    const linked = await h.signInWithLink(user.id);
    const madeWithLink = await h.mint(linked, 'l');
    const { key: legacy } = await gw.gateway.users.createApiKey(user.id, 'old');
    await gw.db.run('UPDATE api_keys SET created_via = NULL WHERE id = ?', [await h.keyIdOf(legacy)]); // as migration 13 leaves a key made before it

    const page = await bWeb.get('/keys');
    assert.equal(page.status, 200);
    assert.match(page.body, /<th scope="col">Origin<\/th>/);
    const rowOf = (apiKey: string): string => {
      const at = page.body.indexOf(`<tr><td><code>${apiKey.slice(0, 10)}…</code></td>`);
      return at === -1
        ? assert.fail(`no row for ${apiKey.slice(0, 10)}`)
        : page.body.slice(at, page.body.indexOf('</tr>', at) + 5);
    };
    assert.match(rowOf(a), /<td>Created by an operator<\/td>/);
    assert.ok(
      rowOf(b).includes(`<td>Created with key <code>${a.slice(0, 10)}…</code> (&lt;b&gt;first&lt;/b&gt;)</td>`),
      'the parent, its label escaped',
    );
    assert.match(rowOf(madeWithLink), /<td>Created with a sign-in link<\/td>/);
    assert.match(rowOf(legacy), /<td>Not recorded \(created before origins were kept\)<\/td>/);
    assert.ok(
      !page.body.includes('<b>first</b>') && !page.body.includes('<i>tag</i>'),
      'labels are escaped everywhere',
    );
    // A's row: the count, tied to its button
    assert.match(
      rowOf(a),
      new RegExp(
        `aria-label="Revoke key ${a.slice(0, 10)}" aria-describedby="chain-${aId}">Revoke</button></form> <span class="hint" id="chain-${aId}">also revokes the 2 keys created with it</span>`,
      ),
    );
    assert.match(rowOf(b), /also revokes the 1 key created with it/);
    assert.doesNotMatch(rowOf(madeWithLink), /also revokes|aria-describedby/);

    // the confirmation: nothing is revoked by it
    const confirm = await bWeb.post(`/keys/${aId}/revoke`, { _csrf: csrfOf(page.body) });
    assert.equal(confirm.status, 200);
    assert.match(confirm.body, /<title>Revoke API key · Workbench<\/title>/);
    assert.ok(confirm.body.includes(`<p>Revoke key <code>${a.slice(0, 10)}…</code> (&lt;b&gt;first&lt;/b&gt;)?</p>`));
    assert.match(confirm.body, /<p id="revoke-chain"><strong>2 keys created with it will be revoked too<\/strong>/);
    assert.ok(
      confirm.body.includes(
        `<li><code>${b.slice(0, 10)}…</code> (b &lt;i&gt;tag&lt;/i&gt;): Created with key <code>${a.slice(0, 10)}…</code>`,
      ),
    );
    assert.match(
      confirm.body,
      /<p class="warn">You signed in with one of these keys: revoking them signs you out\.<\/p>/,
    );
    assert.match(confirm.body, /<input type="hidden" name="confirm" value="yes">/);
    assert.match(confirm.body, /<a href="\/keys">Cancel: keep them<\/a>/);
    assert.equal(await h.mcpStatus(a), 200, 'not revoked until confirmed');
    assert.equal(await h.mcpStatus(b), 200);
  });

  it('a new key made in a session signed in with a key says which key it goes with', async () => {
    const { user, apiKey: a } = await gw.createUser('notice@example.com');
    const aWeb = await h.signIn(a);
    const page = await aWeb.post('/keys', { _csrf: csrfOf((await aWeb.get('/keys')).body), label: 'x' });
    assert.equal(page.status, 303);
    assert.ok(
      (await aWeb.get('/keys')).body.includes(
        `It was created with key <code>${a.slice(0, 10)}…</code>, the key you signed in with: revoking that key revokes this one too.`,
      ),
    );
    const linked = await h.signInWithLink(user.id);
    assert.equal(
      (await linked.post('/keys', { _csrf: csrfOf((await linked.get('/keys')).body), label: 'y' })).status,
      303,
    );
    assert.doesNotMatch((await linked.get('/keys')).body, /It was created with key/);
  });

  it('a key whose parent was revoked on its own (by hand in SQL, an older replica) is flagged on the keys page', async () => {
    const { user, apiKey: a } = await gw.createUser('orphan@example.com');
    const child = await h.mint(await h.signIn(a), 'orphan-child');
    await gw.db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [Date.now(), await h.keyIdOf(a)]);
    const web = await h.signInWithLink(user.id);
    const page = (await web.get('/keys')).body;
    assert.match(page, /\(revoked: revoke this one too if it was not yours\)/);
    assert.equal(
      (page.match(/revoke this one too if it was not yours/g) ?? []).length,
      1,
      'only the live child is flagged',
    );
    assert.equal(await h.mcpStatus(child), 200, 'the child itself still works: the page is how its owner learns of it');
  });
});

describe(
  "a key minted while its parent is being revoked does not survive (PostgreSQL, two replicas' handles)",
  { skip: postgresSkipReason() ?? false },
  () => {
    let pg: TestPostgres;
    let gw: TestGateway;
    let replica: Db; // another replica's handle on the same database
    const h = helpers(() => gw);

    before(async () => {
      pg = await startPostgres();
      gw = await startGateway({
        plugins: [],
        databaseUrl: pg.url,
        env: { WORKBENCH_ENCRYPTION_KEY: generateKey().toString('hex') },
      });
      replica = await openPostgres(pg.url);
    });
    after(async () => {
      await replica?.close();
      await gw?.close();
      await pg?.stop();
    });

    /**
     * Resolves once a transaction waits for a user's row lock (a mint or a revocation, queued behind
     * the one holding it), or once `request` was answered without waiting (the assertions then say how).
     */
    async function waitForLockWaiter(request: Promise<unknown>): Promise<void> {
      let answered = false;
      request.then(
        () => (answered = true),
        () => (answered = true),
      );
      while (!answered) {
        const r = await gw.db.get<{ n: number }>(
          "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR NO KEY UPDATE%'",
        );
        if (Number(r?.n) > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    it('a mint whose session was valid when it came, queued behind the revocation of its key, is refused and the session signed out', async () => {
      const { user, apiKey: a } = await gw.createUser('race-mint@example.com');
      const aId = await h.keyIdOf(a);
      const web = await h.signIn(a);
      const csrf = csrfOf((await web.get('/keys')).body);
      const before = Number(
        (await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?', [user.id]))?.n,
      );
      let minted: Promise<Answer> | undefined;
      await replica.transaction(async (tx) => {
        // the other replica revokes A: it holds the user's row lock until it commits
        assert.ok(await new UserStore(tx).revokeApiKey(user.id, aId));
        // the session is still valid (the revocation is not committed): the mint gets to the lock and waits
        minted = web.post('/keys', { _csrf: csrf, label: 'racing' });
        await waitForLockWaiter(minted);
      });
      const res = await (minted ?? assert.fail('no mint'));
      assert.equal(res.status, 303, res.body.slice(0, 300));
      assert.equal(res.location, `/login?next=${encodeURIComponent('/keys')}`, 'the signed-out answer');
      assert.equal(
        Number((await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?', [user.id]))?.n),
        before,
        'no key was made',
      );
      assert.equal(await h.signedIn(web), false);
    });

    it('a key minted just before the revocation of its parent commits is revoked with it', async () => {
      const { user, apiKey: a } = await gw.createUser('race-revoke@example.com');
      const aId = await h.keyIdOf(a);
      const owner = await h.signIn(a);
      const csrf = csrfOf((await owner.get('/keys')).body);
      let minted: { key: string; id: string } | undefined;
      let revoked: Promise<Answer> | undefined;
      await replica.transaction(async (tx) => {
        // the other replica mints a key with A (as a session signed in with A there would), not committed yet
        const { key, info } = await new UserStore(tx).createApiKey(user.id, 'racing', { via: 'key', keyId: aId });
        minted = { key, id: info.id };
        // the owner revokes A here: this replica sees no key made with it yet, so asks no confirmation, and waits for the lock
        revoked = owner.post(`/keys/${aId}/revoke`, { _csrf: csrf });
        await waitForLockWaiter(revoked);
      });
      const res = await (revoked ?? assert.fail('no revocation'));
      assert.equal(res.status, 303, res.body.slice(0, 300));
      assert.equal(await h.mcpStatus(minted?.key ?? ''), 401, 'the key minted meanwhile was revoked with its parent');
      assert.notEqual(
        (
          await gw.db.get<{ revoked_at: number | null }>('SELECT revoked_at FROM api_keys WHERE id = ?', [
            minted?.id ?? '',
          ])
        )?.revoked_at,
        null,
      );
    });
  },
);
