/**
 * @module test/host/portal/sign-in-methods.test
 * The sign-in methods the policy turns on or off, and the connect link as a person meets it
 * without single sign-on: the sign-in page of a connect link names the integration and the masked
 * account it is for, and signing in returns to the link; a link of another account says whose it
 * is and who is signed in, and signing out from there comes back to it. API-key sign-in and
 * one-time links each turned off: the page does not offer them and their routes refuse with
 * GW_ERR_PORTAL_SIGN_IN_DISABLED (and `workbench login-link` makes none). Sessions record the method.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLoginLink } from '../../../host/portal/login-links.js';
import { runCli } from '../../helpers/cli.js';
import { browser, csrfOf, otherUser, signIn, startHarness, type Harness } from '../../helpers/portal.js';

describe('sign-in methods and the connect link without single sign-on', () => {
  let h: Harness;
  let keyOff: Harness;
  let linksOff: Harness;
  before(async () => {
    h = await startHarness();
    keyOff = await startHarness({ signIn: { apiKey: false, loginLinks: true } });
    linksOff = await startHarness({ signIn: { apiKey: true, loginLinks: false } });
  });
  after(async () => {
    await h?.close();
    await keyOff?.close();
    await linksOff?.close();
  });

  const methodOf = async (x: Harness): Promise<string | null | undefined> =>
    (
      await x.t.db.get<{ sign_in_method: string | null }>(
        'SELECT sign_in_method FROM portal_sessions ORDER BY created_at DESC LIMIT 1',
      )
    )?.sign_in_method;

  it("a connect link's sign-in page says what is connected for whom (masked), and signing in returns to the link", async () => {
    const p = await h.connections.pending.create(h.t.user.id, 'keyed', 'apikey');
    const b = browser(h.app);
    const opened = await b.get(`/connect/${p.id}`);
    assert.equal(opened.location, `/login?next=${encodeURIComponent(`/connect/${p.id}`)}`);
    const page = await b.get(opened.location ?? '');
    assert.equal(page.status, 200);
    assert.match(page.body, /<h1>Sign in to connect Keyed Service<\/h1>/);
    assert.match(page.body, /connect <strong>Keyed Service<\/strong> for <strong>a\*\*\*@example\.com<\/strong>/);
    assert.ok(!page.body.includes('ada@example.com'), 'the address is masked');
    assert.ok(!page.body.includes('/login/sso'), 'no single sign-on configured here');
    const res = await b.post('/login', { _csrf: csrfOf(page.body), apiKey: h.apiKey, next: `/connect/${p.id}` });
    assert.equal(res.location, `/connect/${p.id}`);
    assert.equal(await methodOf(h), 'api-key');
    // a link no longer open says nothing about itself
    await h.connections.pending.settle(p.id, 'expired', null);
    assert.doesNotMatch((await browser(h.app).get(`/login?next=/connect/${p.id}`)).body, /Sign in to connect/);
  });

  it('a link of another account says whose it is and who is signed in, and signing out comes back to it', async () => {
    const p = await h.connections.pending.create(h.t.user.id, 'keyed', 'apikey');
    const eve = await otherUser(h, 'eve-journey@example.com');
    const page = await eve.browser.get(`/connect/${p.id}`);
    assert.equal(page.status, 403);
    assert.match(page.body, /created for a different Workbench account/);
    assert.match(
      page.body,
      /for <strong>a\*\*\*@example\.com<\/strong>, and you are signed in as <strong>eve-journey@example\.com/,
    );
    assert.ok(!page.body.includes('ada@example.com'));
    const out = await eve.browser.post('/logout', { _csrf: csrfOf(page.body), next: `/connect/${p.id}` });
    assert.equal(out.location, `/login?next=${encodeURIComponent(`/connect/${p.id}`)}`);
    assert.equal((await eve.browser.get('/integrations')).location, '/login?next=%2Fintegrations', 'signed out');
    assert.equal((await h.connections.pending.get(p.id))?.status, 'pending', 'the link is untouched');
    // where sign-out goes is a path of this site only
    const again = await signIn(h, (await h.t.users.createApiKey(eve.user.id)).key);
    const csrf = csrfOf((await again.get('/logout')).body);
    assert.equal((await again.post('/logout', { _csrf: csrf, next: '//evil.example/x' })).location, '/login');
  });

  it('API-key sign-in turned off: not offered, refused with its code; a sign-in link still signs in', async () => {
    const b = browser(keyOff.app);
    const page = await b.get('/login');
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.body, /Your Workbench API key/);
    assert.match(page.body, /one-time sign-in link/);
    const refused = await b.post('/login', { _csrf: 'x', apiKey: keyOff.apiKey });
    assert.equal(refused.status, 403);
    assert.match(refused.body, /Signing in with an API key is turned off[\s\S]*GW_ERR_PORTAL_SIGN_IN_DISABLED/);
    assert.equal(b.cookies.size, 0, 'no session');
    const token = (await createLoginLink(keyOff.t.db, keyOff.t.user.id, keyOff.publicUrl)).split('/').pop() ?? '';
    const confirm = await b.get(`/login/link/${token}`);
    const done = await b.post(`/login/link/${token}`, { _csrf: csrfOf(confirm.body) });
    assert.equal(done.location, '/integrations');
    assert.equal(await methodOf(keyOff), 'login-link');
  });

  it('sign-in links turned off: not mentioned, refused with their code; `workbench login-link` makes none', async () => {
    const b = browser(linksOff.app);
    const page = await b.get('/login');
    assert.match(page.body, /Your Workbench API key/);
    assert.doesNotMatch(page.body, /sign-in link/);
    const token = (await createLoginLink(linksOff.t.db, linksOff.t.user.id, linksOff.publicUrl)).split('/').pop() ?? '';
    for (const res of [await b.get(`/login/link/${token}`), await b.post(`/login/link/${token}`, { _csrf: 'x' })]) {
      assert.equal(res.status, 403);
      assert.match(res.body, /one-time links is turned off[\s\S]*GW_ERR_PORTAL_SIGN_IN_DISABLED/);
    }

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-links-off-'));
    try {
      const policy = path.join(dir, 'policy.json');
      fs.writeFileSync(policy, JSON.stringify({ signIn: { loginLinks: false } }));
      const env = { WORKBENCH_DATA_DIR: dir };
      assert.equal(runCli(env, 'users', 'create', '--email', 'ops@example.com').code, 0);
      const off = runCli({ ...env, WORKBENCH_POLICY: policy }, 'login-link', '--email', 'ops@example.com');
      assert.equal(off.code, 2, off.stderr);
      assert.match(off.stderr, /turned off by the policy \(signIn\.loginLinks/);
      assert.equal(off.stdout, '');
      const on = runCli(env, 'login-link', '--email', 'ops@example.com');
      assert.equal(on.code, 0, on.stderr);
      assert.match(on.stdout, /\/login\/link\/[A-Za-z0-9_-]{40,}/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
