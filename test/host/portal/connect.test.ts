/**
 * @module test/host/portal/connect.test
 * The connect pages: the API-key form (per-field errors, secrets never echoed, single use), the
 * OAuth2 round trip against the mock provider (state + PKCE, callback, replay refused, denial),
 * links that belong to another user or have expired, and links used by a step that then failed
 * (the connection could not be stored, the PKCE verifier cannot be read): settled failed, which
 * the agent's wait_for_connection reports. "Continue" is answered with a page that goes on to the
 * provider (meta refresh and link), never with a redirect of the form submission.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConnectionMetaTools } from '../../../host/connections/meta-tools.js';
import { UNREADABLE_VERIFIER_REASON } from '../../../host/connections/pending.js';
import type { MetaToolContext } from '../../../host/meta-tools/types.js';
import { STORE_FAILED_REASON } from '../../../host/portal/connect-routes.js';
import { manifestSchema } from '../../../contracts/manifest.js';
import { csrfOf, otherUser, providerUrlOf, signIn, startHarness, type Harness } from '../../helpers/portal.js';

describe('portal connect pages', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());

  const keyed = () => h.manifests.find((m) => m.name === 'keyed')!;
  const mockhub = () => h.manifests.find((m) => m.name === 'mockhub')!;

  /** the agent's wait_for_connection on the link, as the MCP transport calls it */
  const waitForConnection = async (connectionId: string, timeoutSec: number) => {
    const tools = createConnectionMetaTools({
      connections: h.connections,
      registry: { plugins: () => h.manifests, plugin: (n) => h.manifests.find((m) => m.name === n) },
      publicUrl: h.publicUrl,
    });
    const tool = tools.find((x) => x.name === 'wait_for_connection')!;
    const signal = new AbortController().signal;
    const ctx: MetaToolContext = {
      user: h.t.user,
      transport: 'mcp',
      signal,
      cancelled: signal,
      requestId: 'req-wait',
      progress: async () => undefined,
    };
    return (await tool.handler(ctx, tool.inputSchema.parse({ connectionId, timeoutSec }))).json;
  };

  it('validates the API-key form field by field, never echoes the secret, and stores a valid submission once', async () => {
    const b = await signIn(h);
    const p = await h.connections.pending.create(h.t.user.id, 'keyed', 'apikey');
    const page = await b.get(`/connect/${p.id}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /<label for="f-apiKey">API key<\/label>/);
    assert.match(page.body, /<select id="f-region"/);
    const csrf = csrfOf(page.body);

    const bad = await b.post(`/connect/${p.id}/form`, {
      _csrf: csrf,
      apiKey: 'wrong-format-secret',
      region: 'mars',
      accountId: 'abc',
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /API key does not have the expected format/);
    assert.match(bad.body, /Region must be one of: us, eu/);
    assert.match(bad.body, /Account ID does not have the expected format/);
    assert.match(bad.body, /aria-invalid="true"/);
    assert.ok(!bad.body.includes('wrong-format-secret'), 'the secret is not sent back');
    assert.equal(
      (await h.connections.pending.get(p.id))?.status,
      'pending',
      'a failed submission does not use the link',
    );

    const missing = await b.post(`/connect/${p.id}/form`, { _csrf: csrf, apiKey: '  ', region: 'eu' });
    assert.equal(missing.status, 400);
    assert.match(missing.body, /API key is required/);
    const unknownField = await b.post(`/connect/${p.id}/form`, { _csrf: csrf, apiKey: 'k_abcdefgh12', evil: 'x' });
    assert.equal(unknownField.status, 400);
    assert.match(unknownField.body, /unknown field/);

    const ok = await b.post(`/connect/${p.id}/form`, {
      _csrf: csrf,
      apiKey: 'k_abcdefgh12',
      region: 'eu',
      accountId: '42',
    });
    assert.equal(ok.status, 303);
    assert.equal(ok.location, `/connect/${p.id}`);
    assert.equal((await h.connections.pending.get(p.id))?.status, 'connected');
    assert.deepEqual((await h.connections.credential(h.t.user.id, keyed()))?.values, { apiKey: 'k_abcdefgh12' });
    const look = await h.connections.lookup(h.t.user.id, keyed());
    assert.deepEqual(look.connected && look.config, { region: 'eu', accountId: '42' });
    const result = await b.get(`/connect/${p.id}`);
    assert.match(result.body, /Keyed Service<\/strong>: is connected/);

    const reuse = await b.post(`/connect/${p.id}/form`, { _csrf: csrf, apiKey: 'k_zzzzzzzz99', region: 'us' });
    assert.equal(reuse.status, 410);
    assert.equal(
      (await h.connections.credential(h.t.user.id, keyed()))?.values['apiKey'],
      'k_abcdefgh12',
      'nothing overwritten',
    );
  });

  it("every link in the form's error summary goes to an element of the page", async () => {
    const optional = manifestSchema.parse({
      name: 'optkeys',
      version: '1.0.0',
      displayName: 'Optional Keys',
      description: 'Secrets that are each optional',
      auth: {
        type: 'apikey',
        fields: [
          { name: 'label', label: 'Label', required: false },
          { name: 'token', label: 'Token', secret: true, required: false },
          { name: 'password', label: 'Password', secret: true, required: false },
        ],
        inject: { header: 'x-token', format: '{token}' },
      },
      egress: ['api.optkeys.test'],
      tools: [{ name: 'optkeys_ping', description: 'Ping', inputSchema: { type: 'object', properties: {} } }],
    });
    const oh = await startHarness({ extraManifests: [optional] });
    try {
      const b = await signIn(oh);
      const summaryOf = (body: string): string =>
        /<div class="error" role="alert">([\s\S]*?)<\/div>/.exec(body)?.[1] ?? assert.fail('no error summary');
      const assertLinksResolve = (body: string): void => {
        for (const [, id] of summaryOf(body).matchAll(/href="#([^"]*)"/g))
          assert.match(body, new RegExp(` id="${id}"`), `#${id} is on the page`);
      };
      const p = await oh.connections.pending.create(oh.t.user.id, 'optkeys', 'apikey');
      const csrf = csrfOf((await b.get(`/connect/${p.id}`)).body);
      const empty = await b.post(`/connect/${p.id}/form`, { _csrf: csrf, label: 'x' });
      assert.equal(empty.status, 400);
      assert.match(summaryOf(empty.body), /Fill in at least one secret field/);
      assertLinksResolve(empty.body);
      assert.match(
        summaryOf(empty.body),
        /<a href="#f-token">Fill in at least one secret field/,
        'to the first secret field',
      );

      const k = await h.connections.pending.create(h.t.user.id, 'keyed', 'apikey');
      const kb = await signIn(h);
      const unknown = await kb.post(`/connect/${k.id}/form`, {
        _csrf: csrfOf((await kb.get(`/connect/${k.id}`)).body),
        apiKey: 'bad',
        evil: 'x',
      });
      assert.equal(unknown.status, 400);
      assert.match(
        summaryOf(unknown.body),
        /<li>unknown field &quot;evil&quot;<\/li>/,
        'plain text: the form has no such field',
      );
      assert.match(summaryOf(unknown.body), /<a href="#f-apiKey">/);
      assertLinksResolve(unknown.body);
    } finally {
      await oh.close();
    }
  });

  it('a link opened before a policy change denied the integration can no longer be completed', async () => {
    let deny = false;
    const gated = await startHarness({ allowed: (_user, plugin) => !(deny && plugin === 'keyed') });
    try {
      const b = await signIn(gated);
      const p = await gated.connections.pending.create(gated.t.user.id, 'keyed', 'apikey');
      const page = await b.get(`/connect/${p.id}`);
      assert.equal(page.status, 200);
      deny = true;
      assert.notEqual((await b.get(`/connect/${p.id}`)).status, 200, 'the form is no longer shown');
      const post = await b.post(`/connect/${p.id}/form`, {
        _csrf: csrfOf(page.body),
        apiKey: 'k_abcdefgh1',
        region: 'eu',
      });
      assert.notEqual(post.status, 303);
      assert.equal((await gated.t.db.all('SELECT id FROM connections')).length, 0, 'nothing stored');
    } finally {
      await gated.close();
    }
  });

  it('runs the OAuth2 round trip with state and PKCE, and refuses a replayed callback', async () => {
    const b = await signIn(h);
    const p = await h.connections.pending.create(h.t.user.id, 'mockhub', 'oauth2');
    const page = await b.get(`/connect/${p.id}`);
    assert.match(
      String(page.headers['content-security-policy']),
      /form-action 'self';/,
      'the form leads only to the portal',
    );
    const auth = providerUrlOf(await b.post(`/connect/${p.id}`, { _csrf: csrfOf(page.body) }));
    assert.equal(auth.origin + auth.pathname, h.mock.authorizeUrl);
    assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(auth.searchParams.get('redirect_uri'), `${h.publicUrl}/oauth/callback`);
    assert.equal(auth.searchParams.get('scope'), 'repo read:user');
    const state = auth.searchParams.get('state') ?? '';
    assert.ok(state.length >= 43);
    assert.equal((await b.post(`/connect/${p.id}`, { _csrf: csrfOf(page.body) })).status, 410, 'the link is used');

    const consent = await fetch(`${h.mock.origin}/authorize/decision`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        decision: 'allow',
        redirect_uri: auth.searchParams.get('redirect_uri') ?? '',
        state,
        code_challenge: auth.searchParams.get('code_challenge') ?? '',
      }),
    });
    const back = new URL(consent.headers.get('location') ?? '');
    assert.equal(back.searchParams.get('state'), state);

    // Another signed-in user cannot complete it.
    const eve = await otherUser(h, 'eve1@example.com');
    const stolen = await eve.browser.get(`/oauth/callback${back.search}`);
    assert.equal(stolen.status, 403);
    assert.equal(h.mock.counters.codeExchanges, 0);

    const cb = await b.get(`/oauth/callback${back.search}`);
    assert.equal(cb.status, 303);
    assert.equal(cb.location, `/connect/${p.id}`);
    assert.equal(h.mock.counters.codeExchanges, 1);
    assert.equal((await h.connections.pending.get(p.id))?.status, 'connected');
    const cred = await h.connections.credential(h.t.user.id, mockhub());
    assert.ok(cred && h.mock.activeAccessTokens.has(cred.values['token'] ?? ''));
    const replay = await b.get(`/oauth/callback${back.search}`);
    assert.equal(replay.status, 410);
    assert.equal(h.mock.counters.codeExchanges, 1);
    const result = await b.get(`/connect/${p.id}`);
    assert.match(result.body, /MockHub<\/strong>: is connected/);
    assert.ok(!result.body.includes(cred.values['token'] ?? '?'));
  });

  it('records a denial at the provider as denied', async () => {
    const b = await signIn(h);
    const p = await h.connections.pending.create(h.t.user.id, 'mockhub', 'oauth2');
    const page = await b.get(`/connect/${p.id}`);
    const auth = providerUrlOf(await b.post(`/connect/${p.id}`, { _csrf: csrfOf(page.body) }));
    const res = await b.get(`/oauth/callback?error=access_denied&state=${auth.searchParams.get('state')}`);
    assert.equal(res.status, 303);
    assert.equal((await h.connections.pending.get(p.id))?.status, 'denied');
    assert.match((await b.get(`/connect/${p.id}`)).body, /access was declined/);
  });

  it('reports a failed code exchange as failed with the reason', async () => {
    const b = await signIn(h);
    const p = await h.connections.pending.create(h.t.user.id, 'mockhub', 'oauth2');
    const page = await b.get(`/connect/${p.id}`);
    const auth = providerUrlOf(await b.post(`/connect/${p.id}`, { _csrf: csrfOf(page.body) }));
    const res = await b.get(`/oauth/callback?code=forged&state=${auth.searchParams.get('state')}`);
    assert.equal(res.status, 303);
    const after = await h.connections.pending.get(p.id);
    assert.equal(after?.status, 'failed');
    assert.match(after?.statusReason ?? '', /rejected the grant \(invalid_grant/);
  });

  it("refuses another user's link without changing it, and expired or unknown links", async () => {
    const p = await h.connections.pending.create(h.t.user.id, 'keyed', 'apikey');
    const eve = await otherUser(h, 'eve2@example.com');
    const page = await eve.browser.get(`/connect/${p.id}`);
    assert.equal(page.status, 403);
    assert.match(page.body, /created for a different Workbench account/);
    assert.ok(!page.body.includes('ada@example.com'));
    const post = await eve.browser.post(`/connect/${p.id}/form`, {
      _csrf: csrfOf((await eve.browser.get('/keys')).body),
      apiKey: 'k_evilevil99',
    });
    assert.equal(post.status, 403);
    assert.equal((await h.connections.pending.get(p.id))?.status, 'pending');
    assert.equal((await h.connections.lookup(eve.user.id, keyed())).connected, false);
    assert.equal((await h.connections.lookup(h.t.user.id, keyed())).connected, true, 'from the first test, untouched');

    await h.t.db.run('UPDATE pending_connects SET expires_at = ? WHERE id = ?', [Date.now() - 1, p.id]);
    const b = await signIn(h);
    assert.equal((await b.get(`/connect/${p.id}`)).status, 200, 'an expired link shows its result page');
    assert.match((await b.get(`/connect/${p.id}`)).body, /Link expired/);
    assert.equal(
      (await b.post(`/connect/${p.id}/form`, { _csrf: csrfOf((await b.get('/keys')).body), apiKey: 'k_abcdefgh12' }))
        .status,
      410,
    );
    assert.equal((await b.get('/connect/nope-not-a-link')).status, 404);
  });

  it('a used link whose connection cannot be stored ends failed with the reason, which wait_for_connection reports', async () => {
    const b = await signIn(h);
    const p = await h.connections.pending.create(h.t.user.id, 'keyed', 'apikey');
    const page = await b.get(`/connect/${p.id}`);
    const before = await h.t.db.all('SELECT * FROM connections ORDER BY id');
    // the database refuses to write connections (as a failing disk would), and only them
    await h.t.db.run(
      "CREATE TRIGGER refuse_connection_insert BEFORE INSERT ON connections BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END",
    );
    await h.t.db.run(
      "CREATE TRIGGER refuse_connection_update BEFORE UPDATE ON connections BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END",
    );
    try {
      const waiting = waitForConnection(p.id, 20); // the agent waits while the user submits
      const res = await b.post(`/connect/${p.id}/form`, {
        _csrf: csrfOf(page.body),
        apiKey: 'k_storefails1',
        region: 'us',
      });
      assert.equal(res.status, 303);
      assert.equal(res.location, `/connect/${p.id}`);
      assert.deepEqual(await waiting, {
        connectionId: p.id,
        integration: 'keyed',
        status: 'FAILED',
        reason: STORE_FAILED_REASON,
      });
      const result = await b.get(`/connect/${p.id}`);
      assert.match(result.body, /Connection failed/);
      assert.ok(result.body.includes(STORE_FAILED_REASON), 'the result page says why');
      assert.ok(
        !result.body.includes('k_storefails1') && !result.body.includes('disk I/O error'),
        'neither the secret nor the database error is shown',
      );
    } finally {
      await h.t.db.run('DROP TRIGGER refuse_connection_insert');
      await h.t.db.run('DROP TRIGGER refuse_connection_update');
    }
    assert.deepEqual(await h.t.db.all('SELECT * FROM connections ORDER BY id'), before, 'nothing stored, nothing lost');
  });

  it('a callback whose PKCE verifier cannot be decrypted settles the link failed instead of leaving it exchanging', async () => {
    const b = await signIn(h);
    const open = async () => {
      const p = await h.connections.pending.create(h.t.user.id, 'mockhub', 'oauth2');
      const page = await b.get(`/connect/${p.id}`);
      return { id: p.id, auth: providerUrlOf(await b.post(`/connect/${p.id}`, { _csrf: csrfOf(page.body) })) };
    };
    const damaged = await open();
    const other = await open();
    // the verifier of another link is sealed for that link: on this row it does not decrypt
    await h.t.db.run(
      'UPDATE pending_connects SET code_verifier = (SELECT code_verifier FROM pending_connects WHERE id = ?) WHERE id = ?',
      [other.id, damaged.id],
    );
    const exchanges = h.mock.counters.codeExchanges;
    const waiting = waitForConnection(damaged.id, 20);
    const cb = await b.get(`/oauth/callback?code=some-code&state=${damaged.auth.searchParams.get('state')}`);
    assert.equal(cb.status, 303);
    assert.equal(cb.location, `/connect/${damaged.id}`);
    assert.deepEqual(await waiting, {
      connectionId: damaged.id,
      integration: 'mockhub',
      status: 'FAILED',
      reason: UNREADABLE_VERIFIER_REASON,
    });
    assert.equal(h.mock.counters.codeExchanges, exchanges, 'no code was sent to the provider');
    assert.match((await b.get(`/connect/${damaged.id}`)).body, /Connection failed/);
    assert.equal((await h.connections.pending.get(other.id))?.status, 'opened', 'the other link is untouched');
  });

  it('starts a connect from the integrations page and disconnects with revocation', async () => {
    const b = await signIn(h);
    const page = await b.get('/integrations');
    assert.match(page.body, /MockHub/);
    assert.match(page.body, /<span class="ok">Connected<\/span>/);
    const res = await b.post('/integrations/keyed/connect', { _csrf: csrfOf(page.body) });
    assert.equal(res.status, 303);
    assert.match(res.location ?? '', /^\/connect\/[A-Za-z0-9_-]+$/);
    const before = h.mock.counters.revocations;
    const dis = await b.post('/integrations/mockhub/disconnect', { _csrf: csrfOf(page.body) });
    assert.equal(dis.status, 303);
    assert.ok(h.mock.counters.revocations > before, 'revoked at the provider');
    assert.equal((await h.connections.lookup(h.t.user.id, mockhub())).connected, false);
    assert.match((await b.get(dis.location ?? '')).body, /MockHub was disconnected/);
  });

  it('a link started from the Connect button is not worded as if an agent were waiting, and a re-post offers the integrations page', async () => {
    const b = await signIn(h);
    const csrf = csrfOf((await b.get('/integrations')).body);
    const agentOnly =
      /[Yy]our agent (is waiting|continues)|Ask your agent for a new|If you did not finish connecting, ask your agent/;
    const oauth = await b.post('/integrations/mockhub/connect', { _csrf: csrf });
    const start = await b.get(oauth.location ?? '');
    assert.equal(start.status, 200);
    assert.doesNotMatch(start.body, agentOnly);

    const made = await b.post('/integrations/keyed/connect', { _csrf: csrf });
    const link = made.location ?? assert.fail('no link');
    const done = await b.post(`${link}/form`, { _csrf: csrf, apiKey: 'k_abcdefgh12', region: 'eu' });
    assert.equal(done.status, 303);
    const result = await b.get(link);
    assert.match(result.body, /Keyed Service<\/strong>: is connected/);
    assert.doesNotMatch(result.body, agentOnly);
    const again = await b.post(`${link}/form`, { _csrf: csrf, apiKey: 'k_abcdefgh12', region: 'eu' });
    assert.equal(again.status, 410);
    assert.doesNotMatch(again.body, agentOnly);
    assert.match(again.body, /start again from the integrations page/);
    assert.match(again.body, /<a href="\/integrations">/);
  });

  it('a disconnect notice is shown once, to the session that disconnected, and cannot be written into a link', async () => {
    const b = await signIn(h);
    const other = await signIn(h);
    const notices = (body: string): string[] =>
      [...body.matchAll(/<p class="notice" role="status">([^<]*)/g)].map((m) => m[1] as string);
    // a link anyone could send
    assert.deepEqual(notices((await b.get('/integrations?done=disconnected&name=mockhub')).body), []);

    const page = await b.get('/integrations');
    await h.connections.disconnect(h.t.user.id, keyed());
    const never = await b.post('/integrations/keyed/disconnect', { _csrf: csrfOf(page.body) });
    assert.equal(never.status, 303);
    assert.equal(never.location, '/integrations', 'nothing in the URL');
    assert.deepEqual(notices((await other.get('/integrations')).body), [], 'not in another session');
    assert.deepEqual(notices((await b.get('/integrations')).body), [
      'Keyed Service was not connected: there was nothing to disconnect.',
    ]);
    assert.deepEqual(notices((await b.get('/integrations')).body), [], 'once');

    await h.connections.saveApiKey(h.t.user.id, keyed(), { apiKey: 'k_abcdefgh12', region: 'eu' });
    await b.post('/integrations/keyed/disconnect', { _csrf: csrfOf(page.body) });
    assert.deepEqual(notices((await b.get('/integrations')).body), ['Keyed Service was disconnected.']);
    assert.deepEqual(notices((await b.get('/integrations')).body), []);
  });
});
