/**
 * @module test/helpers/oauth-requests
 * Raw requests to the gateway's OAuth endpoints, for tests of each refusal: PKCE pairs, a client
 * registered over POST /register, an authorization URL, a code obtained through the consent page
 * with a signed-in portal session, and token, revocation and /mcp requests read as status and JSON.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hiddenFields } from './oauth-client.js';
import type { WebClient } from './web-client.js';

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface Reply {
  status: number;
  // Tests read arbitrary JSON.
  json: any;
  headers: Headers;
}

async function read(res: Response): Promise<Reply> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}

export async function registerClient(
  base: string,
  metadata: unknown,
  contentType = 'application/json',
): Promise<Reply> {
  return read(
    await fetch(`${base}/register`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: typeof metadata === 'string' ? metadata : JSON.stringify(metadata),
    }),
  );
}

/** Registers a public client with one redirect URI; its client_id. */
export async function registeredClient(
  base: string,
  redirectUri: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const r = await registerClient(base, {
    client_name: 'Raw client',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: 'none',
    ...extra,
  });
  if (r.status !== 201) throw new Error(`registration answered ${r.status}: ${JSON.stringify(r.json)}`);
  return String(r.json.client_id);
}

export function authorizePath(params: Record<string, string | string[]>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? v : [v]) q.append(k, one);
  return `/authorize?${q.toString()}`;
}

/** The usual authorization parameters of a client, with any of them replaced (undefined leaves one out). */
export function authorizationParams(
  base: string,
  clientId: string,
  redirectUri: string,
  challenge: string,
  over: Record<string, string | readonly string[] | undefined> = {},
): Record<string, string | string[]> {
  const all: Record<string, string | readonly string[] | undefined> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    resource: `${base}/mcp`,
    scope: 'mcp',
    ...over,
  };
  return Object.fromEntries(
    Object.entries(all).flatMap(([k, v]) => (v === undefined ? [] : [[k, typeof v === 'string' ? v : [...v]]])),
  );
}

/** A person allows the request on the consent page; the code from the redirect. */
export async function codeThroughConsent(web: WebClient, params: Record<string, string | string[]>): Promise<string> {
  const page = await web.get(authorizePath(params));
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${page.body.slice(0, 400)}`);
  const res = await web.post('/authorize', { ...hiddenFields(page.body), decision: 'allow' });
  const code = res.location ? new URL(res.location).searchParams.get('code') : null;
  if (!code) throw new Error(`no code: ${res.status} ${res.location ?? ''}`);
  return code;
}

export async function postForm(
  base: string,
  endpoint: '/token' | '/revoke',
  form: Record<string, string | string[]>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
  return read(
    await fetch(base + endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: body.toString(),
    }),
  );
}

/** A tools/list on /mcp with a bearer: its status. */
export async function mcpWith(base: string, bearer: string): Promise<number> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  await res.body?.cancel();
  return res.status;
}
