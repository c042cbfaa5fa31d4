/**
 * @module test/host/builtins/browser/browser-lifecycle.test
 * The browser's life in real Chromium: a context left idle is closed (its cookies with it); a name
 * that resolves to an allowed address first and a forbidden one when the browser connects (DNS
 * rebinding) is refused by the proxy, the forbidden server never reached; a page stuck in an endless
 * script is given up at its call's deadline; a browser killed mid-call
 * answers that call GW_ERR_BROWSER_CRASHED and the next call starts a new one; with no Chromium, or
 * as root without the no-sandbox switch, the tools answer GW_ERR_BROWSER_UNAVAILABLE and the
 * gateway serves on. And the service other features use: a live session on a URL in a context of
 * their own, handed back, and that context's cookies read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Resolver } from '../../../../host/bridge/index.js';
import { createBrowser, type BrowserBuiltin } from '../../../../host/builtins/browser/index.js';
import { parsePolicy } from '../../../../host/policy/load.js';
import { createLogger } from '../../../../host/telemetry/logger.js';
import { startGateway, type TestGateway } from '../../../helpers/gateway.js';
import {
  BROWSER_ENV,
  browserPolicy,
  chromiumPids,
  noChromium,
  startSite,
  type Site,
} from '../../../helpers/browser-site.js';
import { waitFor } from '../../../helpers/wait-for.js';

const IDLE_SEC = 2;

describe('the browser over time (real Chromium)', { skip: noChromium }, () => {
  let gw: TestGateway;
  let site: Site;
  let rebindLookups = 0;
  // "rebind.test" answers the allowed address to the first two look-ups (the tool's check, the
  // route check) and a forbidden one to the next (the proxy's, when Chromium connects)
  const resolver: Resolver = (host, _options, cb) => {
    if (host === 'rebind.test')
      return cb(null, [{ address: ++rebindLookups <= 2 ? '127.0.0.1' : '127.0.0.2', family: 4 }]);
    if (host === 'allowed.test') return cb(null, [{ address: '127.0.0.1', family: 4 }]);
    cb(Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' }), []);
  };

  before(async () => {
    site = await startSite();
    gw = await startGateway({
      plugins: [],
      env: BROWSER_ENV,
      resolver,
      policy: {
        ...browserPolicy({ idleTimeoutSec: IDLE_SEC }),
        plugins: { browser: { limits: { wallMsPerCall: 4000 } } },
      },
    });
  });
  after(async () => {
    await gw?.close();
    await site?.close();
  });

  it('closes a context left idle: the next call starts afresh, without its cookies', async () => {
    await gw.execute('browser_navigate', { url: `${site.origin}/set-cookie?v=idle` });
    await gw.execute('browser_navigate', { url: `${site.origin}/cookies` });
    assert.match((await gw.execute('browser_read_text', {})).result.text, /cookie:\[who=idle\]/);
    await new Promise((r) => setTimeout(r, IDLE_SEC * 1000 + 1500));
    const after = (await gw.execute('browser_read_text', {})).result;
    assert.equal(after.url, 'about:blank', 'a new context, on a blank page');
    await gw.execute('browser_navigate', { url: `${site.origin}/cookies` });
    assert.match((await gw.execute('browser_read_text', {})).result.text, /cookie:\[\]/);
  });

  it('reaches a name through the proxy, and refuses it when it rebinds to a forbidden address at connect time', async () => {
    const named = await gw.execute('browser_navigate', {
      url: `${site.origin.replace('127.0.0.1', 'allowed.test')}/second`,
    });
    assert.equal(named.result?.title, 'Second page', JSON.stringify(named));
    const rebound = await gw.execute('browser_navigate', {
      url: `${site.origin.replace('127.0.0.1', 'rebind.test')}/second`,
    });
    assert.equal(rebound.code, 'GW_ERR_BROWSER_ADDRESS_REFUSED', JSON.stringify(rebound));
    assert.equal(rebound['host'], 'rebind.test');
    assert.ok(rebindLookups >= 3, `the proxy looked the name up itself (${rebindLookups} look-ups)`);
    assert.deepEqual(site.forbiddenHits, []);
  });

  it("gives up a page stuck in an endless script at the call's deadline: the next call gets a new page", async () => {
    await gw.execute('browser_navigate', { url: `${site.origin}/spin` });
    await new Promise((r) => setTimeout(r, 500));
    const stuck = await gw.execute('browser_read_text', {});
    assert.equal(stuck.code, 'GW_ERR_BUILTIN_TIMEOUT', JSON.stringify(stuck));
    const next = await gw.execute('browser_read_text', {});
    assert.equal(next.result?.url, 'about:blank', JSON.stringify(next));
    assert.equal((await gw.execute('browser_navigate', { url: `${site.origin}/second` })).result?.title, 'Second page');
  });

  it('answers a call in flight GW_ERR_BROWSER_CRASHED when the browser is killed, and the next call starts a new one', async () => {
    const bob = await gw.createUser('bob@example.com');
    await gw.execute('browser_navigate', { url: `${site.origin}/set-cookie?v=bob` }, bob.apiKey);
    const [pid, ...others] = chromiumPids();
    assert.ok(pid !== undefined && others.length === 0, `one browser: ${[pid, ...others].join(', ')}`);
    const slow = gw.execute('browser_navigate', { url: `${site.origin}/slow` });
    await waitFor('the slow page to be asked for', () => site.hits.includes('/slow'));
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    const item = await slow;
    assert.equal(item.code, 'GW_ERR_BROWSER_CRASHED', JSON.stringify(item));
    assert.ok(Date.now() - killedAt < 5000, 'answered at once, not at the page timeout');
    const next = await gw.execute('browser_navigate', { url: `${site.origin}/second` });
    assert.equal(next.result?.title, 'Second page', JSON.stringify(next));
    assert.notDeepEqual(chromiumPids(), [pid]);
    await gw.execute('browser_navigate', { url: `${site.origin}/cookies` }, bob.apiKey);
    assert.match(
      (await gw.execute('browser_read_text', {}, bob.apiKey)).result.text,
      /cookie:\[\]/,
      'the old cookies went with it',
    );
  });
});

describe('a gateway whose browser cannot run', () => {
  it('answers GW_ERR_BROWSER_UNAVAILABLE saying how to install Chromium, and serves on', async () => {
    const gw = await startGateway({
      plugins: [],
      env: { ...BROWSER_ENV, WORKBENCH_CHROMIUM_PATH: '/nonexistent/chromium' },
      policy: browserPolicy(),
    });
    try {
      const item = await gw.execute('browser_navigate', { url: 'http://127.0.0.1:9/' });
      assert.equal(item.code, 'GW_ERR_BROWSER_UNAVAILABLE');
      assert.match(item.error ?? '', /apt-get install chromium/);
      assert.equal((await gw.execute('browser_close', {})).result?.ok, true, 'tools that need no browser still answer');
      assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    } finally {
      await gw.close();
    }
  });

  it('as root, refuses to run Chromium without its sandbox unless told to', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('not running as root');
    const gw = await startGateway({ plugins: [], env: {}, policy: browserPolicy() });
    try {
      const item = await gw.execute('browser_screenshot', {});
      assert.equal(item.code, 'GW_ERR_BROWSER_UNAVAILABLE');
      assert.match(item.error ?? '', /unprivileged user/);
      assert.deepEqual(chromiumPids(), []);
    } finally {
      await gw.close();
    }
  });
});

describe('the browser service (a sign-in in a context of its own)', { skip: noChromium }, () => {
  let site: Site;
  let browser: BrowserBuiltin;

  before(async () => {
    site = await startSite();
    browser = createBrowser({
      policy: parsePolicy(browserPolicy(), 'test policy'),
      env: BROWSER_ENV,
      logger: createLogger({ level: 'silent', destination: 'silent' }),
      publicUrl: 'http://127.0.0.1:1',
    });
  });
  after(async () => {
    await browser?.integration.close();
    await site?.close();
  });

  it("opens a live session on a URL, is handed back, and reads only that context's cookies", async () => {
    const svc = browser.service;
    const info = await svc.openLiveSession({
      userId: 'u1',
      url: `${site.origin}/set-cookie?v=carol`,
      purpose: 'sign in to the site',
      context: 'connect:site',
    });
    assert.match(info.url, /^http:\/\/127\.0\.0\.1:1\/browser\/live\/[A-Za-z0-9_-]{32}$/);
    const cookies = await svc.cookies({ userId: 'u1', context: 'connect:site', domains: ['127.0.0.1'] });
    assert.deepEqual(
      cookies.map((c) => [c.name, c.value, c.domain]),
      [['who', 'carol', '127.0.0.1']],
    );
    assert.equal((await svc.cookies({ userId: 'u1', context: 'connect:site', urls: [`${site.origin}/x`] })).length, 1);
    assert.deepEqual(await svc.cookies({ userId: 'u1', context: 'connect:site', domains: ['example.com'] }), []);
    assert.deepEqual(await svc.cookies({ userId: 'u1' }), [], "the agent's context is another one");
    assert.deepEqual(svc.liveViews.lookup(info.id, 'u2'), { ok: false, problem: 'not-yours' });
    const found = svc.liveViews.lookup(info.id, 'u1');
    assert.ok(found.ok);
    found.view.takeControl();
    assert.equal(found.view.control, 'person');
    found.view.handBack();
    assert.equal(await info.finished, 'handed-back');
    assert.equal(await svc.closeContext('u1', 'connect:site'), true);
    assert.deepEqual(await svc.cookies({ userId: 'u1', context: 'connect:site' }), []);
    assert.deepEqual(svc.liveViews.lookup(info.id, 'u1'), { ok: false, problem: 'ended' });
  });

  it('refuses a forbidden URL before opening anything', async () => {
    await assert.rejects(
      browser.service.openLiveSession({ userId: 'u1', url: `${site.forbiddenOrigin}/`, purpose: 'x' }),
      (err: { code?: string }) => err.code === 'GW_ERR_BROWSER_ADDRESS_REFUSED',
    );
    assert.deepEqual(site.forbiddenHits, []);
  });
});

describe('the memory limit (real Chromium)', { skip: noChromium }, () => {
  it('closes the least recently used context past maxMemoryMb, then restarts the browser when none is left', async () => {
    const site = await startSite();
    // Chromium alone uses far more than 64 MiB: the first reading is over the limit
    const browser = createBrowser({
      policy: parsePolicy(browserPolicy({ maxMemoryMb: 64 }), 'test policy'),
      env: BROWSER_ENV,
      logger: createLogger({ level: 'silent', destination: 'silent' }),
      publicUrl: 'http://127.0.0.1:1',
      memoryCheckMs: 100,
    });
    try {
      // the context goes while the page loads (the call answers the limit) or right after (its live view ends)
      const outcome = await browser.service
        .openLiveSession({ userId: 'u1', url: `${site.origin}/second`, purpose: 'memory' })
        .then(
          (info) => info.finished,
          (err: { code?: string }) => err.code,
        );
      assert.ok(outcome === 'ended' || outcome === 'GW_ERR_BROWSER_MEMORY_LIMIT', String(outcome));
      await waitFor('the browser closed, no context being left to close', () => browser.service.pid === undefined);
      assert.deepEqual(await browser.service.cookies({ userId: 'u1' }), []);
    } finally {
      await browser.integration.close();
      await site.close();
    }
  });
});
