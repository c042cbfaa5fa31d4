/**
 * @module test/host/builtins/jots/jots-serving.test
 * Jots as people reach them, through a real gateway: a site deployed over a real MCP client is
 * served to its owner's API key with the sandboxing CSP, nosniff and a Content-Type per
 * extension; another user's key, a bad key and an anonymous request get nothing (404, 401, or a
 * browser sent to sign in — for a site that does not exist alike); the owner's browser, signed in
 * to the portal, is sent to a view link that serves the site's files with no cookie (and an expired
 * one sends it to sign in again); a share link serves anyone until it is replaced or revoked; a
 * deleted site is gone from every address. Then the same gateway with WORKBENCH_JOTS_URL: links use
 * the jots origin, which serves nothing but jots, and content is served there only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { JOT_CSP } from '../../../../host/transport/jot-headers.js';
import { startGateway, type TestGateway } from '../../../helpers/gateway.js';
import { callJson } from '../../../helpers/mcp-call.js';
import { signInWithKey } from '../../../helpers/web-client.js';

const POLICY = { builtins: { browser: { enabled: false }, jots: { enabled: true } } };
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const HTML = '<!doctype html><link rel="stylesheet" href="style.css"><h1>Report</h1>';
const FILES = [
  { path: 'index.html', content: HTML },
  { path: 'style.css', content: 'h1 { color: teal }' },
  { path: 'app.js', content: 'document.title = "ok";' },
  { path: 'img/dot.png', content: PNG.toString('base64'), encoding: 'base64' },
  { path: 'docs/index.html', content: '<p>docs</p>' },
];

interface Got {
  status: number;
  body: Buffer;
  text: string;
  headers: Headers;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Got> {
  const res = await fetch(url, { headers, redirect: 'manual' });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, body, text: body.toString('utf8'), headers: res.headers };
}

const BROWSER = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

describe('jots served by the gateway', () => {
  let gw: TestGateway;
  let other: { apiKey: string };
  let site: { id: string; url: string; title: string; files: number; bytes: number; access: string };
  const key = (): Record<string, string> => ({ 'x-workbench-api-key': gw.apiKey });

  before(async () => {
    gw = await startGateway({ plugins: [], policy: POLICY });
    other = await gw.createUser('other@example.com');
    const client = await gw.mcpClient();
    const ran = await callJson(client, 'execute_tools', {
      executions: [{ tool: 'jots_deploy', args: { title: 'Weekly report', files: FILES } }],
    });
    site = ran.json.results[0].result;
  });
  after(async () => gw.close());

  it('deploys over MCP and answers the site, its files and its URL', () => {
    assert.match(site.id, /^[0-9a-f]{24}$/);
    assert.equal(site.url, `${gw.url}/jots/${site.id}/`);
    const bytes = FILES.reduce(
      (n, f) => n + Buffer.from(f.content, f.encoding === 'base64' ? 'base64' : 'utf8').length,
      0,
    );
    assert.deepEqual(
      { title: site.title, files: site.files, bytes: site.bytes },
      { title: 'Weekly report', files: 5, bytes },
    );
    assert.match(site.access, /private/);
  });

  it('serves the owner (API key) with the sandboxing CSP, nosniff and a type per extension', async () => {
    const page = await get(site.url, key());
    assert.equal(page.status, 200);
    assert.equal(page.text, HTML);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(page.headers.get('content-security-policy'), JOT_CSP);
    assert.match(
      JOT_CSP,
      /^sandbox allow-scripts allow-forms; default-src 'self' 'unsafe-inline' data: blob:; connect-src 'none'/,
    );
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(page.headers.get('cross-origin-resource-policy'), 'same-origin');
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const css = await get(`${site.url}style.css`, { authorization: `Bearer ${gw.apiKey}` });
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
    const js = await get(`${site.url}app.js`, key());
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    const png = await get(`${site.url}img/dot.png`, key());
    assert.equal(png.headers.get('content-type'), 'image/png');
    assert.deepEqual(png.body, PNG);
    // a folder's address serves its index.html; named without its "/", it is sent there
    assert.equal((await get(`${site.url}docs/`, key())).text, '<p>docs</p>');
    const folder = await get(`${site.url}docs?x=1`, key());
    assert.deepEqual([folder.status, folder.headers.get('location')], [308, './docs/?x=1']);
    // a folder named like another site's address is still sent to itself
    const odd = await gw.execute('jots_deploy', {
      files: [
        { path: 'index.html', content: '' },
        { path: 'https:evil.example/index.html', content: '' },
      ],
    });
    const oddFolder = await get(`${odd.result.url}https:evil.example`, key());
    assert.equal(oddFolder.headers.get('location'), './https:evil.example/');
    await gw.execute('jots_delete', { id: odd.result.id });
    const root = await get(site.url.slice(0, -1), key());
    assert.deepEqual([root.status, root.headers.get('location')], [308, `/jots/${site.id}/`]);
    const again = await get(site.url, { ...key(), 'if-none-match': page.headers.get('etag') ?? '' });
    assert.equal(again.status, 304);
    assert.equal((await get(`${site.url}missing.html`, key())).status, 404);
    assert.equal((await get(`${site.url}..%2f..%2fetc/passwd`, key())).status, 404);
  });

  it("gives another user's key, a bad key and an anonymous request nothing, as for a site that does not exist", async () => {
    const nowhere = `${gw.url}/jots/${'0'.repeat(24)}/`;
    const theirs = await get(site.url, { 'x-workbench-api-key': other.apiKey });
    const missing = await get(nowhere, key());
    assert.deepEqual([theirs.status, theirs.text], [404, 'Not found\n']);
    assert.deepEqual([missing.status, missing.text], [404, 'Not found\n']);
    assert.equal((await get(site.url, { 'x-workbench-api-key': 'wb_not-a-key' })).status, 401);
    const anonymous = await get(site.url);
    assert.deepEqual([anonymous.status, anonymous.text], [404, 'Not found\n']);
    // a browser is sent to sign in, whether the site exists or not
    const browser = await get(`${site.url}style.css`, BROWSER);
    assert.equal(browser.status, 303);
    assert.equal(browser.headers.get('location'), `/login?next=${encodeURIComponent(`/jots/${site.id}/style.css`)}`);
    assert.equal((await get(nowhere, BROWSER)).status, 303);
    assert.doesNotMatch(browser.text + anonymous.text, /Report|teal/);
  });

  it("sends the owner's signed-in browser to a view link that serves every file without a cookie", async () => {
    const web = await signInWithKey(gw.url, gw.apiKey);
    const opened = await web.get(`/jots/${site.id}/?tab=2`, BROWSER);
    assert.equal(opened.status, 303);
    const location = opened.headers.get('location') ?? '';
    const m = new RegExp(`^${gw.url}/jots/v/([A-Za-z0-9_-]{43})/\\?tab=2$`).exec(location);
    assert.ok(m, location);
    const page = await get(location);
    assert.deepEqual([page.status, page.text], [200, HTML]);
    assert.equal(page.headers.get('content-security-policy'), JOT_CSP);
    // the page's own requests come from an opaque origin: the resource policy lets them load
    assert.equal(page.headers.get('cross-origin-resource-policy'), 'cross-origin');
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.equal((await get(`${gw.url}/jots/v/${m[1]}/style.css`)).status, 200);
    // stored as a hash only
    const stored = await gw.db.all<{ token_hash: string }>('SELECT token_hash FROM jot_views');
    assert.ok(stored.every((r) => r.token_hash !== m[1] && /^[0-9a-f]{64}$/.test(r.token_hash)));
    // another signed-in user is told nothing
    const theirs = await signInWithKey(gw.url, other.apiKey);
    assert.equal((await theirs.get(`/jots/${site.id}/`, BROWSER)).status, 404);
    // an expired link sends a browser to the owner's address (and so through sign-in), and serves nothing
    await gw.db.run('UPDATE jot_views SET expires_at = 1');
    const expired = await get(`${gw.url}/jots/v/${m[1]}/style.css`, BROWSER);
    assert.deepEqual([expired.status, expired.headers.get('location')], [303, `${gw.url}/jots/${site.id}/style.css`]);
    assert.equal((await get(`${gw.url}/jots/v/${m[1]}/style.css`)).status, 404);
  });

  it('serves a share link to anyone, until a new link replaces it or it is revoked', async () => {
    const shared = await gw.execute('jots_share', { id: site.id, enabled: true });
    const url: string = shared.result.shareUrl;
    assert.match(url, new RegExp(`^${gw.url}/jots/s/[A-Za-z0-9_-]{43}/$`));
    const page = await get(url);
    assert.deepEqual([page.status, page.text], [200, HTML]);
    assert.equal(page.headers.get('cache-control'), 'private, no-cache');
    assert.equal(page.headers.get('cross-origin-resource-policy'), 'cross-origin');
    assert.equal((await get(`${url}img/dot.png`)).status, 200);
    const token = url.split('/').at(-2) ?? '';
    const row = await gw.db.get<{ share_hash: string }>('SELECT share_hash FROM jot_sites WHERE id = ?', [site.id]);
    assert.ok(row && row.share_hash !== token && /^[0-9a-f]{64}$/.test(row.share_hash));

    const renewed = (await gw.execute('jots_share', { id: site.id, enabled: true })).result.shareUrl as string;
    assert.notEqual(renewed, url);
    assert.equal((await get(url)).status, 404);
    assert.equal((await get(renewed)).status, 200);
    const theirs = await gw.execute('jots_share', { id: site.id, enabled: false }, other.apiKey);
    assert.equal(theirs.code, 'GW_ERR_JOTS_NOT_FOUND');
    assert.equal((await get(renewed)).status, 200);
    assert.deepEqual((await gw.execute('jots_share', { id: site.id, enabled: false })).result, {
      id: site.id,
      shared: false,
    });
    const revoked = await get(renewed);
    assert.deepEqual([revoked.status, revoked.text], [404, 'Not found\n']);
  });

  it('forgets a deleted site at every address; only its owner may delete it', async () => {
    const made = await gw.execute('jots_deploy', { files: [{ path: 'index.html', content: 'bye' }], share: true });
    const { id, url, shareUrl } = made.result as { id: string; url: string; shareUrl: string };
    const web = await signInWithKey(gw.url, gw.apiKey);
    const view = (await web.get(`/jots/${id}/`, BROWSER)).headers.get('location') ?? '';
    assert.equal((await get(view)).status, 200);
    const theirs = await gw.execute('jots_delete', { id }, other.apiKey);
    assert.equal(theirs.code, 'GW_ERR_JOTS_NOT_FOUND');
    assert.equal((await get(shareUrl)).status, 200);
    assert.deepEqual((await gw.execute('jots_delete', { id })).result, { id, deleted: true });
    for (const address of [url, shareUrl, view]) assert.equal((await get(address, key())).status, 404, address);
    assert.equal((await gw.execute('jots_delete', { id })).code, 'GW_ERR_JOTS_NOT_FOUND');
    const left = await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM jot_files WHERE site_id = ?', [id]);
    assert.equal(Number(left?.n), 0);
  });
});

describe('jots on an origin of their own (WORKBENCH_JOTS_URL)', () => {
  let gw: TestGateway;
  let jotsBase: string;
  before(async () => {
    gw = await startGateway({ plugins: [], policy: POLICY, jotsUrl: (port) => `http://localhost:${port}` });
    jotsBase = gw.url.replace('127.0.0.1', 'localhost');
  });
  after(async () => gw.close());

  it('gives links on the jots origin, which serves nothing but jots', async () => {
    const made = await gw.execute('jots_deploy', { files: [{ path: 'index.html', content: 'hi' }], share: true });
    const { id, url, shareUrl } = made.result as { id: string; url: string; shareUrl: string };
    assert.equal(url, `${jotsBase}/jots/${id}/`);
    assert.ok(shareUrl.startsWith(`${jotsBase}/jots/s/`));
    assert.equal((await get(url, { 'x-workbench-api-key': gw.apiKey })).text, 'hi');
    assert.equal((await get(shareUrl)).text, 'hi');
    for (const p of ['/healthz', '/login', '/integrations', '/rest', '/metrics'])
      assert.equal((await get(`${jotsBase}${p}`, BROWSER)).status, 404, p);
    const mcp = await fetch(`${jotsBase}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.apiKey}` },
      body: '{}',
    });
    assert.equal(mcp.status, 404);
    // the gateway's origin serves no link's content
    assert.equal((await get(shareUrl.replace(jotsBase, gw.url))).status, 404);
    assert.equal((await get(`${gw.url}/healthz`)).status, 200);
  });

  it("takes the owner's browser through the gateway's origin (its portal session) to a view link on the jots origin", async () => {
    const made = await gw.execute('jots_deploy', { files: [{ path: 'index.html', content: 'mine' }] });
    const { id, url } = made.result as { id: string; url: string };
    const first = await get(`${url}?a=1`, BROWSER);
    assert.deepEqual([first.status, first.headers.get('location')], [303, `${gw.url}/jots/${id}/?a=1`]);
    assert.equal((await get(url)).status, 404);
    const web = await signInWithKey(gw.url, gw.apiKey);
    const view = (await web.get(`/jots/${id}/?a=1`, BROWSER)).headers.get('location') ?? '';
    assert.match(view, new RegExp(`^${jotsBase}/jots/v/[A-Za-z0-9_-]{43}/\\?a=1$`));
    assert.equal((await get(view)).text, 'mine');
    assert.equal((await get(view.replace(jotsBase, gw.url))).status, 404);
  });
});
