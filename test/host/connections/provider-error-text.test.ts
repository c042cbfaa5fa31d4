/**
 * @module test/host/connections/provider-error-text.test
 * A provider's token endpoint decides what its error says, not how much of it the gateway repeats.
 * A real gateway (SQLite file, the github plugin) whose OAuth endpoints are mapped to the loopback
 * mock provider, which answers the token request with HTTP 503 and a 60,000-character `error`:
 * the connect link's stored failure reason (shown by the connect page and wait_for_connection) and,
 * on a token refresh, the execution's error and its audit row stay short, and still say what
 * happened (HTTP 503, the start of the provider's code).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PROVIDER_TEXT_MAX } from '../../../host/connections/token-response.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { callJson } from '../../helpers/mcp-call.js';
import { startMockOAuth, type MockOAuth } from '../../helpers/mock-oauth.js';
import { csrfOf, signInWithKey } from '../../helpers/web-client.js';

const HUGE_CODE = 'E'.repeat(60_000);
/** generous for the message around the clipped pieces; the unclipped message was 60,252 characters */
const MAX_MESSAGE = 600;
const unescape = (s: string): string =>
  s.replace(
    /&(amp|#38|quot|#34|#39);/g,
    (_m, e: string) => ({ amp: '&', '#38': '&', quot: '"', '#34': '"', '#39': "'" })[e] ?? '',
  );

describe("a provider's huge error text, repeated by the gateway", () => {
  let mock: MockOAuth;
  let gw: TestGateway;

  before(async () => {
    mock = await startMockOAuth({ paths: { authorize: '/login/oauth/authorize', token: '/login/oauth/access_token' } });
    gw = await startGateway({
      plugins: ['github'],
      workers: 1,
      upstreams: { 'https://github.com': mock.origin, 'https://api.github.com': mock.origin },
      env: { GITHUB_CLIENT_ID: mock.clientId, GITHUB_CLIENT_SECRET: mock.clientSecret },
    });
  });
  after(async () => {
    mock.tokenAnswer = undefined;
    await gw?.close();
    await mock?.close();
  });

  const assertBounded = (where: string, text: string | null | undefined): void => {
    assert.ok(typeof text === 'string', `${where}: no text`);
    assert.ok(text.length <= MAX_MESSAGE, `${where}: ${text.length} characters`);
    assert.match(text, /HTTP 503/, where);
    assert.ok(
      text.includes(`${'E'.repeat(PROVIDER_TEXT_MAX.code)}…`),
      `${where}: names the start of the provider's code: ${text}`,
    );
    assert.ok(!text.includes('E'.repeat(PROVIDER_TEXT_MAX.code + 1)), where);
  };

  it('a code exchange answered 503 with a 60,000-character error: the link fails with a short reason, on the page and in wait_for_connection', async () => {
    const { user, apiKey } = await gw.createUser('exchange@example.com');
    const agent = await gw.mcpClient(apiKey);
    const link = (await callJson(agent, 'connect', { integration: 'github' })).json as {
      connectionId: string;
      url: string;
    };
    const web = await signInWithKey(gw.url, apiKey);
    const path = `/connect/${link.connectionId}`;
    const page = await web.get(path);
    const go = await web.post(path, { _csrf: csrfOf(page.body) });
    assert.equal(go.status, 200, go.body.slice(0, 300));
    const provider = new URL(
      unescape(
        /<meta http-equiv="refresh" content="0; url=([^"]+)">/.exec(go.body)?.[1] ?? assert.fail('no provider URL'),
      ),
    );
    assert.equal(provider.origin, mock.origin);
    const consent = await fetch(`${mock.origin}/authorize/decision`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        decision: 'allow',
        redirect_uri: provider.searchParams.get('redirect_uri') ?? '',
        state: provider.searchParams.get('state') ?? '',
        code_challenge: provider.searchParams.get('code_challenge') ?? '',
      }),
    });
    const back = new URL(consent.headers.get('location') ?? assert.fail('no redirect back'));
    assert.equal(back.origin, gw.url);

    mock.tokenAnswer = { status: 503, body: { error: HUGE_CODE } };
    try {
      const callback = await web.get(`${back.pathname}${back.search}`);
      assert.equal(callback.status, 303);
      assert.equal(callback.location, path);
    } finally {
      mock.tokenAnswer = undefined;
    }
    const row = await gw.db.get<{ status: string; status_reason: string | null }>(
      'SELECT status, status_reason FROM pending_connects WHERE id = ?',
      [link.connectionId],
    );
    assert.equal(row?.status, 'failed');
    assertBounded('stored reason', row?.status_reason);
    const waited = (await callJson(agent, 'wait_for_connection', { connectionId: link.connectionId, timeoutSec: 1 }))
      .json as { status: string; reason: string };
    assert.equal(waited.status, 'FAILED');
    assertBounded('wait_for_connection', waited.reason);
    const result = await web.get(path);
    assert.equal(result.status, 200);
    assert.ok(!result.body.includes('E'.repeat(PROVIDER_TEXT_MAX.code + 1)), 'the page quotes the clipped reason');
    assert.ok(result.body.length < 20_000, `the result page is ${result.body.length} characters`);
    assert.equal(
      (await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM connections WHERE user_id = ?', [user.id]))?.n,
      0,
    );
  });

  it('a refresh answered 503 with a 60,000-character error: the execution fails with a short error, and its audit row keeps it short', async () => {
    const { user, apiKey } = await gw.createUser('refresh@example.com');
    await gw.connect(
      'github',
      { token: 'gho_stale_token', refreshToken: 'ghr_refresh_token', expiresInSec: 3600 },
      user,
    );
    // the access token has run out: the call must refresh it first
    await gw.db.run('UPDATE connections SET expires_at = ? WHERE user_id = ?', [Date.now() - 60_000, user.id]);
    mock.tokenAnswer = { status: 503, body: { error: HUGE_CODE, error_description: 'D'.repeat(4_000) } };
    try {
      const item = await gw.execute('github_get_me', {}, apiKey);
      assert.equal(item.code, 'GW_ERR_ENGINE_CREDENTIAL_FAILED', JSON.stringify(item).slice(0, 300));
      assertBounded('execution error', item.error);
      assert.ok(
        !String(item.error).includes('D'.repeat(PROVIDER_TEXT_MAX.description + 1)),
        'the description is clipped too',
      );
    } finally {
      mock.tokenAnswer = undefined;
    }
    const audit = await gw.db.get<{ error_code: string; error: string }>(
      "SELECT error_code, error FROM audit_events WHERE user_id = ? AND tool = 'github_get_me'",
      [user.id],
    );
    assert.equal(audit?.error_code, 'GW_ERR_ENGINE_CREDENTIAL_FAILED');
    assertBounded('audit row', audit?.error);
    const conn = await gw.db.get<{ status: string }>('SELECT status FROM connections WHERE user_id = ?', [user.id]);
    assert.equal(conn?.status, 'connected', 'a provider that is down does not end the connection');
  });
});
