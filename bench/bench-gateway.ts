/**
 * @module bench/bench-gateway
 * Starts the real gateway in this process for a benchmark, the way the test helper does: a temp
 * data dir with a real SQLite file, an inline policy (with `upstreams` mapping the fixture origin
 * to the loopback upstream), fastify on 127.0.0.1 and one user with an API key and a stored
 * connection for fixture-http. `createGateway` is timed on its own (the start-up figure).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createGateway, type Gateway } from '../host/app.js';
import type { GatewayConfig } from '../host/config.js';
import { BUILTIN_PLUGINS_DIR, PACKAGE_ROOT } from '../host/paths.js';
import { parsePolicy } from '../host/policy/load.js';
import type { User } from '../host/storage/users.js';
import { createLogger } from '../host/telemetry/logger.js';

export const FIXTURE_PLUGINS_DIR = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
export const FIXTURE_ORIGIN = 'https://api.fixture.test';
export const BENCH_TENANT = 'bench';

export interface BenchGatewayOptions {
  upstreamOrigin: string;
  /** also load the whole catalog under plugins/ (default: fixtures only) */
  catalog?: boolean;
  /** a partial policy file merged over the bench defaults */
  policy?: Record<string, unknown>;
}

export interface BenchGateway {
  gateway: Gateway;
  url: string;
  apiKey: string;
  user: User;
  /** wall time of createGateway (policy, database, vault, plugins, sandbox process up) */
  createMs: number;
  close(): Promise<void>;
}

export async function startBenchGateway(options: BenchGatewayOptions): Promise<BenchGateway> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-bench-'));
  const input: Record<string, unknown> = { ...(options.policy ?? {}) };
  // every bench caller is one user: its clients (up to --clients) must not meet the per-user bound
  input['requests'] = { maxInFlightPerUser: 1_000_000, ...(input['requests'] ?? {}) };
  input['upstreams'] = { ...(input['upstreams'] ?? {}), [FIXTURE_ORIGIN]: options.upstreamOrigin };
  const policy = parsePolicy(input, 'bench policy');
  const config: GatewayConfig = {
    port: 0,
    host: '127.0.0.1',
    dataDir,
    databaseUrl: path.join(dataDir, 'workbench.db'),
    pluginDirs: options.catalog ? [BUILTIN_PLUGINS_DIR, FIXTURE_PLUGINS_DIR] : [FIXTURE_PLUGINS_DIR],
    policyFile: '(inline)',
    logLevel: 'silent',
    publicUrl: 'http://127.0.0.1',
  };
  const logger = createLogger({ level: 'silent', destination: 'silent' });
  const t0 = performance.now();
  const gateway = await createGateway(config, { policy, logger, env: {} });
  const createMs = performance.now() - t0;
  const url = await gateway.listen();
  const user = await gateway.users.create('bench@example.com', BENCH_TENANT);
  const { key: apiKey } = await gateway.users.createApiKey(user.id, 'bench');
  const fixtureHttp = gateway.registry.plugin('fixture-http');
  if (!fixtureHttp) throw new Error('the fixture-http plugin did not load');
  await gateway.connections.importConnection({ userId: user.id, manifest: fixtureHttp.manifest, token: 'bench-token' });
  return {
    gateway,
    url,
    apiKey,
    user,
    createMs,
    async close() {
      await gateway.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
