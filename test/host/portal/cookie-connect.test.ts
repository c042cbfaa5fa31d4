/**
 * @module test/host/portal/cookie-connect.test
 * The cookie connect pages over the seam the browser built-in fills (CookieSignInBrowser). Here
 * the "live browser" signs in to a loopback provider through its real form over HTTP, and answers
 * the cookies it set as a browser context reports them (host-only cookies of the mapped target,
 * 127.0.0.1); the pages open the link once, send the person to the live view, refuse a capture
 * that is not signed in (the link stays open), and store a signed-in one as the declared host's
 * cookies, settling the link connected. A live browser that fails settles the link failed; one
 * that answers a live view off the portal's origin is not followed. Without a live browser the
 * page says what is missing (test/plugins/httpbin-cookie.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manifestSchema, type PluginManifest } from '../../../contracts/manifest.js';
import type { StoredCookie } from '../../../host/bridge/index.js';
import type { CookieSignInBrowser } from '../../../host/portal/portal.js';
import { startCookieProvider, type CookieProvider } from '../../helpers/cookie-provider.js';
import { csrfOf, otherUser, signIn, startHarness, type Harness } from '../../helpers/portal.js';

/** A stand-in for the browser built-in: its sessions are signed in over HTTP when `signedIn` says so. */
class LoopbackBrowser implements CookieSignInBrowser {
  opened: Array<{ userId: string; linkId: string; integration: string; url: string }> = [];
  closed: string[] = [];
  signedIn = false;
  liveViewPath = '/live/view-1';
  failOpen: string | undefined;
  constructor(private readonly provider: CookieProvider) {}
  async openSignIn(input: { userId: string; linkId: string; integration: string; url: string }) {
    if (this.failOpen) throw new Error(this.failOpen);
    this.opened.push(input);
    return { liveViewPath: this.liveViewPath };
  }
  async readCookies(): Promise<StoredCookie[]> {
    // a context holds cookies of other sites too: the capture keeps only the declared ones
    const elsewhere: StoredCookie = {
      name: 'ad',
      value: 'ad-tracker-value',
      domain: '.ads.example',
      path: '/',
      expires: -1,
      httpOnly: false,
      secure: false,
      sameSite: 'None',
    };
    return this.signedIn ? [...(await this.provider.signIn()), elsewhere] : [elsewhere];
  }
  async closeSignIn(input: { linkId: string }) {
    this.closed.push(input.linkId);
  }
}

describe('portal: connecting a cookie integration through a live browser', () => {
  let h: Harness;
  let provider: CookieProvider;
  let live: LoopbackBrowser;
  let m: PluginManifest;

  before(async () => {
    provider = await startCookieProvider();
    live = new LoopbackBrowser(provider);
    m = manifestSchema.parse({
      name: 'cookied',
      version: '1.0.0',
      displayName: 'Cookied',
      description: 'A cookie connection under test.',
      auth: {
        type: 'cookie',
        loginUrl: 'https://app.cookied.test/login',
        domains: ['cookied.test'],
        signedInCheck: { cookies: ['session'] },
        instructions: 'Sign in with your work account.',
      },
      egress: ['app.cookied.test'],
      tools: [{ name: 'cookied_get', description: 'Gets.', inputSchema: { type: 'object' } }],
    });
    h = await startHarness({
      extraManifests: [m],
      upstreams: { 'https://app.cookied.test': provider.origin },
      cookieBrowser: live,
    });
  });
  after(async () => {
    await h?.close();
    await provider?.close();
  });

  it('sign in → live view → "I\'m signed in" too early (stays open) → signed in: connected with the declared host\'s cookies', async () => {
    const b = await signIn(h);
    const p = await h.connections.pending.create(h.t.user.id, 'cookied', 'cookie');
    const first = await b.get(`/connect/${p.id}`);
    assert.equal(first.status, 200);
    assert.match(first.body, /Sign-in page: <code>https:\/\/app\.cookied\.test\/login<\/code>/);
    assert.match(first.body, /Sign in with your work account\./);
    assert.match(first.body, new RegExp(`<form method="post" action="/connect/${p.id}/sign-in">`));

    const open = await b.post(`/connect/${p.id}/sign-in`, { _csrf: csrfOf(first.body) });
    assert.equal(open.status, 303);
    assert.equal(open.location, '/live/view-1');
    assert.deepEqual(live.opened, [
      { userId: h.t.user.id, linkId: p.id, integration: 'cookied', url: `${provider.origin}/login` },
    ]);
    assert.equal((await h.connections.pending.get(p.id))?.status, 'opened', 'the link is used');

    const back = await b.get(`/connect/${p.id}`);
    assert.equal(back.status, 200);
    assert.match(back.body, new RegExp(`action="/connect/${p.id}/capture"`));
    const early = await b.post(`/connect/${p.id}/capture`, { _csrf: csrfOf(back.body) });
    assert.equal(early.status, 400);
    assert.match(
      early.body,
      /no unexpired cookie of cookied\.test was captured: sign in at https:\/\/app\.cookied\.test\/login first/,
    );
    assert.equal((await h.connections.pending.get(p.id))?.status, 'opened', 'still open for another try');
    assert.equal((await h.connections.lookup(h.t.user.id, m)).connected, false);

    live.signedIn = true;
    const done = await b.post(`/connect/${p.id}/capture`, { _csrf: csrfOf(back.body) });
    assert.equal(done.status, 303);
    assert.equal(done.location, `/connect/${p.id}`);
    assert.equal((await h.connections.pending.get(p.id))?.status, 'connected');
    assert.deepEqual(live.closed, [p.id]);
    const result = await b.get(`/connect/${p.id}`);
    assert.match(result.body, /Cookied<\/strong>: is connected/);
    const credential = await h.connections.credential(h.t.user.id, m);
    assert.deepEqual(
      credential?.cookies?.map((c) => `${c.name}@${c.domain}`),
      ['session@app.cookied.test'],
      "the target's cookie is the declared host's; the other site's is left out",
    );
    assert.ok(provider.sessions.has(credential?.cookies?.[0]?.value ?? ''), 'the session the provider issued');
  });

  it("the integrations page's Connect makes a cookie link and leads to its sign-in page", async () => {
    const b = await signIn(h);
    const page = await b.get('/integrations');
    assert.match(page.body, /<td>Sign-in session<\/td>/);
    const made = await b.post('/integrations/cookied/connect', { _csrf: csrfOf(page.body) });
    assert.equal(made.status, 303);
    const id = /^\/connect\/([A-Za-z0-9_-]+)$/.exec(made.location ?? '')?.[1] ?? '';
    assert.equal((await h.connections.pending.get(id))?.type, 'cookie');
    assert.match((await b.get(`/connect/${id}`)).body, new RegExp(`action="/connect/${id}/sign-in"`));
  });

  it('refuses another user, and a link that is settled goes to its result page', async () => {
    const p = await h.connections.pending.create(h.t.user.id, 'cookied', 'cookie');
    const eve = await otherUser(h, 'eve-cookie@example.com');
    const page = await eve.browser.get('/integrations');
    const other = await eve.browser.post(`/connect/${p.id}/sign-in`, { _csrf: csrfOf(page.body) });
    assert.equal(other.status, 404);
    assert.equal((await h.connections.pending.get(p.id))?.status, 'pending', 'untouched');
    await h.connections.pending.settle(p.id, 'expired', null);
    const b = await signIn(h);
    const again = await b.post(`/connect/${p.id}/capture`, { _csrf: csrfOf((await b.get('/integrations')).body) });
    assert.equal(again.status, 303);
    assert.equal(again.location, `/connect/${p.id}`);
  });

  it('a live browser that cannot open the page settles the link failed, saying so; a live view off the portal is not followed', async () => {
    const b = await signIn(h);
    const p = await h.connections.pending.create(h.t.user.id, 'cookied', 'cookie');
    live.failOpen = 'the browser is restarting';
    try {
      const r = await b.post(`/connect/${p.id}/sign-in`, { _csrf: csrfOf((await b.get(`/connect/${p.id}`)).body) });
      assert.equal(r.status, 303);
    } finally {
      live.failOpen = undefined;
    }
    const settled = await h.connections.pending.get(p.id);
    assert.equal(settled?.status, 'failed');
    assert.match(
      settled?.statusReason ?? '',
      /the live browser could not open Cookied's sign-in page: the browser is restarting/,
    );

    const q = await h.connections.pending.create(h.t.user.id, 'cookied', 'cookie');
    live.liveViewPath = '//evil.example/phish';
    try {
      const r = await b.post(`/connect/${q.id}/sign-in`, { _csrf: csrfOf((await b.get(`/connect/${q.id}`)).body) });
      assert.equal(r.location, `/connect/${q.id}`);
    } finally {
      live.liveViewPath = '/live/view-1';
    }
  });
});
