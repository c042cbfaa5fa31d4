/**
 * @module host/oauth-server/endpoints
 * The JSON endpoints, as functions of their parsed input: the token endpoint (RFC 6749 §3.2 with
 * the authorization_code and refresh_token grants), client registration (RFC 7591 §3) and token
 * revocation (RFC 7009 §2). Every refusal is an OAuthRefusal answered with its RFC error code;
 * clients are public, so a client presenting a secret (HTTP Basic, client_secret, an assertion) is
 * refused with invalid_client rather than have it ignored.
 */
import { parseScope } from './client-metadata.js';
import type { ClientRegistry } from './clients.js';
import { canonicalResource, type Endpoints } from './metadata.js';
import { isOAuthRefusal, refusalAnswer, refuse, type OAuthAnswer } from './oauth-error.js';
import type { Grants } from './grants.js';
import type { TokenStore } from './token-store.js';

export interface EndpointDeps {
  clients: ClientRegistry;
  tokens: TokenStore;
  grants: Grants;
  endpoints: Endpoints;
}

/** A request's parameters: each at most once (RFC 6749 §3.1, §3.2). */
type Form = Record<string, unknown>;

function param(form: Form, name: string): string | undefined {
  const v = form[name];
  if (Array.isArray(v)) throw refuse('invalid_request', `${name} is given more than once.`);
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string') throw refuse('invalid_request', `${name} must be a string.`);
  return v;
}

function required(form: Form, name: string): string {
  const v = param(form, name);
  if (v === undefined) throw refuse('invalid_request', `${name} is required.`);
  return v;
}

/** Answers a refusal as its JSON error; any other error goes on (the route answers it as a server error). */
async function answering(work: () => Promise<OAuthAnswer>): Promise<OAuthAnswer> {
  try {
    return await work();
  } catch (err) {
    if (isOAuthRefusal(err)) return refusalAnswer(err);
    throw err;
  }
}

/** The public client's client_id, refusing the client authentication methods this server has no secret for. */
async function publicClient(form: Form, authorization: string | undefined, deps: EndpointDeps): Promise<string> {
  if (authorization !== undefined && authorization.trim() !== '')
    throw refuse(
      'invalid_client',
      'Clients of this server are public: send client_id in the body, without credentials.',
    );
  if (param(form, 'client_secret') !== undefined || param(form, 'client_assertion') !== undefined)
    throw refuse('invalid_client', 'Clients of this server are public: they have no secret or assertion to present.');
  const clientId = param(form, 'client_id');
  if (clientId === undefined) throw refuse('invalid_client', 'client_id is required.');
  if (!(await deps.clients.exists(clientId)))
    throw refuse('invalid_client', 'This server does not know that client_id: the app must register again.');
  return clientId;
}

function resourceOf(form: Form, e: Endpoints): string | undefined {
  const r = param(form, 'resource');
  if (r === undefined) return undefined;
  const canonical = canonicalResource(e, r);
  if (canonical === undefined) throw refuse('invalid_target', `resource must be ${e.resource}.`);
  return canonical;
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** POST /token (application/x-www-form-urlencoded). */
export function answerToken(form: Form, authorization: string | undefined, deps: EndpointDeps): Promise<OAuthAnswer> {
  return answering(async () => {
    const grantType = required(form, 'grant_type');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
      throw refuse(
        'unsupported_grant_type',
        `grant_type ${grantType.slice(0, 60)} is not supported (authorization_code, refresh_token).`,
      );
    const clientId = await publicClient(form, authorization, deps);
    const resource = resourceOf(form, deps.endpoints);
    const tokens =
      grantType === 'authorization_code'
        ? await deps.tokens.exchangeCode({
            code: required(form, 'code'),
            clientId,
            redirectUri: required(form, 'redirect_uri'),
            codeVerifier: required(form, 'code_verifier'),
            resource,
            audience: deps.endpoints.resource,
          })
        : await deps.tokens.refresh({
            refreshToken: required(form, 'refresh_token'),
            clientId,
            resource,
            scope: refreshScope(param(form, 'scope')),
            audience: deps.endpoints.resource,
          });
    return { status: 200, body: { ...tokens }, headers: NO_STORE };
  }).then((a) => ({ ...a, headers: { ...NO_STORE, ...a.headers } }));
}

function refreshScope(scope: string | undefined): string[] | undefined {
  if (scope === undefined) return undefined;
  const parsed = parseScope(scope);
  if (!parsed) throw refuse('invalid_scope', 'The only scope is "mcp".');
  return scope.split(' ').filter((s) => s !== '');
}

/** POST /register (application/json): the registered client's information (RFC 7591 §3.2.1). */
export function answerRegistration(body: unknown, address: string, deps: EndpointDeps): Promise<OAuthAnswer> {
  return answering(async () => {
    const client = await deps.clients.register(body, address);
    const m = client.metadata;
    return {
      status: 201,
      body: {
        client_id: client.clientId,
        client_id_issued_at: Math.floor(client.createdAt / 1000),
        ...(m.client_name !== undefined ? { client_name: m.client_name } : {}),
        ...(m.client_uri !== undefined ? { client_uri: m.client_uri } : {}),
        redirect_uris: m.redirect_uris,
        grant_types: m.grant_types,
        response_types: m.response_types,
        token_endpoint_auth_method: m.token_endpoint_auth_method,
        scope: 'mcp',
      },
      headers: NO_STORE,
    };
  });
}

/** POST /revoke (RFC 7009): 200 whether or not the token was live (§2.2). */
export function answerRevocation(
  form: Form,
  authorization: string | undefined,
  deps: EndpointDeps,
): Promise<OAuthAnswer> {
  return answering(async () => {
    const token = required(form, 'token');
    const clientId = await publicClient(form, authorization, deps);
    await deps.grants.revoke(token, clientId);
    return { status: 200, body: {} };
  });
}
