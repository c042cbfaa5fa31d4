/**
 * @module bench/in-process-runner
 * BENCH-ONLY stand-in for the sandbox, for the seed-architecture baseline: it satisfies the engine's
 * `SandboxRunner` (`run(task, http)`) by importing the plugin's own `plugin.js` with import() in
 * this process and calling `handler(ctx, args)` directly: no isolate, no worker, no process
 * boundary, no CPU/memory/result limits. Its `ctx.http` encodes the request the way the isolate's
 * bootstrap does and hands it to the very `http` the engine passes (the bridge, with egress policy
 * and credential injection), so everything except isolation is what the real gateway does.
 * Nothing under host/ or sandbox/ imports this file; only bench/seed-gateway.ts installs it.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Registry } from '../host/registry/registry.js';
import type {
  BridgeRequest,
  BridgeResponse,
  HttpHandler,
  RunOutcome,
  RunTask,
  SandboxErrorCode,
} from '../contracts/protocol.js';

type Handler = (ctx: unknown, args: unknown) => unknown;

/** The subset of the fetch-like init the fixture and catalog plugins use (see contracts/plugin-api.ts). */
interface Init {
  method?: string;
  headers?: Record<string, string> | ReadonlyArray<readonly [string, string]>;
  body?: unknown;
  json?: unknown;
}

export interface InProcessRunner {
  run(task: RunTask, http: HttpHandler): Promise<RunOutcome>;
  /** calls run so far: proof that a gateway really used this runner */
  readonly calls: number;
}

function encodeRequest(url: string, init: Init | undefined): BridgeRequest {
  const headers: Record<string, string> = {};
  const h = init?.headers;
  if (Array.isArray(h))
    for (const [k, v] of h as ReadonlyArray<readonly [string, string]>) headers[String(k).toLowerCase()] = String(v);
  else if (h) for (const [k, v] of Object.entries(h)) headers[k.toLowerCase()] = String(v);
  const b = init?.json !== undefined ? init.json : init?.body;
  let body: string | undefined;
  if (typeof b === 'string') body = b;
  else if (b !== undefined && b !== null && typeof b === 'object') {
    body = JSON.stringify(b);
    headers['content-type'] ??= 'application/json';
  } else if (b !== undefined && b !== null) body = String(b);
  return { url: String(url), method: init?.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}) };
}

function makeResponse(r: BridgeResponse): unknown {
  const headers = new Map(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    status: r.status,
    ok: r.status >= 200 && r.status < 300,
    statusText: r.statusText,
    url: r.url,
    headers: {
      get: (name: string) => headers.get(name.toLowerCase()) ?? null,
      has: (name: string) => headers.has(name.toLowerCase()),
      keys: () => [...headers.keys()],
      entries: () => [...headers.entries()],
      forEach: (fn: (value: string, name: string) => void) => headers.forEach(fn),
      toJSON: () => Object.fromEntries(headers),
    },
    body: r.body,
    text: async () => r.body,
    json: async () => JSON.parse(r.body) as unknown,
  };
}

function makeCtx(task: RunTask, http: HttpHandler): unknown {
  const call = async (url: string, init?: Init): Promise<unknown> => {
    const result = await http(encodeRequest(url, init));
    if (result.ok) return makeResponse(result.response);
    throw Object.assign(new Error(`${result.error.code}: ${result.error.message}`), {
      name: 'HttpError',
      code: result.error.code,
    });
  };
  const noop = (): void => undefined;
  return {
    http: Object.assign(call, { fetch: call }),
    config: task.config,
    log: { info: noop, warn: noop, error: noop },
  };
}

/** Builds the runner for the plugins of one gateway's registry (each plugin's module imported once). */
export function createInProcessRunner(registry: Registry): InProcessRunner {
  const modules = new Map<string, Promise<Record<string, Handler>>>();
  let calls = 0;
  const load = (name: string): Promise<Record<string, Handler>> => {
    let mod = modules.get(name);
    if (!mod) {
      const plugin = registry.plugin(name);
      if (!plugin) return Promise.reject(new Error(`plugin ${name} is not loaded`));
      const url = pathToFileURL(path.join(plugin.dir, 'plugin.js')).href;
      mod = import(url).then((m: { default: Record<string, Handler> }) => m.default);
      modules.set(name, mod);
    }
    return mod;
  };
  const stats = { wallMs: 0, cpuMs: 0, requests: 0, coldStart: false };
  const fail = (code: SandboxErrorCode, err: unknown): RunOutcome => ({
    ok: false,
    error: { code, message: err instanceof Error ? err.message : String(err) },
    stats,
  });
  return {
    get calls() {
      return calls;
    },
    async run(task, http) {
      calls++;
      let handler: Handler | undefined;
      try {
        const mod = await load(task.plugin.name);
        handler = Object.hasOwn(mod, task.tool) ? mod[task.tool] : undefined;
      } catch (err) {
        return fail('GW_ERR_SANDBOX_LOAD_FAILED', err);
      }
      if (typeof handler !== 'function')
        return fail('GW_ERR_SANDBOX_TOOL_MISSING', `the plugin exports no handler for "${task.tool}"`);
      let value: unknown;
      try {
        value = await handler(makeCtx(task, http), JSON.parse(task.argsJson));
      } catch (err) {
        return fail('GW_ERR_SANDBOX_HANDLER_THREW', err);
      }
      let resultJson: string | undefined;
      try {
        resultJson = JSON.stringify(value);
      } catch (err) {
        return fail('GW_ERR_SANDBOX_RESULT_INVALID', err);
      }
      if (resultJson === undefined) return fail('GW_ERR_SANDBOX_RESULT_INVALID', 'the handler returned undefined');
      return { ok: true, resultJson, stats };
    },
  };
}
