/**
 * @module host/transport/mcp-server
 * The MCP protocol core, free of HTTP: a low-level SDK `Server` that lists the fixed meta-tools in
 * a stable order and calls them for the authenticated caller. Only protocol problems (an unknown
 * meta-tool, arguments its own schema rejects) become JSON-RPC errors; every tool failure is a
 * result (with isError when the whole call failed).
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, SetLevelRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { formatZodIssues } from '../engine/validate-args.js';
import type { MetaTool, MetaToolResult, TransportName } from '../meta-tools/types.js';
import type { User } from '../storage/users.js';
import type { Logger } from '../telemetry/logger.js';

export const SERVER_INSTRUCTIONS =
  'Workbench gives you hundreds of integration tools (GitHub, Slack, Jira, New Relic, …) through a few meta-tools. ' +
  'Use them in this order: search_tools to find a tool by what you want to do; get_tool_schema to read its arguments; ' +
  'execute_tools to run one or more tools in a batch. If an item comes back {"error":"NOT_CONNECTED"}, call connect with its integration, ' +
  'give the user the returned URL, call wait_for_connection, then retry. Large results come back as stubs: page them with continue_tool_result.';

export interface McpServerDeps {
  metaTools: () => readonly MetaTool[];
  version: string;
  logger: Logger;
}

// A stateless server is built per request; the JSON Schemas of the fixed meta-tools are not.
const schemaCache = new WeakMap<z.ZodObject, Record<string, unknown>>();

function toJsonSchema(schema: z.ZodObject): Record<string, unknown> {
  let json = schemaCache.get(schema);
  if (!json) {
    json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete json['$schema'];
    schemaCache.set(schema, json);
  }
  return json;
}

function toCallResult(r: MetaToolResult): CallToolResult {
  const text = r.text ?? JSON.stringify(r.json);
  const content: CallToolResult['content'] = [{ type: 'text', text }];
  for (const img of r.images ?? []) content.push({ type: 'image', data: img.data, mimeType: img.mimeType });
  return r.isError ? { content, isError: true } : { content };
}

export function buildMcpServer(deps: McpServerDeps, user: User, transport: TransportName): Server {
  const server = new Server({ name: 'workbench', version: deps.version }, { capabilities: { tools: { listChanged: false }, logging: {} }, instructions: SERVER_INSTRUCTIONS });
  const sorted = (): MetaTool[] => [...deps.metaTools()].sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));

  // Logging is declared so clients may set a level; the gateway sends no log notifications of its
  // own yet, so the level is accepted and has nothing to filter.
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: sorted().map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: toJsonSchema(t.inputSchema) as { type: 'object'; [k: string]: unknown },
      ...(t.annotations ? { annotations: { title: t.title, ...t.annotations } } : {}),
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = sorted().find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool not found: ${request.params.name}`);
    const parsed = tool.inputSchema.safeParse(request.params.arguments ?? {});
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${tool.name}: ${formatZodIssues(parsed.error)}`);
    const progressToken = request.params._meta?.progressToken;
    const requestId = randomUUID();
    try {
      const result = await tool.handler(
        {
          user,
          transport,
          requestId,
          signal: extra.signal,
          progress: async (progress, total, message) => {
            if (progressToken === undefined || extra.signal.aborted) return;
            await extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) },
              })
              .catch(() => undefined);
          },
        },
        parsed.data,
      );
      return toCallResult(result);
    } catch (err) {
      deps.logger.error({ err, tool: tool.name, requestId }, 'meta-tool failed');
      return toCallResult({ json: { error: `Internal error (request ${requestId})`, code: 'GW_ERR_ENGINE_INTERNAL' }, isError: true });
    }
  });
  return server;
}
