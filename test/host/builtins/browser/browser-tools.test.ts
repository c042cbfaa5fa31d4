/**
 * @module test/host/builtins/browser/browser-tools.test
 * The browser built-in in real Chromium, through the real gateway (REST and a real MCP client):
 * each tool on loopback pages (the test policy allows 127.0.0.1 only), the address rules (a
 * forbidden address refused directly, by redirect and as a sub-resource, while the forbidden
 * server on 127.0.0.2 never sees a request; file:, chrome: and the like refused), two users'
 * contexts isolated, screenshots as real JPEG/PNG image blocks over MCP within the result limit,
 * read_text as text, not HTML. The live view is in browser-live-view.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type Item, type TestGateway } from '../../../helpers/gateway.js';
import { BROWSER_ENV, browserPolicy, noChromium, startSite, type Site } from '../../../helpers/browser-site.js';
import { waitFor } from '../../../helpers/wait-for.js';

const MAX_RESULT_BYTES = 400_000;

describe('the browser tools (real Chromium)', { skip: noChromium }, () => {
  let gw: TestGateway;
  let site: Site;
  let bobKey: string;
  const nav = (url: string, key?: string): Promise<Item> => gw.execute('browser_navigate', { url }, key);

  before(async () => {
    site = await startSite();
    gw = await startGateway({
      plugins: [],
      env: BROWSER_ENV,
      policy: {
        ...browserPolicy({ actionTimeoutMs: 1500 }),
        plugins: { browser: { limits: { maxResultBytes: MAX_RESULT_BYTES } } },
      },
    });
    bobKey = (await gw.createUser('bob@example.com')).apiKey;
  });
  after(async () => {
    await gw?.close();
    await site?.close();
  });

  it('navigates: final URL after redirects, title, status', async () => {
    const item = await nav(`${site.origin}/redirect?to=/second`);
    assert.deepEqual(item.result, { url: `${site.origin}/second`, title: 'Second page', status: 200 });
  });

  it('reads the page as slim text: no HTML, no script or hidden text, whitespace collapsed, cut at maxChars', async () => {
    await nav(`${site.origin}/`);
    const all = (await gw.execute('browser_read_text', {})).result;
    assert.equal(all.title, 'Home page');
    assert.equal(all.url, `${site.origin}/`);
    assert.match(all.text, /^Welcome to the site\n\nFirst paragraph\./);
    assert.match(all.text, /Bottom$/);
    for (const absent of ['SCRIPT-TEXT', 'HIDDEN-TEXT', '<', 'color:red'])
      assert.ok(!all.text.includes(absent), absent);
    assert.equal(all.truncated, false);
    const cut = (await gw.execute('browser_read_text', { maxChars: 100 })).result;
    assert.equal(cut.text, all.text.slice(0, 100));
    assert.equal(cut.truncated, true);
    assert.equal(cut.chars, all.chars);
    const box = (await gw.execute('browser_read_text', { selector: '#box' })).result;
    assert.equal(box.text, 'Box');
    const missing = await gw.execute('browser_read_text', { selector: '#nope' });
    assert.equal(missing.code, 'GW_ERR_BROWSER_ELEMENT_NOT_FOUND', JSON.stringify(missing));
  });

  it('clicks by selector (waiting for the page it opens) and by coordinates', async () => {
    await nav(`${site.origin}/`);
    const go = await gw.execute('browser_click', { selector: '#go' });
    assert.equal(go.result?.title, 'clicked 0');
    const link = await gw.execute('browser_click', { selector: '#next' });
    assert.deepEqual([link.result?.url, link.result?.title], [`${site.origin}/second`, 'Second page']);
    await nav(`${site.origin}/pad`);
    const point = await gw.execute('browser_click', { x: 123, y: 45 });
    assert.equal(point.result?.ok, true);
    await waitFor('the click on the page', () => site.hits.includes('/clicked?x=123&y=45'));
    for (const bad of [{}, { x: 1 }, { selector: '#go', x: 1, y: 2 }])
      assert.equal(
        (await gw.execute('browser_click', bad)).code,
        'GW_ERR_VALIDATION_INVALID_ARGS',
        JSON.stringify(bad),
      );
    assert.equal((await gw.execute('browser_click', { selector: '#nope' })).code, 'GW_ERR_BROWSER_ELEMENT_NOT_FOUND');
    assert.equal((await gw.execute('browser_click', { selector: 'a[[' })).code, 'GW_ERR_VALIDATION_INVALID_ARGS');
  });

  it('keeps pop-ups to the page limit, and acts on the newest page', async () => {
    await nav(`${site.origin}/popups`);
    const opened = await gw.execute('browser_click', { selector: '#open' });
    // the page and 3 pop-ups make the limit of 4: the other 2 pop-ups were closed
    assert.equal(opened.result?.popupsClosed, 2, JSON.stringify(opened));
    assert.match(opened.result?.url, /\/second\?\d$/);
    assert.equal((await gw.execute('browser_read_text', {})).result.title, 'Second page');
    assert.equal((await gw.execute('browser_close', {})).result?.closed, true);
  });

  it('types into an element (or the focused one) and presses keys', async () => {
    await nav(`${site.origin}/`);
    await gw.execute('browser_type', { selector: '#q', text: 'hello' });
    assert.equal((await gw.execute('browser_read_text', { maxChars: 100 })).result.title, 'typed hello');
    await gw.execute('browser_type', { selector: '#q', text: 'bye', clear: true });
    assert.equal((await gw.execute('browser_read_text', { maxChars: 100 })).result.title, 'typed bye');
    await gw.execute('browser_type', { text: '!' });
    assert.equal((await gw.execute('browser_read_text', { maxChars: 100 })).result.title, 'typed bye!');
    const keys = await gw.execute('browser_key', { keys: 'ctrl+a Backspace' });
    assert.deepEqual(keys.result?.pressed, ['Control+a', 'Backspace']);
    assert.equal(keys.result?.title, 'typed', 'document.title trims: the field is empty');
    assert.equal((await gw.execute('browser_key', { keys: 'NoSuchKey' })).code, 'GW_ERR_VALIDATION_INVALID_ARGS');
  });

  it('scrolls by an amount, and says where it is', async () => {
    await nav(`${site.origin}/`);
    const down = await gw.execute('browser_scroll', { direction: 'down' });
    assert.equal(down.result?.scrollY, 600);
    const up = await gw.execute('browser_scroll', { direction: 'up', amount: 200 });
    assert.equal(up.result?.scrollY, 400);
    assert.ok(up.result.pageHeight > 3000);
  });

  it('screenshots are real JPEG/PNG image blocks over MCP: viewport, element, scaled, and a full page fitted to the limit', async () => {
    const client = await gw.mcpClient();
    const shoot = async (args: Record<string, unknown>): Promise<{ meta: any; bytes: Buffer; mimeType: string }> => {
      const res = await client.callTool({
        name: 'execute_tools',
        arguments: { executions: [{ tool: 'browser_screenshot', args }] },
      });
      const content = res.content as { type: string; text?: string; data?: string; mimeType?: string }[];
      const image = content.find((c) => c.type === 'image');
      const text = JSON.parse(content.find((c) => c.type === 'text')?.text ?? '{}');
      assert.ok(image?.data, JSON.stringify(text).slice(0, 500));
      return { meta: text.results[0].result, bytes: Buffer.from(image.data, 'base64'), mimeType: image.mimeType ?? '' };
    };
    await nav(`${site.origin}/`);
    const jpeg = await shoot({});
    assert.equal(jpeg.mimeType, 'image/jpeg');
    assert.deepEqual([...jpeg.bytes.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    assert.deepEqual([jpeg.meta.width, jpeg.meta.height, jpeg.meta.scale], [1280, 720, 1]);
    const png = await shoot({ format: 'png', selector: '#box' });
    assert.equal(png.mimeType, 'image/png');
    assert.equal(png.bytes.subarray(1, 4).toString('latin1'), 'PNG');
    assert.deepEqual([png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)], [200, 100], 'the element, 200×100');
    const small = await shoot({ maxWidth: 640 });
    assert.deepEqual([small.meta.width, small.meta.scale], [640, 0.5]);
    await nav(`${site.origin}/noise`);
    const full = await shoot({ format: 'png', fullPage: true });
    assert.ok(full.bytes.length * (4 / 3) <= MAX_RESULT_BYTES, `${full.bytes.length} bytes`);
    assert.ok(full.meta.scale < 0.5, `noise does not compress: scaled to ${full.meta.scale}`);
    assert.equal(full.bytes.readUInt32BE(20), full.meta.height);
  });

  it('refuses forbidden addresses directly, without any request reaching them', async () => {
    const cases: [string, string][] = [
      [`${site.forbiddenOrigin}/`, 'loopback'],
      ['http://169.254.169.254/latest/meta-data/', 'linkLocal'],
      ['http://10.0.0.1/', 'private'],
      ['http://[::1]:9/', 'loopback'],
      ['http://[::ffff:127.0.0.2]/', 'loopback'],
    ];
    for (const [url, range] of cases) {
      const item = await nav(url);
      assert.equal(item.code, 'GW_ERR_BROWSER_ADDRESS_REFUSED', `${url}: ${JSON.stringify(item)}`);
      assert.equal(item['range'], range, url);
    }
    assert.deepEqual(site.forbiddenHits, []);
  });

  it('refuses a redirect from an allowed page to a forbidden address (each hop is judged)', async () => {
    for (const [to, host] of [
      [`${site.forbiddenOrigin}/after-redirect`, '127.0.0.2'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
      ['http://192.168.1.1/', '192.168.1.1'],
    ] as const) {
      const item = await nav(`${site.origin}/redirect?to=${encodeURIComponent(to)}`);
      assert.equal(item.code, 'GW_ERR_BROWSER_ADDRESS_REFUSED', `${to}: ${JSON.stringify(item)}`);
      assert.equal(item['host'], host);
    }
    assert.deepEqual(site.forbiddenHits, []);
  });

  it('blocks sub-resources (an image, a fetch, a WebSocket) to a forbidden address while the page loads, and says so', async () => {
    const item = await nav(`${site.origin}/subresources`);
    assert.equal(item.result?.status, 200, JSON.stringify(item));
    assert.deepEqual(item.result?.blocked, [{ host: '127.0.0.2', range: 'loopback' }], JSON.stringify(item));
    await waitFor('the fetch and the socket to settle', async () =>
      /fetch (blocked|reached)\n\nsocket (blocked|reached)/.test(
        (await gw.execute('browser_read_text', {})).result.text,
      ),
    );
    assert.match((await gw.execute('browser_read_text', {})).result.text, /fetch blocked\n\nsocket blocked/);
    assert.deepEqual(site.forbiddenHits, []);
  });

  it('refuses file:, chrome:, view-source:, data: and javascript: URLs, and a page cannot lead there either', async () => {
    for (const url of [
      'file:///etc/passwd',
      'chrome://version',
      'view-source:http://127.0.0.1/',
      'data:text/html,hi',
      'javascript:1',
    ])
      assert.equal((await nav(url)).code, 'GW_ERR_BROWSER_URL_REFUSED', url);
    for (const link of ['#file', '#chrome', '#source']) {
      await nav(`${site.origin}/local-links`);
      await gw.execute('browser_click', { selector: link });
      const read = (await gw.execute('browser_read_text', {})).result;
      assert.equal(read.url, `${site.origin}/local-links`, `${link} led nowhere`);
    }
  });

  it("keeps two users' contexts apart: a cookie set for one is not sent for the other", async () => {
    await nav(`${site.origin}/set-cookie?v=alice`);
    assert.match((await nav(`${site.origin}/cookies`)).result?.title, /Cookies/);
    assert.match((await gw.execute('browser_read_text', {})).result.text, /cookie:\[who=alice\]/);
    await nav(`${site.origin}/cookies`, bobKey);
    assert.match((await gw.execute('browser_read_text', {}, bobKey)).result.text, /cookie:\[\]/);
    await nav(`${site.origin}/set-cookie?v=bob`, bobKey);
    await nav(`${site.origin}/cookies`);
    assert.match((await gw.execute('browser_read_text', {})).result.text, /cookie:\[who=alice\]/);
    // closing one user's context leaves the other's as it was
    assert.deepEqual((await gw.execute('browser_close', {}, bobKey)).result, { ok: true, closed: true });
    assert.match((await gw.execute('browser_read_text', {})).result.text, /cookie:\[who=alice\]/);
    const fresh = (await gw.execute('browser_read_text', {}, bobKey)).result;
    assert.equal(fresh.url, 'about:blank');
  });

  it('closes the context: the next call starts afresh, without the cookies', async () => {
    assert.deepEqual((await gw.execute('browser_close', {})).result, { ok: true, closed: true });
    assert.deepEqual((await gw.execute('browser_close', {})).result, { ok: true, closed: false });
    await nav(`${site.origin}/cookies`);
    assert.match((await gw.execute('browser_read_text', {})).result.text, /cookie:\[\]/);
  });

  it('gives a live-view link on this gateway that expires', async () => {
    const item = await gw.execute('browser_live_url', {});
    assert.match(item.result?.url, new RegExp(`^${gw.url}/browser/live/[A-Za-z0-9_-]{32}$`));
    assert.ok(Date.parse(item.result?.expiresAt) > Date.now());
  });

  it('is listed and described like any integration', async () => {
    const r = await fetch(`${gw.url}/rest/browser`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    const tools = ((await r.json()) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
    assert.deepEqual(tools, [
      'browser_click',
      'browser_close',
      'browser_key',
      'browser_live_url',
      'browser_navigate',
      'browser_read_text',
      'browser_screenshot',
      'browser_scroll',
      'browser_type',
    ]);
  });
});
