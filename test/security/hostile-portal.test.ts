/**
 * @module test/security/hostile-portal.test
 * A hostile plugin puts markup in every text the portal shows a user: display name, description,
 * API-key field labels, descriptions, enum values, connect instructions, tool descriptions, and the
 * error message its handler throws (shown on the activity page). Every page must escape it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { browser, csrfOf, type Browser } from '../helpers/portal.js';
import { startSecurityGateway, type SecurityGateway } from '../helpers/security-gateway.js';

/** Live markup a browser would execute; escaped text (&lt;script&gt;) does not match. */
const LIVE = /<script>alert|<img src=x onerror|<svg onload|<iframe src=javascript|<b onmouseover/i;

describe('a hostile plugin injecting markup into the portal', () => {
  let gw: SecurityGateway;
  let apiKey: string;
  let b: Browser;

  before(async () => {
    gw = await startSecurityGateway();
    apiKey = (await gw.createUser('portal@example.com')).apiKey;
    b = browser(gw.gateway.app);
    const page = await b.get('/login');
    const res = await b.post('/login', { _csrf: csrfOf(page.body), apiKey, next: '/integrations' });
    assert.equal(res.status, 303, `sign-in: ${res.status} ${res.body.slice(0, 200)}`);
  });
  after(async () => {
    await gw?.close();
  });

  it("escapes the plugin's name and description on the integrations page", async () => {
    const page = await b.get('/integrations');
    assert.equal(page.status, 200);
    assert.ok(
      page.body.includes('&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;'),
      'the hostile plugin is listed, its name shown as text',
    );
    assert.doesNotMatch(page.body, LIVE);
  });

  it('escapes field labels, descriptions, enum values and instructions on the connect form', async () => {
    const list = await b.get('/integrations');
    const start = await b.post('/integrations/hostile-portal/connect', { _csrf: csrfOf(list.body) });
    assert.ok(start.status === 303 && start.location, `connect starts: ${start.status} ${start.body.slice(0, 200)}`);
    const form = await b.get(start.location);
    assert.equal(form.status, 200, form.body.slice(0, 300));
    assert.match(
      form.body,
      /&lt;script&gt;alert\(&quot;label&quot;\)|&lt;script&gt;alert\("label"\)/,
      'the label is shown as text',
    );
    assert.doesNotMatch(form.body, LIVE);
    assert.doesNotMatch(form.body, /<\/textarea><\/p><script>/);
  });

  it("escapes a handler's error message on the activity page", async () => {
    const [item] = await gw.batch('hostile-portal', [{ tool: 'portal_throw' }], apiKey);
    assert.equal(item.code, 'GW_ERR_ENGINE_NOT_CONNECTED', 'not connected yet: the refusal is audited too');
    const connected = gw.gateway.registry.plugin('hostile-portal');
    assert.ok(connected);
    const user = await gw.gateway.users.authenticate(apiKey);
    assert.ok(user);
    await gw.gateway.connections.importConnection({
      userId: user.id,
      manifest: connected.manifest,
      values: { apiKey: 'k-123456', region: 'eu' },
    });
    const [thrown] = await gw.batch('hostile-portal', [{ tool: 'portal_throw' }], apiKey);
    assert.equal(thrown.code, 'GW_ERR_SANDBOX_HANDLER_THREW');
    const page = await b.get('/activity');
    assert.equal(page.status, 200);
    assert.ok(page.body.includes('portal_throw'), 'the failed call is listed');
    assert.ok(page.body.includes('&lt;script&gt;alert(&quot;error&quot;)'), 'with its message shown as text');
    assert.doesNotMatch(page.body, LIVE);
  });

  it('sends a restrictive Content-Security-Policy with every portal page', async () => {
    for (const url of ['/integrations', '/activity', '/keys']) {
      const page = await b.get(url);
      const csp = String(page.headers['content-security-policy'] ?? '');
      assert.match(csp, /script-src 'none'|default-src 'none'|script-src 'self'/, `${url}: ${csp}`);
    }
  });
});
