/**
 * @module host/oauth-server/authorize
 * The authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636, and resource indicators, RFC
 * 8707), checked in the order that decides where a refusal may go (RFC 6749 §4.1.2.1): first the
 * client and its redirect URI — while either is unknown, nothing is sent to the redirect URI and
 * the person gets an error page (no open redirect: the redirect URI must equal, character for
 * character, one the client registered or published) — then everything else, whose refusals go
 * back to that redirect URI with the RFC error code, the `state` and the issuer (RFC 9207).
 * A parameter given twice is refused (§3.1). PKCE is S256 only: `plain`, or no method, is refused.
 */
import { parseScope, type GrantType } from './client-metadata.js';
import type { ClientRegistry, OAuthClient } from './clients.js';
import { canonicalResource, type Endpoints } from './metadata.js';
import { isOAuthRefusal, type OAuthErrorCode } from './oauth-error.js';
import { CODE_CHALLENGE } from './secrets.js';

/** The longest `state` echoed back. */
export const MAX_STATE_LENGTH = 1024;

/** An authorization request that may be shown to the person for consent. */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  state: string | undefined;
}

export type AuthorizationCheck =
  | { kind: 'valid'; request: AuthorizationRequest }
  /** the client or its redirect URI is unknown: an error page, never a redirect */
  | { kind: 'page'; status: number; message: string; retryAfterSec?: number }
  /** a refusal sent back to the client's (validated) redirect URI */
  | { kind: 'redirect'; location: string };

/** The authorization parameters a consent form carries back, by name. */
export const AUTHORIZATION_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'resource',
  'scope',
] as const;

type Params = Record<string, unknown>;

/** What `one` answers for a parameter given more than once. */
const TWICE = Symbol('given twice');

/** A parameter's one value; TWICE when it was given more than once. */
function one(params: Params, name: string): string | undefined | typeof TWICE {
  const v = params[name];
  if (Array.isArray(v)) return v.length === 1 && typeof v[0] === 'string' ? v[0] : TWICE;
  return typeof v === 'string' ? v : undefined;
}

/** The redirect URI with an authorization response's parameters (success or error) added. */
export function redirectWith(redirectUri: string, values: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(values)) if (v !== undefined) url.searchParams.append(k, v);
  return url.href;
}

export async function checkAuthorization(
  params: Params,
  deps: { clients: ClientRegistry; endpoints: Endpoints; address: string },
): Promise<AuthorizationCheck> {
  const clientId = one(params, 'client_id');
  if (clientId === undefined || clientId === TWICE || clientId === '')
    return page('The request names no client_id (or names it twice), so it is not known which app is asking.');
  let client: OAuthClient;
  try {
    client = await deps.clients.find(clientId, deps.address);
  } catch (err) {
    if (!isOAuthRefusal(err)) throw err;
    return err.retryAfterSec === undefined
      ? page(err.message)
      : { kind: 'page', status: 429, message: err.message, retryAfterSec: err.retryAfterSec };
  }
  const redirectUri = one(params, 'redirect_uri');
  if (redirectUri === undefined || redirectUri === TWICE)
    return page('The request names no redirect_uri (or names it twice): it must name one the app registered.');
  if (!client.metadata.redirect_uris.includes(redirectUri))
    return page(
      `The redirect_uri ${redirectUri.slice(0, 200)} is not one this app registered, so nothing is sent there.`,
    );
  return checkTheRest(params, client, redirectUri, deps.endpoints);
}

/** The checks whose refusals go back to the (now validated) redirect URI. */
function checkTheRest(params: Params, client: OAuthClient, redirectUri: string, e: Endpoints): AuthorizationCheck {
  const stateValue = one(params, 'state');
  const state = stateValue === TWICE || (stateValue?.length ?? 0) > MAX_STATE_LENGTH ? undefined : stateValue;
  const back = (error: OAuthErrorCode, description: string): AuthorizationCheck => ({
    kind: 'redirect',
    location: redirectWith(redirectUri, { error, error_description: description, state, iss: e.issuer }),
  });
  if (stateValue === TWICE) return back('invalid_request', 'state is given more than once.');
  if (state !== stateValue) return back('invalid_request', `state may be at most ${MAX_STATE_LENGTH} characters.`);
  const responseType = one(params, 'response_type');
  if (responseType === undefined || responseType === TWICE)
    return back('invalid_request', 'response_type is required, once.');
  if (responseType !== 'code') return back('unsupported_response_type', 'Only response_type=code is supported.');
  if (!client.metadata.grant_types.includes('authorization_code' satisfies GrantType))
    return back('unauthorized_client', 'The client did not register the authorization_code grant type.');
  const method = one(params, 'code_challenge_method');
  if (method !== 'S256')
    return back(
      'invalid_request',
      method === 'plain'
        ? 'PKCE code_challenge_method "plain" is not supported: use S256.'
        : 'PKCE is required: code_challenge_method must be S256.',
    );
  const challenge = one(params, 'code_challenge');
  if (challenge === undefined || challenge === TWICE || !CODE_CHALLENGE.test(challenge))
    return back(
      'invalid_request',
      'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).',
    );
  const resourceParam = one(params, 'resource');
  const resource =
    resourceParam === TWICE
      ? undefined
      : resourceParam === undefined
        ? e.resource
        : canonicalResource(e, resourceParam);
  if (resource === undefined)
    return back('invalid_target', `resource must be ${e.resource}: tokens of this server are for its /mcp only.`);
  const scopeParam = one(params, 'scope');
  const scopes = scopeParam === TWICE ? undefined : parseScope(scopeParam);
  if (!scopes) return back('invalid_scope', 'The only scope is "mcp" (and "offline_access", which changes nothing).');
  return {
    kind: 'valid',
    request: { client, redirectUri, codeChallenge: challenge, resource, scope: scopes.join(' '), state },
  };
}

function page(message: string): AuthorizationCheck {
  return { kind: 'page', status: 400, message };
}
