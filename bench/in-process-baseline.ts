/**
 * @module bench/in-process-baseline
 * The "handler alone" baseline: the very same plugin handler, imported with a dynamic import() and
 * called in this process with no gateway around it (no HTTP, JSON-RPC, auth, validation, audit or
 * isolation; the seed-architecture gateway with all of those is bench/seed-gateway.ts). Its
 * ctx.http is a plain fetch to the loopback upstream with the bearer token added, ctx.config is
 * empty and ctx.log does nothing. BENCH-ONLY: nothing under host/ or sandbox/ imports this file,
 * and the gateway never loads plugin code this way.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURE_ORIGIN, FIXTURE_PLUGINS_DIR } from './bench-gateway.js';

export type Handler = (ctx: BaselineCtx, args: Record<string, unknown>) => Promise<unknown>;

export interface BaselineCtx {
  http(url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Response>;
  config: Record<string, unknown>;
  log: {
    debug(...a: unknown[]): void;
    info(...a: unknown[]): void;
    warn(...a: unknown[]): void;
    error(...a: unknown[]): void;
  };
}

/** Loads a fixture plugin's handlers from its plugin.js. */
export async function importFixtureHandlers(plugin: string): Promise<Record<string, Handler>> {
  const file = path.join(FIXTURE_PLUGINS_DIR, plugin, 'plugin.js');
  const mod = (await import(pathToFileURL(file).href)) as { default: Record<string, Handler> };
  return mod.default;
}

/** A ctx whose http() maps the fixture origin to the loopback upstream and fetches it directly. */
export function baselineCtx(upstreamOrigin: string, token = 'bench-token'): BaselineCtx {
  const noop = (): void => undefined;
  return {
    async http(url, init = {}) {
      const target = url.startsWith(FIXTURE_ORIGIN) ? upstreamOrigin + url.slice(FIXTURE_ORIGIN.length) : url;
      return fetch(target, {
        method: init.method ?? 'GET',
        headers: { ...(init.headers ?? {}), authorization: `Bearer ${token}` },
        ...(init.body !== undefined ? { body: init.body } : {}),
      });
    },
    config: {},
    log: { debug: noop, info: noop, warn: noop, error: noop },
  };
}

/** One tool of a fixture plugin, ready to call in-process with the given arguments. */
export interface BaselineCall {
  run(): Promise<unknown>;
}

export async function baselineCall(
  plugin: string,
  tool: string,
  args: Record<string, unknown>,
  upstreamOrigin: string,
): Promise<BaselineCall> {
  const handlers = await importFixtureHandlers(plugin);
  const handler = handlers[tool];
  if (typeof handler !== 'function') throw new Error(`${plugin} has no handler "${tool}"`);
  const ctx = baselineCtx(upstreamOrigin);
  return { run: () => handler(ctx, structuredClone(args)) };
}
