/**
 * @module host/security-report/in-process-gateway
 * A real gateway started in this process for attacks on it: a temporary data directory with its
 * own SQLite file (never the operator's), the real sandbox process, fastify on 127.0.0.1, and a
 * pino logger that writes into memory, so every log line (fastify, engine, sandbox supervisor,
 * plugin ctx.log) can be searched for secrets. Every HTTP answer received through it is kept too.
 * Used by `workbench security report`, `workbench plugin test` and the hostile tests.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Resolver } from '../bridge/index.js';
import { createGateway, type Gateway } from '../app.js';
import type { GatewayConfig } from '../config.js';
import { parsePolicy } from '../policy/load.js';
import type { User } from '../storage/users.js';
import { REDACT_PATHS } from '../telemetry/logger.js';
import { freePort } from './free-port.js';
import { fail } from '../../contracts/errors.js';

// Answers are arbitrary JSON.
export type Json = any;

export interface McpAnswer {
  status: number;
  text: string;
  /** the JSON-RPC messages of the answer (JSON or server-sent events) */
  messages: Json[];
  /** the message answering this call, if any */
  answer: Json;
}

export interface InProcessGateway {
  gateway: Gateway;
  url: string;
  /** every log line written by the gateway, as JSON text */
  logs: string[];
  /** every HTTP response body received through `post` */
  bodies: string[];
  dataDir: string;
  createUser(email: string, tenant?: string): Promise<{ user: User; apiKey: string }>;
  connect(
    integration: string,
    user: User,
    token: string | undefined,
    extra?: {
      refreshToken?: string;
      expiresInSec?: number;
      values?: Record<string, string>;
      config?: Record<string, unknown>;
      /** a cookie connection's cookies (playwright's shape) */
      cookies?: unknown;
    },
  ): Promise<void>;
  /** POST a JSON body (or raw text) to a path; keeps the body text */
  post(
    pathname: string,
    body: unknown,
    apiKey: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; text: string; json: Json }>;
  /** one batch over REST: the items */
  batch(integration: string, executions: Array<{ tool: string; args?: unknown }>, apiKey: string): Promise<Json[]>;
  /** a tools/call of any meta-tool over MCP (raw JSON-RPC over Streamable HTTP) */
  mcpCall(name: string, args: unknown, apiKey: string): Promise<McpAnswer>;
  /** execute_tools over MCP: the items */
  mcpExecute(executions: Array<{ tool: string; args?: unknown }>, apiKey: string): Promise<Json[]>;
  auditText(): Promise<string>;
  close(): Promise<void>;
}

export interface InProcessGatewayOptions {
  /** a partial policy file (defaults apply to what it leaves out) */
  policy: Record<string, unknown>;
  /** plugin roots */
  pluginDirs: string[];
  /** the gateway's environment (OAuth client ids, …); default empty */
  env?: NodeJS.ProcessEnv;
  /** answers the bridge's DNS lookups (default: the system resolver) */
  resolver?: Resolver;
}

/** The JSON-RPC messages of an MCP answer, whether plain JSON or an SSE stream. */
export function rpcMessages(text: string): Json[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const v = JSON.parse(trimmed);
    return Array.isArray(v) ? v : [v];
  }
  return trimmed
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)));
}

/** A pino logger at debug level whose lines land in `lines`. */
function memoryLogger(lines: string[]): pino.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(line);
      done();
    },
  });
  return pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
}

export async function startInProcessGateway(options: InProcessGatewayOptions): Promise<InProcessGateway> {
  const { gateway, dataDir, logs } = await createInTempDir(options);
  const url = await gateway.listen();
  const bodies: string[] = [];
  const post = poster(url, bodies);
  const mcpCall = mcpCaller(post);

  return {
    gateway,
    url,
    logs,
    bodies,
    dataDir,
    async createUser(email, tenant = 'acme') {
      const user = await gateway.users.create(email, tenant);
      const { key } = await gateway.users.createApiKey(user.id, 'security');
      return { user, apiKey: key };
    },
    async connect(integration, user, token, extra = {}) {
      const plugin = gateway.registry.plugin(integration);
      if (!plugin)
        throw fail('GW_ERR_REPORT_FAILED', {
          message: `no plugin "${integration}" is loaded: ${JSON.stringify(gateway.pluginErrors)}`,
        });
      await gateway.connections.importConnection({
        userId: user.id,
        manifest: plugin.manifest,
        ...(token !== undefined ? { token } : {}),
        ...extra,
      });
    },
    post,
    async batch(integration, executions, apiKey) {
      const r = await post(`/rest/${integration}`, { executions }, apiKey);
      if (r.status !== 200)
        throw fail('GW_ERR_REPORT_FAILED', {
          message: `POST /rest/${integration} answered ${r.status}: ${r.text.slice(0, 500)}`,
        });
      return r.json.results as Json[];
    },
    mcpCall,
    async mcpExecute(executions, apiKey) {
      const r = await mcpCall('execute_tools', { executions }, apiKey);
      if (r.status !== 200)
        throw fail('GW_ERR_REPORT_FAILED', { message: `POST /mcp answered ${r.status}: ${r.text.slice(0, 500)}` });
      const text = r.answer?.result?.content?.find((c: Json) => c.type === 'text')?.text;
      if (typeof text !== 'string')
        throw fail('GW_ERR_REPORT_FAILED', { message: `no execute_tools text in ${r.text.slice(0, 500)}` });
      return JSON.parse(text).results as Json[];
    },
    async auditText() {
      return JSON.stringify(await gateway.db.all('SELECT * FROM audit_events'));
    },
    async close() {
      await gateway.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A gateway (not yet listening) on a free port of 127.0.0.1, with its data in a new temporary directory. */
async function createInTempDir(
  options: InProcessGatewayOptions,
): Promise<{ gateway: Gateway; dataDir: string; logs: string[] }> {
  const policy = parsePolicy(options.policy, 'security policy');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-sec-'));
  const logs: string[] = [];
  const port = await freePort();
  const config: GatewayConfig = {
    port,
    host: '127.0.0.1',
    dataDir,
    databaseUrl: path.join(dataDir, 'workbench.db'),
    pluginDirs: options.pluginDirs,
    policyFile: '(inline)',
    logLevel: 'debug',
    publicUrl: `http://127.0.0.1:${port}`,
  };
  let gateway: Gateway;
  try {
    gateway = await createGateway(config, {
      policy,
      logger: memoryLogger(logs),
      env: options.env ?? {},
      ...(options.resolver ? { resolver: options.resolver } : {}),
    });
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return { gateway, dataDir, logs };
}

/** POSTs to the gateway at `url`, keeping every answer's text in `bodies`. */
function poster(url: string, bodies: string[]): InProcessGateway['post'] {
  return async (pathname, body, apiKey, headers = {}) => {
    const res = await fetch(`${url}${pathname}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${apiKey}`,
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    bodies.push(text);
    let json: Json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  };
}

/** tools/call over MCP, each with the next JSON-RPC id. */
function mcpCaller(post: InProcessGateway['post']): InProcessGateway['mcpCall'] {
  let rpcId = 0;
  return async (name, args, apiKey) => {
    const id = ++rpcId;
    const r = await post(
      '/mcp',
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
      apiKey,
    );
    let messages: Json[] = [];
    try {
      messages = rpcMessages(r.text);
    } catch {
      // not JSON-RPC at all: the answer has no message, which the caller reports
    }
    return { status: r.status, text: r.text, messages, answer: messages.find((m) => m?.id === id) };
  };
}
