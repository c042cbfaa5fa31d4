/**
 * @module test/host/portal/not-found.test
 * Addresses the portal has no page for, over real HTTP against a real gateway: a browser gets the
 * portal's HTML "not found" page with a way home, a portal page with a trailing slash goes to its
 * canonical address, a GET on a form-post-only address leads to the page with the form (and never
 * acts), and API paths keep the gateway's JSON 404 exactly, whatever the request accepts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { signInWithKey, WebClient } from '../../helpers/web-client.js';

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('portal addresses without a page', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [] });
  });
  after(async () => {
    await gw?.close();
  });

  it('a browser gets the HTML not-found page, with the portal headers and a link home, signed in or not', async () => {
    for (const web of [new WebClient(gw.url), await signInWithKey(gw.url, gw.apiKey)]) {
      for (const path of ['/nope', '/integrations/x/y', '/connect']) {
        const res = await web.get(path, BROWSER);
        assert.equal(res.status, 404, path);
        assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path);
        assert.match(res.body, /<h1>Page not found<\/h1>/);
        assert.match(res.body, /<a href="\/">/);
        assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'none'/);
      }
    }
  });

  it('a portal page with a trailing slash redirects to its canonical address, keeping the query', async () => {
    const web = new WebClient(gw.url);
    for (const [from, to] of [
      ['/integrations/', '/integrations'],
      ['/keys/', '/keys'],
      ['/activity/?tool=x&success=failed', '/activity?tool=x&success=failed'],
      ['/login//', '/login'],
      ['/connect/abc/', '/connect/abc'],
    ] as const) {
      const res = await web.get(from);
      assert.equal(res.status, 308, from);
      assert.equal(res.location, to, from);
    }
    // never off the site
    const res = await web.get('//evil.example/', BROWSER);
    assert.equal(res.status, 404);
    assert.equal(res.location, null);
  });

  it('a GET on a form-post address leads to the page with the form and changes nothing', async () => {
    const web = await signInWithKey(gw.url, gw.apiKey);
    for (const [from, to] of [
      ['/integrations/newrelic/connect', '/integrations'],
      ['/integrations/newrelic/disconnect', '/integrations'],
      ['/keys/some-key/revoke', '/keys'],
      ['/sessions/revoke-others', '/keys'],
      ['/connect/abc/form', '/connect/abc'],
    ] as const) {
      const res = await web.get(from, BROWSER);
      assert.equal(res.status, 303, from);
      assert.equal(res.location, to, from);
    }
    const logout = await web.get('/logout', BROWSER);
    assert.equal(logout.status, 200);
    assert.match(logout.body, /<form method="post" action="\/logout">/);
    assert.equal((await web.get('/integrations')).status, 200, 'still signed in');
    const signedOut = await new WebClient(gw.url).get('/logout', BROWSER);
    assert.equal(signedOut.status, 303);
    assert.equal(signedOut.location, '/login');
  });

  it('API paths and requests that do not ask for HTML keep the JSON 404, exactly', async () => {
    const web = new WebClient(gw.url);
    for (const path of [
      '/mcp/x',
      '/mcp/',
      '/rest/a/b',
      '/healthz/',
      '/.well-known/openid-configuration',
      '/nope',
      '/logout/x',
    ])
      for (const headers of [BROWSER, {}, { accept: 'application/json' }]) {
        if (path === '/nope' || path === '/logout/x') if (headers === BROWSER) continue;
        const res = await web.get(path, headers);
        assert.equal(res.status, 404, path);
        assert.equal(
          res.body,
          JSON.stringify({ error: `No route GET ${path}`, code: 'GW_ERR_TRANSPORT_NOT_FOUND' }),
          path,
        );
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        assert.equal(res.headers.get('content-security-policy'), null, 'no portal headers');
      }
  });
});
