/**
 * @module bench/startup-memory
 * Section 3: start-up and memory with the whole catalog (plugins/ plus the two fixtures).
 *   1. createGateway timed (database, vault, plugin loading and validation, sandbox process up);
 *   2. resident memory at rest (this process + the sandbox child);
 *   3. the first call of each plugin (isolate creation and module compile), made with a tool name
 *      the module does not export so that no network or credential is involved; the sandbox's
 *      RSS growth divided by the isolates created estimates the memory of one plugin isolate;
 *   4. N executions over MCP (batches of 8: 4 echo_args + 4 http_get against a 0 ms upstream),
 *      then resident memory again.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startBenchGateway } from './bench-gateway.js';
import { runClosedLoop, type LoadResult } from './closed-loop.js';
import type { LoopbackUpstream } from './loopback-upstream.js';
import { snapshot, type MemorySnapshot } from './memory.js';
import { plainFetchHandler } from './sandbox-cost.js';

export interface ColdStart {
  plugin: string;
  /** wall time of the first sandbox call for this plugin, ms */
  firstCallMs: number;
  coldStart: boolean;
  /** wall time of the calls made right after (one per worker share), ms: median */
  nextCallsP50Ms: number;
  isolatesCreated: number;
}

export interface StartupMemoryResult {
  plugins: number;
  tools: number;
  workers: number;
  createGatewayMs: number;
  atRest: MemorySnapshot;
  coldStarts: ColdStart[];
  afterFirstCalls: MemorySnapshot;
  /** (sandbox RSS after first calls − at rest) / isolates created, MB; undefined without a child pid */
  perIsolateMb: number | undefined;
  executions: number;
  load: LoadResult;
  afterCalls: MemorySnapshot;
}

const BATCH = 8;

export async function runStartupMemory(
  upstream: LoopbackUpstream,
  o: { executions: number; concurrency: number; timeCapMs: number; policy?: Record<string, unknown> },
): Promise<StartupMemoryResult> {
  upstream.setDelay(0);
  const gw = await startBenchGateway({
    upstreamOrigin: upstream.origin,
    catalog: true,
    ...(o.policy ? { policy: o.policy } : {}),
  });
  try {
    const { registry, sandbox } = gw.gateway;
    const workers = sandbox.stats().workers;
    await new Promise((r) => setTimeout(r, 500));
    const atRest = snapshot(sandbox);

    const http = plainFetchHandler(upstream.origin);
    const coldStarts: ColdStart[] = [];
    let isolates = 0;
    for (const p of registry.plugins()) {
      const task = {
        callId: randomUUID(),
        plugin: { name: p.manifest.name, version: p.manifest.version, source: p.source, sourceHash: p.sourceHash },
        tool: '__bench_not_a_tool__',
        argsJson: '{}',
        config: {},
        limits: { ...gw.gateway.policy.limits, maxRequestBodyBytes: gw.gateway.policy.http.maxRequestBodyBytes },
      };
      const t0 = performance.now();
      const first = await sandbox.run(task, http);
      const firstCallMs = performance.now() - t0;
      // more calls at once: the other workers build their own isolate of this plugin
      const next = await Promise.all(
        Array.from({ length: workers }, async () => {
          const t = performance.now();
          const out = await sandbox.run({ ...task, callId: randomUUID() }, http);
          return { ms: performance.now() - t, cold: out.stats.coldStart };
        }),
      );
      const created = (first.stats.coldStart ? 1 : 0) + next.filter((n) => n.cold).length;
      isolates += created;
      const sorted = next.map((n) => n.ms).sort((a, b) => a - b);
      coldStarts.push({
        plugin: p.manifest.name,
        firstCallMs,
        coldStart: first.stats.coldStart,
        nextCallsP50Ms: sorted[Math.floor(sorted.length / 2)] ?? NaN,
        isolatesCreated: created,
      });
    }
    await new Promise((r) => setTimeout(r, 500));
    const afterFirstCalls = snapshot(sandbox);
    const perIsolateMb =
      afterFirstCalls.sandboxRssMb !== undefined && atRest.sandboxRssMb !== undefined && isolates > 0
        ? (afterFirstCalls.sandboxRssMb - atRest.sandboxRssMb) / isolates
        : undefined;

    const clients: Client[] = [];
    for (let i = 0; i < o.concurrency; i++) {
      const c = new Client({ name: `workbench-bench-mem-${i}`, version: '0.0.0' });
      await c.connect(
        new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${gw.apiKey}` } },
        }),
      );
      clients.push(c);
    }
    const executions = [
      ...Array.from({ length: BATCH / 2 }, () => ({ tool: 'echo_args', args: { text: 'memory' } })),
      ...Array.from({ length: BATCH / 2 }, () => ({ tool: 'http_get', args: { path: '/ping' } })),
    ];
    const load = await runClosedLoop(
      {
        concurrency: o.concurrency,
        durationMs: o.timeCapMs,
        warmupMs: 0,
        maxOps: Math.ceil(o.executions / BATCH),
        unitsPerOp: BATCH,
      },
      async (loop) => {
        const res = (await (clients[loop] as Client).callTool({
          name: 'execute_tools',
          arguments: { executions },
        })) as { content: Array<{ type: string; text?: string }> };
        const body = JSON.parse(res.content.find((p) => p.type === 'text')?.text ?? '{}') as {
          results?: Array<{ result?: unknown; code?: string }>;
        };
        const bad = body.results?.find((r) => !('result' in r));
        if (!body.results || bad) throw new Error(`execution failed: ${bad?.code ?? 'no results'}`);
      },
    );
    for (const c of clients) await c.close().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1000));
    const afterCalls = snapshot(sandbox);
    return {
      plugins: registry.plugins().length,
      tools: registry.toolCount,
      workers,
      createGatewayMs: gw.createMs,
      atRest,
      coldStarts,
      afterFirstCalls,
      perIsolateMb,
      executions: (load.ops - load.errors) * BATCH,
      load,
      afterCalls,
    };
  } finally {
    await gw.close();
  }
}
