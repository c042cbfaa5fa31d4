/**
 * @module host/transport/rest
 * Plain JSON over HTTP on the same engine, without the JSON-RPC envelope and without the result
 * cap: `POST /rest/:integration` with `{tool, args}`, flat `{tool, ...args}` or
 * `{executions:[…]}`; `GET /rest` and `GET /rest/:integration` for discovery. The path's
 * integration is authoritative: a tool of another integration is 404.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { whyNotConnectable } from '../connections/connectable.js';
import { isUsable, type ConnectionService } from '../connections/types.js';
import { executeMany } from '../engine/execute-many.js';
import type { ExecutionRateLimiter } from '../engine/rate-limit.js';
import { executeSingle, type Caller, type EngineDeps } from '../engine/execute-single.js';
import { isErrorItem, type ErrorItem, type ExecutionItem, type ExecutionRequest } from '../engine/outcomes.js';
import { errorSpec, isErrorCode } from '../../contracts/errors.js';
import { guessIntegration } from '../discovery/integration-names.js';
import { decideToolAccess } from '../policy/tenancy.js';
import type { User, UserStore } from '../storage/users.js';
import {
  authenticateCaller,
  checkKeyFirst,
  sendUnauthorized,
  type AuthenticatedCaller,
  type UserRequests,
} from './caller-auth.js';

export interface RestDeps {
  engine: EngineDeps;
  users: UserStore;
  connections: ConnectionService;
  publicUrl: string;
  /** each user's POSTs in flight (requests.maxInFlightPerUser), shared with MCP */
  requests: UserRequests;
  /** requests.bodyLimitBytes: the largest body a caller with a valid key may send (the key is checked first) */
  bodyLimit: number;
  /**
   * the per-user budget of meta-tool calls: the two GET routes answer what list_integrations and
   * get_tool_schema do (a connection look-up per plugin; every schema of an integration)
   */
  metaCalls?: ExecutionRateLimiter;
}

/** The HTTP status of a single REST execution that failed, and its Retry-After when retrying later helps. */
export function restStatusOf(item: { code: string; retryAfterSec?: number }): {
  status: number;
  retryAfterSec?: number;
} {
  const spec = isErrorCode(item.code) ? errorSpec(item.code) : undefined;
  const retryAfterSec = item.retryAfterSec ?? spec?.retryAfterSec;
  return { status: spec?.status ?? 502, ...(retryAfterSec !== undefined ? { retryAfterSec } : {}) };
}

function badBody(reply: FastifyReply, message: string): void {
  void reply.code(400).send({ error: message, code: 'GW_ERR_TRANSPORT_BAD_BODY' });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `"a"`, `"a" and "b"`, or `"a", "b" and 3 other keys`: a body's keys named in an error, bounded. */
function quoteKeys(keys: readonly string[]): string {
  const shown = keys.slice(0, 3).map((k) => JSON.stringify(k.length > 60 ? k.slice(0, 60) + '…' : k));
  const more = keys.length - shown.length;
  if (more > 0) return `${shown.join(', ')} and ${more} other key${more === 1 ? '' : 's'}`;
  return shown.length === 1 ? (shown[0] as string) : `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}

type Integration = { Params: { integration: string } };

export function registerRestRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get('/rest', async (request, reply) => listIntegrations(deps, request, reply));
  app.get<Integration>('/rest/:integration', async (request, reply) => describeIntegration(deps, request, reply));
  app.post<Integration>(
    '/rest/:integration',
    { bodyLimit: deps.bodyLimit, onRequest: checkKeyFirst(deps.users, false, deps.requests) },
    async (request, reply) => {
      // the request counts against its user's requests in flight until this has settled too: its
      // executions go on after a client that hangs up
      const settled = deps.requests.running(request);
      try {
        return await execute(deps, request, reply);
      } finally {
        settled();
      }
    },
  );
}

/** GET /rest: the integrations the caller can use (what list_integrations answers). */
async function listIntegrations(deps: RestDeps, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const user = await meteredUser(deps, request, reply);
  if (!user) return;
  const integrations = [];
  for (const p of deps.engine.registry.plugins()) {
    const toolCount = visibleTools(deps, user, p.manifest.name).length;
    if (toolCount === 0) continue;
    integrations.push({
      name: p.manifest.name,
      displayName: p.manifest.displayName,
      description: p.manifest.description,
      authType: p.manifest.auth.type,
      connected: await connected(deps, user, p.manifest.name),
      toolCount,
      url: `${deps.publicUrl}/rest/${p.manifest.name}`,
    });
  }
  return { integrations };
}

/** GET /rest/:integration: its tools the caller may use, with their schemas (what get_tool_schema answers). */
async function describeIntegration(
  deps: RestDeps,
  request: FastifyRequest<Integration>,
  reply: FastifyReply,
): Promise<unknown> {
  const user = await meteredUser(deps, request, reply);
  if (!user) return;
  const name = request.params.integration;
  const tools = visibleTools(deps, user, name);
  if (!deps.engine.registry.plugin(name) || tools.length === 0) return notFound(deps, reply, user, name);
  return {
    integration: name,
    connected: await connected(deps, user, name),
    tools: tools.map((t) => ({
      name: t.manifest.name,
      description: t.manifest.description,
      inputSchema: t.manifest.inputSchema,
    })),
  };
}

/** What the executions of one POST share: the caller and the path's integration. */
interface RestCall {
  deps: RestDeps;
  user: User;
  /** the path's integration */
  name: string;
  caller: Caller;
}

/** POST /rest/:integration: the body read as one execution or a batch, run on the engine. */
async function execute(deps: RestDeps, request: FastifyRequest<Integration>, reply: FastifyReply): Promise<unknown> {
  const authenticated = await withCaller(deps, request, reply);
  if (!authenticated) return;
  const { user, keyValid } = authenticated;
  const name = request.params.integration;
  const body = request.body ?? {};
  if (!deps.engine.registry.plugin(name)) {
    await auditUnknownIntegration(deps, user, name, body);
    return notFound(deps, reply, user, name);
  }
  if (!isPlainObject(body))
    return badBody(
      reply,
      'The body must be a JSON object: {"tool": …, "args": {…}}, {"tool": …, …args} or {"executions": […]}',
    );
  // The path's integration is authoritative: tools of other integrations resolve to nothing.
  const call: RestCall = {
    deps,
    user,
    name,
    caller: { user, transport: 'rest' as const, requestId: randomUUID(), keyValid, integration: name },
  };
  if ('executions' in body) return executeBatch(call, body, reply);
  return executeOne(call, body, reply);
}

/** Each execution asked of an integration that does not exist still gets its audit event (its tool resolves to nothing here). */
async function auditUnknownIntegration(deps: RestDeps, user: User, name: string, body: unknown): Promise<void> {
  const asked = isPlainObject(body) ? (Array.isArray(body['executions']) ? body['executions'] : [body]) : [];
  const caller = { user, transport: 'rest' as const, requestId: randomUUID(), integration: name };
  for (const e of asked.slice(0, deps.engine.policy.requests.maxBatch))
    if (isPlainObject(e) && typeof e['tool'] === 'string' && e['tool'] !== '')
      await executeSingle(deps.engine, caller, { tool: e['tool'], args: {} });
}

/** The tool's full name when `tool` names one of the path's integration (bare or in full), else `tool` as it was sent. */
const qualify = (call: RestCall, tool: string): string =>
  call.deps.engine.registry.toolIn(call.name, tool)?.tool.manifest.name ?? tool;

/** `{executions: […]}`: every item checked before any runs; the answer holds one item per execution. */
async function executeBatch(call: RestCall, body: Record<string, unknown>, reply: FastifyReply): Promise<unknown> {
  const { deps, user, name } = call;
  const others = Object.keys(body).filter((k) => k !== 'executions');
  if (others.length > 0)
    return badBody(
      reply,
      `A batch body has only "executions"; put ${quoteKeys(others)} inside each execution as {"tool", "args"}`,
    );
  const list = body['executions'];
  if (!Array.isArray(list) || list.length === 0)
    return badBody(reply, '"executions" must be a non-empty array of {"tool", "args"}');
  const max = deps.engine.policy.requests.maxBatch;
  if (list.length > max)
    return reply
      .code(400)
      .send({ error: `At most ${max} executions per batch`, code: 'GW_ERR_TRANSPORT_BATCH_TOO_LARGE' });
  const executions: ExecutionRequest[] = [];
  for (const [i, e] of list.entries()) {
    if (
      !isPlainObject(e) ||
      typeof e['tool'] !== 'string' ||
      e['tool'] === '' ||
      (e['args'] !== undefined && !isPlainObject(e['args']))
    )
      return badBody(reply, `executions[${i}] must be {"tool": string, "args"?: object}`);
    const unknown = Object.keys(e).filter((k) => k !== 'tool' && k !== 'args');
    if (unknown.length > 0)
      return badBody(
        reply,
        `executions[${i}] has ${quoteKeys(unknown)}: an execution is {"tool": string, "args"?: object}`,
      );
    executions.push({ tool: qualify(call, e['tool']), args: e['args'] ?? {} });
  }
  const items: ExecutionItem[] = await executeMany(deps.engine, call.caller, executions);
  return {
    integration: name,
    results: items.map((it, i) => forRest(deps, it, user, name, (list[i] as { tool: string }).tool)),
  };
}

/** `{tool, args}` or flat `{tool, ...args}`: a failed execution is answered with its HTTP status (restStatusOf). */
async function executeOne(call: RestCall, body: Record<string, unknown>, reply: FastifyReply): Promise<unknown> {
  const { deps, user, name } = call;
  const rawTool = body['tool'];
  if (typeof rawTool !== 'string' || rawTool.length === 0)
    return badBody(reply, 'Missing "tool": send {"tool": "<name>", "args": {…}}');
  let args: unknown;
  if ('args' in body) {
    if (!isPlainObject(body['args'])) return badBody(reply, '"args" must be a JSON object');
    // {tool, args} or flat {tool, ...args}, never both: keys beside "args" would be dropped
    const others = Object.keys(body).filter((k) => k !== 'tool' && k !== 'args');
    if (others.length > 0)
      return badBody(
        reply,
        `The body has "args" and ${quoteKeys(others)}: send {"tool", "args": {…}} with every argument inside "args", or {"tool", …args} without "args"`,
      );
    args = body['args'];
  } else {
    const { tool: _t, ...rest } = body;
    args = rest;
  }
  // a tool that resolves to nothing in this integration still goes through the engine, which
  // answers "Tool not found" and audits it like every other execution
  const tool = qualify(call, rawTool);
  const item = forRest(deps, await executeSingle(deps.engine, call.caller, { tool, args }), user, name, rawTool);
  if (!isErrorItem(item)) return { integration: name, tool, result: item.result };
  const { status, retryAfterSec } = restStatusOf(item);
  if (retryAfterSec !== undefined) void reply.header('retry-after', String(retryAfterSec));
  return reply.code(status).send({ ...item, integration: name, tool: item.tool ?? tool });
}

async function withCaller(
  deps: RestDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<AuthenticatedCaller | undefined> {
  const authenticated = await authenticateCaller(deps.users, request);
  if (!authenticated) sendUnauthorized(reply, false);
  return authenticated;
}

/** the caller of a GET that reads the catalog, once it has taken one from its meta-call budget (else 429 sent) */
async function meteredUser(deps: RestDeps, request: FastifyRequest, reply: FastifyReply): Promise<User | undefined> {
  const user = (await withCaller(deps, request, reply))?.user;
  if (!user || !deps.metaCalls) return user;
  const wait = await deps.metaCalls.take(user.id, user.tenant);
  if (wait === undefined) return user;
  void reply
    .code(429)
    .header('retry-after', String(wait))
    .send({
      error: `Rate limit of meta-tool calls reached (requests.metaCallsPerUserPerMinute); retry after ${wait} s`,
      code: 'GW_ERR_POLICY_RATE_LIMITED',
      retryAfterSec: wait,
    });
  return undefined;
}

async function connected(deps: RestDeps, user: User, name: string): Promise<boolean> {
  const plugin = deps.engine.registry.plugin(name);
  return plugin !== undefined && (await isUsable(deps.connections, user.id, plugin.manifest));
}

const visibleTools = (deps: RestDeps, user: User, name: string) =>
  [...(deps.engine.registry.plugin(name)?.tools.values() ?? [])].filter(
    (t) => decideToolAccess(deps.engine.policy, user.tenant, name, t.manifest.name).allowed,
  );

/**
 * An item's message as a script reads it: a REST caller has no search_tools or connect, so
 * "Tool not found" names the tools that end as the name asked (when it was ambiguous) and where
 * the list is, and NOT_CONNECTED sends to the portal. The spec's fields stay as they are.
 */
function forRest(deps: RestDeps, item: ExecutionItem, user: User, name: string, asked: string): ExecutionItem {
  if (!isErrorItem(item)) return item;
  if (item.code === 'GW_ERR_ENGINE_TOOL_NOT_FOUND') {
    const shown = asked.length > 200 ? `${asked.slice(0, 200)}…` : asked;
    const ends = visibleTools(deps, user, name)
      .map((t) => t.manifest.name)
      .filter((n) => n.endsWith(`_${asked}`))
      .sort();
    const which = ends.length > 1 ? `: "${shown}" could be ${ends.slice(0, 10).join(', ')}; name one in full` : '';
    return {
      ...item,
      tool: shown,
      message: `No tool "${shown}" in ${name}${which}. GET /rest/${name} lists its tools.`,
    } satisfies ErrorItem;
  }
  if (item.code === 'GW_ERR_ENGINE_NOT_CONNECTED') {
    const manifest = deps.engine.registry.plugin(name)?.manifest;
    if (manifest && whyNotConnectable(manifest, deps.connections.clientFor) === undefined)
      return {
        ...item,
        message: `${name} not connected. Connect it in the portal (${deps.publicUrl}/integrations), or have an agent call connect('${name}').`,
      };
  }
  return item;
}

/** 404 for a path naming no integration the caller can use, with the name it most likely meant (never used in its place) */
function notFound(deps: RestDeps, reply: FastifyReply, user: User, name: string): void {
  const known = deps.engine.registry
    .plugins()
    .map((p) => p.manifest)
    .filter((m) => visibleTools(deps, user, m.name).length > 0);
  const { didYouMean, candidates } = guessIntegration(name, known);
  const integrations = known.map((m) => m.name).sort();
  const guess = didYouMean
    ? ` (did you mean ${didYouMean}?)`
    : candidates.length > 0
      ? ` (it may mean several: ${candidates.join(', ')}; use the exact name)`
      : '';
  void reply.code(404).send({
    error: `Integration not found: ${name}${guess}`,
    code: 'GW_ERR_TRANSPORT_INTEGRATION_NOT_FOUND',
    integration: name,
    ...(didYouMean ? { didYouMean } : {}),
    ...(candidates.length > 0 ? { candidates } : {}),
    integrations,
  });
}
