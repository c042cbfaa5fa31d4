/**
 * @module host/oauth-server/server
 * Workbench as the OAuth 2.1 authorization server of its own /mcp (MCP 2025-11-25, authorization):
 * one object holding the endpoints' addresses, the client registry, the token store and the
 * registration budget, with what each caller needs — the HTTP routes (host/transport/oauth-routes.ts)
 * the metadata and the JSON endpoints, the portal (host/portal/consent-routes.ts) the authorization
 * check and the consent's outcome, the keys page the grants, and caller auth on /mcp the access
 * token check. No fastify here: the routes hand in parsed input and send what comes back.
 */
import type { OAuthServerPolicy } from '../policy/schema.js';
import type { Db } from '../storage/db.js';
import type { User } from '../storage/users.js';
import { AddressBudget } from './address-budget.js';
import { checkAuthorization, redirectWith, type AuthorizationCheck, type AuthorizationRequest } from './authorize.js';
import { ClientRegistry } from './clients.js';
import { answerRegistration, answerRevocation, answerToken, type EndpointDeps } from './endpoints.js';
import { authorizationServerMetadata, endpointsOf, protectedResourceMetadata, type Endpoints } from './metadata.js';
import type { OAuthAnswer } from './oauth-error.js';
import { ACCESS_TOKEN_PREFIX } from './secrets.js';
import { Grants, type GrantInfo } from './grants.js';
import { TokenStore, type TokenLifetimes } from './token-store.js';

export type { AuthorizationCheck, AuthorizationRequest } from './authorize.js';
export { AUTHORIZATION_PARAMS } from './authorize.js';
export type { GrantInfo } from './grants.js';
export type { OAuthAnswer } from './oauth-error.js';

export interface OAuthServerOptions {
  db: Db;
  publicUrl: string;
  policy: OAuthServerPolicy;
  /** a fetch with the egress address rules that follows no redirects (client metadata documents) */
  fetch: typeof fetch;
  /** the policy's `upstreams` mapping */
  mapUrl: (url: string) => string;
  now?: () => number;
  /** where sweeps that fail are reported */
  logger?: { warn(obj: object, msg?: string): void };
}

/** An access token's user, and whether the token is still live (asked again while a request runs). */
export interface BearerCaller {
  user: User;
  live(): Promise<boolean>;
}

export interface OAuthServer {
  readonly endpoints: Endpoints;
  /** how long access and refresh tokens live (the consent page says so) */
  readonly lifetimes: TokenLifetimes;
  protectedResourceMetadata(): Record<string, unknown>;
  authorizationServerMetadata(): Record<string, unknown>;
  token(form: Record<string, unknown>, authorization: string | undefined): Promise<OAuthAnswer>;
  register(body: unknown, address: string): Promise<OAuthAnswer>;
  revoke(form: Record<string, unknown>, authorization: string | undefined): Promise<OAuthAnswer>;
  /** checks an authorization request (the query of GET /authorize, or the consent form) */
  checkAuthorization(params: Record<string, unknown>, address: string): Promise<AuthorizationCheck>;
  /** the person allowed it: where to send them (the redirect URI with a new code and the state) */
  approve(request: AuthorizationRequest, userId: string, keyId: string | null): Promise<string>;
  /** the person refused: the redirect URI with error=access_denied */
  deny(request: AuthorizationRequest): string;
  /** whether a presented bearer credential is one of this server's access tokens */
  ownsToken(token: string): boolean;
  /** the caller of an access token for /mcp, or undefined (unknown, expired, revoked, another audience) */
  verifyAccessToken(token: string): Promise<BearerCaller | undefined>;
  /** the WWW-Authenticate challenge of a 401 from /mcp (RFC 6750 §3, RFC 9728 §5.1) */
  challenge(invalidToken: boolean): string;
  listGrants(userId: string): Promise<GrantInfo[]>;
  revokeGrant(userId: string, grantId: string): Promise<boolean>;
  /** deletes what has ended (codes, tokens, old grants, unused registrations) */
  sweep(): Promise<void>;
}

export function createOAuthServer(o: OAuthServerOptions): OAuthServer {
  const now = o.now ?? Date.now;
  const endpoints = endpointsOf(o.publicUrl);
  const clients = new ClientRegistry({
    db: o.db,
    now,
    budget: new AddressBudget(o.policy.registrationsPerHourPerAddress, now),
    dynamicRegistration: o.policy.dynamicRegistration,
    clientIdMetadataDocuments: o.policy.clientIdMetadataDocuments,
    fetch: o.fetch,
    mapUrl: o.mapUrl,
  });
  const tokens = new TokenStore(
    o.db,
    { accessSec: o.policy.accessTokenTtlSec, refreshSec: o.policy.refreshTokenTtlSec },
    now,
  );
  const grants = new Grants(o.db, now);
  const deps: EndpointDeps = { clients, tokens, grants, endpoints };
  const sweep = async (): Promise<void> => {
    await grants.sweep();
    await clients.sweep();
  };
  const sweepQuietly = (): void =>
    void sweep().catch((err: unknown) =>
      o.logger?.warn({ error: (err as Error).message }, 'oauth server: sweeping ended codes and tokens failed'),
    );
  return {
    endpoints,
    lifetimes: tokens.ttl,
    protectedResourceMetadata: () => protectedResourceMetadata(endpoints),
    authorizationServerMetadata: () => authorizationServerMetadata(endpoints, o.policy),
    token: (form, authorization) => answerToken(form, authorization, deps),
    async register(body, address) {
      const answer = await answerRegistration(body, address, deps);
      // housekeeping rides on registrations (rare, and on whichever replica)
      if (answer.status === 201) sweepQuietly();
      return answer;
    },
    revoke: (form, authorization) => answerRevocation(form, authorization, deps),
    checkAuthorization: (params, address) => checkAuthorization(params, { clients, endpoints, address }),
    async approve(request, userId, keyId) {
      const { client } = request;
      const code = await tokens.issueCode({
        clientId: client.clientId,
        clientName: displayName(client.clientId, client.metadata.client_name),
        userId,
        keyId,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        resource: request.resource,
        scope: request.scope,
        refreshable: client.metadata.grant_types.includes('refresh_token'),
      });
      await clients.touch(client.clientId);
      sweepQuietly();
      return redirectWith(request.redirectUri, { code, state: request.state, iss: endpoints.issuer });
    },
    deny: (request) =>
      redirectWith(request.redirectUri, {
        error: 'access_denied',
        error_description: 'The person did not allow access.',
        state: request.state,
        iss: endpoints.issuer,
      }),
    ownsToken: (token) => token.startsWith(ACCESS_TOKEN_PREFIX),
    async verifyAccessToken(token) {
      const found = await grants.verifyAccess(token, endpoints.resource);
      if (!found) return undefined;
      return { user: found.user, live: () => grants.accessLive(found.tokenHash, endpoints.resource) };
    },
    challenge: (invalidToken) =>
      `Bearer realm="workbench"${invalidToken ? ', error="invalid_token"' : ''}, resource_metadata="${endpoints.resourceMetadataUrl}", scope="mcp"`,
    listGrants: (userId) => grants.listGrants(userId),
    revokeGrant: (userId, grantId) => grants.revokeGrant(userId, grantId),
    sweep,
  };
}

/** What a client is called on the consent page and the keys page: its name, or its client_id's host. */
export function displayName(clientId: string, name: string | undefined): string {
  if (name !== undefined) return name;
  try {
    return clientId.startsWith('https://') ? new URL(clientId).host : 'An unnamed app';
  } catch {
    return 'An unnamed app';
  }
}
