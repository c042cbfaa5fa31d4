/**
 * @module test/host/oauth-server/registration.test
 * Dynamic Client Registration (RFC 7591) at a real gateway: a public client is registered as
 * mcp-remote registers, bad metadata is refused with invalid_redirect_uri or
 * invalid_client_metadata, registrations past the address's hourly budget are refused with 429 and
 * Retry-After, and with the authorization server turned off nothing of it is served.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { mcpWith, postForm, registerClient, registeredClient } from '../../helpers/oauth-requests.js';

const REDIRECT = 'http://127.0.0.1:40111/cb';

describe('client registration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], policy: { oauthServer: { registrationsPerHourPerAddress: 1000 } } });
  });
  after(async () => gw?.close());

  it('registers a public client: a client_id, no secret, token_endpoint_auth_method none', async () => {
    // as mcp-remote registers (with its software_id and software_version, which are not kept)
    const r = await registerClient(gw.url, {
      client_name: 'Good',
      client_uri: 'https://github.com/modelcontextprotocol/mcp-cli',
      redirect_uris: ['http://localhost:5555/callback', 'https://app.example/cb'],
      software_id: '2e6dc280-f3c3-4e01-99a7-8181dbd1d23d',
      software_version: '0.1.0',
    });
    assert.equal(r.status, 201);
    assert.match(r.json.client_id, /^wbc_/);
    assert.equal(r.json.client_secret, undefined);
    assert.equal(r.json.token_endpoint_auth_method, 'none');
    assert.deepEqual(r.json.grant_types, ['authorization_code']);
  });

  it('refuses bad metadata with invalid_redirect_uri or invalid_client_metadata', async () => {
    const cases: [unknown, string][] = [
      [{ client_name: 'x' }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: 'https://app.example/cb' }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example/cb#frag'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://user:pw@app.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['cursor://callback'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['/relative'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) }, 'invalid_redirect_uri'],
      [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], grant_types: ['password'] }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], response_types: ['token'] }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], client_name: 'a\u202eb' }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], client_name: 'x'.repeat(101) }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata'],
      [[REDIRECT], 'invalid_client_metadata'],
      ['{"redirect_uris": [', 'invalid_client_metadata'],
    ];
    for (const [body, error] of cases) {
      const r = await registerClient(gw.url, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.error, error, JSON.stringify(body));
      assert.ok(r.json.error_description);
    }
    const form = await registerClient(
      gw.url,
      `redirect_uris=${encodeURIComponent(REDIRECT)}`,
      'application/x-www-form-urlencoded',
    );
    assert.equal(form.json.error, 'invalid_client_metadata');
  });
});

describe('the address budget of registrations', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], policy: { oauthServer: { registrationsPerHourPerAddress: 2 } } });
  });
  after(async () => gw?.close());

  it('refuses registrations past the hourly budget with 429, temporarily_unavailable and Retry-After', async () => {
    assert.ok(await registeredClient(gw.url, REDIRECT));
    assert.ok(await registeredClient(gw.url, REDIRECT));
    const r = await registerClient(gw.url, { redirect_uris: [REDIRECT] });
    assert.equal(r.status, 429);
    assert.equal(r.json.error, 'temporarily_unavailable');
    assert.equal(r.json.code, 'GW_ERR_OAUTH_RATE_LIMITED');
    assert.ok(Number(r.headers.get('retry-after')) > 3000);
    // refused metadata spends nothing: it is checked first
    assert.equal((await registerClient(gw.url, { redirect_uris: ['http://x.example/'] })).status, 400);
  });
});

describe('the authorization server turned off', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], policy: { oauthServer: { enabled: false } } });
  });
  after(async () => gw?.close());

  it('serves no metadata or endpoints, and /mcp challenges with the realm alone', async () => {
    assert.equal((await fetch(`${gw.url}/.well-known/oauth-authorization-server`)).status, 404);
    assert.equal((await fetch(`${gw.url}/.well-known/oauth-protected-resource/mcp`)).status, 404);
    assert.equal((await postForm(gw.url, '/token', { grant_type: 'authorization_code' })).status, 404);
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="workbench"');
    assert.equal(await mcpWith(gw.url, gw.apiKey), 200);
  });
});
