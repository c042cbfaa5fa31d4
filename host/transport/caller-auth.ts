/**
 * @module host/transport/caller-auth
 * Who is calling: `x-workbench-api-key: <key>` or `Authorization: Bearer <key>`. Keys are looked up
 * by hash; an unknown or revoked key is 401 with a WWW-Authenticate challenge.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User, UserStore } from '../storage/users.js';

export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-workbench-api-key'];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  const auth = request.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m?.[1]) return m[1];
  }
  return undefined;
}

export async function authenticateCaller(users: UserStore, request: FastifyRequest): Promise<User | undefined> {
  const key = presentedKey(request);
  return key ? users.authenticate(key) : undefined;
}

export function sendUnauthorized(reply: FastifyReply, jsonRpc: boolean): void {
  const body = jsonRpc
    ? { jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized: send your Workbench API key as "Authorization: Bearer <key>" or "x-workbench-api-key"' }, id: null }
    : { error: 'Unauthorized', code: 'GW_ERR_TRANSPORT_UNAUTHORIZED', message: 'Send your Workbench API key as "Authorization: Bearer <key>" or "x-workbench-api-key".' };
  void reply.code(401).header('www-authenticate', 'Bearer realm="workbench"').send(body);
}
