/**
 * @module test/security/harness
 * A real gateway for attack tests whose pino logger writes into memory, so every log line (fastify,
 * engine, sandbox supervisor, plugin ctx.log) can be searched for secrets; plus helpers that keep
 * every HTTP response body seen, and a search for secrets in their raw, base64 and URL forms.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createGateway, type Gateway } from '../../host/app.js';
import type { GatewayConfig } from '../../host/config.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { parsePolicy } from '../../host/policy/load.js';
import type { User } from '../../host/storage/users.js';
import { REDACT_PATHS } from '../../host/telemetry/logger.js';
import { freePort } from '../helpers/free-port.js';

export const FIXTURE_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
export const HOSTILE_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'hostile-plugins');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
export type Json = any;

export interface SecurityGateway {
  gateway: Gateway;
  url: string;
  /** every log line written by the gateway, as JSON text */
  logs: string[];
  /** every HTTP response body received through `post` */
  bodies: string[];
  dataDir: string;
  createUser(email: string, tenant?: string): Promise<{ user: User; apiKey: string }>;
  connect(integration: string, user: User, token: string | undefined, extra?: { refreshToken?: string; expiresInSec?: number; values?: Record<string, string> }): Promise<void>;
  /** POST a JSON body (or raw text) to a path; keeps the body text */
  post(pathname: string, body: unknown, apiKey: string, headers?: Record<string, string>): Promise<{ status: number; text: string; json: Json }>;
  /** one batch over REST: the items */
  batch(integration: string, executions: Array<{ tool: string; args?: unknown }>, apiKey: string): Promise<Json[]>;
  /** execute_tools over MCP (raw JSON-RPC over Streamable HTTP, SSE decoded): the items */
  mcpExecute(executions: Array<{ tool: string; args?: unknown }>, apiKey: string): Promise<Json[]>;
  auditText(): Promise<string>;
  close(): Promise<void>;
}

/** The JSON-RPC messages of an MCP answer, whether plain JSON or an SSE stream. */
export function rpcMessages(text: string): Json[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const v = JSON.parse(trimmed) as Json;
    return Array.isArray(v) ? v : [v];
  }
  return trimmed
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)) as Json);
}

export interface SecurityGatewayOptions {
  /** a partial policy file; `upstreams` below is merged into it */
  policy?: Record<string, unknown>;
  upstreams?: Record<string, string>;
  /** plugin roots (default: the fixture plugins, then the hostile ones) */
  pluginDirs?: string[];
  /** the gateway's environment (OAuth client ids, …); default empty */
  env?: NodeJS.ProcessEnv;
}

export async function startSecurityGateway(options: SecurityGatewayOptions = {}): Promise<SecurityGateway> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-sec-'));
  const input: Record<string, unknown> = { ...(options.policy ?? {}) };
  input['upstreams'] = { ...((input['upstreams'] as Record<string, string>) ?? {}), ...(options.upstreams ?? {}) };
  input['sandbox'] = { workers: 2, ...((input['sandbox'] as Record<string, unknown>) ?? {}) };
  const policy = parsePolicy(input, 'security test policy');
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(line);
      done();
    },
  });
  const logger = pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
  const port = await freePort();
  const config: GatewayConfig = {
    port,
    host: '127.0.0.1',
    dataDir,
    databaseUrl: path.join(dataDir, 'workbench.db'),
    pluginDirs: options.pluginDirs ?? [FIXTURE_PLUGINS, HOSTILE_PLUGINS],
    policyFile: '(inline)',
    logLevel: 'debug',
    publicUrl: `http://127.0.0.1:${port}`,
  };
  const gateway = await createGateway(config, { policy, logger, env: options.env ?? {} });
  const url = await gateway.listen();
  const bodies: string[] = [];

  const post: SecurityGateway['post'] = async (pathname, body, apiKey, headers = {}) => {
    const res = await fetch(`${url}${pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${apiKey}`, ...headers },
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

  let rpcId = 0;
  return {
    gateway,
    url,
    logs,
    bodies,
    dataDir,
    async createUser(email, tenant = 'acme') {
      const user = await gateway.users.create(email, tenant);
      const { key } = await gateway.users.createApiKey(user.id, 'test');
      return { user, apiKey: key };
    },
    async connect(integration, user, token, extra = {}) {
      const plugin = gateway.registry.plugin(integration);
      if (!plugin) throw new Error(`no plugin "${integration}" is loaded: ${JSON.stringify(gateway.pluginErrors)}`);
      await gateway.connections.importConnection({ userId: user.id, manifest: plugin.manifest, ...(token !== undefined ? { token } : {}), ...extra });
    },
    post,
    async batch(integration, executions, apiKey) {
      const r = await post(`/rest/${integration}`, { executions }, apiKey);
      if (r.status !== 200) throw new Error(`POST /rest/${integration} answered ${r.status}: ${r.text.slice(0, 500)}`);
      return r.json.results as Json[];
    },
    async mcpExecute(executions, apiKey) {
      const id = ++rpcId;
      const r = await post('/mcp', { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'execute_tools', arguments: { executions } } }, apiKey);
      if (r.status !== 200) throw new Error(`POST /mcp answered ${r.status}: ${r.text.slice(0, 500)}`);
      const answer = rpcMessages(r.text).find((m) => m.id === id);
      const text = answer?.result?.content?.find((c: Json) => c.type === 'text')?.text;
      if (typeof text !== 'string') throw new Error(`no execute_tools text in ${r.text.slice(0, 500)}`);
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

/** The forms a secret could leak in: raw, base64 (alone and in Basic), URL-encoded, reversed. */
export function secretForms(secret: string): string[] {
  return [secret, Buffer.from(secret).toString('base64'), encodeURIComponent(secret), [...secret].reverse().join('')];
}

/** Where (if anywhere) any form of any secret occurs in the texts; [] when nowhere. */
export function findSecrets(texts: readonly string[], secrets: readonly string[]): string[] {
  const hits: string[] = [];
  for (const secret of secrets)
    for (const form of secretForms(secret))
      texts.forEach((t, i) => {
        const at = t.indexOf(form);
        if (at >= 0) hits.push(`text #${i} holds a form of ${secret}: …${t.slice(Math.max(0, at - 80), at + form.length + 20)}…`);
      });
  return hits;
}
