/**
 * @module test/host/oauth-server/refusals.test
 * Every refusal of the gateway's OAuth endpoints but registration's (registration.test.ts), over
 * real HTTP against a real gateway: at /authorize, an unknown client or redirect URI gets an error
 * page and no redirect, and every other problem goes back to the registered redirect URI as its
 * RFC error with the state; /token and /revoke answer the RFC error codes as JSON (never a 500); a
 * used code revokes the tokens it gave; a person holds at most 50 grants.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { hiddenFields } from '../../helpers/oauth-client.js';
import {
  authorizationParams,
  authorizePath,
  codeThroughConsent,
  mcpWith,
  pkcePair,
  postForm,
  registeredClient,
} from '../../helpers/oauth-requests.js';
import { signInWithKey, WebClient } from '../../helpers/web-client.js';

const REDIRECT = 'http://127.0.0.1:40111/cb';

describe('refusals of the OAuth endpoints', () => {
  let gw: TestGateway;
  let web: WebClient;
  let clientId: string;
  const pk = pkcePair();
  const params = (
    over: Record<string, string | readonly string[] | undefined> = {},
  ): Record<string, string | string[]> => authorizationParams(gw.url, clientId, REDIRECT, pk.challenge, over);
  /** the exchange of a fresh code for this client */
  const tokensOf = async (code: string, over: Record<string, string> = {}) =>
    postForm(gw.url, '/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: pk.verifier,
      client_id: clientId,
      ...over,
    });

  before(async () => {
    gw = await startGateway({ plugins: [], policy: { oauthServer: { registrationsPerHourPerAddress: 1000 } } });
    web = await signInWithKey(gw.url, gw.apiKey);
    clientId = await registeredClient(gw.url, REDIRECT);
  });
  after(async () => gw?.close());

  describe('/authorize', () => {
    it('an unknown client or redirect URI gets an error page, and nothing is sent anywhere', async () => {
      for (const [over, why] of [
        [{ client_id: 'wbc_unknown' }, /does not know that client_id/],
        [{ client_id: undefined }, /names no client_id/],
        [{ client_id: [clientId, clientId] }, /names no client_id/],
        [{ redirect_uri: undefined }, /names no redirect_uri/],
        [{ redirect_uri: 'http://127.0.0.1:40111/cb/' }, /is not one this app registered/],
        [{ redirect_uri: 'http://127.0.0.1:40112/cb' }, /is not one this app registered/],
        [{ redirect_uri: 'https://attacker.example/cb' }, /is not one this app registered/],
        [{ client_id: 'http://not-https.example/client.json' }, /does not know that client_id/],
      ] as const) {
        const res = await web.get(authorizePath(params(over)));
        assert.equal(res.status, 400, JSON.stringify(over));
        assert.equal(res.location, null, 'no redirect');
        assert.match(res.body, why);
        assert.match(res.body, /This app cannot be authorized/);
      }
    });

    it('other problems go back to the redirect URI with the RFC error, the state and the issuer', async () => {
      for (const [over, error] of [
        [{ response_type: 'token' }, 'unsupported_response_type'],
        [{ response_type: undefined }, 'invalid_request'],
        [{ code_challenge_method: 'plain', code_challenge: pk.verifier.slice(0, 43) }, 'invalid_request'],
        [{ code_challenge_method: undefined }, 'invalid_request'],
        [{ code_challenge: undefined }, 'invalid_request'],
        [{ code_challenge: 'short' }, 'invalid_request'],
        [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
        [{ resource: [`${gw.url}/mcp`, 'https://other.example/mcp'] }, 'invalid_target'],
        [{ scope: 'mcp admin' }, 'invalid_scope'],
        [{ code_challenge: [pk.challenge, pk.challenge] }, 'invalid_request'],
      ] as const) {
        const res = await web.get(authorizePath(params(over)));
        assert.equal(res.status, 303, JSON.stringify(over));
        const to = new URL(String(res.location));
        assert.equal(`${to.origin}${to.pathname}`, REDIRECT);
        assert.equal(to.searchParams.get('error'), error, JSON.stringify(over));
        assert.ok(to.searchParams.get('error_description'));
        assert.equal(to.searchParams.get('state'), 'st-123');
        assert.equal(to.searchParams.get('iss'), gw.url);
        assert.equal(to.searchParams.get('code'), null);
      }
      const twice = new URL(String((await web.get(authorizePath(params({ state: ['a', 'b'] })))).location));
      assert.equal(twice.searchParams.get('error'), 'invalid_request');
      assert.equal(twice.searchParams.get('state'), null, 'an ambiguous state is not echoed');
    });

    it('a client that did not register the authorization_code grant is an unauthorized_client', async () => {
      const only = await registeredClient(gw.url, REDIRECT, { grant_types: ['refresh_token'] });
      const res = await web.get(authorizePath(authorizationParams(gw.url, only, REDIRECT, pk.challenge)));
      assert.equal(new URL(String(res.location)).searchParams.get('error'), 'unauthorized_client');
    });

    it('Deny sends access_denied with the state; a stale form or a tampered one is refused without a redirect', async () => {
      const page = await web.get(authorizePath(params()));
      assert.equal(page.status, 200);
      assert.match(
        page.headers.get('content-security-policy') ?? '',
        /form-action 'self' http:\/\/127\.0\.0\.1:40111;/,
      );
      const fields = hiddenFields(page.body);
      const denied = await web.post('/authorize', { ...fields, decision: 'deny' });
      const to = new URL(String(denied.location));
      assert.equal(to.searchParams.get('error'), 'access_denied');
      assert.equal(to.searchParams.get('state'), 'st-123');
      const stale = await web.post('/authorize', { ...fields, _csrf: 'forged', decision: 'allow' });
      assert.equal(stale.status, 403);
      assert.equal(stale.location, null);
      const tampered = await web.post('/authorize', {
        ...fields,
        redirect_uri: 'https://attacker.example/cb',
        decision: 'allow',
      });
      assert.equal(tampered.status, 400);
      assert.equal(tampered.location, null);
      const undecided = await web.post('/authorize', { ...fields });
      assert.equal(undecided.status, 400);
    });

    it('a person not signed in is sent to sign in, and comes back to the same question', async () => {
      const stranger = new WebClient(gw.url);
      const path = authorizePath(params());
      const res = await stranger.get(path);
      assert.equal(res.status, 303);
      assert.equal(res.location, `/login?next=${encodeURIComponent(path)}`);
      const signedIn = await signInWithKey(gw.url, gw.apiKey, path);
      const login = await signedIn.get('/login?next=' + encodeURIComponent(path));
      assert.equal(login.location, path, 'sign-in leads back to /authorize');
      assert.equal((await signedIn.get(path)).status, 200);
    });
  });

  describe('/token', () => {
    it('answers each malformed request with invalid_request, unsupported_grant_type or invalid_client', async () => {
      const cases: [Record<string, string | string[]>, Record<string, string>, number, string][] = [
        [{ client_id: clientId }, {}, 400, 'invalid_request'],
        [
          { grant_type: 'password', client_id: clientId, username: 'a', password: 'b' },
          {},
          400,
          'unsupported_grant_type',
        ],
        [{ grant_type: 'client_credentials', client_id: clientId }, {}, 400, 'unsupported_grant_type'],
        [
          { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, code_verifier: pk.verifier },
          {},
          401,
          'invalid_client',
        ],
        [
          {
            grant_type: 'authorization_code',
            code: 'x',
            client_id: 'wbc_nobody',
            redirect_uri: REDIRECT,
            code_verifier: pk.verifier,
          },
          {},
          401,
          'invalid_client',
        ],
        [
          { grant_type: 'authorization_code', code: 'x', client_id: clientId, client_secret: 's' },
          {},
          401,
          'invalid_client',
        ],
        [
          { grant_type: 'authorization_code', code: 'x', client_id: clientId },
          { authorization: 'Basic eDp5' },
          401,
          'invalid_client',
        ],
        [
          { grant_type: 'authorization_code', client_id: clientId, redirect_uri: REDIRECT, code_verifier: pk.verifier },
          {},
          400,
          'invalid_request',
        ],
        [
          { grant_type: 'authorization_code', code: 'x', client_id: clientId, redirect_uri: REDIRECT },
          {},
          400,
          'invalid_request',
        ],
        [{ grant_type: ['authorization_code', 'refresh_token'], client_id: clientId }, {}, 400, 'invalid_request'],
        [{ grant_type: 'refresh_token', client_id: clientId }, {}, 400, 'invalid_request'],
        [
          {
            grant_type: 'authorization_code',
            code: 'wbac_unknown',
            client_id: clientId,
            redirect_uri: REDIRECT,
            code_verifier: pk.verifier,
          },
          {},
          400,
          'invalid_grant',
        ],
      ];
      for (const [form, headers, status, error] of cases) {
        const r = await postForm(gw.url, '/token', form, headers);
        assert.equal(r.status, status, JSON.stringify(form));
        assert.equal(r.json.error, error, JSON.stringify(form));
        assert.equal(r.json.code, 'GW_ERR_OAUTH_REFUSED');
        assert.equal(r.headers.get('cache-control'), 'no-store');
        if (status === 401) assert.match(r.headers.get('www-authenticate') ?? '', /^Basic/);
      }
      const json = await fetch(`${gw.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'authorization_code' }),
      });
      assert.equal(json.status, 400);
      assert.equal(((await json.json()) as { error: string }).error, 'invalid_request');
      const huge = await postForm(gw.url, '/token', { grant_type: 'x'.repeat(40_000) });
      assert.equal(huge.status, 413);
      assert.equal(huge.json.error, 'invalid_request');
    });

    it('a code is refused with invalid_grant for another verifier, redirect URI or client, or once expired', async () => {
      const other = await registeredClient(gw.url, REDIRECT);
      for (const [over, error] of [
        [{ code_verifier: pkcePair().verifier }, 'invalid_grant'],
        // the challenge itself as the verifier ("plain" PKCE) does not pass S256
        [{ code_verifier: pk.challenge }, 'invalid_grant'],
        [{ redirect_uri: 'http://127.0.0.1:40111/cb/' }, 'invalid_grant'],
        [{ client_id: other }, 'invalid_grant'],
        [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
      ] as const) {
        const r = await tokensOf(await codeThroughConsent(web, params()), over);
        assert.equal(r.status, 400, JSON.stringify(over));
        assert.equal(r.json.error, error, JSON.stringify(over));
      }
      const code = await codeThroughConsent(web, params());
      await gw.db.run('UPDATE oauth_codes SET expires_at = ?', [Date.now() - 1]);
      assert.equal((await tokensOf(code)).json.error, 'invalid_grant');
    });

    it('a code used twice is refused, and the tokens its first use gave are revoked', async () => {
      const code = await codeThroughConsent(web, params());
      const first = await tokensOf(code);
      assert.equal(first.status, 200);
      assert.equal(first.json.token_type, 'Bearer');
      assert.equal(first.json.expires_in, 3600);
      assert.equal(await mcpWith(gw.url, first.json.access_token), 200);
      const again = await tokensOf(code);
      assert.equal(again.json.error, 'invalid_grant');
      assert.equal(await mcpWith(gw.url, first.json.access_token), 401);
      const refresh = await postForm(gw.url, '/token', {
        grant_type: 'refresh_token',
        refresh_token: first.json.refresh_token,
        client_id: clientId,
      });
      assert.equal(refresh.json.error, 'invalid_grant');
    });

    it('a refresh asking for more scope, another resource, or by another client is refused', async () => {
      const t = (await tokensOf(await codeThroughConsent(web, params()))).json;
      const refresh = (over: Record<string, string>) =>
        postForm(gw.url, '/token', {
          grant_type: 'refresh_token',
          refresh_token: t.refresh_token,
          client_id: clientId,
          ...over,
        });
      assert.equal((await refresh({ scope: 'mcp admin' })).json.error, 'invalid_scope');
      assert.equal((await refresh({ resource: 'https://other.example/mcp' })).json.error, 'invalid_target');
      assert.equal(
        (await refresh({ client_id: await registeredClient(gw.url, REDIRECT) })).json.error,
        'invalid_grant',
      );
      const ok = await refresh({ scope: 'mcp', resource: `${gw.url}/mcp` });
      assert.equal(ok.status, 200, JSON.stringify(ok.json));
      assert.notEqual(ok.json.refresh_token, t.refresh_token);
    });
  });

  it('a person holds at most 50 apps with access: one more revokes the one used least recently', async () => {
    const { apiKey } = await gw.createUser('many-apps@example.com');
    const person = await signInWithKey(gw.url, apiKey);
    const tokens: string[] = [];
    for (let i = 0; i < 51; i++) {
      const r = await tokensOf(await codeThroughConsent(person, params()));
      assert.equal(r.status, 200);
      tokens.push(r.json.access_token);
      // the first grant is used after the second is made: the second is then the least recently used
      if (i === 1) assert.equal(await mcpWith(gw.url, tokens[0] as string), 200);
    }
    const keys = await person.get('/keys');
    assert.equal([...keys.body.matchAll(/action="\/keys\/apps\//g)].length, 50);
    assert.equal(await mcpWith(gw.url, tokens[1] as string), 401, 'the least recently used was revoked');
    assert.equal(await mcpWith(gw.url, tokens[0] as string), 200);
    assert.equal(await mcpWith(gw.url, tokens[50] as string), 200);
  });

  describe('/revoke', () => {
    it('revokes an access token alone, or a refresh token with its grant; unknown tokens answer 200', async () => {
      const t = (await tokensOf(await codeThroughConsent(web, params()))).json;
      assert.equal((await postForm(gw.url, '/revoke', { client_id: clientId })).json.error, 'invalid_request');
      assert.equal((await postForm(gw.url, '/revoke', { token: t.access_token })).status, 401);
      assert.equal((await postForm(gw.url, '/revoke', { token: 'wbat_nothing', client_id: clientId })).status, 200);
      // another client's revocation of this client's token revokes nothing
      const other = await registeredClient(gw.url, REDIRECT);
      assert.equal((await postForm(gw.url, '/revoke', { token: t.access_token, client_id: other })).status, 200);
      assert.equal(await mcpWith(gw.url, t.access_token), 200);
      assert.equal((await postForm(gw.url, '/revoke', { token: t.access_token, client_id: clientId })).status, 200);
      assert.equal(await mcpWith(gw.url, t.access_token), 401);
      const next = await postForm(gw.url, '/token', {
        grant_type: 'refresh_token',
        refresh_token: t.refresh_token,
        client_id: clientId,
      });
      assert.equal(next.status, 200, 'revoking an access token leaves the refresh token');
      assert.equal(
        (await postForm(gw.url, '/revoke', { token: next.json.refresh_token, client_id: clientId })).status,
        200,
      );
      assert.equal(await mcpWith(gw.url, next.json.access_token), 401, 'the grant went with its refresh token');
    });
  });
});
