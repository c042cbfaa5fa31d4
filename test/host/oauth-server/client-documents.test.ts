/**
 * @module test/host/oauth-server/client-documents.test
 * Client ID metadata documents as the gateway fetches them, against real loopback servers: a
 * document is fetched under the plugins' egress address rules (a loopback address is refused unless
 * the policy allows it, before any connection is made), redirects are not followed, only a 200 JSON
 * body of at most 5 KiB that names its own URL and holds no secret is taken, and every refusal is
 * an error page at /authorize that sends nobody anywhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startLoopbackServer, type LoopbackServer } from '../../helpers/oauth-client.js';
import { authorizationParams, authorizePath, pkcePair } from '../../helpers/oauth-requests.js';
import { signInWithKey, type WebClient } from '../../helpers/web-client.js';

const ORIGIN = 'https://clients.example';
const REDIRECT = 'http://127.0.0.1:40222/cb';

function doc(path: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    client_id: `${ORIGIN}${path}`,
    client_name: 'Doc client',
    redirect_uris: [REDIRECT],
    ...extra,
  });
}

const DOCUMENTS: Record<string, { status: number; headers?: Record<string, string>; body: string }> = {
  '/good.json': { status: 200, headers: { 'content-type': 'application/json' }, body: doc('/good.json') },
  '/other-id.json': { status: 200, headers: { 'content-type': 'application/json' }, body: doc('/good.json') },
  '/big.json': {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: doc('/big.json', { padding: 'x'.repeat(6000) }),
  },
  '/missing.json': { status: 404, body: 'no' },
  '/moved.json': { status: 302, headers: { location: `${ORIGIN}/good.json` }, body: '' },
  '/page.json': { status: 200, headers: { 'content-type': 'text/html' }, body: doc('/page.json') },
  '/secret.json': {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: doc('/secret.json', { client_secret: 'shh' }),
  },
  '/confidential.json': {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: doc('/confidential.json', { token_endpoint_auth_method: 'private_key_jwt' }),
  },
  '/not-json.json': { status: 200, headers: { 'content-type': 'application/json' }, body: '{"client_id":' },
};

describe('client ID metadata documents', () => {
  let server: LoopbackServer;
  let gw: TestGateway;
  let web: WebClient;
  const pk = pkcePair();
  const open = (clientId: string, redirect = REDIRECT) =>
    web.get(authorizePath(authorizationParams(gw.url, clientId, redirect, pk.challenge)));

  before(async () => {
    server = await startLoopbackServer((p) => DOCUMENTS[p] ?? { status: 500, body: 'unexpected' });
    gw = await startGateway({ plugins: [], upstreams: { [ORIGIN]: server.origin } });
    web = await signInWithKey(gw.url, gw.apiKey);
  });
  after(async () => {
    await gw?.close();
    await server?.close();
  });

  it('a good document leads to the consent page naming its host', async () => {
    const res = await open(`${ORIGIN}/good.json`);
    assert.equal(res.status, 200);
    assert.match(res.body, /Doc client/);
    assert.match(res.body, /Its details are published by <strong>clients\.example<\/strong>/);
    // a redirect URI the document does not list is refused, document or not
    const elsewhere = await open(`${ORIGIN}/good.json`, 'http://127.0.0.1:40223/cb');
    assert.equal(elsewhere.status, 400);
    assert.equal(elsewhere.location, null);
  });

  it('refuses, with an error page and no redirect, every document that is not right', async () => {
    for (const [path, why] of [
      ['/other-id.json', /names another client_id/],
      ['/big.json', /larger than 5120 bytes/],
      ['/missing.json', /answered HTTP 404, not 200/],
      ['/moved.json', /answered HTTP 302, not 200/],
      ['/page.json', /is not served as JSON/],
      ['/secret.json', /holds a client secret/],
      ['/confidential.json', /token_endpoint_auth_method .* is not supported/],
      ['/not-json.json', /is not valid JSON/],
    ] as const) {
      const res = await open(`${ORIGIN}${path}`);
      assert.equal(res.status, 400, path);
      assert.equal(res.location, null, path);
      assert.match(res.body, why, path);
    }
    assert.equal(server.requests.filter((r) => r === '/moved.json').length, 1);
  });

  it('refuses client_id URLs the draft does not allow, without fetching them', async () => {
    const before = server.requests.length;
    for (const [clientId, why] of [
      [`${ORIGIN}/`, /must have a path/],
      [`${ORIGIN}/a/../good.json`, /may not have &quot;\.&quot; or &quot;\.\.&quot; path segments/],
      [`${ORIGIN}/a/%2e%2e/good.json`, /may not have &quot;\.&quot; or &quot;\.\.&quot; path segments/],
      [`https://user:pw@clients.example/good.json`, /user name or password/],
    ] as const) {
      const res = await open(clientId);
      assert.equal(res.status, 400, clientId);
      assert.match(res.body, why, clientId);
    }
    assert.equal(server.requests.length, before);
  });

  it('refuses a document on a loopback address unless the policy allows it, before connecting', async () => {
    const target = await startLoopbackServer(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }));
    try {
      const clientId = `https://127.0.0.1:${new URL(target.origin).port}/client.json`;
      const res = await open(clientId);
      assert.equal(res.status, 400);
      assert.match(res.body, /its address is not allowed/);
      assert.equal(target.connections, 0, 'no connection was made');

      // allowed by the policy (http.allowPrivateCidrs), the fetch is made: the plain-HTTP server
      // cannot answer TLS, so the document cannot be read, but the address was let through
      const open2 = await startGateway({ plugins: [], policy: { http: { allowPrivateCidrs: ['127.0.0.1/32'] } } });
      try {
        const web2 = await signInWithKey(open2.url, open2.apiKey);
        const res2 = await web2.get(authorizePath(authorizationParams(open2.url, clientId, REDIRECT, pk.challenge)));
        assert.equal(res2.status, 400);
        assert.match(res2.body, /could not be reached/);
        assert.ok(target.connections > 0, 'the policy let the connection through');
      } finally {
        await open2.close();
      }
    } finally {
      await target.close();
    }
  });

  it('can be turned off by the policy', async () => {
    const off = await startGateway({
      plugins: [],
      upstreams: { [ORIGIN]: server.origin },
      policy: { oauthServer: { clientIdMetadataDocuments: false } },
    });
    try {
      const meta = (await (await fetch(`${off.url}/.well-known/oauth-authorization-server`)).json()) as Record<
        string,
        unknown
      >;
      assert.equal(meta['client_id_metadata_document_supported'], false);
      const web2 = await signInWithKey(off.url, off.apiKey);
      const res = await web2.get(
        authorizePath(authorizationParams(off.url, `${ORIGIN}/good.json`, REDIRECT, pk.challenge)),
      );
      assert.equal(res.status, 400);
      assert.match(res.body, /does not accept client ID metadata documents/);
    } finally {
      await off.close();
    }
  });
});
