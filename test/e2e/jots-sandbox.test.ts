/**
 * @module test/e2e/jots-sandbox.test
 * A jot served on the gateway's own origin, in real Chromium, by a person signed in to the portal:
 * the owner's browser reaches the site through its view link, with its styles, scripts and images
 * loaded; the page's script runs in an opaque origin, so it cannot read the portal session's cookie
 * (or any storage of the origin), cannot fetch a portal page with the browser's credentials, and its
 * own requests to the portal carry no session cookie. A share link opens the same way for someone
 * who never signed in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { CHROMIUM, chromiumSkip as skip, LAUNCH_ARGS } from '../helpers/chromium.js';

/** What the jot's script finds out, written into the page for the test to read. */
const PROBE = `
const out = {};
const attempt = async (name, fn) => { try { out[name] = await fn(); } catch (e) { out[name] = 'refused: ' + e.name; } };
(async () => {
  out.origin = self.origin;
  await attempt('cookie', () => document.cookie);
  await attempt('storage', () => localStorage.length);
  const portal = location.protocol + '//' + location.host;
  await attempt('fetchPortal', async () => (await fetch(portal + '/keys', { credentials: 'include' })).status);
  await attempt('xhrPortal', () => { const x = new XMLHttpRequest(); x.open('GET', portal + '/keys', false); x.withCredentials = true; x.send(); return x.status; });
  out.color = getComputedStyle(document.querySelector('h1')).color;
  document.getElementById('out').textContent = JSON.stringify(out);
})();`;

const FILES = [
  {
    path: 'index.html',
    content:
      '<!doctype html><link rel="stylesheet" href="style.css"><h1>Jot</h1><img src="/integrations"><pre id="out"></pre><script src="app.js"></script>',
  },
  { path: 'style.css', content: 'h1 { color: rgb(0, 128, 128) }' },
  { path: 'app.js', content: PROBE },
];

async function probe(page: Page): Promise<Record<string, unknown>> {
  await page.waitForFunction("document.getElementById('out').textContent !== ''");
  return JSON.parse((await page.locator('#out').textContent()) ?? '{}') as Record<string, unknown>;
}

describe('a jot in real Chromium', { skip }, () => {
  let gw: TestGateway;
  let browser: Browser;
  let site: { id: string; url: string; shareUrl: string };

  before(async () => {
    gw = await startGateway({
      plugins: [],
      policy: { builtins: { browser: { enabled: false }, jots: { enabled: true } } },
    });
    site = (await gw.execute('jots_deploy', { files: FILES, share: true })).result;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  it("runs in an opaque origin: the owner's portal session is out of its reach", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${gw.url}/login`);
    await page.getByLabel('Your Workbench API key').fill(gw.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/integrations/);
    const session = (await context.cookies()).find((c) => c.name === 'wb_session');
    assert.ok(session?.httpOnly && session.sameSite === 'Lax');

    // the Cookie header of each request for a portal page, as Chromium sent it
    const toPortal: Promise<string>[] = [];
    page.on('request', (r) => {
      if (r.url() === `${gw.url}/integrations`) toPortal.push(r.allHeaders().then((h) => h['cookie'] ?? ''));
    });
    await page.goto(site.url);
    assert.match(page.url(), new RegExp(`^${gw.url}/jots/v/[A-Za-z0-9_-]{43}/$`));
    const found = await probe(page);
    assert.deepEqual(found, {
      origin: 'null',
      cookie: 'refused: SecurityError',
      storage: 'refused: SecurityError',
      fetchPortal: 'refused: TypeError',
      xhrPortal: 'refused: NetworkError',
      color: 'rgb(0, 128, 128)',
    });
    const fromJot = await Promise.all(toPortal);
    assert.ok(fromJot.length > 0, 'the page requested the portal');
    assert.ok(
      fromJot.every((c) => !c.includes('wb_session')),
      fromJot.join(' | '),
    );
    // the same request from the portal's own origin does carry it (the check above can see a cookie)
    await page.goto(`${gw.url}/integrations`);
    const all = await Promise.all(toPortal);
    assert.ok(
      all.slice(fromJot.length).some((c) => c.includes('wb_session')),
      all.join(' | '),
    );
    await context.close();
  });

  it('opens by its share link for someone who never signed in', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const res = await page.goto(site.shareUrl);
    assert.equal(res?.headers()['content-security-policy']?.startsWith('sandbox allow-scripts allow-forms;'), true);
    const found = await probe(page);
    assert.deepEqual([found['origin'], found['color']], ['null', 'rgb(0, 128, 128)']);
    await context.close();
  });
});
