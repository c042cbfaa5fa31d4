/**
 * @module test/host/connections/oauth.test
 * The OAuth2 client against providers' quirks: the authorization URL (PKCE S256, state, scopes,
 * extra params), client auth in the body or as Basic, form-encoded answers, errors sent with
 * HTTP 200, Slack-style nested tokens, plus the truthful connection state and the background
 * refresh sweep.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  authorizationUrl,
  clientEnvPrefix,
  clientFromEnv,
  exchangeCode,
  refreshAccessToken,
  revokeToken,
  type OAuth2Auth,
} from '../../../host/connections/oauth.js';
import { NO_REFRESH_REASON } from '../../../host/connections/refresh.js';
import { createConnectionService } from '../../../host/connections/service.js';
import {
  MAX_TOKEN_RESPONSE_BYTES,
  PROVIDER_TEXT_MAX,
  readTokenResponse,
} from '../../../host/connections/token-response.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import { startMockOAuth, type MockOAuth } from '../../helpers/mock-oauth.js';
import { oauthManifest, openTestDb } from '../../helpers/connections-db.js';

const authOf = (mock: MockOAuth, extra: Record<string, unknown> = {}): OAuth2Auth =>
  oauthManifest(mock, extra).auth as OAuth2Auth;

async function consent(mock: MockOAuth, url: string): Promise<URL> {
  const u = new URL(url);
  const res = await fetch(`${mock.origin}/authorize/decision`, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({
      decision: 'allow',
      redirect_uri: u.searchParams.get('redirect_uri') ?? '',
      state: u.searchParams.get('state') ?? '',
      code_challenge: u.searchParams.get('code_challenge') ?? '',
    }),
  });
  return new URL(res.headers.get('location') ?? '');
}

/**
 * A "provider" on 127.0.0.1 whose every answer is HTTP 200 with a `size`-byte body, written in
 * 64 KiB chunks as fast as the client takes them. `sent()` resolves, once the response has closed
 * (finished or aborted by the client), how many bytes the client had accepted.
 */
async function floodingProvider(size: number, declareLength = false) {
  const closes: Promise<number>[] = [];
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const server = http.createServer((req, res) => {
    req.resume();
    let written = 0;
    closes.push(new Promise((resolve) => res.on('close', () => resolve(written))));
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(declareLength ? { 'content-length': String(size) } : {}),
    });
    const pump = (): void => {
      while (written < size && !res.destroyed) {
        const part = chunk.subarray(0, Math.min(chunk.length, size - written));
        written += part.length;
        if (!res.write(part)) return void res.once('drain', pump);
      }
      if (written >= size) res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urls: { authorizeUrl: `${origin}/authorize`, tokenUrl: `${origin}/token`, revokeUrl: `${origin}/revoke` },
    /** bytes written into each response so far closed, in request order */
    sent: () => Promise.all(closes),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('OAuth2 client', () => {
  let mock: MockOAuth;
  before(async () => {
    mock = await startMockOAuth();
  });
  after(async () => mock.close());
  const client = () => ({ clientId: mock.clientId, clientSecret: mock.clientSecret });

  it('builds the authorization URL with PKCE S256, state, scopes and extra parameters', () => {
    const auth = authOf(mock, {
      authorizationParams: { audience: 'api.example.com', prompt: 'consent' },
      scopeSeparator: ',',
    });
    const url = new URL(
      authorizationUrl(auth, client(), {
        redirectUri: 'https://wb.example.com/oauth/callback',
        state: 's1',
        codeVerifier: 'v'.repeat(43),
      }),
    );
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('client_id'), mock.clientId);
    assert.equal(url.searchParams.get('state'), 's1');
    assert.equal(url.searchParams.get('scope'), 'repo,read:user');
    assert.equal(url.searchParams.get('audience'), 'api.example.com');
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(
      url.searchParams.get('code_challenge'),
      createHash('sha256').update('v'.repeat(43)).digest('base64url'),
    );
    const mapped = authorizationUrl(auth, client(), {
      redirectUri: 'x',
      state: 's',
      mapUrl: (u) => u.replace(mock.origin, 'http://127.0.0.1:1'),
    });
    assert.ok(mapped.startsWith('http://127.0.0.1:1/authorize?'));
    const noPkce = new URL(
      authorizationUrl(authOf(mock, { pkce: false }), client(), {
        redirectUri: 'x',
        state: 's',
        codeVerifier: 'v'.repeat(43),
      }),
    );
    assert.equal(noPkce.searchParams.get('code_challenge'), null);
  });

  it('exchanges a code with the PKCE verifier (body and Basic client auth) and refuses a wrong verifier', async () => {
    for (const clientAuth of ['body', 'basic'] as const) {
      const auth = authOf(mock, { clientAuth });
      const verifier = 'a'.repeat(50);
      const back = await consent(
        mock,
        authorizationUrl(auth, client(), { redirectUri: 'http://127.0.0.1/cb', state: 'st', codeVerifier: verifier }),
      );
      const tokens = await exchangeCode(auth, client(), {
        code: back.searchParams.get('code') ?? '',
        redirectUri: 'http://127.0.0.1/cb',
        codeVerifier: verifier,
      });
      assert.ok(mock.activeAccessTokens.has(tokens.accessToken), clientAuth);
      assert.equal(tokens.expiresInSec, 3600);
      assert.ok(tokens.refreshToken);
    }
    const auth = authOf(mock);
    const back = await consent(
      mock,
      authorizationUrl(auth, client(), {
        redirectUri: 'http://127.0.0.1/cb',
        state: 'st',
        codeVerifier: 'b'.repeat(50),
      }),
    );
    await assert.rejects(
      exchangeCode(auth, client(), {
        code: back.searchParams.get('code') ?? '',
        redirectUri: 'http://127.0.0.1/cb',
        codeVerifier: 'c'.repeat(50),
      }),
      (e: Error & { kind?: string }) => e.kind === 'invalid_grant' && /PKCE/.test(e.message),
    );
    await assert.rejects(
      refreshAccessToken(auth, { clientId: mock.clientId, clientSecret: 'wrong' }, 'x'),
      (e: Error & { kind?: string }) => e.kind === 'provider_error' && /invalid_client/.test(e.message),
    );
  });

  it('reads the token under tokenPath (Slack authed_user) and form-encoded answers', async () => {
    const slack = await startMockOAuth({ nestUnder: 'authed_user' });
    try {
      const { refreshToken } = slack.issue();
      const tokens = await refreshAccessToken(
        authOf(slack, { tokenPath: 'authed_user' }),
        { clientId: slack.clientId, clientSecret: slack.clientSecret },
        refreshToken,
      );
      assert.ok(slack.activeAccessTokens.has(tokens.accessToken));
      await assert.rejects(
        refreshAccessToken(
          authOf(slack),
          { clientId: slack.clientId, clientSecret: slack.clientSecret },
          [...slack.activeRefreshTokens][0] ?? '',
        ),
        { code: 'GW_ERR_CONNECTION_PROVIDER', kind: 'bad_response', message: /no access_token/ },
      );
    } finally {
      await slack.close();
    }
    mock.mode = 'form-encoded';
    try {
      const tokens = await refreshAccessToken(authOf(mock), client(), mock.issue().refreshToken);
      assert.equal(tokens.expiresInSec, 3600);
      assert.ok(mock.activeAccessTokens.has(tokens.accessToken));
    } finally {
      mock.mode = 'normal';
    }
  });

  it('classifies errors sent with HTTP 200, Slack ok:false, and garbage', async () => {
    const r = (body: string, type: string, status = 200) =>
      new Response(body, { status, headers: { 'content-type': type } });
    const kind = async (res: Response) =>
      readTokenResponse(res, 'token refresh').then(
        () => 'ok',
        (e: Error & { kind: string }) => `${e.kind}: ${e.message}`,
      );
    assert.match(
      await kind(
        r('error=bad_verification_code&error_description=The+code+is+wrong', 'application/x-www-form-urlencoded'),
      ),
      /^invalid_grant: .*bad_verification_code: The code is wrong/,
    );
    assert.match(await kind(r('{"ok":false,"error":"invalid_refresh_token"}', 'application/json')), /^invalid_grant/);
    assert.match(await kind(r('{"ok":false,"error":"ratelimited"}', 'application/json', 429)), /^provider_unavailable/);
    assert.match(await kind(r('<html>oops</html>', 'text/html', 502)), /^provider_unavailable: .*HTTP 502/);
    assert.match(
      await kind(r('not json at all', 'application/json')),
      /^bad_response: .*application\/json that is not a token response/,
    );
    assert.match(await kind(r('{"access_token":""}', 'application/json')), /^bad_response: .*no access_token/);
    assert.match(await kind(r('{"access_token":"t","expires_in":"120","scope":["a","b"]}', 'application/json')), /^ok/);
    assert.match(await kind(r('access_token=t&token_type=bearer', 'text/plain')), /^ok/);
  });

  it("clips the provider's text on every path: its error code (also as providerCode), its description and its content type", async () => {
    const huge = 'x'.repeat(50_000);
    const cases: [number, string, string][] = [
      [503, JSON.stringify({ error: huge, error_description: huge }), 'application/json'],
      [429, JSON.stringify({ ok: false, error: huge }), 'application/json'],
      [400, JSON.stringify({ error: huge, error_description: huge }), 'application/json'],
      [200, new URLSearchParams({ error: huge }).toString(), 'application/x-www-form-urlencoded'],
      [200, '<html></html>', `text/${huge}`],
    ];
    for (const [status, body, type] of cases) {
      await assert.rejects(
        readTokenResponse(new Response(body, { status, headers: { 'content-type': type } }), 'token refresh'),
        (e: Error & { providerCode?: string }) => {
          assert.ok(e.message.length <= 400, `HTTP ${status}: ${e.message.length} characters`);
          assert.ok(
            e.providerCode === undefined || e.providerCode.length <= PROVIDER_TEXT_MAX.code + 1,
            `HTTP ${status}: providerCode of ${e.providerCode?.length}`,
          );
          return true;
        },
      );
    }
  });

  it("cuts the values it sent out of a provider's error text that echoes them", async () => {
    // a provider on 127.0.0.1 that echoes the whole request form in its error_description
    const echo = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const grant = form.get('grant_type') === 'refresh_token' ? form.get('refresh_token') : form.get('code');
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: 'invalid_grant',
            error_description: `bad ${grant} for ${form.get('client_secret')} (sent ${body.slice(0, 120)})`,
          }),
        );
      });
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    try {
      const auth = oauthManifest({ authorizeUrl: `${origin}/authorize`, tokenUrl: `${origin}/token` })
        .auth as OAuth2Auth;
      const secrets = { clientId: 'echo-client', clientSecret: 'cs/secret+value=1' };
      const refreshToken = 'rt_sensitive_0123456789';
      const code = 'code_sensitive_abcdef';
      for (const [label, attempt, sent] of [
        ['refresh', refreshAccessToken(auth, secrets, refreshToken), [refreshToken]],
        ['exchange', exchangeCode(auth, secrets, { code, redirectUri: 'http://127.0.0.1/cb' }), [code]],
      ] as const) {
        await assert.rejects(attempt, (e: Error & { kind?: string }) => {
          assert.equal(e.kind, 'invalid_grant', label);
          assert.match(e.message, /\[redacted\]/, label);
          for (const secret of [
            ...sent,
            secrets.clientSecret,
            encodeURIComponent(secrets.clientSecret),
            new URLSearchParams({ s: secrets.clientSecret }).toString().slice(2),
          ])
            assert.ok(!e.message.includes(secret), `${label}: ${e.message}`);
          return true;
        });
      }
    } finally {
      await new Promise<void>((r) => (echo.closeAllConnections(), echo.close(() => r())));
    }
  });

  it('revokes a token (RFC 7009) and reports providers without revocation', async () => {
    const pair = mock.issue();
    assert.equal(
      await revokeToken(authOf(mock, { revocationUrl: mock.revokeUrl }), client(), pair.refreshToken, 'refresh_token'),
      true,
    );
    assert.ok(mock.revoked.has(pair.refreshToken));
    const withoutRevocation = oauthManifest({ authorizeUrl: mock.authorizeUrl, tokenUrl: mock.tokenUrl })
      .auth as OAuth2Auth;
    assert.equal(await revokeToken(withoutRevocation, client(), pair.accessToken, 'access_token'), false);
  });

  it('stops reading an oversized token or revocation answer at the cap and cancels the request', async () => {
    const FULL = 128 * 1024 * 1024;
    // the client stops early: what the provider managed to write before the socket closed stays
    // far below the full body (a few socket buffers at most)
    const early = (bytes: number): boolean => bytes < FULL / 4;
    const tooLarge = new RegExp(`answer is larger than ${MAX_TOKEN_RESPONSE_BYTES} bytes`);
    const streamed = await floodingProvider(FULL);
    try {
      const auth = oauthManifest(streamed.urls, { revocationUrl: streamed.urls.revokeUrl }).auth as OAuth2Auth;
      await assert.rejects(
        exchangeCode(auth, client(), { code: 'c', redirectUri: 'http://127.0.0.1/cb' }),
        (e: Error & { kind?: string }) => {
          assert.equal(e.kind, 'bad_response');
          assert.match(e.message, /^token exchange: /);
          assert.match(e.message, tooLarge);
          return true;
        },
      );
      // the revocation's answer is not read at all: only its status counts
      assert.equal(await revokeToken(auth, client(), 'rt', 'refresh_token'), true);
      const sent = await streamed.sent();
      assert.equal(sent.length, 2);
      for (const bytes of sent)
        assert.ok(early(bytes), `the provider wrote ${bytes} of ${FULL} bytes before the client went away`);
    } finally {
      await streamed.close();
    }

    // a refresh through the service, against an answer that declares its (large) length
    const declared = await floodingProvider(FULL, true);
    const t = await openTestDb();
    try {
      let clock = Date.now();
      const manifest = oauthManifest(declared.urls);
      const svc = createConnectionService({
        db: t.db,
        vault: createVault(generateKey()),
        clientFor: client,
        now: () => clock,
      });
      await svc.importConnection({ userId: t.user.id, manifest, token: 'old', refreshToken: 'rt', expiresInSec: 1 });
      clock += 2_000;
      await assert.rejects(svc.credential(t.user.id, manifest), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'GW_ERR_ENGINE_CREDENTIAL_FAILED');
        assert.match(e.message, tooLarge);
        assert.match(e.message, /connection is kept/);
        return true;
      });
      assert.equal((await svc.lookup(t.user.id, manifest)).connected, true);
      const [bytes] = await declared.sent();
      assert.ok(
        bytes !== undefined && early(bytes),
        `the provider wrote ${bytes} of ${FULL} bytes before the client went away`,
      );
    } finally {
      await t.close();
      await declared.close();
    }
  });

  it('reads client credentials from <PLUGIN>_CLIENT_ID / _CLIENT_SECRET', () => {
    assert.equal(clientEnvPrefix('atlassian-jira'), 'ATLASSIAN_JIRA');
    const env = { ATLASSIAN_JIRA_CLIENT_ID: ' id ', ATLASSIAN_JIRA_CLIENT_SECRET: 'sec', GITHUB_CLIENT_ID: 'gh' };
    assert.deepEqual(clientFromEnv(env)('atlassian-jira'), { clientId: 'id', clientSecret: 'sec' });
    assert.deepEqual(clientFromEnv(env)('github'), { clientId: 'gh' });
    assert.equal(clientFromEnv(env)('slack'), undefined);
  });

  it('reports an expired, non-refreshable token as needs_reauth, and the sweep refreshes ahead of time', async () => {
    const t = await openTestDb();
    try {
      let clock = Date.now();
      const manifest = oauthManifest(mock);
      const svc = createConnectionService({
        db: t.db,
        vault: createVault(generateKey()),
        clientFor: client,
        now: () => clock,
      });
      await svc.importConnection({ userId: t.user.id, manifest, token: 'once', expiresInSec: 60 });
      assert.equal((await svc.state(t.user.id, manifest)).state, 'connected');
      clock += 61_000;
      const s = await svc.states(t.user.id);
      assert.deepEqual(s.get('mockhub'), {
        state: 'needs_reauth',
        connectionId: (s.get('mockhub') as { connectionId: string }).connectionId,
        reason: NO_REFRESH_REASON,
        updatedAt: clock,
      });

      const u2 = await t.users.create('bob@example.com', 'acme');
      const pair = mock.issue();
      await svc.importConnection({
        userId: u2.id,
        manifest,
        token: pair.accessToken,
        refreshToken: pair.refreshToken,
        expiresInSec: 240,
      });
      const before = mock.counters.refreshes;
      assert.deepEqual(
        await svc.refreshExpiring([manifest], 60_000),
        { usable: 0, needsReauth: 0, failed: 0 },
        'nothing due within 1 min',
      );
      assert.deepEqual(await svc.refreshExpiring([manifest]), { usable: 1, needsReauth: 0, failed: 0 });
      assert.equal(mock.counters.refreshes - before, 1);
      assert.notEqual((await svc.credential(u2.id, manifest))?.values['token'], pair.accessToken);
    } finally {
      await t.close();
    }
  });
});
