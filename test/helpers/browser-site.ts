/**
 * @module test/helpers/browser-site
 * What the browser built-in's tests browse: a small web site on 127.0.0.1 (pages to read, click,
 * type into, scroll; cookies; redirects; a page that answers slowly; sub-resources pointing at a
 * forbidden address) and a "forbidden" server on 127.0.0.2 that records every request reaching it,
 * so a test can prove none did. Also the policy and environment a test gateway runs the browser
 * with: loopback 127.0.0.1 allowed (127.0.0.2 stays forbidden), Chromium without its sandbox when
 * the tests run as root.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const CHROMIUM = process.env['WORKBENCH_CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** a reason to skip when Chromium is missing (CI always has it) */
export const noChromium =
  !fs.existsSync(CHROMIUM) && !process.env['CI'] ? `${CHROMIUM} is not installed (apt-get install chromium)` : false;

/** the environment the test gateway's browser needs here */
export const BROWSER_ENV = { WORKBENCH_CHROMIUM_NO_SANDBOX: '1' };

export interface Site {
  origin: string;
  /** the forbidden server's origin (127.0.0.2, same port) */
  forbiddenOrigin: string;
  /** paths (with query) the site was asked for, in order */
  hits: string[];
  /** requests that reached the forbidden server: must stay empty */
  forbiddenHits: string[];
  close(): Promise<void>;
}

const page = (title: string, body: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

function pages(site: Site): Record<string, (url: URL, req: http.IncomingMessage, res: http.ServerResponse) => void> {
  const html = (res: http.ServerResponse, body: string, headers: Record<string, string> = {}): void =>
    void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
  return {
    '/': (_u, _q, res) =>
      html(
        res,
        page(
          'Home page',
          `<style>.x{color:red}</style><script>var secret = 'SCRIPT-TEXT';</script>
<h1>Welcome   to    the   site</h1><p>First paragraph.</p><p>${'Some words to read. '.repeat(20)}</p><p hidden>HIDDEN-TEXT</p><div id="box" style="width:200px;height:100px;background:#0a0">Box</div>
<button id="go" onclick="document.title='clicked ' + event.button">Go</button>
<input id="q" oninput="document.title='typed ' + this.value"><a id="next" href="/second">Next</a>
<div style="height:3000px"></div><p>Bottom</p>`,
        ),
      ),
    '/second': (_u, _q, res) => html(res, page('Second page', '<p>You are on the second page.</p>')),
    '/spin': (_u, _q, res) =>
      html(res, page('Spin', '<p>spinning</p><script>setTimeout(function () { for (;;) {} }, 200);</script>')),
    '/popups': (_u, _q, res) =>
      html(
        res,
        page(
          'Pop-ups',
          `<button id="open" onclick="for (var i = 0; i < 5; i++) window.open('/second?' + i)">Open five</button>`,
        ),
      ),
    '/local-links': (_u, _q, res) =>
      html(
        res,
        page(
          'Local links',
          '<a id="file" href="file:///etc/hostname">file</a> <a id="chrome" href="chrome://version">chrome</a> <a id="source" href="view-source:/">source</a>',
        ),
      ),
    '/redirect': (u, _q, res) => void res.writeHead(302, { location: u.searchParams.get('to') ?? '/' }).end(),
    '/subresources': (_u, _q, res) =>
      html(
        res,
        page(
          'Sub-resources',
          `<img src="${site.forbiddenOrigin}/img.png"><p id="out">waiting</p><p id="ws">waiting</p>
<script>fetch('${site.forbiddenOrigin}/fetch').then(() => 'reached', () => 'blocked').then((r) => { document.getElementById('out').textContent = 'fetch ' + r; });
var ws = new WebSocket('${site.forbiddenOrigin.replace('http:', 'ws:')}/socket');
ws.onopen = function () { document.getElementById('ws').textContent = 'socket reached'; };
ws.onerror = function () { document.getElementById('ws').textContent = 'socket blocked'; };</script>`,
        ),
      ),
    '/set-cookie': (u, _q, res) =>
      html(res, page('Cookie set', '<p>set</p>'), { 'set-cookie': `who=${u.searchParams.get('v') ?? 'x'}; Path=/` }),
    '/cookies': (_u, req, res) => html(res, page('Cookies', `<p>cookie:[${req.headers.cookie ?? ''}]</p>`)),
    '/slow': (_u, _q, res) => void setTimeout(() => html(res, page('Slow', '<p>late</p>')), 15_000).unref(),
    // the live view's target: reports each click's coordinates and what is typed to the site
    '/pad': (_u, _q, res) =>
      html(
        res,
        page(
          'Pad',
          `<textarea id="pad" style="position:fixed;left:0;top:0;width:100vw;height:100vh;border:0;background:#fff"></textarea>
<script>var pad = document.getElementById('pad');
pad.addEventListener('click', function (e) { fetch('/clicked?x=' + e.clientX + '&y=' + e.clientY); });
pad.addEventListener('input', function () { fetch('/typed?v=' + encodeURIComponent(pad.value)); });</script>`,
        ),
      ),
    '/noise': (_u, _q, res) =>
      html(
        res,
        page(
          'Noise',
          `<canvas id="c" width="1280" height="3000"></canvas><script>var c = document.getElementById('c').getContext('2d');
var img = c.createImageData(1280, 3000); for (var i = 0; i < img.data.length; i++) img.data[i] = Math.random() * 256; c.putImageData(img, 0, 0);</script>`,
        ),
      ),
  };
}

export async function startSite(): Promise<Site> {
  const listen = (server: http.Server, host: string, port = 0): Promise<number> =>
    new Promise((resolve) => server.listen(port, host, () => resolve((server.address() as AddressInfo).port)));
  const site: Site = { origin: '', forbiddenOrigin: '', hits: [], forbiddenHits: [], close: async () => undefined };
  const routes = pages(site);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site.test');
    site.hits.push(url.pathname + url.search);
    const route = routes[url.pathname];
    if (route) route(url, req, res);
    else res.writeHead(204).end();
  });
  const forbidden = http.createServer((req, res) => {
    site.forbiddenHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('FORBIDDEN-REACHED');
  });
  forbidden.on('upgrade', (req, socket) => {
    site.forbiddenHits.push(`upgrade ${req.url ?? ''}`);
    socket.destroy();
  });
  const port = await listen(server, '127.0.0.1');
  await listen(forbidden, '127.0.0.2', port);
  site.origin = `http://127.0.0.1:${port}`;
  site.forbiddenOrigin = `http://127.0.0.2:${port}`;
  site.close = async () => {
    server.closeAllConnections();
    forbidden.closeAllConnections();
    await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => forbidden.close(r))]);
  };
  return site;
}

/** A browser policy for tests: the site's loopback address allowed, the rest of the rules as shipped. */
export function browserPolicy(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { builtins: { browser: { allowPrivateCidrs: ['127.0.0.1/32'], ...extra }, jots: { enabled: false } } };
}

/** The process ids of the Chromium browsers this process started (Playwright drives them over a pipe). */
export function chromiumPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return (
          ppid === process.pid && fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes('--remote-debugging-pipe')
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}
