/**
 * @module host/oauth-server/client-metadata
 * What a client says about itself, checked: the body of a Dynamic Client Registration (RFC 7591
 * §2) and a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document) are the same
 * metadata. Only public clients are served (token_endpoint_auth_method "none", PKCE instead of a
 * secret); redirect URIs are https, or http on a loopback address for apps on the person's own
 * computer (RFC 8252 §7.3), never with a fragment or user info. Each redirect URI is kept exactly as
 * the client wrote it: /authorize compares the one it is sent with them by simple string equality.
 * Members this server does not use are ignored, as RFC 7591 §2 allows.
 */
import { isIP } from 'node:net';
import { refuse } from './oauth-error.js';

/** The scope every grant has: act as the person on /mcp, with all the tools they can reach. */
export const MCP_SCOPE = 'mcp';
/** Scopes a client may ask for; offline_access changes nothing (every grant that may refresh gets a refresh token). */
export const KNOWN_SCOPES: ReadonlySet<string> = new Set([MCP_SCOPE, 'offline_access']);

export type GrantType = 'authorization_code' | 'refresh_token';
const GRANT_TYPES: ReadonlySet<string> = new Set<GrantType>(['authorization_code', 'refresh_token']);

/** The metadata of a client as this server keeps it. */
export interface ClientMetadata {
  redirect_uris: string[];
  client_name?: string;
  client_uri?: string;
  grant_types: GrantType[];
  response_types: ['code'];
  token_endpoint_auth_method: 'none';
}

/** At most this many redirect URIs per client, each at most this long. */
export const MAX_REDIRECT_URIS = 10;
export const MAX_URI_LENGTH = 1000;
const MAX_NAME_LENGTH = 100;

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why a redirect URI cannot be registered, or undefined when it can. */
export function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || uri.length === 0) return 'a redirect URI must be a non-empty string';
  if (uri.length > MAX_URI_LENGTH) return `a redirect URI may be at most ${MAX_URI_LENGTH} characters`;
  if (/[\u0000-\u0020\u007f-\u009f\\]/.test(uri))
    return 'a redirect URI may not hold spaces, control characters or "\\"';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `"${uri.slice(0, 100)}" is not an absolute URL`;
  }
  if (url.hash !== '' || uri.includes('#')) return 'a redirect URI may not have a fragment (#…)';
  if (url.username !== '' || url.password !== '') return 'a redirect URI may not hold a user name or password';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return undefined;
  return `"${uri.slice(0, 100)}" is neither https nor http on a loopback address (127.0.0.1, [::1], localhost)`;
}

export function isLoopbackHost(hostname: string): boolean {
  if (LOOPBACK_NAMES.has(hostname)) return true;
  return isIP(hostname) === 4 && hostname.startsWith('127.');
}

/** Why a display string (client_name) is refused, or undefined. */
function nameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'client_name must be a string';
  if (name.trim().length === 0 || name.length > MAX_NAME_LENGTH)
    return `client_name must be 1 to ${MAX_NAME_LENGTH} characters`;
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(name))
    return 'client_name may not hold control or text-direction characters';
  return undefined;
}

function clientUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || uri.length > MAX_URI_LENGTH) return 'client_uri must be a URL string';
  try {
    const u = new URL(uri);
    return u.protocol === 'https:' || u.protocol === 'http:' ? undefined : 'client_uri must be an http(s) URL';
  } catch {
    return 'client_uri must be an absolute URL';
  }
}

/** `grant_types` as given (default ["authorization_code"], RFC 7591 §2), or a problem. */
function grantTypesOf(value: unknown): GrantType[] | string {
  if (value === undefined) return ['authorization_code'];
  if (!Array.isArray(value) || value.length === 0 || value.length > 5) return 'grant_types must be a non-empty array';
  const unknown = (value as unknown[]).find((g) => typeof g !== 'string' || !GRANT_TYPES.has(g));
  if (unknown !== undefined)
    return `grant_types: ${JSON.stringify(unknown)} is not supported (authorization_code, refresh_token)`;
  return [...new Set(value as GrantType[])];
}

function responseTypesProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || value.some((r) => r !== 'code'))
    return 'response_types may only be ["code"]: the authorization code flow is the only one served';
  return undefined;
}

function authMethodProblem(value: unknown): string | undefined {
  if (value === undefined || value === 'none') return undefined;
  return `token_endpoint_auth_method ${JSON.stringify(value).slice(0, 60)} is not supported: this server serves public clients only ("none", with PKCE)`;
}

/**
 * Checks client metadata. Throws OAuthRefusal with invalid_redirect_uri or
 * invalid_client_metadata (RFC 7591 §3.2.2), naming the member at fault.
 */
export function checkClientMetadata(input: unknown): ClientMetadata {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw refuse('invalid_client_metadata', 'the client metadata must be a JSON object');
  const m = input as Record<string, unknown>;
  const uris = m['redirect_uris'];
  if (!Array.isArray(uris) || uris.length === 0)
    throw refuse('invalid_redirect_uri', 'redirect_uris must be a non-empty array of URLs');
  if (uris.length > MAX_REDIRECT_URIS)
    throw refuse('invalid_redirect_uri', `redirect_uris may hold at most ${MAX_REDIRECT_URIS} URLs`);
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw refuse('invalid_redirect_uri', problem);
  }
  const authProblem = authMethodProblem(m['token_endpoint_auth_method']);
  if (authProblem) throw refuse('invalid_client_metadata', authProblem);
  const grantTypes = grantTypesOf(m['grant_types']);
  if (typeof grantTypes === 'string') throw refuse('invalid_client_metadata', grantTypes);
  const responseProblem = responseTypesProblem(m['response_types']);
  if (responseProblem) throw refuse('invalid_client_metadata', responseProblem);
  const name = m['client_name'];
  const badName = name === undefined ? undefined : nameProblem(name);
  if (badName) throw refuse('invalid_client_metadata', badName);
  const clientUri = m['client_uri'];
  const badUri = clientUri === undefined ? undefined : clientUriProblem(clientUri);
  if (badUri) throw refuse('invalid_client_metadata', badUri);
  return {
    redirect_uris: [...new Set(uris as string[])],
    ...(typeof name === 'string' ? { client_name: name.trim() } : {}),
    ...(typeof clientUri === 'string' ? { client_uri: clientUri } : {}),
    grant_types: grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** The scopes of a `scope` parameter (space-separated), or undefined when one is unknown. */
export function parseScope(scope: string | undefined): string[] | undefined {
  const asked = (scope ?? '').split(' ').filter((s) => s !== '');
  if (asked.some((s) => !KNOWN_SCOPES.has(s))) return undefined;
  return [...new Set([MCP_SCOPE, ...asked])];
}
