/**
 * @module test/host/connections/cookie-connections.unit.test
 * Cookie connections in the connection service, on a real SQLite file: a capture keeps only the
 * unexpired cookies within the manifest's domains (a mapped upstream target's as the host it
 * stands for), names what it left out and why, refuses input that is not cookies and a session
 * that is not signed in, and stores the cookies sealed like every credential. When the cookies
 * the session needs expire the connection becomes needs_reauth (the engine's lookup says why), and
 * connect hands out a link to sign in again; wait_for_connection sees a new capture.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { manifestSchema, type CookieAuth, type PluginManifest } from '../../../contracts/manifest.js';
import type { StoredCookie } from '../../../host/bridge/index.js';
import { COOKIES_EXPIRED_REASON } from '../../../host/connections/connection-reads.js';
import {
  mappedHostsOf,
  notSignedIn,
  selectCookies,
  sessionExpiresAt,
} from '../../../host/connections/cookie-capture.js';
import { isConnectionError } from '../../../host/connections/errors.js';
import { createConnectionMetaTools } from '../../../host/connections/meta-tools.js';
import { createConnectionService, type FullConnectionService } from '../../../host/connections/service.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import type { MetaTool, MetaToolContext } from '../../../host/meta-tools/types.js';
import { openTestDb, type TestDb } from '../../helpers/connections-db.js';

const T0 = Date.UTC(2030, 0, 1);
const sec = (ms: number): number => Math.floor(ms / 1000);

function cookieManifest(auth: Partial<CookieAuth> = {}): PluginManifest {
  return manifestSchema.parse({
    name: 'cookied',
    version: '1.0.0',
    displayName: 'Cookied',
    description: 'A cookie connection under test.',
    auth: { type: 'cookie', loginUrl: 'https://app.example.com/login', domains: ['example.com'], ...auth },
    egress: ['app.example.com', 'api.example.com'],
    tools: [{ name: 'cookied_get', description: 'Gets.', inputSchema: { type: 'object' } }],
  });
}
const authOf = (m: PluginManifest): CookieAuth => m.auth as CookieAuth;

const cookie = (over: Partial<StoredCookie>): StoredCookie => ({
  name: 'sid',
  value: 'session-value-0001',
  domain: '.example.com',
  path: '/',
  expires: sec(T0) + 3600,
  httpOnly: true,
  secure: true,
  sameSite: 'Lax',
  ...over,
});

describe('selecting the cookies of a capture', () => {
  const auth = authOf(cookieManifest());

  it('keeps the unexpired cookies within the domains and names every other one with the reason', () => {
    const { kept, dropped } = selectCookies(
      auth,
      [
        cookie({}),
        cookie({ name: 'pref', value: 'dark', domain: 'APP.example.com', path: '/settings', expires: -1 }),
        cookie({ name: 'tracker', domain: '.ads.net' }),
        cookie({ name: 'parent', domain: '.com' }),
        cookie({ name: 'old', expires: sec(T0) - 1 }),
        cookie({ name: 'bad;name' }),
        cookie({ name: 'utf', value: 'caf\u00e9' }),
        cookie({ name: 'long', value: 'x'.repeat(4097) }),
      ],
      { nowMs: T0 },
    );
    assert.deepEqual(
      kept.map((c) => `${c.name}@${c.domain}${c.path}`),
      ['sid@.example.com/', 'pref@app.example.com/settings'],
      'the domain is lower-cased',
    );
    assert.deepEqual(
      dropped.map((d) => `${d.name}: ${d.reason}`),
      [
        'tracker: not within example.com',
        'parent: not within example.com',
        'old: expired',
        'bad;name: its name has characters a Cookie header cannot carry',
        'utf: its value has characters a Cookie header cannot carry',
        'long: its value is longer than 4096 characters',
      ],
    );
  });

  it("reads playwright's shape with its defaults, ignores keys it does not know, and keeps the last of a name, domain and path", () => {
    const { kept } = selectCookies(
      auth,
      [
        { name: 'a', value: '1', domain: 'example.com', partitionKey: 'x' },
        { name: 'a', value: '2', domain: 'example.com', expires: -5 },
      ],
      { nowMs: T0 },
    );
    assert.deepEqual(kept, [
      {
        name: 'a',
        value: '2',
        domain: 'example.com',
        path: '/',
        expires: -1,
        httpOnly: false,
        secure: false,
        sameSite: 'Lax',
      },
    ]);
  });

  it('refuses what is not a list of cookies, naming each cookie and field', () => {
    const refusal = (input: unknown): string => {
      try {
        selectCookies(auth, input, { nowMs: T0 });
      } catch (err) {
        assert.ok(isConnectionError(err));
        assert.equal(err.code, 'GW_ERR_CONNECTION_INVALID_INPUT');
        return err.message;
      }
      return '';
    };
    assert.match(refusal({ name: 'a' }), /cookies must be a JSON array of cookies/);
    assert.match(refusal(new Array(1001).fill(cookie({}))), /1001 cookies given, more than 1000/);
    assert.equal(
      refusal([cookie({}), 'sid=1', { value: 'x', domain: 'example.com' }]),
      'cookies[1]: must be an object; cookies[2].name: required: the cookie name',
    );
    assert.match(
      refusal([{ ...cookie({}), expires: '2030-01-01' }]),
      /cookies\[0\]\.expires: must be a number: seconds since the epoch, or -1/,
    );
    assert.match(refusal([{ ...cookie({}), path: 'docs' }]), /cookies\[0\]\.path: must start with "\/"/);
    assert.match(refusal([{ ...cookie({}), sameSite: 'lax' }]), /cookies\[0\]\.sameSite: /);
    assert.match(refusal([{ ...cookie({}), secure: 'yes' }]), /cookies\[0\]\.secure: /);
    assert.match(
      refusal([{ ...cookie({}), value: 5 }]),
      /cookies\[0\]\.value: required: the cookie value \(a string\)/,
    );
    assert.match(
      refusal(Array.from({ length: 201 }, (_, i) => cookie({ name: `c${i}` }))),
      /201 cookies are within example\.com, more than the 200 a connection may hold/,
    );
  });

  it("takes a mapped upstream target's cookies as the declared host's (the login page's host first)", () => {
    const mapped = mappedHostsOf({
      'https://api.example.com': 'http://127.0.0.1:4010',
      'https://app.example.com': 'http://127.0.0.1:4011',
      'https://elsewhere.net': 'http://127.0.0.2:1',
    });
    const { kept, dropped } = selectCookies(
      auth,
      [
        cookie({ domain: '127.0.0.1' }),
        cookie({ name: 'x', domain: '127.0.0.2' }),
        cookie({ name: 'y', domain: '10.0.0.1' }),
      ],
      { nowMs: T0, mappedHosts: mapped },
    );
    assert.deepEqual(
      kept.map((c) => c.domain),
      ['app.example.com'],
    );
    assert.deepEqual(
      dropped.map((d) => `${d.name}@${d.domain}`),
      ['x@127.0.0.2', 'y@10.0.0.1'],
      'a target standing for a host outside the domains is not taken',
    );
  });
});

describe('signed in, and until when', () => {
  it('a capture without cookies, or without every signedInCheck cookie, is not signed in', () => {
    const plain = authOf(cookieManifest());
    const checked = authOf(cookieManifest({ signedInCheck: { cookies: ['sid', 'csrf'] } }));
    assert.match(
      notSignedIn(plain, []) ?? '',
      /no unexpired cookie of example\.com was captured: sign in at https:\/\/app\.example\.com\/login first/,
    );
    assert.equal(notSignedIn(plain, [cookie({ name: 'anything' })]), undefined);
    assert.match(
      notSignedIn(checked, [cookie({})]) ?? '',
      /not signed in yet: the cookie "csrf" of example\.com is missing/,
    );
    assert.equal(notSignedIn(checked, [cookie({}), cookie({ name: 'csrf' })]), undefined);
  });

  it('the session ends when its last cookie expires, or with signedInCheck when the first needed one does; never for session cookies', () => {
    const plain = authOf(cookieManifest());
    const checked = authOf(cookieManifest({ signedInCheck: { cookies: ['sid'] } }));
    const cookies = [
      cookie({ expires: sec(T0) + 100 }),
      cookie({ path: '/x', expires: sec(T0) + 200 }),
      cookie({ name: 'pref', expires: sec(T0) + 900 }),
    ];
    assert.equal(sessionExpiresAt(plain, cookies), (sec(T0) + 900) * 1000);
    assert.equal(sessionExpiresAt(checked, cookies), (sec(T0) + 200) * 1000, "sid's longest-lived cookie");
    assert.equal(sessionExpiresAt(plain, [...cookies, cookie({ name: 's', expires: -1 })]), null);
    assert.equal(sessionExpiresAt(checked, [cookie({ expires: -1 }), cookie({ name: 'pref' })]), null);
  });
});

describe('cookie connections in the service', () => {
  let t: TestDb;
  let svc: FullConnectionService;
  let tools: Map<string, MetaTool>;
  let now = T0;
  const m = cookieManifest({ signedInCheck: { cookies: ['sid'] } });

  before(async () => {
    t = await openTestDb();
    svc = createConnectionService({
      db: t.db,
      vault: createVault(generateKey()),
      clientFor: () => undefined,
      now: () => now,
    });
    const list = createConnectionMetaTools({
      connections: svc,
      registry: { plugins: () => [m], plugin: (n) => (n === m.name ? m : undefined) },
      publicUrl: 'https://wb.example.com',
      maxPollMs: 20,
    });
    tools = new Map(list.map((x) => [x.name, x]));
  });
  after(() => t.close());
  beforeEach(() => {
    now = T0;
  });

  const context = (): MetaToolContext => {
    const signal = new AbortController().signal;
    return {
      user: t.user,
      transport: 'mcp',
      signal,
      cancelled: signal,
      requestId: 'r',
      progress: async () => undefined,
    };
  };
  const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const tool = tools.get(name)!;
    return (await tool.handler(context(), tool.inputSchema.parse(args))).json as Record<string, unknown>;
  };

  it('a capture stores the kept cookies sealed, and the bridge gets them back; nothing is in the database as text', async () => {
    const r = await svc.captureCookies(t.user.id, m, [
      cookie({}),
      cookie({ name: 'pref', value: 'preference-value', expires: sec(T0) + 7200 }),
      cookie({ name: 'elsewhere', domain: '.ads.net' }),
    ]);
    assert.equal(r.kept, 2);
    assert.deepEqual(r.dropped, [{ name: 'elsewhere', domain: '.ads.net', reason: 'not within example.com' }]);
    assert.equal(r.expiresAt, (sec(T0) + 3600) * 1000, 'when sid, the signed-in cookie, expires');
    const lookup = await svc.lookup(t.user.id, m);
    assert.deepEqual(lookup, { connected: true, connectionId: r.connectionId, config: {} });
    const credential = await svc.credential(t.user.id, m);
    assert.deepEqual(credential?.values, {});
    assert.deepEqual(
      credential?.cookies?.map((c) => `${c.name}=${c.value}`),
      ['sid=session-value-0001', 'pref=preference-value'],
    );
    const rows = await t.db.all<Record<string, unknown>>('SELECT * FROM connections');
    const text = JSON.stringify(rows);
    assert.ok(!text.includes('session-value-0001') && !text.includes('preference-value'), 'values sealed');
    assert.ok(!text.includes('"pref"'), 'names sealed too');
    assert.match(String(rows[0]?.['secret']), /^v1\./);
    assert.equal(Number(rows[0]?.['expires_at']), r.expiresAt);
  });

  it('a capture that is not signed in stores nothing and says why', async () => {
    const fresh = await t.users.create('newcomer@example.com', 'acme');
    await assert.rejects(svc.captureCookies(fresh.id, m, [cookie({ name: 'pref' })]), (err: Error) => {
      assert.ok(isConnectionError(err));
      assert.match(err.message, /Cookied: not signed in yet: the cookie "sid" of example\.com is missing/);
      return true;
    });
    assert.deepEqual(await svc.lookup(fresh.id, m), { connected: false });
  });

  it('importConnection takes cookies for a cookie integration only, and nothing else beside them', async () => {
    await assert.rejects(
      svc.importConnection({ userId: t.user.id, manifest: m, token: 'x' }),
      /Cookied is a cookie connection: give its cookies, and nothing else \(not token\)/,
    );
    const other = manifestSchema.parse({
      ...cookieManifest(),
      name: 'keyed',
      auth: { type: 'apikey', fields: [{ name: 'k', label: 'K', secret: true }], inject: { format: '{k}' } },
      tools: [{ name: 'keyed_get', description: 'Gets.', inputSchema: { type: 'object' } }],
    });
    await assert.rejects(
      svc.importConnection({ userId: t.user.id, manifest: other, cookies: [cookie({})] }),
      /is not a cookie connection \(auth type "apikey"\): cookies cannot connect it/,
    );
  });

  it('expired cookies turn the connection needs_reauth: the lookup says why, list_integrations shows it, connect hands out a sign-in link', async () => {
    await svc.importConnection({ userId: t.user.id, manifest: m, cookies: [cookie({ expires: sec(T0) + 60 })] });
    now = T0 + 59_000;
    assert.equal((await svc.lookup(t.user.id, m)).connected, true);
    now = T0 + 60_000;
    assert.deepEqual(await svc.lookup(t.user.id, m), { connected: false, reason: COOKIES_EXPIRED_REASON });
    assert.equal(await svc.credential(t.user.id, m), undefined);
    const row = await t.db.get<{ status: string; status_reason: string }>(
      "SELECT status, status_reason FROM connections WHERE integration = 'cookied' AND user_id = ?",
      [t.user.id],
    );
    assert.deepEqual({ ...row }, { status: 'needs_reauth', status_reason: COOKIES_EXPIRED_REASON });
    const listed = (await call('list_integrations', {}))['integrations'] as Array<Record<string, unknown>>;
    assert.deepEqual(
      listed.map((i) => ({ authType: i['authType'], connection: i['connection'], reason: i['reason'] })),
      [{ authType: 'cookie', connection: 'needs_reauth', reason: COOKIES_EXPIRED_REASON }],
    );
    const link = await call('connect', { integration: 'cookied' });
    assert.equal(link['type'], 'cookie');
    assert.equal(link['url'], `https://wb.example.com/connect/${String(link['connectionId'])}`);
    assert.match(
      String(link['message']),
      /sign in to Cookied in the browser the page shows, then call wait_for_connection/,
    );
    // the person signs in again (a capture, here by the service): the wait sees it
    const waiting = call('wait_for_connection', { connectionId: link['connectionId'], timeoutSec: 5 });
    now = T0 + 61_000;
    await svc.captureCookies(t.user.id, m, [cookie({ value: 'session-value-0002', expires: sec(T0) + 7200 })]);
    assert.equal((await waiting)['status'], 'CONNECTED');
    assert.equal((await svc.lookup(t.user.id, m)).connected, true);
  });

  it('a session of session cookies has no expiry', async () => {
    const r = await svc.captureCookies(t.user.id, m, [cookie({ expires: -1 })]);
    assert.equal(r.expiresAt, null);
    now = T0 + 10 * 365 * 86_400_000;
    assert.equal((await svc.lookup(t.user.id, m)).connected, true);
  });
});
