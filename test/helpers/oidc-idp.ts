/**
 * @module test/helpers/oidc-idp
 * A real OpenID Connect provider on 127.0.0.1 for tests: oidc-provider (discovery, JWKS, the
 * authorization endpoint, the token endpoint with PKCE, signed ID tokens, UserInfo), one
 * confidential client registered for the gateway's callback, and people (`accounts`) a test adds
 * with the claims they carry: email, email_verified and any custom claim (released under the
 * `workbench` scope). Its sign-in page is a minimal form of our own: "Account" (the subject) and
 * "Sign in", or "Cancel" (the provider answers access_denied). Consent is implied (the grant is
 * made at sign-in), as a company's provider does for its own applications.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type ProviderContext } from 'oidc-provider';

/** What the provider says about one person (its subject is the key in `accounts`). */
export type IdpClaims = { email?: string; email_verified?: boolean } & Record<string, unknown>;

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** subject → claims; tests add people at any time */
  accounts: Map<string, IdpClaims>;
  /** sign-ins completed on its page, by subject */
  signIns: string[];
  /** the WORKBENCH_OIDC_* environment for a gateway using it */
  env(name?: string): Record<string, string>;
  close(): Promise<void>;
}

/** The claims a scope releases; custom claims ride on `workbench`. */
const CLAIMS = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['name'],
  workbench: ['groups', 'wb_tenant'],
};

const page = (body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head><body><h1>Test identity provider</h1>${body}</body></html>`;

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startTestIdp(o: { redirectUris: string[] }): Promise<TestIdp> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'workbench-portal';
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, IdpClaims>();
  const signIns: string[] = [];
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: o.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: CLAIMS,
    scopes: Object.keys(CLAIMS),
    features: { devInteractions: { enabled: false } },
    // an error page that says what went wrong (a test that fails there shows it)
    renderError: (ctx: { type: string; body: string }, out: Record<string, unknown>) => {
      ctx.type = 'html';
      ctx.body = page(`<p role="alert">${escape(JSON.stringify(out))}</p>`);
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    // a signing key of its own (the built-in one is for oidc-provider's quick start, and says so)
    jwks: {
      keys: [
        { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'test' },
      ],
    },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Grant: 600, Interaction: 600, Session: 600 },
    findAccount: (_ctx: unknown, sub: string) => {
      const claims = accounts.get(sub);
      return claims && { accountId: sub, claims: () => ({ ...claims, sub }) };
    },
    // consent implied: the grant covers every scope the client asks for
    async loadExistingGrant(ctx: ProviderContext) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope(Object.keys(CLAIMS).join(' '));
      await grant.save();
      return grant;
    },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    const m = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '');
    if (!m) return handle(req, res);
    void interaction(provider, accounts, signIns, req, res).catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    signIns,
    env: (name = 'Test IdP') => ({
      WORKBENCH_OIDC_ISSUER: issuer,
      WORKBENCH_OIDC_CLIENT_ID: clientId,
      WORKBENCH_OIDC_CLIENT_SECRET: clientSecret,
      WORKBENCH_OIDC_SCOPES: 'openid email profile workbench',
      WORKBENCH_OIDC_NAME: name,
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The sign-in page (GET) and its form (POST): a known account signs in; Cancel answers access_denied. */
async function interaction(
  provider: Provider,
  accounts: Map<string, IdpClaims>,
  signIns: string[],
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'POST') {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const form = new URLSearchParams(body);
    if (form.get('cancel') !== null)
      return provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the person cancelled' },
        { mergeWithLastSubmission: false },
      );
    const login = form.get('login') ?? '';
    if (accounts.has(login)) {
      signIns.push(login);
      return provider.interactionFinished(
        req,
        res,
        { login: { accountId: login } },
        { mergeWithLastSubmission: false },
      );
    }
    return renderForm(res, details.uid, `No account "${escape(login)}".`);
  }
  return renderForm(res, details.uid);
}

function renderForm(res: http.ServerResponse, uid: string, error = ''): void {
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.end(
    page(`${error ? `<p role="alert">${error}</p>` : ''}<form method="post" action="/interaction/${uid}">
<label for="login">Account</label><input id="login" name="login" autofocus>
<button type="submit">Sign in</button> <button type="submit" name="cancel" value="1">Cancel</button></form>`),
  );
}
