/**
 * @module host/transport/oauth-routes
 * The authorization server's machine-facing routes (the logic is host/oauth-server's): the
 * protected resource metadata and the authorization server metadata (GET, JSON, readable from any
 * origin), and POST /token, /register and /revoke. They live in one encapsulated scope whose own
 * form parser (the token and revocation requests are application/x-www-form-urlencoded) and error
 * handler apply to them only: a body they cannot read is answered as an OAuth error
 * (invalid_request), never as a 500 or an HTML page. The consent page, /authorize, is the portal's.
 */
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthAnswer, OAuthServer } from '../oauth-server/server.js';

/** the largest form or registration body read (a registration with ten long redirect URIs is ~12 KiB) */
const BODY_LIMIT = 32 * 1024;

/** Metadata is public and holds nothing per caller: any web page may read it (browser-based MCP clients). */
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'content-type, authorization, mcp-protocol-version',
  'access-control-max-age': '600',
};

export function registerOAuthRoutes(app: FastifyInstance, server: OAuthServer): void {
  void app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: BODY_LIMIT });
    scope.setErrorHandler((err: FastifyError, request, reply) => answerUnreadable(err, request, reply));

    const json = (reply: FastifyReply, body: Record<string, unknown>): FastifyReply =>
      reply.headers(CORS).header('cache-control', 'public, max-age=300').send(body);
    for (const path of server.endpoints.resourceMetadataPaths)
      scope.get(path, async (_request, reply) => json(reply, server.protectedResourceMetadata()));
    for (const path of server.endpoints.serverMetadataPaths)
      scope.get(path, async (_request, reply) => json(reply, server.authorizationServerMetadata()));

    const paths = [...server.endpoints.resourceMetadataPaths, ...server.endpoints.serverMetadataPaths];
    for (const path of [...paths, '/token', '/register', '/revoke'])
      scope.options(path, async (_request, reply) => reply.code(204).headers(CORS).send());

    scope.post('/token', { bodyLimit: BODY_LIMIT }, async (request, reply) => {
      if (!isForm(request)) return send(reply, notForm());
      return send(reply, await server.token(formOf(request), authorizationOf(request)));
    });
    scope.post('/revoke', { bodyLimit: BODY_LIMIT }, async (request, reply) => {
      if (!isForm(request)) return send(reply, notForm());
      return send(reply, await server.revoke(formOf(request), authorizationOf(request)));
    });
    scope.post('/register', { bodyLimit: BODY_LIMIT }, async (request, reply) => {
      if (!/^application\/json\b/i.test(request.headers['content-type'] ?? ''))
        return send(reply, refusal('invalid_client_metadata', 'Send the client metadata as application/json.'));
      return send(reply, await server.register(request.body, request.ip));
    });
  });
}

function send(reply: FastifyReply, answer: OAuthAnswer): FastifyReply {
  return reply
    .code(answer.status)
    .headers({ 'access-control-allow-origin': '*', ...(answer.headers ?? {}) })
    .send(answer.body);
}

function refusal(error: string, description: string, status = 400): OAuthAnswer {
  return { status, body: { error, error_description: description, code: 'GW_ERR_OAUTH_REFUSED' } };
}

const isForm = (request: FastifyRequest): boolean =>
  /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '');

const notForm = (): OAuthAnswer =>
  refusal('invalid_request', 'Send the parameters as application/x-www-form-urlencoded.');

function formOf(request: FastifyRequest): Record<string, unknown> {
  const b = request.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

function authorizationOf(request: FastifyRequest): string | undefined {
  const a = request.headers.authorization;
  return typeof a === 'string' ? a : undefined;
}

/** A body the scope could not read (too large, a type no parser takes, bad JSON), as an OAuth error. */
function answerUnreadable(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err }, 'oauth request failed');
    return send(reply, refusal('server_error', 'The server failed to answer; try again.', 500));
  }
  if (status === 413 || status === 415) void reply.header('connection', 'close');
  const what =
    status === 413
      ? `The body is larger than ${BODY_LIMIT} bytes.`
      : status === 415
        ? 'The body is of a type this endpoint does not read.'
        : 'The body could not be read.';
  return send(
    reply,
    refusal(request.url.startsWith('/register') ? 'invalid_client_metadata' : 'invalid_request', what, status),
  );
}
