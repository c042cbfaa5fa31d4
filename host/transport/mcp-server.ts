/**
 * @module host/transport/mcp-server
 * The MCP protocol core, free of HTTP: a low-level SDK `Server` that lists the fixed meta-tools in
 * a stable order and calls them for the authenticated caller. Only protocol problems (an unknown
 * meta-tool, params that do not fit the method: -32602) and the gateway's own failures outside a
 * tool (-32603, details only in the log) become JSON-RPC errors; every tool failure is a result
 * (with isError when the whole call failed), arguments a meta-tool's schema refuses included
 * (SEP-1303: the model reads the problem and can correct its call). A server is cheap to build per
 * request: what does not depend on the caller (the tools/list answer, the name index, the SDK's
 * JSON-Schema validator) is built once and shared.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema,
  type CallToolRequest,
  type CallToolResult,
  type ListToolsResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { ExecutionRateLimiter } from '../engine/rate-limit.js';
import { formatZodIssues } from '../engine/validate-args.js';
import { metaToolJsonSchema } from '../meta-tools/json-schema.js';
import type { MetaTool, MetaToolResult, TransportName } from '../meta-tools/types.js';
import type { User } from '../storage/users.js';
import type { Logger } from '../telemetry/logger.js';
import { refuseInvalidParams } from './mcp-params.js';

export const SERVER_INSTRUCTIONS =
  'Workbench gives you hundreds of integration tools (GitHub, Slack, Jira, New Relic, …) through a few meta-tools. ' +
  'Use them in this order: search_tools to find a tool by what you want to do; get_tool_schema to read its arguments; ' +
  'execute_tools to run one or more tools in a batch. If an item comes back {"error":"NOT_CONNECTED"}, call connect with its integration, ' +
  'give the user the returned URL, call wait_for_connection, then retry. Large results come back as stubs: page them with continue_tool_result.';

export interface McpServerDeps {
  metaTools: () => readonly MetaTool[];
  version: string;
  logger: Logger;
  /**
   * The per-user budget of meta-tool calls (requests.metaCallsPerUserPerMinute): every call but
   * those of UNMETERED takes one. Without it, calls are not counted.
   */
  metaCalls?: ExecutionRateLimiter;
}

/**
 * Meta-tools whose calls take nothing from the meta-call budget: execute_tools (each execution
 * takes one from the execution budgets instead) and continue_tool_result (reading back a result
 * already produced and stored: one page of a large result after another).
 */
const UNMETERED: ReadonlySet<string> = new Set(['execute_tools', 'continue_tool_result']);

/**
 * What the server answers that does not depend on the caller, built once per list of meta-tools.
 * The meta-tools are the same for every caller (what a caller may use is decided inside each tool,
 * per call), so one index serves everyone; a different list (another array) gets its own index.
 */
interface ToolIndex {
  /** the tools/list result, deep-frozen because every request is answered with this very object */
  list: ListToolsResult;
  byName: ReadonlyMap<string, MetaTool>;
}

const indexes = new WeakMap<readonly MetaTool[], ToolIndex>();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function toolIndex(metaTools: readonly MetaTool[]): ToolIndex {
  let index = indexes.get(metaTools);
  if (!index) {
    const sorted = [...metaTools].sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
    const list: ListToolsResult = {
      tools: sorted.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: metaToolJsonSchema(t.inputSchema),
        ...(t.annotations ? { annotations: { title: t.title, ...t.annotations } } : {}),
      })),
    };
    const byName = new Map<string, MetaTool>();
    for (const t of sorted) if (!byName.has(t.name)) byName.set(t.name, t);
    index = { list: deepFreeze(list), byName };
    indexes.set(metaTools, index);
  }
  return index;
}

// Unless given one, the SDK's Server builds a fresh Ajv instance (compiling Ajv's meta-schemas) in
// its constructor; it uses it only to check answers to elicitation requests, which this server
// never sends. One shared instance holds no caller data.
let sharedValidator: AjvJsonSchemaValidator | undefined;

function toCallResult(r: MetaToolResult): CallToolResult {
  const text = r.text ?? JSON.stringify(r.json);
  const content: CallToolResult['content'] = [{ type: 'text', text }];
  for (const img of r.images ?? []) content.push({ type: 'image', data: img.data, mimeType: img.mimeType });
  return r.isError ? { content, isError: true } : { content };
}

/** Never aborted: the cancellation signal of a request nobody can cancel. */
const NEVER_CANCELLED = new AbortController().signal;

export interface McpServerOptions {
  /**
   * The cancellation signal of a request, by JSON-RPC id, when cancellations arrive outside this
   * server (stateless HTTP: in another POST). Without it, the SDK's own request signal is used,
   * which a `notifications/cancelled` on the same connection aborts (stdio).
   */
  cancellation?: (id: string | number) => AbortSignal | undefined;
  /** whether the key the request came with is still valid (MetaToolContext.keyValid) */
  keyValid?: () => Promise<boolean>;
  /** one result budget for every execute_tools of the request (a JSON-RPC batch holds several) */
  resultBudget?: { remaining: number };
}

/** The SDK server with the params check in front of its dispatcher, on every transport it connects. */
class GatewayServer extends Server {
  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    refuseInvalidParams(transport);
  }
}

/**
 * A request handler whose unexpected failure reaches the client as -32603 with a reference to the
 * log line, never with its own message (which may name a file, a query or a secret). McpErrors are
 * deliberate protocol answers and pass through.
 */
function hidingFailures<A extends unknown[], R>(
  logger: Logger,
  method: string,
  handler: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (err) {
      if (err instanceof McpError) throw err;
      const requestId = randomUUID();
      logger.error({ err, method, requestId }, 'MCP request failed');
      throw new McpError(ErrorCode.InternalError, `Internal error (request ${requestId})`);
    }
  };
}

/** tools/call: one meta-tool, for the authenticated caller; only an unknown name is a protocol error (-32602). */
async function callMetaTool(
  deps: McpServerDeps,
  user: User,
  transport: TransportName,
  request: CallToolRequest,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  options: McpServerOptions,
): Promise<CallToolResult> {
  const tool = toolIndex(deps.metaTools()).byName.get(request.params.name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool not found: ${request.params.name}`);
  if (deps.metaCalls && !UNMETERED.has(tool.name)) {
    // a search over the whole catalog costs milliseconds of the event loop every caller shares
    const wait = await deps.metaCalls.take(user.id, user.tenant);
    if (wait !== undefined)
      return toCallResult({
        json: {
          error: `Rate limit of meta-tool calls reached (requests.metaCallsPerUserPerMinute); retry after ${wait} s`,
          code: 'GW_ERR_POLICY_RATE_LIMITED',
          retryAfterSec: wait,
        },
        isError: true,
      });
  }
  const parsed = tool.inputSchema.safeParse(request.params.arguments ?? {});
  if (!parsed.success)
    return toCallResult({
      json: {
        error: `Invalid arguments for ${tool.name}: ${formatZodIssues(parsed.error)}`,
        code: 'GW_ERR_VALIDATION_INVALID_ARGS',
      },
      isError: true,
    });
  const progressToken = request.params._meta?.progressToken;
  const requestId = randomUUID();
  // Over stateless HTTP a cancellation arrives in another POST, so the SDK's request signal (a
  // dropped connection) does not see it: waits stop on either.
  const cancelled = options.cancellation ? (options.cancellation(extra.requestId) ?? NEVER_CANCELLED) : extra.signal;
  const signal =
    cancelled === extra.signal || cancelled === NEVER_CANCELLED
      ? extra.signal
      : AbortSignal.any([extra.signal, cancelled]);
  try {
    const result = await tool.handler(
      {
        user,
        transport,
        requestId,
        signal,
        cancelled,
        keyValid: options.keyValid,
        resultBudget: options.resultBudget,
        progress: async (progress, total, message) => {
          if (progressToken === undefined || extra.signal.aborted) return;
          await extra
            .sendNotification({
              method: 'notifications/progress',
              params: {
                progressToken,
                progress,
                ...(total !== undefined ? { total } : {}),
                ...(message !== undefined ? { message } : {}),
              },
            })
            .catch(() => undefined);
        },
      },
      parsed.data,
    );
    return toCallResult(result);
  } catch (err) {
    deps.logger.error({ err, tool: tool.name, requestId }, 'meta-tool failed');
    return toCallResult({
      json: { error: `Internal error (request ${requestId})`, code: 'GW_ERR_ENGINE_INTERNAL' },
      isError: true,
    });
  }
}

export function buildMcpServer(
  deps: McpServerDeps,
  user: User,
  transport: TransportName,
  options: McpServerOptions = {},
): Server {
  sharedValidator ??= new AjvJsonSchemaValidator();
  const server = new GatewayServer(
    { name: 'workbench', version: deps.version },
    {
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions: SERVER_INSTRUCTIONS,
      jsonSchemaValidator: sharedValidator,
    },
  );

  // Logging is declared so clients may set a level; the gateway sends no log notifications of its
  // own yet, so the level is accepted and has nothing to filter.
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));

  server.setRequestHandler(
    ListToolsRequestSchema,
    hidingFailures(deps.logger, 'tools/list', async () => toolIndex(deps.metaTools()).list),
  );

  server.setRequestHandler(
    CallToolRequestSchema,
    hidingFailures(deps.logger, 'tools/call', async (request, extra) =>
      callMetaTool(deps, user, transport, request, extra, options),
    ),
  );
  return server;
}
