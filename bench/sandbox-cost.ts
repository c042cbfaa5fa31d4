/**
 * @module bench/sandbox-cost
 * Section 2: what the sandbox adds to one call. `gateway.sandbox.run(task, http)` is timed
 * directly (no HTTP, no MCP, no policy, no audit) against the same handler called in-process,
 * one call at a time, the two interleaved so that both see the same machine load, in both context modes:
 *   - per-call: a fresh V8 context per call (the default);
 *   - per-tenant: `task.contextKey` set to the tenant, which is what the engine does when the
 *     policy says `sandbox.contextMode: "per-tenant"` (one context per tenant and plugin, reused).
 * For http_get, both sides answer ctx.http with the same plain fetch to the loopback upstream, so
 * the difference is the isolate, the process boundary and the bridge messages, not egress policy.
 * A last row calls PLUGINS_IN_TURN distinct plugins in turn (the echo fixture brought to the size of
 * a catalog plugin, ~38 KB, under as many names), as an agent using several integrations does: each
 * plugin has its own isolates in a worker, so this is where an isolate cache that cannot keep them
 * all warm shows (cold starts).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { BridgeRequest, BridgeResult, HttpHandler, RunTask } from '../contracts/protocol.js';
import { BENCH_TENANT, FIXTURE_ORIGIN, type BenchGateway } from './bench-gateway.js';
import { runPaired } from './closed-loop.js';
import { baselineCall } from './in-process-baseline.js';
import type { LatencySummary } from './latency.js';
import type { LoopbackUpstream } from './loopback-upstream.js';

export type ContextModeName = 'per-call' | 'per-tenant';

export interface SandboxCostRow {
  tool: string;
  mode: ContextModeName;
  calls: number;
  sandbox: LatencySummary;
  baseline: LatencySummary;
  /** sandbox minus baseline, at p50 and p99 */
  overheadP50Ms: number;
  overheadP99Ms: number;
  errors: number;
  firstError?: string;
  /** sandbox calls that had to start an isolate (and compile the module) */
  coldStarts: number;
}

export const PLUGINS_IN_TURN = 4;

/** A ctx.http answer made with a plain fetch (no egress policy, no credential store). */
export function plainFetchHandler(upstreamOrigin: string): HttpHandler {
  return async (req: BridgeRequest): Promise<BridgeResult> => {
    const target = req.url.startsWith(FIXTURE_ORIGIN) ? upstreamOrigin + req.url.slice(FIXTURE_ORIGIN.length) : req.url;
    const res = await fetch(target, {
      method: req.method,
      headers: { ...req.headers, authorization: 'Bearer bench-token' },
      ...(req.body !== undefined ? { body: req.body } : {}),
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => (headers[k] = v));
    return {
      ok: true,
      response: { status: res.status, statusText: res.statusText, headers, body: await res.text(), url: req.url },
    };
  };
}

export function sandboxTask(
  gw: BenchGateway,
  plugin: string,
  tool: string,
  args: Record<string, unknown>,
  mode: ContextModeName,
): RunTask {
  const loaded = gw.gateway.registry.plugin(plugin);
  if (!loaded) throw new Error(`plugin ${plugin} is not loaded`);
  const task: RunTask = {
    callId: randomUUID(),
    plugin: {
      name: loaded.manifest.name,
      version: loaded.manifest.version,
      source: loaded.source,
      sourceHash: loaded.sourceHash,
    },
    tool,
    argsJson: JSON.stringify(args),
    config: {},
    limits: { ...gw.gateway.policy.limits, maxRequestBodyBytes: gw.gateway.policy.http.maxRequestBodyBytes },
  };
  if (mode === 'per-tenant') task.contextKey = BENCH_TENANT;
  return task;
}

export interface SandboxCostOptions {
  calls: number;
  warmup: number;
  onRow?: (row: SandboxCostRow) => void;
}

export async function runSandboxCost(
  gw: BenchGateway,
  upstream: LoopbackUpstream,
  o: SandboxCostOptions,
): Promise<SandboxCostRow[]> {
  upstream.setDelay(0);
  const http = plainFetchHandler(upstream.origin);
  const tools = [
    { plugin: 'fixture-echo', tool: 'echo_args', args: { text: 'hi', times: 1 } },
    { plugin: 'fixture-http', tool: 'http_get', args: { path: '/ping' } },
  ];
  const echo = sandboxTask(gw, 'fixture-echo', 'echo_args', { text: 'hi', times: 1 }, 'per-call');
  const inTurn = Array.from({ length: PLUGINS_IN_TURN }, (_, i): RunTask => {
    const source = `${echo.plugin.source}\n/* echo-in-turn-${i} ${'x'.repeat(38 * 1024)} */\n`;
    return {
      ...echo,
      plugin: {
        ...echo.plugin,
        name: `echo-in-turn-${i}`,
        source,
        sourceHash: createHash('sha256').update(source).digest('hex'),
      },
    };
  });
  const cases = [
    ...tools.flatMap((t) =>
      (['per-call', 'per-tenant'] as const).map((mode) => ({
        ...t,
        label: t.tool,
        mode,
        tasks: [sandboxTask(gw, t.plugin, t.tool, t.args, mode)],
      })),
    ),
    {
      plugin: 'fixture-echo',
      tool: 'echo_args',
      args: { text: 'hi', times: 1 },
      label: `echo_args, ${PLUGINS_IN_TURN} plugins in turn`,
      mode: 'per-call' as const,
      tasks: inTurn,
    },
  ];
  const rows: SandboxCostRow[] = [];
  for (const c of cases) {
    const base = await baselineCall(c.plugin, c.tool, c.args, upstream.origin);
    let turn = 0;
    let coldStarts = 0;
    const paired = await runPaired(
      o.calls,
      o.warmup,
      async () => {
        const n = turn++;
        const out = await gw.gateway.sandbox.run(
          { ...(c.tasks[n % c.tasks.length] as RunTask), callId: randomUUID() },
          http,
        );
        if (n >= o.warmup && out.stats.coldStart) coldStarts++;
        if (!out.ok) throw new Error(`${out.error.code}: ${out.error.message}`);
      },
      async () => {
        JSON.stringify(await base.run());
      },
    );
    const row: SandboxCostRow = {
      tool: c.label,
      mode: c.mode,
      calls: o.calls,
      sandbox: paired.a,
      baseline: paired.b,
      overheadP50Ms: paired.a.p50 - paired.b.p50,
      overheadP99Ms: paired.a.p99 - paired.b.p99,
      errors: paired.errors,
      coldStarts,
    };
    if (paired.firstError !== undefined) row.firstError = paired.firstError;
    rows.push(row);
    o.onRow?.(row);
  }
  return rows;
}
