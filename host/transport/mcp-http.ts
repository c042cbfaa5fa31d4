/**
 * @module host/transport/mcp-http
 * MCP over Streamable HTTP at /mcp, mounted in fastify with reply.hijack(). Stateless: each POST
 * gets a fresh protocol server and transport bound to the authenticated caller, so any replica can
 * answer any request; responses stream as SSE so progress notifications reach the client.
 * GET and DELETE answer 405 (no standalone stream, no session to delete).
 */
import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { UserStore } from '../storage/users.js';
import { authenticateCaller, sendUnauthorized } from './caller-auth.js';
import { buildMcpServer, type McpServerDeps } from './mcp-server.js';

export interface McpHttpDeps extends McpServerDeps {
  users: UserStore;
  bodyLimit: number;
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpHttpDeps): void {
  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    handler: async (_request, reply) => {
      void reply
        .code(405)
        .header('allow', 'POST')
        .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless; use POST' }, id: null });
    },
  });

  app.route({
    method: 'POST',
    url: '/mcp',
    bodyLimit: deps.bodyLimit,
    handler: async (request, reply) => {
      const user = await authenticateCaller(deps.users, request);
      if (!user) return sendUnauthorized(reply, true);
      for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) reply.raw.setHeader(k, v);
      reply.hijack();
      const server = buildMcpServer(deps, user, 'mcp');
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        request.log.error({ err }, 'MCP request failed');
        if (!reply.raw.headersSent)
          reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
        else if (!reply.raw.writableEnded) reply.raw.end();
      }
    },
  });
}
