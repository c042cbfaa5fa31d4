/**
 * @module host/config
 * The process configuration, read once from the environment (the stable contract in the README):
 * PORT, HOST, WORKBENCH_DATA_DIR, DATABASE_URL, WORKBENCH_PLUGINS_DIR, WORKBENCH_POLICY, LOG_LEVEL,
 * WORKBENCH_PUBLIC_URL. A bad value stops start-up with a message naming the variable.
 */
import path from 'node:path';
import { GatewayError } from './errors.js';
import { BUILTIN_PLUGINS_DIR, DEFAULT_POLICY_FILE } from './paths.js';

export interface GatewayConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  pluginDirs: string[];
  policyFile: string;
  logLevel: string;
  publicUrl: string;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function readConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const portText = env['PORT'] ?? '3000';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new GatewayError('GW_ERR_CONFIG_INVALID', `PORT must be a number from 0 to 65535, got "${portText}"`);
  const host = env['HOST'] ?? '127.0.0.1';
  const logLevel = env['LOG_LEVEL'] ?? 'info';
  if (!LEVELS.includes(logLevel)) throw new GatewayError('GW_ERR_CONFIG_INVALID', `LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${logLevel}"`);
  const extra = (env['WORKBENCH_PLUGINS_DIR'] ?? '').split(path.delimiter).filter((d) => d.trim() !== '').map((d) => path.resolve(d));
  const publicUrlText = env['WORKBENCH_PUBLIC_URL'] ?? `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${port}`;
  let publicUrl: string;
  try {
    const u = new URL(publicUrlText);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    publicUrl = u.origin + u.pathname.replace(/\/$/, '');
  } catch {
    throw new GatewayError('GW_ERR_CONFIG_INVALID', `WORKBENCH_PUBLIC_URL must be an http(s) URL, got "${publicUrlText}"`);
  }
  return {
    port,
    host,
    dataDir: path.resolve(env['WORKBENCH_DATA_DIR'] ?? './data'),
    databaseUrl: env['DATABASE_URL'] || undefined,
    pluginDirs: [BUILTIN_PLUGINS_DIR, ...extra],
    policyFile: path.resolve(env['WORKBENCH_POLICY'] ?? DEFAULT_POLICY_FILE),
    logLevel,
    publicUrl,
  };
}
