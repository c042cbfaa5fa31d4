/**
 * @module host/transport/mcp-http
 * MCP over Streamable HTTP at /mcp, mounted in fastify with reply.hijack(). Stateless: each POST
 * gets a fresh protocol server and transport bound to the authenticated caller, so any replica can
 * answer any request. The answer is one JSON body unless something must stream: a request that asks
 * for progress (a progressToken) or a tool that waits on the user gets SSE, so its progress
 * notifications and keep-alive comments reach the client. GET and DELETE answer 405 (no standalone
 * stream, no session to delete). A body that is not a JSON-RPC message is answered here (-32600,
 * see mcp-envelope.ts), never handed to the SDK.
 */
import { finished } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { UserStore } from '../storage/users.js';
import {
  authenticateCaller,
  cameOverLimit,
  challengeFor,
  checkKeyFirst,
  presentedKey,
  sendTooManyRequests,
  sendUnauthorized,
  type BearerTokens,
  type UserRequests,
} from './caller-auth.js';
import { callerIdentity, McpCancellations } from './mcp-cancellation.js';
import { invalidRequest, tooManyExecutions } from './mcp-envelope.js';
import { buildMcpServer, type McpServerDeps } from './mcp-server.js';

export interface McpHttpDeps extends McpServerDeps {
  users: UserStore;
  bodyLimit: number;
  /** requests.maxBatch: the executions one POST may hold, across a JSON-RPC batch's execute_tools */
  maxBatch: number;
  /** requests.maxBatchResultBytes: the results one POST may return, shared by its execute_tools */
  maxBatchResultBytes: number;
  /** each user's POSTs in flight (requests.maxInFlightPerUser), shared with REST */
  requests: UserRequests;
  /** OAuth access tokens taken besides API keys (the gateway's authorization server), when it is on */
  tokens?: BearerTokens | undefined;
}

/**
 * Meta-tools that wait on something outside the gateway (the user finishing a connect flow) for up
 * to minutes: their answers always stream, so the SSE keep-alive comments keep idle-timeout proxies
 * from cutting the connection even when the client asked for no progress.
 */
const WAITING_TOOLS: ReadonlySet<string> = new Set(['wait_for_connection']);

/**
 * Whether the answer to this POST must be an SSE stream. Progress notifications (and the transport's
 * keep-alives) can only travel on a stream; an answer with nothing to send but its responses is
 * cheaper as one JSON body, which the spec lets the server choose and every client must accept.
 */
/**
 * Applies a `notifications/cancelled` as the SDK hands it to the server, not as the POST arrives:
 * a POST the SDK refuses (406 without both Accept types, 415, a protocol version it does not
 * support, …) then cancels nothing, as it answers nothing.
 */
function applyCancellations(
  transport: Transport,
  onCancelled: () => void,
  cancel: (message: JSONRPCMessage) => number,
): void {
  const dispatch = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && message.method === 'notifications/cancelled' && cancel(message) > 0) onCancelled();
    dispatch?.(message, extra);
  };
}

export function needsStream(body: unknown): boolean {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.some((m) => {
    if (typeof m !== 'object' || m === null) return false;
    const params = (m as { params?: unknown }).params;
    if (typeof params !== 'object' || params === null) return false;
    const { _meta: meta, name } = params as { _meta?: unknown; name?: unknown };
    if (typeof meta === 'object' && meta !== null && (meta as { progressToken?: unknown }).progressToken !== undefined)
      return true;
    return (m as { method?: unknown }).method === 'tools/call' && typeof name === 'string' && WAITING_TOOLS.has(name);
  });
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpHttpDeps): void {
  const cancellations = new McpCancellations();
  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    handler: async (_request, reply) => {
      void reply
        .code(405)
        .header('allow', 'POST')
        .send({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Method not allowed: this server is stateless; use POST' },
          id: null,
        });
    },
  });

  app.route({
    method: 'POST',
    url: '/mcp',
    bodyLimit: deps.bodyLimit,
    onRequest: checkKeyFirst(deps.users, true, deps.requests, deps.tokens),
    // the request counts against its user's requests in flight until its answer has ended (not
    // until this settles: in JSON mode the SDK's handleRequest never settles once the client has
    // gone, and the client's going aborts what the request started)
    handler: (request, reply) => answerPost(deps, cancellations, request, reply),
  });
}

/** One POST /mcp: the caller and its body checked, then handed to a fresh protocol server. */
async function answerPost(
  deps: McpHttpDeps,
  cancellations: McpCancellations,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const authenticated = await authenticateCaller(deps.users, request, deps.tokens);
  if (!authenticated) return sendUnauthorized(reply, true, deps.tokens && challengeFor(request, deps.tokens));
  // let in over its user's limit for notifications only (a cancellation): a request is refused
  if (cameOverLimit(request) && holdsRequest(request.body))
    return void sendTooManyRequests(reply, true, deps.requests.limit);
  const { user, keyValid } = authenticated;
  // No parsed body (no JSON content type): the SDK answers that (415), as it would directly.
  const invalid =
    request.body === undefined
      ? undefined
      : (invalidRequest(request.body) ?? tooManyExecutions(request.body, deps.maxBatch));
  if (invalid)
    return reply.code(400).send({ jsonrpc: '2.0', error: { code: -32600, message: invalid.message }, id: invalid.id });
  const caller = callerIdentity(user.id, presentedKey(request) ?? '');
  const tracked = cancellations.track(caller, request.body);
  releaseWhenAnswered(request, reply, tracked);
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) reply.raw.setHeader(k, v);
  reply.hijack();
  const server = buildMcpServer(deps, user, 'mcp', {
    cancellation: (id) => tracked.signalFor(id),
    keyValid,
    resultBudget: { remaining: deps.maxBatchResultBytes },
  });
  // The SDK refuses (406) a POST whose Accept lacks either type; the check here keeps a JSON
  // answer tied to a client that said it takes one, whatever the SDK does.
  const acceptsJson = /\bapplication\/json\b/i.test(request.headers.accept ?? '');
  const transport = new StreamableHTTPServerTransport({
    enableJsonResponse: acceptsJson && !needsStream(request.body),
  });
  finished(reply.raw, () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    applyCancellations(
      transport,
      () => {
        request.log.info({ userId: user.id }, 'MCP request cancelled by the client');
      },
      (message) => cancellations.cancel(caller, message),
    );
    await transport.handleRequest(request.raw, reply.raw, request.body);
  } catch (err) {
    request.log.error({ err }, 'MCP request failed');
    if (!reply.raw.headersSent)
      reply.raw
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    else if (!reply.raw.writableEnded) reply.raw.end();
  }
}

/**
 * Releases the request's cancellation tracking once its answer has ended, or its socket closed.
 * finished() calls back even when the client already hung up during the key check; a response
 * pipelined behind another on a connection the client drops never finishes, but its socket closes.
 */
function releaseWhenAnswered(request: FastifyRequest, reply: FastifyReply, tracked: { release(): void }): void {
  let untracked = false;
  const untrack = (): void => {
    if (untracked) return;
    untracked = true;
    request.raw.socket?.off('close', untrack);
    tracked.release();
  };
  finished(reply.raw, untrack);
  request.raw.socket?.once('close', untrack);
}

/** Whether a JSON-RPC body holds a request (a message with a method and an id), not only notifications or responses. */
function holdsRequest(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => typeof m !== 'object' || m === null || ('method' in m && 'id' in m));
}
