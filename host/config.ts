/**
 * @module host/config
 * The process configuration, read once from the environment (the stable contract in the README):
 * PORT, HOST, WORKBENCH_DATA_DIR, DATABASE_URL, WORKBENCH_PLUGINS_DIR, WORKBENCH_POLICY, LOG_LEVEL,
 * WORKBENCH_PUBLIC_URL, WORKBENCH_JOTS_URL. A bad value stops start-up with a message naming the
 * variable.
 */
import path from 'node:path';
import { GatewayError } from './errors.js';
import { BUILTIN_PLUGINS_DIR, DEFAULT_POLICY_FILE } from './paths.js';
import { fail } from '../contracts/errors.js';

export interface GatewayConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  pluginDirs: string[];
  policyFile: string;
  logLevel: string;
  publicUrl: string;
  /**
   * the separate origin jots are served on (WORKBENCH_JOTS_URL, e.g. https://jots.example.com);
   * unset, they are served on the public URL's origin (docs/builtins.md, Jots)
   */
  jotsUrl?: string;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The plugin roots: the built-in plugins/, then each folder of WORKBENCH_PLUGINS_DIR (separated by ":"). */
export function pluginDirsOf(env: NodeJS.ProcessEnv): string[] {
  const extra = (env['WORKBENCH_PLUGINS_DIR'] ?? '')
    .split(path.delimiter)
    .filter((d) => d.trim() !== '')
    .map((d) => path.resolve(d));
  return [BUILTIN_PLUGINS_DIR, ...extra];
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const portText = env['PORT'] ?? '3000';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535)
    throw new GatewayError('GW_ERR_CONFIG_INVALID', `PORT must be a number from 0 to 65535, got "${portText}"`);
  const host = env['HOST'] ?? '127.0.0.1';
  const logLevel = env['LOG_LEVEL'] ?? 'info';
  if (!LEVELS.includes(logLevel))
    throw new GatewayError('GW_ERR_CONFIG_INVALID', `LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${logLevel}"`);
  const publicUrlText =
    env['WORKBENCH_PUBLIC_URL'] ?? `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${port}`;
  let publicUrl: string;
  try {
    const u = new URL(publicUrlText);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw fail('GW_ERR_CONFIG_INVALID', { message: 'scheme' });
    publicUrl = u.origin + u.pathname.replace(/\/$/, '');
  } catch {
    throw new GatewayError(
      'GW_ERR_CONFIG_INVALID',
      `WORKBENCH_PUBLIC_URL must be an http(s) URL, got "${publicUrlText}"`,
    );
  }
  const databaseUrl = env['DATABASE_URL'] || undefined;
  if (databaseUrl !== undefined) checkDatabaseUrl(databaseUrl);
  const jotsUrl = env['WORKBENCH_JOTS_URL'] ? jotsOriginOf(env['WORKBENCH_JOTS_URL'], publicUrl) : undefined;
  return {
    port,
    host,
    dataDir: path.resolve(env['WORKBENCH_DATA_DIR'] ?? './data'),
    databaseUrl,
    pluginDirs: pluginDirsOf(env),
    policyFile: path.resolve(env['WORKBENCH_POLICY'] ?? DEFAULT_POLICY_FILE),
    logLevel,
    publicUrl,
    ...(jotsUrl ? { jotsUrl } : {}),
  };
}

/**
 * WORKBENCH_JOTS_URL: an http(s) origin (no path, query or credentials) whose host name is not the
 * public URL's. Jots are served there to keep them off the portal's origin; a jot on the same host
 * name but another port would still be sent the portal's cookies (cookies do not keep ports apart),
 * so that is refused rather than giving a separation that is not one.
 */
export function jotsOriginOf(text: string, publicUrl: string): string {
  const refuse = (why: string): never => {
    throw new GatewayError('GW_ERR_CONFIG_INVALID', `WORKBENCH_JOTS_URL ${why}, got "${text.slice(0, 200)}"`);
  };
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return refuse('must be an http(s) URL such as https://jots.example.com');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') refuse('must be an http(s) URL');
  if (u.username || u.password || u.search || u.hash || (u.pathname !== '/' && u.pathname !== ''))
    refuse('must be an origin only (scheme, host and port; no path, query or user)');
  if (u.hostname === new URL(publicUrl).hostname)
    refuse(
      `must name another host than WORKBENCH_PUBLIC_URL (${new URL(publicUrl).hostname}): cookies are shared across ports, so only another host name keeps jots away from the portal's`,
    );
  return u.origin;
}

/**
 * DATABASE_URL is a postgres:// (or postgresql://) URL or a SQLite file path (`sqlite:` prefix
 * optional). Any other `scheme://` is refused: read as a file path, a misspelt `postgress://…`
 * started a replica on a SQLite file of its own (keys and connections made elsewhere missing on it,
 * its password in a file name). The message names the scheme only, never the rest of the URL.
 */
export function checkDatabaseUrl(url: string): void {
  const refuse = (what: string): never => {
    throw new GatewayError(
      'GW_ERR_CONFIG_INVALID',
      `DATABASE_URL must be a postgres:// or postgresql:// URL, or a SQLite file path; got ${what} (Workbench supports PostgreSQL and SQLite)`,
    );
  };
  // spaces around it (a YAML value, a secrets file) would make it a file path of that name
  if (url.trim() !== url) refuse('a value with spaces around it');
  // any "scheme:" but a Windows drive letter ("C:\…"): "postgres:/host/db" (one slash) is no path either
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  if (scheme === undefined || scheme.length === 1) return;
  if (/^sqlite$/i.test(scheme)) return;
  if (/^postgres(ql)?$/i.test(scheme)) {
    if (!/^postgres(ql)?:\/\//i.test(url)) refuse(`"${scheme}:" without "//"`);
    return;
  }
  refuse(`a "${scheme.slice(0, 20)}:" URL`);
}
