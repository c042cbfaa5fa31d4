/**
 * @module test/host/oauth-server/sdk-flow.test
 * The gateway as the OAuth authorization server of its /mcp, driven by the MCP TypeScript SDK's own
 * client OAuth flow over real HTTP: the 401 challenge leads to the protected resource metadata and
 * the authorization server metadata; the client registers (Dynamic Client Registration, or a client
 * ID metadata document served by a loopback server the policy maps an https origin to); a person
 * signed in to the portal answers the consent page; the client exchanges the code and lists and
 * runs tools. Then refresh rotation, reuse of a spent refresh token revoking the chain, an expired
 * access token refreshed by the SDK by itself, revocation from the keys page, revocation of the API
 * key the consent was given with, and API keys working unchanged on /mcp and /rest.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { callJson } from '../../helpers/mcp-call.js';
import {
  answerConsent,
  connectWithProvider,
  MemoryOAuthProvider,
  oauthTransport,
  startLoopbackServer,
  type LoopbackServer,
} from '../../helpers/oauth-client.js';
import { csrfOf, signInWithKey, type WebClient } from '../../helpers/web-client.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const REDIRECT = 'http://127.0.0.1:48123/callback';
/** the client ID metadata document's URL: an https origin the policy maps to a loopback server */
const CIMD_ORIGIN = 'https://mcp-host.example';
const CIMD_URL = `${CIMD_ORIGIN}/oauth/client.json`;

/** Runs the SDK's flow to its end: 401 → discovery → registration → consent → code → tokens. */
async function authorize(gw: TestGateway, web: WebClient, provider: MemoryOAuthProvider): Promise<string> {
  const first = new Client({ name: 'oauth-test', version: '0.0.0' });
  const transport = oauthTransport(gw.url, provider);
  await assert.rejects(first.connect(transport), UnauthorizedError);
  const { location, page } = await answerConsent(web, provider.lastAuthorizationUrl);
  assert.equal(`${location.origin}${location.pathname}`, provider.redirectUrl);
  assert.equal(location.searchParams.get('state'), provider.lastState);
  assert.equal(location.searchParams.get('iss'), gw.url);
  const code = location.searchParams.get('code');
  assert.ok(code);
  await transport.finishAuth(code);
  return page;
}

async function mcpStatus(gw: TestGateway, token: string): Promise<Response> {
  return fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

async function tokenRequest(gw: TestGateway, form: Record<string, string>): Promise<{ status: number; json: any }> {
  const res = await fetch(`${gw.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, json: await res.json() };
}

describe('the MCP SDK client authorizes with the gateway by OAuth', () => {
  let gw: TestGateway;
  let web: WebClient;
  let cimd: LoopbackServer;
  let cimdDocument: Record<string, unknown>;

  before(async () => {
    cimdDocument = {
      client_id: CIMD_URL,
      client_name: 'Metadata Document Host',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    cimd = await startLoopbackServer((p) =>
      p === '/oauth/client.json'
        ? {
            status: 200,
            headers: { 'content-type': 'application/json', 'cache-control': 'max-age=600' },
            body: JSON.stringify(cimdDocument),
          }
        : { status: 404, body: '' },
    );
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES], upstreams: { [CIMD_ORIGIN]: cimd.origin } });
    web = await signInWithKey(gw.url, gw.apiKey);
  });
  after(async () => {
    await gw?.close();
    await cimd?.close();
  });

  it('publishes the protected resource and authorization server metadata, and /mcp challenges with it', async () => {
    for (const p of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const prm = (await (await fetch(gw.url + p)).json()) as Record<string, unknown>;
      assert.deepEqual(prm['resource'], `${gw.url}/mcp`, p);
      assert.deepEqual(prm['authorization_servers'], [gw.url], p);
    }
    const res = await fetch(`${gw.url}/.well-known/oauth-authorization-server`);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const as = (await res.json()) as Record<string, unknown>;
    assert.equal(as['issuer'], gw.url);
    assert.deepEqual(as['code_challenge_methods_supported'], ['S256']);
    assert.equal(as['client_id_metadata_document_supported'], true);
    for (const k of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'])
      assert.match(String(as[k]), new RegExp(`^${gw.url}/`), k);

    const denied = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    assert.equal(denied.status, 401);
    const challenge = denied.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer realm="workbench"/);
    assert.ok(challenge.includes(`resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp"`), challenge);
    assert.ok(!challenge.includes('invalid_token'), 'no token was presented');
    const forged = await mcpStatus(gw, 'wbat_not-a-token');
    assert.equal(forged.status, 401);
    assert.match(forged.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  it('Dynamic Client Registration → consent → token → tools/list and execute_tools', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT);
    const page = await authorize(gw, web, provider);
    assert.match(String(provider.client?.client_id), /^wbc_/);
    // the consent page named the app, its client_id, the exact redirect URI and what it gets
    assert.ok(page.includes('Test MCP host') && page.includes(String(provider.client?.client_id)));
    assert.ok(page.includes(`<code id="consent-redirect">${REDIRECT}</code>`));
    assert.match(page, /every tool you can use/);
    assert.match(String(provider.saved?.access_token), /^wbat_/);
    assert.match(String(provider.saved?.refresh_token), /^wbrt_/);

    const client = await connectWithProvider(gw.url, provider);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'execute_tools'));
    const run = await callJson(client, 'execute_tools', {
      executions: [{ tool: 'echo_args', args: { text: 'hello over oauth', times: 2 } }],
    });
    assert.equal(run.isError, false, JSON.stringify(run.json));
    assert.match(JSON.stringify(run.json), /hello over oauth/);
    await client.close();
  });

  it('a client ID metadata document (served on loopback through the policy’s upstreams) → consent → tools', async () => {
    const before = cimd.requests.length;
    const provider = new MemoryOAuthProvider(REDIRECT, { client_name: 'ignored: the document names it' }, CIMD_URL);
    const page = await authorize(gw, web, provider);
    assert.equal(provider.client?.client_id, CIMD_URL, 'no registration: the URL is the client_id');
    assert.ok(page.includes('Metadata Document Host') && page.includes('mcp-host.example'));
    assert.equal(cimd.requests.length, before + 1, 'the document was fetched once');
    const client = await connectWithProvider(gw.url, provider);
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
    // a second authorization within the document's max-age reads the cached document
    const again = new MemoryOAuthProvider(REDIRECT, {}, CIMD_URL);
    await authorize(gw, web, again);
    assert.equal(cimd.requests.length, before + 1);
  });

  it('each refresh rotates the refresh token; presenting a spent one revokes the whole chain', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT);
    await authorize(gw, web, provider);
    const first = provider.saved;
    assert.ok(first?.refresh_token);
    assert.equal(await auth(provider, { serverUrl: `${gw.url}/mcp` }), 'AUTHORIZED', 'refreshed');
    const second = provider.saved;
    assert.ok(second?.refresh_token && second.refresh_token !== first.refresh_token, 'a new refresh token');
    assert.notEqual(second.access_token, first.access_token);
    assert.equal((await mcpStatus(gw, second.access_token)).status, 200);

    const clientId = String(provider.client?.client_id);
    const reuse = await tokenRequest(gw, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: clientId,
    });
    assert.equal(reuse.status, 400);
    assert.equal(reuse.json.error, 'invalid_grant');
    assert.equal(reuse.json.code, 'GW_ERR_OAUTH_REFUSED');
    // the chain is revoked: the newest refresh token and the newest access token with it
    const next = await tokenRequest(gw, {
      grant_type: 'refresh_token',
      refresh_token: second.refresh_token,
      client_id: clientId,
    });
    assert.equal(next.json.error, 'invalid_grant');
    assert.equal((await mcpStatus(gw, second.access_token)).status, 401);
  });

  it('an expired access token is refused, and the SDK refreshes by itself and goes on', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT);
    await authorize(gw, web, provider);
    const client = await connectWithProvider(gw.url, provider);
    const before = provider.saved?.access_token ?? '';
    await gw.db.run("UPDATE oauth_tokens SET expires_at = ? WHERE kind = 'access'", [Date.now() - 1000]);
    assert.equal((await mcpStatus(gw, before)).status, 401);
    assert.ok((await client.listTools()).tools.length > 0);
    assert.notEqual(provider.saved?.access_token, before, 'a new access token');
    await client.close();
  });

  it('the keys page lists the app; revoking it there refuses its next request and its refresh', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT, { client_name: 'Revocable host' });
    await authorize(gw, web, provider);
    const token = provider.saved?.access_token ?? '';
    assert.equal((await mcpStatus(gw, token)).status, 200);
    const keys = await web.get('/keys');
    assert.match(keys.body, /Apps with access \(OAuth\)/);
    const row = new RegExp(`<strong>Revocable host</strong>[\\s\\S]*?action="/keys/apps/([^/]+)/revoke"`).exec(
      keys.body,
    );
    assert.ok(row?.[1], 'the app is listed with a revoke button');
    const revoked = await web.post(`/keys/apps/${row[1]}/revoke`, { _csrf: csrfOf(keys.body) });
    assert.equal(revoked.status, 303);
    assert.match((await web.get('/keys')).body, /The access of Revocable host was revoked/);
    assert.equal((await mcpStatus(gw, token)).status, 401);
    const refresh = await tokenRequest(gw, {
      grant_type: 'refresh_token',
      refresh_token: String(provider.saved?.refresh_token),
      client_id: String(provider.client?.client_id),
    });
    assert.equal(refresh.json.error, 'invalid_grant');
  });

  it('revoking the API key the consenting session signed in with ends the grant', async () => {
    const { user, apiKey } = await gw.createUser('cascade@example.com');
    const session = await signInWithKey(gw.url, apiKey);
    const provider = new MemoryOAuthProvider(REDIRECT);
    await authorize(gw, session, provider);
    const token = provider.saved?.access_token ?? '';
    assert.equal((await mcpStatus(gw, token)).status, 200);
    const [key] = await gw.gateway.users.listApiKeys(user.id);
    assert.ok(key && (await gw.gateway.users.revokeApiKey(user.id, key.id)));
    assert.equal((await mcpStatus(gw, token)).status, 401);
  });

  it('API keys work unchanged on /mcp and /rest; an access token is refused on /rest (its audience is /mcp)', async () => {
    assert.equal((await mcpStatus(gw, gw.apiKey)).status, 200);
    const item = await gw.execute('echo_args', { text: 'key' });
    assert.ok(item.result, JSON.stringify(item));
    const provider = new MemoryOAuthProvider(REDIRECT);
    await authorize(gw, web, provider);
    const r = await gw.rest('fixture-echo', { tool: 'echo_args', args: { text: 'x' } }, provider.saved?.access_token);
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'GW_ERR_TRANSPORT_UNAUTHORIZED');
  });

  it('stores codes and tokens only as their SHA-256 hashes', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT);
    await authorize(gw, web, provider);
    const access = String(provider.saved?.access_token);
    const refresh = String(provider.saved?.refresh_token);
    const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
    assert.ok(
      await gw.db.get("SELECT 1 AS x FROM oauth_tokens WHERE token_hash = ? AND kind = 'access'", [sha(access)]),
    );
    assert.ok(
      await gw.db.get("SELECT 1 AS x FROM oauth_tokens WHERE token_hash = ? AND kind = 'refresh'", [sha(refresh)]),
    );
    const dump = JSON.stringify(
      await Promise.all(
        ['oauth_codes', 'oauth_tokens', 'oauth_grants', 'oauth_clients'].map((t) => gw.db.all(`SELECT * FROM ${t}`)),
      ),
    );
    for (const secret of [access, refresh]) assert.ok(!dump.includes(secret.slice(5)), 'no token in the database');
  });
});
