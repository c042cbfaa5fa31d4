/**
 * @module test/helpers/portal
 * A portal on a real fastify instance (driven with inject) backed by a SQLite file, the real
 * connection service and a mock OAuth provider, plus a tiny cookie-keeping client for inject().
 */
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import type { PluginManifest } from '../../contracts/manifest.js';
import { createConnectionService, type FullConnectionService } from '../../host/connections/service.js';
import { createVault, generateKey } from '../../host/connections/vault.js';
import { createUpstreamMapper } from '../../host/bridge/index.js';
import { registerPortal, type CookieSignInBrowser, type PortalSignIn } from '../../host/portal/portal.js';
import type { PortalContext } from '../../host/portal/context.js';
import type { User } from '../../host/storage/users.js';
import { startMockOAuth, type MockOAuth } from './mock-oauth.js';
import { apiKeyManifest, oauthManifest, openTestDb, type TestDb } from './connections-db.js';

export interface Harness {
  app: FastifyInstance;
  t: TestDb;
  mock: MockOAuth;
  connections: FullConnectionService;
  portal: PortalContext;
  manifests: PluginManifest[];
  publicUrl: string;
  apiKey: string;
  close(): Promise<void>;
}

export async function startHarness(
  options: {
    publicUrl?: string;
    extraManifests?: PluginManifest[];
    allowed?: (user: User, plugin: string) => boolean;
    /** the sign-in methods (default: an API key or a sign-in link) */
    signIn?: PortalSignIn;
    /** the policy's upstreams: provider URLs and cookie captures mapped as the gateway maps them */
    upstreams?: Record<string, string>;
    /** the live browser of cookie connect links */
    cookieBrowser?: CookieSignInBrowser;
  } = {},
): Promise<Harness> {
  const t = await openTestDb();
  const mock = await startMockOAuth();
  const manifests = [
    oauthManifest(mock, { revocationUrl: mock.revokeUrl }),
    apiKeyManifest(),
    ...(options.extraManifests ?? []),
  ];
  const connections = createConnectionService({
    db: t.db,
    vault: createVault(generateKey()),
    clientFor: () => ({ clientId: mock.clientId, clientSecret: mock.clientSecret }),
    ...(options.upstreams ? { upstreams: options.upstreams, mapUrl: createUpstreamMapper(options.upstreams) } : {}),
  });
  const publicUrl = options.publicUrl ?? 'http://127.0.0.1:3999';
  const real = Fastify();
  const portal = registerPortal(real, {
    db: t.db,
    users: t.users,
    connections,
    registry: { plugins: () => manifests, plugin: (n) => manifests.find((m) => m.name === n) },
    publicUrl,
    ...(options.allowed ? { allowed: options.allowed } : {}),
    ...(options.signIn ? { signIn: options.signIn } : {}),
    ...(options.cookieBrowser ? { cookieBrowser: options.cookieBrowser } : {}),
  });
  await real.ready();
  const { key } = await t.users.createApiKey(t.user.id, 'test');
  return {
    app: real,
    t,
    mock,
    connections,
    portal,
    manifests,
    publicUrl,
    apiKey: key,
    close: async () => {
      await real.close();
      await mock.close();
      await t.close();
    },
  };
}

export interface Browser {
  cookies: Map<string, string>;
  get(url: string, headers?: Record<string, string>): Promise<Response>;
  post(url: string, form: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
}

export interface Response {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  location: string | undefined;
}

/** A cookie-keeping client over app.inject (no redirects followed). */
export function browser(app: FastifyInstance): Browser {
  const cookies = new Map<string, string>();
  const cookieHeader = (): string => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (set: unknown): void => {
    const list = Array.isArray(set) ? set : set === undefined ? [] : [set];
    for (const c of list as string[]) {
      const [pair] = c.split(';');
      const eq = (pair ?? '').indexOf('=');
      const name = (pair ?? '').slice(0, eq);
      const value = (pair ?? '').slice(eq + 1);
      if (/Max-Age=0/.test(c) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
  };
  const send = async (
    method: 'GET' | 'POST',
    url: string,
    payload: string | undefined,
    headers: Record<string, string>,
  ): Promise<Response> => {
    const res = await app.inject({
      method,
      url,
      headers: {
        ...(cookies.size ? { cookie: cookieHeader() } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      ...(payload !== undefined ? { payload } : {}),
    });
    keep(res.headers['set-cookie']);
    return { status: res.statusCode, headers: res.headers, body: res.body, location: res.headers.location };
  };
  return {
    cookies,
    get: (url, headers = {}) => send('GET', url, undefined, headers),
    post: (url, form, headers = {}) => send('POST', url, new URLSearchParams(form).toString(), headers),
  };
}

/** The hidden CSRF token in a page. */
export function csrfOf(body: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(body);
  if (!m?.[1]) throw new Error('no CSRF token in page');
  return m[1];
}

/** Signs in with the API key through the login form; returns the browser. */
export async function signIn(h: Harness, key = h.apiKey): Promise<Browser> {
  const b = browser(h.app);
  const page = await b.get('/login');
  const res = await b.post('/login', { _csrf: csrfOf(page.body), apiKey: key, next: '/integrations' });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  return b;
}

export async function otherUser(h: Harness, email = 'eve@example.com'): Promise<{ user: User; browser: Browser }> {
  const user = await h.t.users.create(email, 'acme');
  const { key } = await h.t.users.createApiKey(user.id);
  return { user, browser: await signIn(h, key) };
}

const unescape = (s: string): string =>
  s.replace(
    /&(amp|lt|gt|quot|#39|#96);/g,
    (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[e] ?? '',
  );

/** The provider's authorization URL from the answer to "Continue": a page refreshing to it at once, with a link to it. */
export function providerUrlOf(res: Response): URL {
  assert.equal(res.status, 200, res.body.slice(0, 300));
  assert.equal(res.location, undefined, 'not a redirect of the form submission');
  const refresh = /<meta http-equiv="refresh" content="0; url=([^"]+)">/.exec(res.body)?.[1];
  assert.ok(refresh, 'the page goes on by itself');
  const url = unescape(refresh);
  assert.ok(res.body.includes(`<a href="${refresh}">`), 'and links to the same URL');
  assert.match(String(res.headers['content-security-policy']), /form-action 'self';/);
  return new URL(url);
}
