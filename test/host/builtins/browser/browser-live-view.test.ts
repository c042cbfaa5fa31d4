/**
 * @module test/host/builtins/browser/browser-live-view.test
 * The live view end to end: the agent asks for a link, a person signs in to the portal in a second
 * real Chromium and opens it, sees the agent's page as frames, takes control (the agent's acting
 * tools are refused meanwhile, looking still works), clicks and types on the page — the page gets
 * them, at the right coordinates — and hands it back. Another user is refused the view, its frames
 * and its inputs; a signed-out visitor is sent to sign in. The page runs only its own script
 * (CSP). The service a second feature uses (open a live session on a URL in a context of its own,
 * then read that context's cookies) works the same way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startGateway, type TestGateway } from '../../../helpers/gateway.js';
import {
  BROWSER_ENV,
  CHROMIUM,
  browserPolicy,
  noChromium,
  startSite,
  type Site,
} from '../../../helpers/browser-site.js';
import { waitFor } from '../../../helpers/wait-for.js';
import { WebClient, csrfOf, signInWithKey } from '../../../helpers/web-client.js';

describe('the live browser view (real Chromium on both sides)', { skip: noChromium }, () => {
  let gw: TestGateway;
  let site: Site;
  let viewer: Browser;
  let person: Page;
  let liveUrl: string;

  before(async () => {
    site = await startSite();
    gw = await startGateway({ plugins: [], env: BROWSER_ENV, policy: browserPolicy() });
    viewer = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    person = await viewer.newPage({ viewport: { width: 1000, height: 900 } });
  });
  after(async () => {
    await viewer?.close();
    await gw?.close();
    await site?.close();
  });

  it("shows the agent's page to the same user, signed in, as frames", async () => {
    await gw.execute('browser_navigate', { url: `${site.origin}/pad` });
    liveUrl = (await gw.execute('browser_live_url', {})).result.url;
    const res = await person.goto(liveUrl);
    assert.match(person.url(), /\/login\?next=/, 'signed-out visitors sign in first');
    assert.equal(res?.status(), 200);
    await person.getByLabel('Your Workbench API key').fill(gw.apiKey);
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.waitForURL(liveUrl);
    // (the page's CSP allows no eval: wait with a selector, read with the protocol's own evaluation)
    await person.locator('#live-frame[data-seq]').waitFor({ state: 'attached' });
    assert.equal(await person.evaluate("document.getElementById('live-frame').naturalWidth"), 1280);
    await person.getByText('Watching: the agent drives this browser').waitFor();
    const page = await fetch(liveUrl, {
      headers: { cookie: (await person.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ') },
    });
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.doesNotMatch(await page.text(), /<script>/, 'no inline script');
  });

  it('lets the person take control: the agent waits, the page gets their clicks and keys, then they hand it back', async () => {
    await person.getByRole('button', { name: 'Take control' }).click();
    await person.getByText('You have control').waitFor();
    const refused = await gw.execute('browser_click', { x: 5, y: 5 });
    assert.equal(refused.code, 'GW_ERR_BROWSER_TAKEN_OVER');
    assert.equal(
      (await gw.execute('browser_screenshot', {})).result?._mcpImage.mimeType,
      'image/jpeg',
      'looking still works',
    );
    const box = await person.locator('#live-frame').boundingBox();
    assert.ok(box);
    // a quarter across and a fifth down the picture: (320, 144) on the 1280×720 page
    await person.mouse.click(box.x + box.width / 4, box.y + box.height / 5);
    await waitFor('the click on the page', () => site.hits.some((h) => h.startsWith('/clicked')));
    const [x, y] = (/x=(\d+)&y=(\d+)/.exec(site.hits.find((h) => h.startsWith('/clicked')) ?? '') ?? [])
      .slice(1)
      .map(Number);
    assert.ok(Math.abs((x ?? 0) - 320) <= 3 && Math.abs((y ?? 0) - 144) <= 3, `clicked at ${x},${y}`);
    await person.keyboard.type('hi');
    await waitFor('the typing on the page', () => site.hits.includes('/typed?v=hi'));
    await person.getByRole('button', { name: 'Hand back to the agent' }).click();
    await person.getByText('Watching: the agent drives this browser').waitFor();
    const back = await gw.execute('browser_key', { keys: 'End' });
    assert.equal(back.result?.ok, true, JSON.stringify(back));
  });

  it('refuses another user the view, its frames and its inputs; a signed-out request gets no frame', async () => {
    const path = new URL(liveUrl).pathname;
    const eve = await signInWithKey(gw.url, (await gw.createUser('eve@example.com')).apiKey);
    assert.equal((await eve.get(path, { accept: 'text/html' })).status, 403);
    const frame = await eve.get(`${path}/frame?after=0`);
    assert.equal(frame.status, 403);
    assert.doesNotMatch(frame.headers.get('content-type') ?? '', /^image\//);
    const csrf = csrfOf((await eve.get('/keys')).body);
    assert.equal((await eve.post(`${path}/control`, { _csrf: csrf, action: 'take' })).status, 403);
    assert.equal((await eve.post(`${path}/input`, { _csrf: csrf, kind: 'text', text: 'x' })).status, 403);
    const stranger = new WebClient(gw.url);
    assert.equal((await stranger.get(`${path}/frame?after=0`)).status, 401);
    assert.match((await stranger.get(path)).location ?? '', /^\/login\?next=/);
    assert.equal((await stranger.get('/browser/live/not-a-live-view')).status, 303);
    const owner = await signInWithKey(gw.url, gw.apiKey);
    assert.equal((await owner.get('/browser/live/not-a-live-view', { accept: 'text/html' })).status, 404);
    const ownerCsrf = csrfOf((await owner.get('/keys')).body);
    assert.equal((await owner.post(`${path}/control`, { _csrf: 'wrong', action: 'take' })).status, 403, 'CSRF checked');
    assert.equal(
      (await owner.post(`${path}/input`, { _csrf: ownerCsrf, kind: 'text', text: 'x' })).status,
      409,
      'not in control',
    );
    assert.equal((await owner.post(`${path}/input`, { _csrf: ownerCsrf, kind: 'teleport' })).status, 400);
  });

  it('ends with its context: the page says so, and the link answers 410', async () => {
    await gw.execute('browser_close', {});
    await person.getByText('This live view has ended').waitFor();
    const owner = await signInWithKey(gw.url, gw.apiKey);
    assert.equal((await owner.get(new URL(liveUrl).pathname, { accept: 'text/html' })).status, 410);
  });
});
