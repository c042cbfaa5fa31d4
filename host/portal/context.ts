/**
 * @module host/portal/context
 * What every portal route shares: its dependencies, the signed-in session (resolved once per
 * request from the cookie), CSRF and Origin checks for form posts, safe redirects, and helpers that
 * send a page or an error page with the security headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LiveViewAccess } from '../builtins/browser/index.js';
import type { ConnectionLogger } from '../connections/refresh.js';
import type { PluginCatalog } from '../connections/meta-tools.js';
import type { FullConnectionService } from '../connections/service.js';
import type { OAuthServer } from '../oauth-server/server.js';
import type { Db } from '../storage/db.js';
import type { CookieSignInBrowser } from './cookie-browser.js';
import type { User, UserStore } from '../storage/users.js';
import type { SsoRule } from '../policy/schema.js';
import type { OidcSignIn } from './sso/oidc-client.js';
import { onlyCookie, serializeCookie, type CookieOptions } from './cookies.js';
import { PortalFlash, type Flash, type FlashPage } from './flash.js';
import { html, type SafeHtml } from './html.js';
import { renderPage, type Section } from './layout.js';
import { securityHeaders } from './security-headers.js';
import { PortalSessions, sameToken, type PortalSession } from './sessions.js';

/** How people may sign in to the portal (the policy's `signIn`, and the provider of WORKBENCH_OIDC_*). */
export interface PortalSignIn {
  /** the sign-in form that takes an API key */
  apiKey: boolean;
  /** one-time sign-in links (`workbench login-link`) */
  loginLinks: boolean;
  /** single sign-on: the provider, and who it admits (undefined: not configured) */
  sso?: { client: OidcSignIn; rule: SsoRule };
}

export interface PortalDeps {
  db: Db;
  users: UserStore;
  connections: FullConnectionService;
  registry: PluginCatalog;
  /** the public origin people use, e.g. https://workbench.example.com; https turns on Secure cookies and HSTS */
  publicUrl: string;
  /** whether the user's tenant may use a plugin (policy); default: every plugin */
  allowed?: (user: User, pluginName: string) => boolean;
  logger?: ConnectionLogger;
  /** session lifetime (default 12 h) */
  sessionTtlMs?: number;
  /** the browser built-in's live views, served at /browser/live/:id (absent: no such pages) */
  browser?: LiveViewAccess;
  /** how people may sign in (default: an API key or a sign-in link; no single sign-on) */
  signIn?: PortalSignIn;
  /** the gateway's OAuth authorization server: the consent page (/authorize) and the apps on the keys page */
  oauth?: OAuthServer | undefined;
  /** the live browser cookie connect links sign in with (the browser built-in); without it they say one is needed */
  cookieBrowser?: CookieSignInBrowser;
}

export interface SignedIn {
  session: PortalSession;
  user: User;
}

export interface PortalContext {
  deps: PortalDeps;
  sessions: PortalSessions;
  flashes: PortalFlash;
  /** publicUrl without a trailing slash */
  base: string;
  secure: boolean;
  cookieName: string;
  /** the sign-in methods turned on */
  methods: PortalSignIn;
  signedIn(request: FastifyRequest): Promise<SignedIn | undefined>;
  /** the signed-in user, or undefined after redirecting to /login?next=<this page> */
  requireUser(request: FastifyRequest, reply: FastifyReply): Promise<SignedIn | undefined>;
  /** true when a form post carries the session's CSRF token and no foreign Origin; sends 403 otherwise */
  checkPost(request: FastifyRequest, reply: FastifyReply, expected: string | undefined): boolean;
  setCookie(reply: FastifyReply, name: string, value: string, o?: CookieOptions): void;
  /** leaves a one-shot notice for the next GET of `page` in this session (post, redirect, get: see flash.ts) */
  putFlash(request: FastifyRequest, who: SignedIn, page: FlashPage, flash: Flash): Promise<void>;
  /** this session's notices for `page`, each shown once */
  takeFlash(request: FastifyRequest, who: SignedIn, page: FlashPage): Promise<Flash[]>;
  sendPage(
    reply: FastifyReply,
    status: number,
    page: { title: string; body: SafeHtml; who?: SignedIn; active?: Section; continueTo?: string },
  ): FastifyReply;
  sendError(
    reply: FastifyReply,
    status: number,
    title: string,
    message: string | SafeHtml,
    who?: SignedIn,
  ): FastifyReply;
  /** whether the user's tenant may use a plugin (policy; every plugin when the portal has no rule) */
  mayUse(user: User, plugin: string): boolean;
  /** a same-site path from a `next` parameter, or the fallback (never another origin) */
  safeNext(next: unknown, fallback?: string): string;
  body(request: FastifyRequest): Record<string, string>;
}

export function createPortalContext(deps: PortalDeps): PortalContext {
  const base = deps.publicUrl.replace(/\/+$/, '');
  const secure = base.startsWith('https://');
  const origin = new URL(base).origin;
  const cookieName = secure ? '__Host-wb_session' : 'wb_session';
  const sessions = new PortalSessions(deps.db, deps.connections.now, deps.sessionTtlMs);
  const flashes = new PortalFlash(deps.db, deps.connections.now);
  // two session cookies (one planted) are no session: see onlyCookie
  const sessionIdOf = (request: FastifyRequest): string | undefined => onlyCookie(request.headers.cookie, cookieName);

  const ctx: PortalContext = {
    deps,
    sessions,
    flashes,
    base,
    secure,
    cookieName,
    methods: deps.signIn ?? { apiKey: true, loginLinks: true },
    signedIn: sessionResolver(deps, sessions, sessionIdOf),

    async requireUser(request, reply) {
      const who = await ctx.signedIn(request);
      if (who) return who;
      const next = request.method === 'GET' ? request.url : '/';
      void reply
        .code(303)
        .headers(securityHeaders(secure))
        .header('location', `/login?next=${encodeURIComponent(next)}`)
        .send();
      return undefined;
    },

    checkPost(request, reply, expected) {
      const o = request.headers['origin'];
      const site = request.headers['sec-fetch-site'];
      const foreign = (typeof o === 'string' && o !== origin) || site === 'cross-site';
      if (foreign || !sameToken(ctx.body(request)['_csrf'], expected)) {
        ctx.sendError(
          reply,
          403,
          'Request refused',
          'This form was stale or came from another site. Go back, reload the page and try again.',
        );
        return false;
      }
      return true;
    },

    setCookie(reply, name, value, o = {}) {
      // Fastify appends to set-cookie (re-setting the whole list sent earlier cookies twice)
      void reply.header('set-cookie', serializeCookie(name, value, { secure, ...o }));
    },

    async putFlash(request, who, page, flash) {
      const id = sessionIdOf(request);
      if (id) await flashes.put(who.session.idHash, id, page, flash);
    },

    async takeFlash(request, who, page) {
      const id = sessionIdOf(request);
      return id ? flashes.take(who.session.idHash, id, page) : [];
    },

    sendPage: (reply, status, page) => sendPage(secure, reply, status, page),

    sendError(reply, status, title, message, who) {
      return ctx.sendPage(reply, status, {
        title,
        body: html`<p class="error" role="alert">${message}</p><p><a href="/integrations">Back to integrations</a></p>`,
        ...(who ? { who } : {}),
      });
    },

    mayUse: (user, plugin) => (deps.allowed ? deps.allowed(user, plugin) : true),
    safeNext,
    body: formBody,
  };
  return ctx;
}

/** Who is signed in on a request, resolved once per request (every later call gets the same answer). */
function sessionResolver(
  deps: PortalDeps,
  sessions: PortalSessions,
  sessionIdOf: (request: FastifyRequest) => string | undefined,
): PortalContext['signedIn'] {
  const cache = new WeakMap<FastifyRequest, Promise<SignedIn | undefined>>();
  return (request) => {
    let p = cache.get(request);
    if (!p) {
      p = (async () => {
        const session = await sessions.resolve(sessionIdOf(request));
        if (!session) return undefined;
        const user = await deps.users.byId(session.userId);
        return user ? { session, user } : undefined;
      })();
      cache.set(request, p);
    }
    return p;
  };
}

function sendPage(
  secure: boolean,
  reply: FastifyReply,
  status: number,
  page: Parameters<PortalContext['sendPage']>[2],
): FastifyReply {
  const body = renderPage({
    title: page.title,
    body: page.body,
    ...(page.who ? { user: page.who.user, csrf: page.who.session.csrf } : {}),
    ...(page.active ? { active: page.active } : {}),
    ...(page.continueTo ? { continueTo: page.continueTo } : {}),
  });
  return reply.code(status).headers(securityHeaders(secure)).type('text/html; charset=utf-8').send(body);
}

function safeNext(next: unknown, fallback = '/integrations'): string {
  // Same-origin paths only. Browsers drop TAB/CR/LF and read "\" as "/" when resolving a
  // Location, so "/\t/evil.example" would leave the site: refuse every control character and
  // backslash, then require a path that cannot start a network-path reference.
  if (typeof next !== 'string' || next.length > 2000 || /[\u0000-\u001f\u007f\\]/.test(next)) return fallback;
  if (!next.startsWith('/') || next.startsWith('//')) return fallback;
  let path: string;
  try {
    const url = new URL(next, 'http://workbench.invalid');
    if (url.origin !== 'http://workbench.invalid') return fallback;
    // as the URL parser reads it: percent-encoded (a Location header takes no character over
    // U+00FF) and with dot segments resolved, which can make a network-path ("/.//x" → "//x")
    path = `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return fallback;
  }
  return path.startsWith('//') ? fallback : path;
}

function formBody(request: FastifyRequest): Record<string, string> {
  const b = request.body;
  // a parsed form is a plain object of strings (and arrays of them); anything else is no form
  if (!b || typeof b !== 'object' || Array.isArray(b)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(b as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}
