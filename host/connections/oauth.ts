/**
 * @module host/connections/oauth
 * The OAuth2 authorization-code flow with PKCE (S256) as a client: the authorization URL, the code
 * exchange, refresh and revocation (RFC 6749, 7636, 7009). Client authentication goes in the body or
 * as HTTP Basic as the manifest says. Every request has a timeout; failures become OAuthError kinds.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { PluginAuth, PluginManifest } from '../../contracts/manifest.js';
import { instanceClientsFromEnv } from './instance-clients.js';
import { OAuthError, discardBody, readTokenResponse, type TokenSet } from './token-response.js';

export { OAuthError, type OAuthErrorKind, type TokenSet } from './token-response.js';

export type OAuth2Auth = Extract<PluginAuth, { type: 'oauth2' }>;

export interface OAuthClient {
  clientId: string;
  /** absent for a public (PKCE-only) client */
  clientSecret?: string;
}

export interface OAuthHttpOptions {
  fetch?: typeof fetch;
  /** maps a provider URL to the one actually used (the policy's `upstreams`, for tests and staging) */
  mapUrl?: (url: string) => string;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;

export function oauth2Of(manifest: PluginManifest): OAuth2Auth | undefined {
  return manifest.auth.type === 'oauth2' ? manifest.auth : undefined;
}

/** Environment variable prefix for a plugin's client credentials: `atlassian-jira` → `ATLASSIAN_JIRA`. */
export function clientEnvPrefix(pluginName: string): string {
  return pluginName.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/**
 * `<PLUGIN>_CLIENT_ID` / `<PLUGIN>_CLIENT_SECRET` from the environment; undefined without a client
 * id. With `instance`, the client registered on that instance, from `<PLUGIN>_INSTANCE_CLIENTS`
 * (instance-clients.ts): never the default's, whose secret is not the instance's to see.
 */
export function clientFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): (pluginName: string, instance?: string) => OAuthClient | undefined {
  const instanceClients = instanceClientsFromEnv(env);
  return (pluginName, instance) => {
    const prefix = clientEnvPrefix(pluginName);
    if (instance !== undefined) return instanceClients.get(prefix)?.get(instance);
    const clientId = env[`${prefix}_CLIENT_ID`]?.trim();
    if (!clientId) return undefined;
    const clientSecret = env[`${prefix}_CLIENT_SECRET`]?.trim();
    return clientSecret ? { clientId, clientSecret } : { clientId };
  };
}

/** The instances of a plugin on which the operator registered a client (`<PLUGIN>_INSTANCE_CLIENTS`), by origin. */
export function instanceOriginsFromEnv(env: NodeJS.ProcessEnv = process.env): (pluginName: string) => string[] {
  const instanceClients = instanceClientsFromEnv(env);
  return (pluginName) => [...(instanceClients.get(clientEnvPrefix(pluginName))?.keys() ?? [])];
}

/**
 * The provider's endpoints for a connection to `instance`: the manifest's URLs for the default
 * (undefined), else the instance's origin with the paths of `auth.instance.oauth`; undefined when
 * the integration declares no OAuth endpoints for instances (a personal token is the way in then).
 */
export function oauthForInstance(auth: OAuth2Auth, instance: string | undefined): OAuth2Auth | undefined {
  if (instance === undefined) return auth;
  const paths = auth.instance?.oauth;
  if (!paths) return undefined;
  const { revocationUrl: _default, ...rest } = auth;
  return {
    ...rest,
    authorizationUrl: instance + paths.authorizationPath,
    tokenUrl: instance + paths.tokenPath,
    ...(paths.revocationPath !== undefined ? { revocationUrl: instance + paths.revocationPath } : {}),
  };
}

/** A random state/verifier value: 32 bytes, base64url (43 characters, within RFC 7636's 43..128). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function authorizationUrl(
  auth: OAuth2Auth,
  client: OAuthClient,
  params: { redirectUri: string; state: string; codeVerifier?: string; mapUrl?: (url: string) => string },
): string {
  const url = new URL((params.mapUrl ?? ((u: string) => u))(auth.authorizationUrl));
  for (const [k, v] of Object.entries(auth.authorizationParams)) url.searchParams.set(k, v);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('state', params.state);
  if (auth.scopes.length > 0) url.searchParams.set('scope', auth.scopes.join(auth.scopeSeparator));
  if (auth.pkce && params.codeVerifier) {
    url.searchParams.set('code_challenge', pkceChallenge(params.codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}

async function post(
  url: string,
  form: URLSearchParams,
  auth: OAuth2Auth,
  client: OAuthClient,
  what: string,
  opts: OAuthHttpOptions,
): Promise<Response> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (auth.clientAuth === 'basic' && client.clientSecret !== undefined) {
    const pair = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
    headers['authorization'] = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    form.set('client_id', client.clientId);
    if (client.clientSecret !== undefined) form.set('client_secret', client.clientSecret);
  }
  const target = (opts.mapUrl ?? ((u: string) => u))(url);
  try {
    return await (opts.fetch ?? fetch)(target, {
      method: 'POST',
      headers,
      body: form.toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const reason = e.name === 'TimeoutError' ? 'timed out' : (e.cause?.code ?? e.message);
    throw new OAuthError(
      'provider_unavailable',
      `${what}: the provider's token endpoint ${new URL(url).host} is unreachable (${reason})`,
    );
  }
}

export async function exchangeCode(
  auth: OAuth2Auth,
  client: OAuthClient,
  params: { code: string; redirectUri: string; codeVerifier?: string },
  opts: OAuthHttpOptions = {},
): Promise<TokenSet> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: params.code,
    redirect_uri: params.redirectUri,
  });
  if (auth.pkce && params.codeVerifier) form.set('code_verifier', params.codeVerifier);
  const res = await post(auth.tokenUrl, form, auth, client, 'token exchange', opts);
  return readTokenResponse(res, 'token exchange', auth.tokenPath, [
    params.code,
    params.codeVerifier,
    client.clientSecret,
  ]);
}

export async function refreshAccessToken(
  auth: OAuth2Auth,
  client: OAuthClient,
  refreshToken: string,
  opts: OAuthHttpOptions = {},
): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken });
  const res = await post(auth.tokenUrl, form, auth, client, 'token refresh', opts);
  return readTokenResponse(res, 'token refresh', auth.tokenPath, [refreshToken, client.clientSecret]);
}

/** RFC 7009 revocation. Resolves true when the provider accepted it; false when it has no revocation URL. */
export async function revokeToken(
  auth: OAuth2Auth,
  client: OAuthClient,
  token: string,
  hint: 'access_token' | 'refresh_token',
  opts: OAuthHttpOptions = {},
): Promise<boolean> {
  if (!auth.revocationUrl) return false;
  const form = new URLSearchParams({ token, token_type_hint: hint });
  const res = await post(auth.revocationUrl, form, auth, client, 'token revocation', opts);
  // only the status matters: the body (of any size; the URL comes from a manifest) is not read
  await discardBody(res);
  if (res.ok) return true;
  throw new OAuthError(
    res.status >= 500 ? 'provider_unavailable' : 'provider_error',
    `token revocation: the provider answered HTTP ${res.status}`,
  );
}
