/**
 * @module test/helpers/gateway
 * Starts a real gateway for a test: a temp data dir with a real SQLite file, the real plugins in
 * real isolates, fastify listening on 127.0.0.1, and a user with an API key. Upstream origins are
 * mapped to loopback servers through the policy's `upstreams`, exactly as an operator would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../host/app.js';
import type { GatewayConfig } from '../../host/config.js';
import type { ExecutionItem } from '../../host/engine/outcomes.js';
import { BUILTIN_PLUGINS_DIR, PACKAGE_ROOT } from '../../host/paths.js';
import type { BuiltinIntegration } from '../../host/builtins/types.js';
import type { Resolver } from '../../host/bridge/index.js';
import { parsePolicy } from '../../host/policy/load.js';
import type { User } from '../../host/storage/users.js';
import { createLogger, type Logger } from '../../host/telemetry/logger.js';
import { freePort } from './free-port.js';

/** An execute_tools item, loosely typed for assertions: {result} or {error, code, …}. */
// Tests read arbitrary result shapes.
export type Item = { result?: any; error?: string; code?: string; [key: string]: any };

export interface StartGatewayOptions {
  /** origin → loopback origin */
  upstreams?: Record<string, string>;
  /** names of plugins under plugins/ to load (default: all) */
  plugins?: string[];
  /** extra plugin folders (like WORKBENCH_PLUGINS_DIR) */
  pluginDirs?: string[];
  /** a partial policy file; `upstreams` above is merged into it */
  policy?: Record<string, unknown>;
  /** sandbox workers (default 2 in tests) */
  workers?: number;
  env?: NodeJS.ProcessEnv;
  /** LOG_LEVEL for the gateway (default silent) */
  logLevel?: string;
  /** DATABASE_URL (default: a SQLite file in the temp data dir); replicas share one, and its test user */
  databaseUrl?: string;
  /** how often the sandbox reads the other replicas' crash strikes (PostgreSQL), ms */
  strikeRefreshMs?: number;
  /** sandbox.injectFault available (crashes blamed on a chosen plugin) */
  faultInjection?: boolean;
  /** the audit retention sweep's interval, batch size and clock */
  auditRetention?: GatewayOptions['auditRetention'];
  /** a logger instead of one at logLevel (to read the log lines) */
  logger?: Logger;
  /** built-in integrations served besides the configured ones */
  builtins?: BuiltinIntegration[];
  /** answers the bridge's and the browser's DNS look-ups instead of the system resolver */
  resolver?: Resolver;
  /** WORKBENCH_PUBLIC_URL (default: the gateway's own loopback URL); replicas behind one name share one */
  publicUrl?: string;
  /** WORKBENCH_JOTS_URL, made from the gateway's port (e.g. `(port) => \`http://localhost:${port}\``) */
  jotsUrl?: (port: number) => string;
}

export interface TestGateway {
  gateway: Gateway;
  url: string;
  apiKey: string;
  user: User;
  db: Gateway['db'];
  dataDir: string;
  createUser(email: string, tenant?: string): Promise<{ user: User; apiKey: string }>;
  connect(
    integration: string,
    input: {
      token?: string;
      refreshToken?: string;
      expiresInSec?: number;
      values?: Record<string, string>;
      config?: Record<string, unknown>;
      /** a cookie connection's cookies (playwright's shape) */
      cookies?: unknown;
      /** the connection's own instance of the provider (checked as at any connect) */
      instanceUrl?: string;
    },
    user?: User,
  ): Promise<{ connectionId: string }>;
  /** one execution over POST /rest/:integration as a batch of one: the execute_tools item */
  execute(tool: string, args?: Record<string, unknown>, apiKey?: string): Promise<Item>;
  rest(integration: string, body: unknown, apiKey?: string): Promise<{ status: number; json: any; headers: Headers }>;
  mcpClient(apiKey?: string): Promise<Client>;
  close(): Promise<void>;
}

/** Copies the selected built-in plugins into a temp folder so that only they load. */
function selectPlugins(names: string[], into: string): string {
  const dir = path.join(into, 'plugins');
  fs.mkdirSync(dir, { recursive: true });
  for (const name of names) {
    const src = path.join(BUILTIN_PLUGINS_DIR, name);
    if (!fs.existsSync(path.join(src, 'manifest.json'))) throw new Error(`no plugin "${name}" under plugins/`);
    fs.cpSync(src, path.join(dir, name), { recursive: true });
  }
  return dir;
}

export async function startGateway(options: StartGatewayOptions = {}): Promise<TestGateway> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-test-'));
  const policyInput: Record<string, unknown> = { ...(options.policy ?? {}) };
  policyInput['upstreams'] = { ...(policyInput['upstreams'] ?? {}), ...(options.upstreams ?? {}) };
  const sandboxInput = {
    workers: options.workers ?? 2,
    ...((policyInput['sandbox'] as Record<string, unknown>) ?? {}),
  };
  policyInput['sandbox'] = sandboxInput;
  // the shipped built-ins (a browser, jots) serve only in the tests that ask for them in the policy
  policyInput['builtins'] ??= { browser: { enabled: false }, jots: { enabled: false } };
  const policy = parsePolicy(policyInput, 'test policy');
  const builtin = options.plugins ? selectPlugins(options.plugins, dataDir) : BUILTIN_PLUGINS_DIR;
  const port = await freePort();
  const config: GatewayConfig = {
    port,
    host: '127.0.0.1',
    dataDir,
    databaseUrl: options.databaseUrl ?? path.join(dataDir, 'workbench.db'),
    pluginDirs: [builtin, ...(options.pluginDirs ?? [])],
    policyFile: '(inline)',
    logLevel: options.logLevel ?? 'silent',
    publicUrl: options.publicUrl ?? `http://127.0.0.1:${port}`,
    ...(options.jotsUrl ? { jotsUrl: options.jotsUrl(port) } : {}),
  };
  const env = { ...(options.env ?? {}) };
  const logger =
    options.logger ??
    createLogger({ level: config.logLevel, destination: config.logLevel === 'silent' ? 'silent' : 'stderr' });
  const gateway = await createGateway(config, {
    policy,
    logger,
    env,
    ...(options.strikeRefreshMs !== undefined ? { strikeRefreshMs: options.strikeRefreshMs } : {}),
    ...(options.faultInjection ? { sandboxFaultInjection: true } : {}),
    ...(options.auditRetention ? { auditRetention: options.auditRetention } : {}),
    ...(options.builtins ? { extraBuiltins: options.builtins } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
  });
  const url = await gateway.listen();
  // A replica on a shared database reuses the test user another replica created (even concurrently).
  const existing = async (): Promise<User | undefined> =>
    options.databaseUrl ? gateway.users.byEmail('tester@example.com') : undefined;
  const user: User =
    (await existing()) ??
    (await gateway.users.create('tester@example.com', 'acme').catch(async (err: unknown): Promise<User> => {
      const u = await existing();
      if (!u) throw err;
      return u;
    }));
  const { key: apiKey } = await gateway.users.createApiKey(user.id, 'test');

  const rest: TestGateway['rest'] = async (integration, body, key = apiKey) => {
    const res = await fetch(`${url}/rest/${encodeURIComponent(integration)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, json, headers: res.headers };
  };

  const clients: Client[] = [];
  return {
    gateway,
    url,
    apiKey,
    user,
    db: gateway.db,
    dataDir,
    async createUser(email, tenant = 'acme') {
      const u = await gateway.users.create(email, tenant);
      const { key } = await gateway.users.createApiKey(u.id, 'test');
      return { user: u, apiKey: key };
    },
    async connect(integration, input, forUser = user) {
      const plugin = gateway.registry.plugin(integration);
      if (!plugin) throw new Error(`no plugin "${integration}" is loaded`);
      return gateway.connections.importConnection({ userId: forUser.id, manifest: plugin.manifest, ...input });
    },
    async execute(tool, args = {}, key = apiKey) {
      const resolved = gateway.registry.tool(tool);
      const integration = resolved?.plugin.manifest.name ?? gateway.registry.plugins()[0]?.manifest.name ?? 'none';
      const r = await rest(integration, { executions: [{ tool, args }] }, key);
      if (r.status !== 200)
        throw new Error(`POST /rest/${integration} answered ${r.status}: ${JSON.stringify(r.json)}`);
      return (r.json as { results: ExecutionItem[] }).results[0] as Item;
    },
    rest,
    async mcpClient(key = apiKey) {
      const client = new Client({ name: 'workbench-test', version: '0.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      clients.push(client);
      return client;
    },
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      await gateway.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The command line and environment of `workbench stdio` for a test gateway's user, data and plugins. */
export function stdioCommand(
  gw: TestGateway,
  pluginsDir: string,
  policyFile: string,
): { command: string; args: string[]; env: Record<string, string> } {
  return {
    command: process.execPath,
    args: ['--no-node-snapshot', path.join(PACKAGE_ROOT, 'dist', 'host', 'cli', 'main.js'), 'stdio'],
    env: {
      PATH: process.env['PATH'] ?? '',
      WORKBENCH_API_KEY: gw.apiKey,
      WORKBENCH_DATA_DIR: gw.dataDir,
      DATABASE_URL: path.join(gw.dataDir, 'workbench.db'),
      WORKBENCH_PLUGINS_DIR: pluginsDir,
      WORKBENCH_POLICY: policyFile,
      LOG_LEVEL: 'silent',
    },
  };
}
