/**
 * @module test/host/bridge/cookie-injection.test
 * The bridge's Cookie header for a cookie connection, against real loopback servers mapped
 * through the policy's `upstreams`: added only for the egress hosts within the manifest's
 * domains, with the stored cookies that match the URL (domain, path, secure, expiry); dropped on a
 * redirect to another origin; a plugin cannot send a Cookie header of its own; the values are
 * redacted from everything that comes back, and Set-Cookie answers never reach the plugin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manifestSchema, type PluginManifest } from '../../../contracts/manifest.js';
import { createBridge, type Bridge, type CallScope, type StoredCookie } from '../../../host/bridge/index.js';
import type { BridgeRequest, BridgeResult } from '../../../host/supervisor/index.js';
import { egressPolicy } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

const SESSION = 'sess-7c1e9a0b44d2f6e8';
const in1h = Math.floor(Date.now() / 1000) + 3600;
const COOKIES: StoredCookie[] = [
  {
    name: 'sid',
    value: SESSION,
    domain: '.example.com',
    path: '/',
    expires: in1h,
    httpOnly: true,
    secure: true,
    sameSite: 'Lax',
  },
  {
    name: 'docs',
    value: 'docs-pref-1',
    domain: 'api.example.com',
    path: '/echo',
    expires: -1,
    httpOnly: false,
    secure: false,
    sameSite: 'Lax',
  },
  {
    name: 'gone',
    value: 'expired-value',
    domain: '.example.com',
    path: '/',
    expires: 1,
    httpOnly: false,
    secure: false,
    sameSite: 'Lax',
  },
];

const cookieManifest: PluginManifest = manifestSchema.parse({
  name: 'cookied',
  version: '1.0.0',
  displayName: 'Cookied',
  description: 'A cookie connection under test.',
  auth: { type: 'cookie', loginUrl: 'https://www.example.com/login', domains: ['example.com'] },
  egress: ['api.example.com', 'www.example.com', 'cdn.other.net'],
  tools: [{ name: 'cookied_get', description: 'Gets.', inputSchema: { type: 'object' } }],
});

let api: Upstream;
let www: Upstream;
let other: Upstream;
let bridge: Bridge;

function scope(): CallScope & { loads: number } {
  const s = {
    loads: 0,
    manifest: cookieManifest,
    getCredential: async () => {
      s.loads++;
      return { values: {}, cookies: COOKIES };
    },
    requestCount: { n: 0 },
    maxRequests: 10,
    signal: new AbortController().signal,
  };
  return s;
}
const get = (url: string, extra: Partial<BridgeRequest> = {}): BridgeRequest => ({
  url,
  method: 'GET',
  headers: {},
  ...extra,
});
const ok = (r: BridgeResult): Extract<BridgeResult, { ok: true }>['response'] => {
  assert.ok(r.ok, JSON.stringify(r));
  return r.response;
};

before(async () => {
  [api, www, other] = await Promise.all([startUpstream(), startUpstream(), startUpstream()]);
  bridge = createBridge(
    egressPolicy({
      upstreams: {
        'https://api.example.com': api.origin,
        'https://www.example.com': www.origin,
        'https://cdn.other.net': other.origin,
      },
    }),
  );
});
after(async () => {
  await bridge.close();
  await Promise.all([api.close(), www.close(), other.close()]);
});

describe('bridge: the Cookie header of a cookie connection', () => {
  it('sends the matching cookies to a host within the domains, and redacts their values from the echo', async () => {
    const res = ok(await bridge.dispatch(get('https://api.example.com/echo?deeper=1'), scope()));
    assert.equal(
      api.received.at(-1)?.headers['cookie'],
      `docs=docs-pref-1; sid=${SESSION}`,
      'longer path first; the expired one left out',
    );
    assert.ok(!res.body.includes(SESSION) && !res.body.includes('docs-pref-1'), res.body);
    assert.match(res.body, /"cookie":"\[REDACTED\]"/);
  });

  it('matches each cookie by host and path: a host-only cookie stays on its host, a path cookie on its path', async () => {
    ok(await bridge.dispatch(get('https://www.example.com/echo'), scope()));
    assert.equal(www.received.at(-1)?.headers['cookie'], `sid=${SESSION}`);
    ok(await bridge.dispatch(get('https://api.example.com/echoes'), scope()));
    assert.equal(api.received.at(-1)?.headers['cookie'], `sid=${SESSION}`, '/echoes is not under /echo');
  });

  it('sends no cookie to an egress host outside the domains, and does not even load them for it', async () => {
    const s = scope();
    ok(await bridge.dispatch(get('https://cdn.other.net/echo'), s));
    assert.equal(other.received.at(-1)?.headers['cookie'], undefined);
    assert.equal(s.loads, 0);
  });

  it('drops the cookies when a redirect leaves the origin, even for another host within the domains', async () => {
    for (const to of ['https://cdn.other.net/echo', 'https://www.example.com/echo']) {
      const target = to.includes('other') ? other : www;
      const before = target.received.length;
      ok(
        await bridge.dispatch(get(`https://api.example.com/redirect?status=307&to=${encodeURIComponent(to)}`), scope()),
      );
      assert.equal(target.received.length, before + 1);
      assert.equal(target.received.at(-1)?.headers['cookie'], undefined, to);
    }
    // on the same origin the next hop gets them again
    ok(await bridge.dispatch(get('https://api.example.com/redirect?to=%2Fecho'), scope()));
    assert.equal(api.received.at(-1)?.headers['cookie'], `docs=docs-pref-1; sid=${SESSION}`);
  });

  it('refuses a Cookie header from plugin code, in any case, so it can neither replace nor add to the session', async () => {
    for (const name of ['cookie', 'Cookie', 'COOKIE']) {
      const r = await bridge.dispatch(
        get('https://api.example.com/echo', { headers: { [name]: 'sid=forged' } }),
        scope(),
      );
      assert.ok(!r.ok && r.error.code === 'GW_ERR_BRIDGE_BAD_REQUEST', JSON.stringify(r));
      assert.match(r.ok ? '' : r.error.message, /header "cookie" may not be set by plugin code/);
    }
  });

  it('hands the plugin no Set-Cookie the site answers', async () => {
    const res = ok(await bridge.dispatch(get('https://api.example.com/session'), scope()));
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(res.headers['x-kept'], 'yes');
  });
});
