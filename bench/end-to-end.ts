/**
 * @module bench/end-to-end
 * Section 1: `execute_tools` throughput and latency. For each case (tool × upstream delay ×
 * batch size) these paths are driven, one after the other, with the same number of concurrent callers:
 *   - baseline:  the handler alone, called in-process, a batch being B handler calls awaited together;
 *   - seed-mcp:  the seed-architecture gateway (bench/seed-gateway: the same gateway, handlers run
 *                in-process instead of in the sandbox) driven like `mcp`;
 *   - mcp:       N MCP SDK clients calling `execute_tools` over Streamable HTTP at /mcp;
 *   - seed-rest: the seed-architecture gateway driven like `rest`;
 *   - rest:      N callers POSTing the same batch to /rest/:integration;
 *   - sandbox:   N callers calling gateway.sandbox.run directly (no HTTP, MCP, policy or audit; a
 *                plain fetch answers ctx.http), which splits the gap into isolation and the rest.
 * mcp ÷ seed-mcp and rest ÷ seed-rest are what isolation costs inside the same gateway. CPU per
 * execution (this process and the sandbox process) is read for every path too.
 * Every answer is checked (each item must be a result), so errors are counted, not timed.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { BenchGateway } from './bench-gateway.js';
import { runClosedLoop, type LoadOptions, type LoadResult } from './closed-loop.js';
import { baselineCall } from './in-process-baseline.js';
import type { LoopbackUpstream } from './loopback-upstream.js';
import { startCpuReading } from './process-cpu.js';
import { plainFetchHandler, sandboxTask } from './sandbox-cost.js';

export interface E2eCase {
  name: string;
  plugin: string;
  tool: string;
  /** arguments as a caller sends them */
  args: Record<string, unknown>;
  /** the same arguments after the gateway applied schema defaults (what the handler receives) */
  handlerArgs: Record<string, unknown>;
  /** upstream answer delay in ms, or null for a tool that makes no request */
  upstreamDelayMs: number | null;
  batch: number;
}

/** In run order: each seed path runs right before its Workbench twin, so both see the same load. */
export const E2E_PATHS = ['baseline', 'seed-mcp', 'mcp', 'seed-rest', 'rest', 'sandbox'] as const;
export type E2ePath = (typeof E2E_PATHS)[number];
export const SEED_PATHS: readonly E2ePath[] = ['seed-mcp', 'seed-rest'];

/** Throughput ratios (executions/s ÷ executions/s); absent when either side was not run. */
export interface E2eRatios {
  /** isolation inside the same gateway: Workbench over MCP ÷ the seed architecture over MCP */
  mcpOverSeedMcp?: number;
  restOverSeedRest?: number;
  /** the whole gateway against the handler alone */
  mcpOverHandler?: number;
  restOverHandler?: number;
  sandboxOverHandler?: number;
  seedMcpOverHandler?: number;
  seedRestOverHandler?: number;
}

/** CPU per execution of one path, ms, over its warm-up and measurement (every answer counted). */
export interface E2eCpu {
  /** this process: the gateway's host side, plus the load generator (the same client work on every path) */
  hostMs: number;
  /** the sandbox process (paths through Workbench's sandbox only; the seed gateway has none) */
  sandboxMs: number;
}

export interface E2eRow {
  case: E2eCase;
  /** the paths that were run (all unless --paths chose fewer) */
  results: Partial<Record<E2ePath, LoadResult>>;
  ratios: E2eRatios;
  cpuPerExecution: Partial<Record<E2ePath, E2eCpu>>;
}

/** Paths whose calls reach Workbench's sandbox process. */
export const SANDBOXED_PATHS: readonly E2ePath[] = ['mcp', 'rest', 'sandbox'];

export function e2eRatios(results: E2eRow['results']): E2eRatios {
  const over = (a: E2ePath, b: E2ePath): number | undefined => {
    const x = results[a]?.execPerSec;
    const y = results[b]?.execPerSec;
    return x === undefined || y === undefined || y === 0 ? undefined : x / y;
  };
  const entries: Array<[keyof E2eRatios, number | undefined]> = [
    ['mcpOverSeedMcp', over('mcp', 'seed-mcp')],
    ['restOverSeedRest', over('rest', 'seed-rest')],
    ['mcpOverHandler', over('mcp', 'baseline')],
    ['restOverHandler', over('rest', 'baseline')],
    ['sandboxOverHandler', over('sandbox', 'baseline')],
    ['seedMcpOverHandler', over('seed-mcp', 'baseline')],
    ['seedRestOverHandler', over('seed-rest', 'baseline')],
  ];
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined));
}

export function e2eCases(): E2eCase[] {
  const echo = {
    plugin: 'fixture-echo',
    tool: 'echo_args',
    args: { text: 'hi' },
    handlerArgs: { text: 'hi', times: 1 },
    upstreamDelayMs: null,
  };
  const http = { plugin: 'fixture-http', tool: 'http_get', args: { path: '/ping' }, handlerArgs: { path: '/ping' } };
  const cases: E2eCase[] = [];
  for (const batch of [1, 8]) {
    cases.push({ ...echo, name: `echo_args, no upstream, batch ${batch}`, batch });
    for (const delay of [0, 20])
      cases.push({ ...http, name: `http_get, upstream ${delay} ms, batch ${batch}`, upstreamDelayMs: delay, batch });
  }
  return cases;
}

type Item = { result?: unknown; error?: string; code?: string };

function checkItems(results: Item[] | undefined, expected: number): void {
  if (!Array.isArray(results) || results.length !== expected)
    throw new Error(`expected ${expected} results, got ${JSON.stringify(results)?.slice(0, 200)}`);
  for (const item of results)
    if (!item || !('result' in item))
      throw new Error(`item failed: ${item?.code ?? ''} ${item?.error ?? JSON.stringify(item)}`);
}

async function connectClients(gw: BenchGateway, n: number): Promise<Client[]> {
  const clients: Client[] = [];
  for (let i = 0; i < n; i++) {
    const client = new Client({ name: `workbench-bench-${i}`, version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${gw.apiKey}` } },
      }),
    );
    clients.push(client);
  }
  return clients;
}

export interface E2eOptions {
  clients: number;
  durationMs: number;
  warmupMs: number;
  maxOps: number;
  paths: readonly E2ePath[];
  /** called after each measured path, for progress output */
  onResult?: (c: E2eCase, path: string, r: LoadResult) => void;
}

/** One MCP call of `execute_tools` with the case's batch, answer checked. */
async function mcpBatch(client: Client, executions: unknown[]): Promise<void> {
  const res = (await client.callTool({ name: 'execute_tools', arguments: { executions } })) as {
    content: Array<{ type: string; text?: string }>;
    isError?: boolean;
  };
  const text = res.content.find((p) => p.type === 'text')?.text ?? '';
  if (res.isError) throw new Error(`execute_tools isError: ${text.slice(0, 200)}`);
  checkItems((JSON.parse(text) as { results?: Item[] }).results, executions.length);
}

/** One REST POST of the case's batch, answer checked. */
async function restBatch(gw: BenchGateway, plugin: string, body: string, expected: number): Promise<void> {
  const res = await fetch(`${gw.url}/rest/${encodeURIComponent(plugin)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.apiKey}` },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`REST answered ${res.status}: ${text.slice(0, 200)}`);
  checkItems((JSON.parse(text) as { results?: Item[] }).results, expected);
}

type Ops = Record<E2ePath, (loop: number) => Promise<void>>;

interface Targets {
  gw: BenchGateway;
  seed: BenchGateway | undefined;
  clients: Client[];
  seedClients: Client[];
  upstream: LoopbackUpstream;
}

/** The operation of each path for one case: one request (a batch of `c.batch` executions), answer checked. */
async function caseOps(t: Targets, c: E2eCase): Promise<Ops> {
  const executions = Array.from({ length: c.batch }, () => ({ tool: c.tool, args: c.args }));
  const call = await baselineCall(c.plugin, c.tool, c.handlerArgs, t.upstream.origin);
  const body = JSON.stringify({ executions });
  const template = sandboxTask(t.gw, c.plugin, c.tool, c.handlerArgs, 'per-call');
  const http = plainFetchHandler(t.upstream.origin);
  return {
    baseline: async () => {
      await Promise.all(executions.map(() => call.run()));
    },
    'seed-mcp': (loop) => mcpBatch(t.seedClients[loop] as Client, executions),
    mcp: (loop) => mcpBatch(t.clients[loop] as Client, executions),
    'seed-rest': () => restBatch(t.seed as BenchGateway, c.plugin, body, c.batch),
    rest: () => restBatch(t.gw, c.plugin, body, c.batch),
    sandbox: async () => {
      const outs = await Promise.all(
        executions.map(() => t.gw.gateway.sandbox.run({ ...template, callId: randomUUID() }, http)),
      );
      const bad = outs.find((out) => !out.ok);
      if (bad && !bad.ok) throw new Error(`${bad.error.code}: ${bad.error.message}`);
    },
  };
}

/**
 * `gw` is the Workbench gateway; `seed` the seed-architecture gateway (bench/seed-gateway), needed
 * only when a seed path is selected. Before the first case, every selected path runs once per tool
 * for the warm-up time (not recorded), so that the path measured first does not pay alone for
 * compiling the code that all paths share (MCP SDK, fastify, the engine, the bridge).
 */
export async function runEndToEnd(
  gw: BenchGateway,
  seed: BenchGateway | undefined,
  upstream: LoopbackUpstream,
  cases: E2eCase[],
  o: E2eOptions,
): Promise<E2eRow[]> {
  if (!seed && o.paths.some((p) => SEED_PATHS.includes(p)))
    throw new Error('the seed paths need the seed-architecture gateway');
  const t: Targets = {
    gw,
    seed,
    upstream,
    clients: o.paths.includes('mcp') ? await connectClients(gw, o.clients) : [],
    seedClients: seed && o.paths.includes('seed-mcp') ? await connectClients(seed, o.clients) : [],
  };
  const selected = E2E_PATHS.filter((p) => o.paths.includes(p));
  const rows: E2eRow[] = [];
  try {
    const firstOfEachTool = cases.filter((c, i) => cases.findIndex((d) => d.tool === c.tool) === i);
    for (const c of firstOfEachTool) {
      upstream.setDelay(c.upstreamDelayMs ?? 0);
      const ops = await caseOps(t, c);
      for (const path of selected)
        await runClosedLoop(
          { concurrency: o.clients, durationMs: 0, warmupMs: o.warmupMs, maxOps: o.maxOps, unitsPerOp: c.batch },
          ops[path],
        );
    }
    for (const c of cases) {
      upstream.setDelay(c.upstreamDelayMs ?? 0);
      const load: LoadOptions = {
        concurrency: o.clients,
        durationMs: o.durationMs,
        warmupMs: o.warmupMs,
        maxOps: o.maxOps,
        unitsPerOp: c.batch,
      };
      const ops = await caseOps(t, c);
      const results: E2eRow['results'] = {};
      const cpuPerExecution: E2eRow['cpuPerExecution'] = {};
      for (const path of selected) {
        let answered = 0;
        const op = ops[path];
        const counted = (loop: number): Promise<void> => op(loop).finally(() => answered++);
        const read = startCpuReading(SANDBOXED_PATHS.includes(path) ? gw.gateway.sandbox.stats().pid : undefined);
        const r = await runClosedLoop(load, counted);
        const cpu = read();
        const n = Math.max(1, answered * c.batch);
        results[path] = r;
        cpuPerExecution[path] = { hostMs: cpu.hostMs / n, sandboxMs: cpu.sandboxMs / n };
        o.onResult?.(c, path, r);
      }
      rows.push({ case: c, results, ratios: e2eRatios(results), cpuPerExecution });
    }
  } finally {
    for (const client of [...t.clients, ...t.seedClients]) await client.close().catch(() => undefined);
  }
  return rows;
}
