/**
 * @module bench/sandbox-perf
 * A focused micro-bench of the sandbox alone (no gateway): `createSandbox` with the two fixture
 * plugins, a loopback upstream, and the same handlers called in-process as the baseline.
 *   1. overhead of one call at a time (fresh context per call): sandbox − in-process, p50/p99;
 *   2. throughput with N concurrent callers on one plugin, 0 ms and 20 ms upstream;
 *   3. (`--only worker-cpu`) the worker's side of a call without Piscina or IPC: the worker's call
 *      function run in this thread, sequentially, and the CPU this process spent per call, with a
 *      fresh context per call and with one context per tenant;
 *   4. (`--only hops`) one call at a time, split into its hand-offs (bench/hops.ts), beside the
 *      floor of a thread and a process round trip on this machine;
 *   5. (`--only plugins`) one call at a time to `--plugins N` distinct plugins in turn (each the echo
 *      fixture brought to 38 KB, like a catalog plugin), as an agent using several integrations
 *      does: latency, cold starts, and what the workers did with their isolates meanwhile
 *      (created, collected, disposed for memory, evicted).
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/sandbox-perf.js [--clients 16]
 * [--duration 3] [--calls 1000] [--workers 8] [--calls-per-worker 1] [--mode per-call|per-tenant] [--only overhead,throughput,worker-cpu,hops,plugins] [--plugins 4] [--cpu-prof DIR] [--perf-map]`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createSandbox } from '../host/supervisor/index.js';
import type { RunTask, SandboxLimits } from '../contracts/protocol.js';
import { FIXTURE_PLUGINS_DIR } from './bench-gateway.js';
import { runClosedLoop, runPaired } from './closed-loop.js';
import { formatHops, measureHops } from './hops.js';
import { baselineCall } from './in-process-baseline.js';
import { startLoopbackUpstream } from './loopback-upstream.js';
import { plainFetchHandler } from './sandbox-cost.js';

const { values: argv } = parseArgs({
  options: {
    clients: { type: 'string', default: '16' },
    duration: { type: 'string', default: '3' },
    calls: { type: 'string', default: '1000' },
    workers: { type: 'string', default: '8' },
    'calls-per-worker': { type: 'string', default: '1' },
    /** per-tenant: every call carries the same contextKey (the engine's sandbox.contextMode "per-tenant") */
    mode: { type: 'string', default: 'per-call' },
    only: { type: 'string', default: 'overhead,throughput' },
    plugins: { type: 'string', default: '4' },
    'cpu-prof': { type: 'string' },
    /** the sandbox process writes /tmp/perf-<pid>.map, so that Linux perf names its JavaScript frames */
    'perf-map': { type: 'boolean', default: false },
  },
});
const clients = Number(argv.clients);
const durationMs = Number(argv.duration) * 1000;
const calls = Number(argv.calls);
const only = new Set(String(argv.only).split(','));

const LIMITS: SandboxLimits = {
  memoryMb: 64,
  cpuMsPerCall: 1000,
  wallMsPerCall: 30_000,
  maxResultBytes: 8 << 20,
  maxArgsBytes: 256 << 10,
  maxRequestsPerCall: 25,
  maxRequestBodyBytes: 1 << 20,
};

function task(plugin: string, tool: string, args: Record<string, unknown>, padKb = 0, name = plugin): RunTask {
  // padKb: a comment that brings the module to the size of a catalog plugin (github's is ~38 KB)
  const source =
    readFileSync(path.join(FIXTURE_PLUGINS_DIR, plugin, 'plugin.js'), 'utf8') +
    (padKb ? `\n/* ${name} ${'x'.repeat(padKb * 1024)} */\n` : '');
  return {
    callId: randomUUID(),
    plugin: { name, version: '1.0.0', source, sourceHash: createHash('sha256').update(source).digest('hex') },
    tool,
    argsJson: JSON.stringify(args),
    config: {},
    limits: LIMITS,
    ...(argv.mode === 'per-tenant' ? { contextKey: 'bench-tenant' } : {}),
  };
}

/** CPU time (user + system) of a process in ms, from /proc (0 where there is no /proc) */
function procCpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

const fmt = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(2));

/**
 * The worker's side of `calls` sequential calls, in this thread (no Piscina, no IPC): CPU of this
 * process per call (isolated-vm's threads included) and latency percentiles.
 */
async function workerCpu(t: RunTask, calls: number): Promise<{ cpuMsPerCall: number; p50: number; p99: number }> {
  const { runCall } = await import('../sandbox/worker/run-call.js');
  const one = async (): Promise<void> => {
    // echo_args posts nothing on its port (no ctx.http, no log lines)
    const r = await runCall({ ...t, callId: randomUUID() }, { id: 1, post: () => undefined, on: () => undefined });
    if (!r.outcome.ok) throw new Error(`${r.outcome.error.code}: ${r.outcome.error.message}`);
  };
  for (let i = 0; i < 200; i++) await one();
  const lat: number[] = [];
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const s = performance.now();
    await one();
    lat.push(performance.now() - s);
  }
  const c = process.cpuUsage(c0);
  lat.sort((a, b) => a - b);
  return {
    cpuMsPerCall: (c.user + c.system) / 1000 / calls,
    p50: lat[Math.floor(calls / 2)] ?? 0,
    p99: lat[Math.floor(calls * 0.99)] ?? 0,
  };
}

async function main(): Promise<void> {
  const upstream = await startLoopbackUpstream();
  const execArgv = argv['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${argv['cpu-prof']}`] : [];
  if (argv['perf-map']) execArgv.push('--perf-basic-prof-only-functions');
  const sandbox = await createSandbox({
    workers: Number(argv.workers),
    callsPerWorker: Number(argv['calls-per-worker']),
    execArgv,
    traceHops: only.has('hops'),
  });
  const http = plainFetchHandler(upstream.origin);
  const cases = [
    { plugin: 'fixture-echo', tool: 'echo_args', args: { text: 'hi', times: 1 }, padKb: 0 },
    { plugin: 'fixture-echo', tool: 'echo_args', args: { text: 'hi', times: 1 }, padKb: 38 },
    { plugin: 'fixture-http', tool: 'http_get', args: { path: '/ping' }, padKb: 0 },
  ];
  const out: Record<string, unknown> = { load: (await import('node:os')).loadavg() };
  try {
    if (only.has('worker-cpu')) {
      for (const contextKey of [undefined, 'bench-tenant']) {
        const t = {
          ...task('fixture-echo', 'echo_args', { text: 'hi', times: 1 }),
          ...(contextKey ? { contextKey } : {}),
        };
        if (!contextKey) delete t.contextKey;
        const label = `worker-cpu echo_args ${contextKey ? 'per-tenant' : 'per-call'}`;
        const r = await workerCpu(t, calls);
        out[label] = r;
        console.log(
          `${label}: CPU ${r.cpuMsPerCall.toFixed(3)} ms per call (this process, all threads), p50 ${fmt(r.p50)} p99 ${fmt(r.p99)} ms, ${calls} sequential calls`,
        );
      }
    }
    if (only.has('plugins')) {
      const n = Number(argv.plugins);
      const tasks = Array.from({ length: n }, (_, i) =>
        task('fixture-echo', 'echo_args', { text: 'hi', times: 1 }, 38, `echo-${i}`),
      );
      const isolateCounters = async (): Promise<Record<string, number>> => {
        const sum = { created: 0, collected: 0, recycled: 0, evicted: 0 };
        for (const w of (await sandbox.memoryStats())?.workers ?? []) {
          sum.created += w.created;
          sum.collected += w.collected;
          sum.recycled += w.recycled;
          sum.evicted += w.evicted;
        }
        return sum;
      };
      const lat: number[] = [];
      let cold = 0;
      let before: Record<string, number> = {};
      for (let i = 0; i < calls + 400; i++) {
        if (i === 400) before = await isolateCounters();
        const t0 = performance.now();
        const r = await sandbox.run({ ...(tasks[i % n] as RunTask), callId: randomUUID() }, http);
        if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
        if (i < 400) continue;
        lat.push(performance.now() - t0);
        if (r.stats.coldStart) cold++;
      }
      const afterCounters = await isolateCounters();
      const isolates = Object.fromEntries(Object.entries(afterCounters).map(([k, v]) => [k, v - (before[k] ?? 0)]));
      lat.sort((a, b) => a - b);
      const at = (q: number): number => lat[Math.min(lat.length - 1, Math.floor(lat.length * q))] ?? 0;
      const row = { plugins: n, calls, p50: at(0.5), p90: at(0.9), p99: at(0.99), coldStarts: cold, isolates };
      out[`plugins ${n}`] = row;
      console.log(
        `${n} plugins in turn (38 KB modules), ${calls} sequential calls: p50 ${fmt(row.p50)} p90 ${fmt(row.p90)} p99 ${fmt(row.p99)} ms, ${cold} cold starts; isolates ${Object.entries(
          isolates,
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
    }
    for (const c of cases) {
      const t = task(c.plugin, c.tool, c.args, c.padKb);
      const label = `${c.tool}${c.padKb ? ` (${c.padKb} KB module)` : ''}`;
      const base = await baselineCall(c.plugin, c.tool, c.args, upstream.origin);
      let cold = 0;
      const sandboxOp = async (): Promise<void> => {
        const r = await sandbox.run({ ...t, callId: randomUUID() }, http);
        if (r.stats.coldStart) cold++;
        if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
      };
      const baseOp = async (): Promise<void> => {
        JSON.stringify(await base.run());
      };
      if (only.has('hops')) {
        upstream.setDelay(0);
        const r = await measureHops(sandbox, t, http, calls);
        out[`hops ${label}`] = r;
        console.log(formatHops(label, r));
      }
      if (only.has('overhead')) {
        upstream.setDelay(0);
        cold = 0;
        const p = await runPaired(calls, 200, sandboxOp, baseOp);
        const row = {
          sandboxP50: p.a.p50,
          sandboxP99: p.a.p99,
          baseP50: p.b.p50,
          baseP99: p.b.p99,
          overheadP50: p.a.p50 - p.b.p50,
          overheadP99: p.a.p99 - p.b.p99,
          errors: p.errors,
        };
        out[`overhead ${label}`] = row;
        console.log(
          `overhead ${label}: sandbox p50 ${fmt(row.sandboxP50)} p99 ${fmt(row.sandboxP99)} | in-process p50 ${fmt(row.baseP50)} p99 ${fmt(row.baseP99)} | overhead p50 ${fmt(row.overheadP50)} p99 ${fmt(row.overheadP99)} ms, ${cold} cold starts${p.errors ? ` errors ${p.errors} ${p.firstError}` : ''}`,
        );
      }
      if (only.has('throughput')) {
        for (const delay of c.tool === 'http_get' ? [0, 20] : [0]) {
          upstream.setDelay(delay);
          const load = { concurrency: clients, durationMs, warmupMs: 500, maxOps: 2_000_000, unitsPerOp: 1 };
          const b = await runClosedLoop(load, baseOp);
          cold = 0;
          const pid = sandbox.stats().pid;
          const c0 = procCpuMs(pid);
          const h0 = process.cpuUsage();
          const s = await runClosedLoop(load, sandboxOp);
          const h1 = process.cpuUsage(h0);
          const calls = s.ops + Math.round((s.execPerSec * load.warmupMs) / 1000);
          const childMsPerCall = (procCpuMs(pid) - c0) / calls;
          const hostMsPerCall = (h1.user + h1.system) / 1000 / calls;
          const row = {
            baseline: b.execPerSec,
            sandbox: s.execPerSec,
            ratio: s.execPerSec / b.execPerSec,
            sandboxP50: s.latencyMs.p50,
            sandboxP99: s.latencyMs.p99,
            errors: s.errors,
            childCpuMsPerCall: childMsPerCall,
            hostCpuMsPerCall: hostMsPerCall,
          };
          out[`throughput ${label} ${delay}ms`] = row;
          console.log(
            `throughput ${label} upstream ${delay} ms, ${clients} clients: in-process ${fmt(b.execPerSec)}/s, sandbox ${fmt(s.execPerSec)}/s, ratio ${row.ratio.toFixed(2)} (sandbox p50 ${fmt(s.latencyMs.p50)} p99 ${fmt(s.latencyMs.p99)} ms, ${cold} cold starts; CPU per call: sandbox process ${childMsPerCall.toFixed(2)} ms, host ${hostMsPerCall.toFixed(2)} ms)${s.errors ? ` errors ${s.errors} ${s.firstError}` : ''}`,
          );
        }
      }
    }
  } finally {
    out['loadEnd'] = (await import('node:os')).loadavg();
    console.log(
      `load average start ${(out['load'] as number[]).map((x) => x.toFixed(1)).join(' ')}, end ${(out['loadEnd'] as number[]).map((x) => x.toFixed(1)).join(' ')}`,
    );
    await sandbox.close();
    await upstream.close();
  }
}

void main();
