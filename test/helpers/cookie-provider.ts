/**
 * @module test/helpers/cookie-provider
 * A loopback provider that signs people in with cookies, standing in for httpbin.org behind the
 * httpbin-cookie plugin (mapped with the policy's `upstreams`). It has a real sign-in form: GET
 * /login shows it, POST /login with the right username and password answers a session cookie
 * with an expiry (`Max-Age` and `Expires`) and goes on to `next`. Every other path needs that
 * session: a browser (Accept: text/html) is sent to /login?next=…, anything else gets 401 JSON.
 * Signed in, it answers as httpbin does: /headers (the request's headers), /cookies (the cookies
 * received), /cookies/set?name=value (sets them, then on to /cookies), and / (who is signed in).
 * The end-to-end test in real Chromium signs in through the same form. Every request is recorded.
 */
import { randomBytes } from 'node:crypto';
import type { StoredCookie } from '../../host/bridge/index.js';
import { startUpstream, type RecordedRequest, type Upstream, type UpstreamReply } from './upstream.js';

export interface CookieProviderOptions {
  username?: string;
  password?: string;
  /** the session cookie's name (default "session") */
  cookieName?: string;
  /** how long a session lasts, in seconds (default 3600) */
  sessionTtlSec?: number;
  /** mark the session cookie Secure (default false: the provider is plain http on loopback) */
  secure?: boolean;
}

export interface CookieProvider extends Upstream {
  readonly username: string;
  readonly password: string;
  readonly cookieName: string;
  /** session id → when it ends (epoch ms); delete one to sign it out server-side */
  readonly sessions: Map<string, number>;
  /**
   * Signs in over HTTP through the form, as a browser would, and answers the cookies it set in
   * playwright's shape (host-only cookies of `domain`, default the provider's own host).
   */
  signIn(options?: { domain?: string; password?: string }): Promise<StoredCookie[]>;
}

/** The cookies a request carried, by name. */
export function cookiesOf(req: Pick<RecordedRequest, 'headers'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of String(req.headers['cookie'] ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/** One Set-Cookie line in playwright's cookie shape (enough of RFC 6265 §5.2 for this provider's cookies). */
export function parseSetCookie(line: string, domain: string, nowMs = Date.now()): StoredCookie {
  const [pair = '', ...attributes] = line.split(';');
  const eq = pair.indexOf('=');
  const cookie: StoredCookie = {
    name: pair.slice(0, eq).trim(),
    value: pair.slice(eq + 1).trim(),
    domain,
    path: '/',
    expires: -1,
    httpOnly: false,
    secure: false,
    sameSite: 'Lax',
  };
  for (const attribute of attributes) {
    const [key = '', value = ''] = attribute.split('=').map((s) => s.trim());
    const k = key.toLowerCase();
    if (k === 'max-age') cookie.expires = Math.floor(nowMs / 1000) + Number(value);
    else if (k === 'expires' && cookie.expires === -1) cookie.expires = Math.floor(Date.parse(value) / 1000);
    else if (k === 'path') cookie.path = value;
    else if (k === 'httponly') cookie.httpOnly = true;
    else if (k === 'secure') cookie.secure = true;
    else if (k === 'samesite') cookie.sameSite = value as StoredCookie['sameSite'];
  }
  return cookie;
}

const loginPage = (next: string, error = ''): string => `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in to the provider</h1>${error ? `<p role="alert">${error}</p>` : ''}
<form method="post" action="/login"><input type="hidden" name="next" value="${next.replace(/[&<>"']/g, '')}">
<label for="username">Username</label><input id="username" name="username" autocomplete="username">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
<button type="submit">Sign in</button></form></body></html>`;

export async function startCookieProvider(options: CookieProviderOptions = {}): Promise<CookieProvider> {
  const username = options.username ?? 'ada';
  const password = options.password ?? 'correct horse battery staple';
  const cookieName = options.cookieName ?? 'session';
  const ttlSec = options.sessionTtlSec ?? 3600;
  const sessions = new Map<string, number>();

  const signedIn = (req: RecordedRequest): string | undefined => {
    const id = cookiesOf(req)[cookieName];
    const until = id === undefined ? undefined : sessions.get(id);
    return until !== undefined && until > Date.now() ? id : undefined;
  };

  const login = (req: RecordedRequest): UpstreamReply => {
    const form = new URLSearchParams(req.body);
    const next = form.get('next') || '/';
    const safeNext = next.startsWith('/') && !next.startsWith('//') ? next : '/';
    if (form.get('username') !== username || form.get('password') !== password)
      return {
        status: 401,
        headers: { 'content-type': 'text/html' },
        body: loginPage(safeNext, 'Wrong username or password.'),
      };
    const id = randomBytes(16).toString('hex');
    const until = Date.now() + ttlSec * 1000;
    sessions.set(id, until);
    const cookie =
      `${cookieName}=${id}; Path=/; Max-Age=${ttlSec}; Expires=${new Date(until).toUTCString()}; HttpOnly; SameSite=Lax` +
      (options.secure ? '; Secure' : '');
    return { status: 303, headers: { location: safeNext, 'set-cookie': cookie }, body: '' };
  };

  const signedInAnswer = (req: RecordedRequest): UpstreamReply => {
    if (req.path === '/headers') return { json: { headers: req.headers } };
    if (req.path === '/cookies') return { json: { cookies: cookiesOf(req) } };
    if (req.path === '/cookies/set')
      return {
        status: 302,
        headers: {
          location: '/cookies',
          'set-cookie': [...req.query].map(([k, v]) => `${k}=${v}; Path=/`),
        },
        body: '',
      };
    if (req.path === '/') return { headers: { 'content-type': 'text/html' }, body: `<p>Signed in as ${username}.</p>` };
    return { status: 404, json: { error: 'not found' } };
  };

  const upstream = await startUpstream((req) => {
    if (req.path === '/login' && req.method === 'POST') return login(req);
    if (req.path === '/login')
      return { headers: { 'content-type': 'text/html' }, body: loginPage(req.query.get('next') ?? '/') };
    if (req.path === '/logout' && req.method === 'POST') {
      const id = signedIn(req);
      if (id) sessions.delete(id);
      return {
        status: 303,
        headers: { location: '/login', 'set-cookie': `${cookieName}=; Path=/; Max-Age=0` },
        body: '',
      };
    }
    if (signedIn(req)) return signedInAnswer(req);
    if (String(req.headers['accept'] ?? '').includes('text/html'))
      return { status: 302, headers: { location: `/login?next=${encodeURIComponent(req.url)}` }, body: '' };
    return { status: 401, json: { error: 'not signed in: sign in at /login' } };
  });

  return {
    ...upstream,
    username,
    password,
    cookieName,
    sessions,
    async signIn(o = {}) {
      const res = await fetch(`${upstream.origin}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username, password: o.password ?? password, next: '/' }).toString(),
        redirect: 'manual',
      });
      const domain = o.domain ?? new URL(upstream.origin).hostname;
      return res.headers.getSetCookie().map((line) => parseSetCookie(line, domain));
    },
  };
}
