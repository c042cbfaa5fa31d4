/**
 * @module test/helpers/mock-oauth
 * A real OAuth2 authorization server on 127.0.0.1 for tests: an authorize page with a consent form
 * (Allow / Deny) that redirects back with code+state, a token endpoint that checks the client, the
 * redirect URI and the PKCE verifier, single-use rotating refresh tokens, RFC 7009 revocation, and
 * counters for everything. `mode` switches the token endpoint into failure shapes (down, HTML, …).
 * With `signInElsewhere`, the authorize endpoint first sends a signed-out browser to a sign-in page
 * on a second origin, as auth.atlassian.com sends people to id.atlassian.com.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type TokenEndpointMode =
  'normal' | 'unavailable' | 'html' | 'garbage-json' | 'invalid-grant' | 'form-encoded' | 'slow';

export interface MockOAuthOptions {
  clientId?: string;
  clientSecret?: string;
  /** access token lifetime in seconds (default 3600) */
  accessTtlSec?: number;
  /** rotate the refresh token on every refresh (default true); old ones become invalid */
  rotateRefreshTokens?: boolean;
  /** nest the token set under this key (e.g. 'authed_user', like Slack) */
  nestUnder?: string;
  /** milliseconds the token endpoint waits before answering a refresh (default 0) */
  refreshDelayMs?: number;
  /** endpoint paths, to stand in for a real provider's (e.g. GitHub's /login/oauth/access_token) */
  paths?: { authorize?: string; token?: string; revoke?: string };
  /**
   * The authorize endpoint redirects a browser without the provider's sign-in cookie (302) to a
   * sign-in page on a second origin (another port: `signInOrigin`), which sets the cookie and
   * sends it back to the same authorize URL: a provider whose authorization step leaves for
   * another origin.
   */
  signInElsewhere?: boolean;
}

export interface MockOAuthCounters {
  authorizePages: number;
  consents: number;
  denials: number;
  codeExchanges: number;
  refreshes: number;
  /** refresh_token → times presented (a single-use token presented twice shows 2) */
  refreshTokenUses: Map<string, number>;
  revocations: number;
  tokenErrors: string[];
  /** sign-ins at the second origin (signInElsewhere) */
  signIns: number;
}

export interface MockOAuth {
  origin: string;
  /** with signInElsewhere: the origin of the sign-in page (same host, another port) */
  signInOrigin: string | undefined;
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  clientId: string;
  clientSecret: string;
  counters: MockOAuthCounters;
  mode: TokenEndpointMode;
  /**
   * When set, the token endpoint awaits it (with the grant type) before answering, after counting
   * the request: a test holds an answer there while it changes things (e.g. reconnects).
   */
  gate: ((grant: string) => Promise<void>) | undefined;
  /** the `expires_in` the token endpoint sends from now on (default accessTtlSec); any JSON value */
  expiresIn: unknown;
  /** when set, the token endpoint answers every request with this status and JSON body, before it checks the client or the grant: an error of any shape or size */
  tokenAnswer: { status: number; body: unknown } | undefined;
  /** access tokens currently valid (not revoked, not replaced) */
  activeAccessTokens: Set<string>;
  activeRefreshTokens: Set<string>;
  revoked: Set<string>;
  /** issues a token pair directly, as if a consent had happened earlier */
  issue(): { accessToken: string; refreshToken: string };
  close(): Promise<void>;
}

interface PendingCode {
  redirectUri: string;
  challenge: string | undefined;
  clientId: string;
  scope: string;
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startMockOAuth(options: MockOAuthOptions = {}): Promise<MockOAuth> {
  const clientId = options.clientId ?? 'mock-client';
  const clientSecret = options.clientSecret ?? 'mock-secret';
  const codes = new Map<string, PendingCode>();
  const counters: MockOAuthCounters = {
    authorizePages: 0,
    consents: 0,
    denials: 0,
    codeExchanges: 0,
    refreshes: 0,
    refreshTokenUses: new Map(),
    revocations: 0,
    tokenErrors: [],
    signIns: 0,
  };
  const activeAccessTokens = new Set<string>();
  const activeRefreshTokens = new Set<string>();
  const revoked = new Set<string>();
  const paths = { authorize: '/authorize', token: '/token', revoke: '/revoke', ...(options.paths ?? {}) };
  const rand = (p: string): string => `${p}_${randomBytes(16).toString('hex')}`;

  const issue = (): { accessToken: string; refreshToken: string } => {
    const pair = { accessToken: rand('mock_at'), refreshToken: rand('mock_rt') };
    activeAccessTokens.add(pair.accessToken);
    activeRefreshTokens.add(pair.refreshToken);
    return pair;
  };

  const send = (res: http.ServerResponse, status: number, body: unknown, type = 'application/json'): void => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const oauthError = (res: http.ServerResponse, status: number, error: string, description: string): void => {
    counters.tokenErrors.push(error);
    send(res, status, { error, error_description: description });
  };

  function tokenSet(pair: { accessToken: string; refreshToken: string }, scope: string): Record<string, unknown> {
    const set = {
      access_token: pair.accessToken,
      token_type: 'Bearer',
      expires_in: api.expiresIn,
      refresh_token: pair.refreshToken,
      scope,
    };
    return options.nestUnder ? { ok: true, [options.nestUnder]: set } : set;
  }

  function clientOk(req: http.IncomingMessage, form: URLSearchParams): boolean {
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic?.[1]) {
      const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':').map(decodeURIComponent);
      return id === clientId && secret === clientSecret;
    }
    return form.get('client_id') === clientId && form.get('client_secret') === clientSecret;
  }

  async function token(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const grant = form.get('grant_type');
    if (grant === 'refresh_token') {
      counters.refreshes++;
      const rt = form.get('refresh_token') ?? '';
      counters.refreshTokenUses.set(rt, (counters.refreshTokenUses.get(rt) ?? 0) + 1);
      if (options.refreshDelayMs) await new Promise((r) => setTimeout(r, options.refreshDelayMs));
    }
    if (api.gate) await api.gate(grant ?? '');
    if (api.tokenAnswer) return send(res, api.tokenAnswer.status, api.tokenAnswer.body);
    if (api.mode === 'unavailable') return send(res, 503, '<html><body>Service Unavailable</body></html>', 'text/html');
    if (api.mode === 'html')
      return send(res, 200, '<!doctype html><html><body><h1>Sign in</h1></body></html>', 'text/html; charset=utf-8');
    if (api.mode === 'garbage-json') return send(res, 200, { hello: 'world' });
    if (api.mode === 'slow') await new Promise((r) => setTimeout(r, 60_000));
    if (!clientOk(req, form)) return oauthError(res, 401, 'invalid_client', 'client authentication failed');
    let scope = '';
    if (grant === 'authorization_code') {
      counters.codeExchanges++;
      const code = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (!code) return oauthError(res, 400, 'invalid_grant', 'unknown or used code');
      if (code.redirectUri !== form.get('redirect_uri'))
        return oauthError(res, 400, 'invalid_grant', 'redirect_uri mismatch');
      if (code.challenge !== undefined) {
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge)
          return oauthError(res, 400, 'invalid_grant', 'PKCE verification failed');
      }
      scope = code.scope;
    } else if (grant === 'refresh_token') {
      const rt = form.get('refresh_token') ?? '';
      if (api.mode === 'invalid-grant' || !activeRefreshTokens.has(rt))
        return oauthError(res, 400, 'invalid_grant', 'refresh token is invalid, used or revoked');
      if (options.rotateRefreshTokens ?? true) {
        activeRefreshTokens.delete(rt);
        const pair = issue();
        return reply(res, tokenSet(pair, scope));
      }
      const accessToken = rand('mock_at');
      activeAccessTokens.add(accessToken);
      return reply(res, tokenSet({ accessToken, refreshToken: rt }, scope));
    } else return oauthError(res, 400, 'unsupported_grant_type', String(grant));
    return reply(res, tokenSet(issue(), scope));
  }

  function reply(res: http.ServerResponse, set: Record<string, unknown>): void {
    if (api.mode !== 'form-encoded') return send(res, 200, set);
    const flat = new URLSearchParams();
    for (const [k, v] of Object.entries(set)) if (typeof v !== 'object') flat.set(k, String(v));
    send(res, 200, flat.toString(), 'application/x-www-form-urlencoded; charset=utf-8');
  }

  const SESSION_COOKIE = 'mock_provider_session=signed-in';
  let signInOrigin: string | undefined;

  function authorizePage(req: http.IncomingMessage, url: URL, res: http.ServerResponse): void {
    counters.authorizePages++;
    if (signInOrigin && !(req.headers.cookie ?? '').split(/;\s*/).includes(SESSION_COOKIE)) {
      res.writeHead(302, {
        location: `${signInOrigin}/login?continue=${encodeURIComponent(`${origin}${url.pathname}${url.search}`)}`,
      });
      res.end();
      return;
    }
    const p = url.searchParams;
    if (p.get('client_id') !== clientId || p.get('response_type') !== 'code' || !p.get('redirect_uri'))
      return send(res, 400, '<p>bad authorization request</p>', 'text/html');
    if (p.get('code_challenge') && p.get('code_challenge_method') !== 'S256')
      return send(res, 400, '<p>only S256</p>', 'text/html');
    const hidden = ['redirect_uri', 'state', 'code_challenge', 'scope', 'client_id']
      .map((k) => `<input type="hidden" name="${k}" value="${esc(p.get(k) ?? '')}">`)
      .join('');
    send(
      res,
      200,
      `<!doctype html><html><head><title>Mock provider consent</title></head><body><main><h1>Allow access?</h1>` +
        `<form method="post" action="/authorize/decision">${hidden}` +
        `<button type="submit" name="decision" value="allow">Allow</button>` +
        `<button type="submit" name="decision" value="deny">Deny</button></form></main></body></html>`,
      'text/html; charset=utf-8',
    );
  }

  async function decision(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const back = new URL(form.get('redirect_uri') ?? '');
    const state = form.get('state') ?? '';
    if (form.get('decision') === 'allow') {
      counters.consents++;
      const code = rand('mock_code');
      codes.set(code, {
        redirectUri: form.get('redirect_uri') ?? '',
        challenge: form.get('code_challenge') || undefined,
        clientId,
        scope: form.get('scope') ?? '',
      });
      back.searchParams.set('code', code);
    } else {
      counters.denials++;
      back.searchParams.set('error', 'access_denied');
    }
    back.searchParams.set('state', state);
    res.writeHead(302, { location: back.toString() });
    res.end();
  }

  async function revoke(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    if (!clientOk(req, form)) return oauthError(res, 401, 'invalid_client', 'client authentication failed');
    counters.revocations++;
    const t = form.get('token') ?? '';
    revoked.add(t);
    activeAccessTokens.delete(t);
    activeRefreshTokens.delete(t);
    res.writeHead(200);
    res.end();
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = `${req.method} ${url.pathname}`;
    const done = (p: Promise<void> | void): void => {
      Promise.resolve(p).catch((err: unknown) =>
        send(res, 500, { error: 'server_error', error_description: String(err) }),
      );
    };
    if (route === `GET ${paths.authorize}`) return done(authorizePage(req, url, res));
    if (route === 'POST /authorize/decision') return done(decision(req, res));
    if (route === `POST ${paths.token}`) return done(token(req, res));
    if (route === `POST ${paths.revoke}`) return done(revoke(req, res));
    send(res, 404, { error: 'not_found' });
  });
  // The sign-in page on the second origin: a form that sets the provider's cookie (host-wide, so the
  // authorize endpoint on the other port sees it) and goes back to the authorize URL it came from.
  const signInServer = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /login') {
      const next = url.searchParams.get('continue') ?? '';
      return send(
        res,
        200,
        `<!doctype html><html><head><title>Mock provider sign-in</title></head><body><main><h1>Sign in to the provider</h1>` +
          `<form method="post" action="/login"><input type="hidden" name="continue" value="${esc(next)}"><button type="submit">Sign in</button></form></main></body></html>`,
        'text/html; charset=utf-8',
      );
    }
    if (route === 'POST /login')
      return void readBody(req).then((body) => {
        const next = new URLSearchParams(body).get('continue') ?? '';
        if (!next.startsWith(`${origin}${paths.authorize}?`))
          return send(res, 400, '<p>bad continue URL</p>', 'text/html');
        counters.signIns++;
        res.writeHead(302, { location: next, 'set-cookie': `${SESSION_COOKIE}; Path=/; HttpOnly` });
        res.end();
      });
    send(res, 404, { error: 'not_found' });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (options.signInElsewhere) {
    await new Promise<void>((resolve) => signInServer.listen(0, '127.0.0.1', resolve));
    signInOrigin = `http://127.0.0.1:${(signInServer.address() as AddressInfo).port}`;
  }
  const api: MockOAuth = {
    origin,
    signInOrigin,
    authorizeUrl: `${origin}${paths.authorize}`,
    tokenUrl: `${origin}${paths.token}`,
    revokeUrl: `${origin}${paths.revoke}`,
    clientId,
    clientSecret,
    counters,
    mode: 'normal',
    gate: undefined,
    expiresIn: options.accessTtlSec ?? 3600,
    tokenAnswer: undefined,
    activeAccessTokens,
    activeRefreshTokens,
    revoked,
    issue,
    close: async () => {
      for (const s of signInOrigin ? [server, signInServer] : [server])
        await new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        });
    },
  };
  return api;
}
