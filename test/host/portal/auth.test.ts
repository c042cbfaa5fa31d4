/**
 * @module test/host/portal/auth.test
 * Portal sign-in and sessions: security headers, redirects to /login, API-key sign-in with CSRF,
 * cookie attributes (http and https), revocation on sign-out, one-time login links, open-redirect
 * refusal and escaping.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manifestSchema } from '../../../contracts/manifest.js';
import { createLoginLink } from '../../../host/portal/login-links.js';
import { browser, csrfOf, signIn, startHarness, type Harness } from '../../helpers/portal.js';

describe('portal sign-in', () => {
  let h: Harness;
  before(async () => {
    const evil = manifestSchema.parse({
      name: 'evil',
      version: '1.0.0',
      displayName: 'Evil <script>alert(1)</script>',
      description: 'desc "quoted" <img src=x onerror=alert(1)>',
      auth: { type: 'none' },
      tools: [{ name: 'evil_x', description: 'x', inputSchema: { type: 'object' } }],
    });
    h = await startHarness({ extraManifests: [evil] });
  });
  after(async () => h.close());

  it('sends the security headers on every page, and no HSTS over http', async () => {
    const res = await browser(h.app).get('/login');
    assert.equal(res.status, 200);
    const csp = String(res.headers['content-security-policy']);
    for (const part of ["default-src 'self'", "frame-ancestors 'none'", "script-src 'none'", "form-action 'self'"])
      assert.ok(csp.includes(part), csp);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['referrer-policy'], 'same-origin');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['strict-transport-security'], undefined);
    assert.match(res.body, /<html lang="en">/);
    assert.match(res.body, /<main id="main"/);
    assert.match(res.body, /<label for="apiKey">/);
    const redirect = await browser(h.app).get('/integrations');
    assert.equal(redirect.headers['x-frame-options'], 'DENY', 'redirects carry the headers too');
  });

  it('redirects signed-out visitors to /login with the page to come back to', async () => {
    const res = await browser(h.app).get('/activity?tool=x');
    assert.equal(res.status, 303);
    assert.equal(res.location, `/login?next=${encodeURIComponent('/activity?tool=x')}`);
  });

  it('signs in with an API key: httpOnly SameSite=Lax cookie, then the session works', async () => {
    const b = browser(h.app);
    const page = await b.get('/login?next=/keys');
    const res = await b.post('/login', { _csrf: csrfOf(page.body), apiKey: h.apiKey, next: '/keys' });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/keys');
    const sessionCookies = [res.headers['set-cookie']].flat().filter((c) => String(c).startsWith('wb_session='));
    assert.equal(sessionCookies.length, 1, 'the session cookie is set once');
    const cookie = sessionCookies[0];
    assert.ok(cookie);
    assert.match(String(cookie), /HttpOnly/);
    assert.match(String(cookie), /SameSite=Lax/);
    assert.doesNotMatch(String(cookie), /Secure/);
    const keys = await b.get('/keys');
    assert.equal(keys.status, 200);
    assert.match(keys.body, /Signed in as ada@example\.com/);
  });

  it('refuses a wrong key, a missing CSRF token and a foreign Origin', async () => {
    const b = browser(h.app);
    const page = await b.get('/login');
    const csrf = csrfOf(page.body);
    const wrong = await b.post('/login', { _csrf: csrf, apiKey: 'wb_not-a-real-key' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body, /not valid: it is unknown or was revoked/);
    assert.match(wrong.body, /aria-invalid="true"/);
    const again = await b.get('/login');
    assert.equal((await b.post('/login', { apiKey: h.apiKey })).status, 403);
    assert.equal(
      (await b.post('/login', { _csrf: csrfOf(again.body), apiKey: h.apiKey }, { origin: 'https://evil.example' }))
        .status,
      403,
    );
    assert.equal(
      (await browser(h.app).post('/login', { _csrf: csrfOf(again.body), apiKey: h.apiKey })).status,
      403,
      'token without its cookie',
    );
  });

  it('never redirects to another origin after sign-in', async () => {
    for (const next of ['//evil.example/x', 'https://evil.example', '/\\evil.example']) {
      const b = browser(h.app);
      const page = await b.get(`/login?next=${encodeURIComponent(next)}`);
      const res = await b.post('/login', { _csrf: csrfOf(page.body), apiKey: h.apiKey, next });
      assert.equal(res.location, '/integrations', next);
    }
  });

  it('a next path is sent back percent-encoded and with dot segments resolved, never as a network path', async () => {
    for (const [next, location] of [
      ['/。', '/%E3%80%82'],
      ['/.//evil.example', '/integrations'],
      ['/a/../keys', '/keys'],
    ] as const) {
      const b = browser(h.app);
      const page = await b.get(`/login?next=${encodeURIComponent(next)}`);
      const res = await b.post('/login', { _csrf: csrfOf(page.body), apiKey: h.apiKey, next });
      assert.equal(res.status, 303, next);
      assert.equal(res.location, location, next);
      // signed in already: the login page sends the visitor on the same way
      const again = await b.get(`/login?next=${encodeURIComponent(next)}`);
      assert.equal(again.status, 303, next);
      assert.equal(again.location, location, next);
    }
  });

  it('revokes the session on sign-out: the old cookie no longer works', async () => {
    const b = await signIn(h);
    const page = await b.get('/integrations');
    const stolen = b.cookies.get('wb_session');
    assert.equal((await b.post('/logout', { _csrf: csrfOf(page.body) })).status, 303);
    const replay = await browser(h.app).get('/integrations', { cookie: `wb_session=${stolen}` });
    assert.equal(replay.status, 303);
    assert.match(replay.location ?? '', /^\/login/);
    const row = await h.t.db.get<{ revoked_at: number | null }>(
      'SELECT revoked_at FROM portal_sessions WHERE revoked_at IS NOT NULL',
    );
    assert.ok(row);
  });

  it('a request carrying the session cookie twice is signed out (a planted cookie cannot choose the session)', async () => {
    const victim = await signIn(h);
    const attacker = await signIn(h);
    const mine = victim.cookies.get('wb_session');
    const planted = attacker.cookies.get('wb_session');
    assert.ok(mine && planted && mine !== planted);
    // a cookie planted with a more specific Path is sent first; either order is refused
    for (const cookie of [`wb_session=${planted}; wb_session=${mine}`, `wb_session=${mine}; wb_session=${planted}`]) {
      const page = await browser(h.app).get('/integrations', { cookie });
      assert.equal(page.status, 303, cookie);
      assert.match(page.location ?? '', /^\/login/);
    }
    assert.equal(
      (await browser(h.app).get('/integrations', { cookie: `wb_session=${mine}` })).status,
      200,
      'one cookie still works',
    );
    // the sign-in page says why, since signing in again cannot help while the other copy stays
    const why = await browser(h.app).get('/login', { cookie: `wb_session=${planted}; wb_session=${mine}` });
    assert.equal(why.status, 200);
    assert.match(
      why.body,
      /more than one Workbench sign-in cookie.*Clear this site&#39;s cookies|more than one Workbench sign-in cookie.*Clear this site's cookies/s,
    );
    assert.doesNotMatch((await browser(h.app).get('/login')).body, /more than one Workbench sign-in cookie/);
    // the pre-login CSRF cookie likewise: a second one makes the sign-in form fail its check
    const b = browser(h.app);
    const form = await b.get('/login');
    const token = b.cookies.get('wb_prelogin');
    assert.ok(token);
    const twice = await b.post(
      '/login',
      { _csrf: csrfOf(form.body), apiKey: h.apiKey },
      { cookie: `wb_prelogin=${token}; wb_prelogin=${token}` },
    );
    assert.equal(twice.status, 403);
  });

  it('signs out every other session on request', async () => {
    const a = await signIn(h);
    const b = await signIn(h);
    const keysPage = await a.get('/keys');
    assert.equal((await a.post('/sessions/revoke-others', { _csrf: csrfOf(keysPage.body) })).status, 303);
    assert.equal((await a.get('/keys')).status, 200);
    assert.equal((await b.get('/keys')).status, 303);
  });

  it('uses a one-time login link once: the GET only asks, the POST signs in', async () => {
    const link = await createLoginLink(h.t.db, h.t.user.id, h.publicUrl);
    assert.ok(link.startsWith(`${h.publicUrl}/login/link/`));
    const path = new URL(link).pathname;
    const b = browser(h.app);
    const first = await b.get(path);
    const second = await b.get(path);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200, 'looking at the link does not use it');
    assert.match(second.body, /Sign in as ada@example\.com/);
    const res = await b.post(path, { _csrf: csrfOf(second.body) });
    assert.equal(res.status, 303);
    assert.equal((await b.get('/integrations')).status, 200);
    const c = browser(h.app);
    assert.equal((await c.get(path)).status, 410);
    assert.equal((await c.post(path, { _csrf: csrfOf((await c.get('/login')).body) })).status, 410);
  });

  it('refuses an expired login link', async () => {
    const link = await createLoginLink(h.t.db, h.t.user.id, h.publicUrl, -1);
    assert.equal((await browser(h.app).get(new URL(link).pathname)).status, 410);
  });

  it('escapes everything it renders', async () => {
    const b = await signIn(h);
    const page = await b.get('/integrations');
    assert.ok(!page.body.includes('<script>alert(1)'));
    assert.ok(page.body.includes('Evil &lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(page.body.includes('&lt;img src=x onerror=alert(1)&gt;'));
  });
});

describe('portal behind https', () => {
  it('sets HSTS, a Secure __Host- cookie', async () => {
    const h = await startHarness({ publicUrl: 'https://wb.example.com' });
    try {
      const b = browser(h.app);
      const page = await b.get('/login');
      assert.match(String(page.headers['strict-transport-security']), /max-age=31536000/);
      const res = await b.post(
        '/login',
        { _csrf: csrfOf(page.body), apiKey: h.apiKey },
        { origin: 'https://wb.example.com' },
      );
      const cookie = [res.headers['set-cookie']]
        .flat()
        .map(String)
        .find((c) => c.startsWith('__Host-wb_session='));
      assert.ok(cookie);
      assert.match(cookie, /; Secure/);
      assert.match(cookie, /Path=\//);
    } finally {
      await h.close();
    }
  });
});
