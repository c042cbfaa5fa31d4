/**
 * @module bench/sandbox-memory
 * Memory probe of the sandbox alone: `createSandbox` with the policy defaults (limits, workers,
 * callsPerWorker) drives N calls of the fixture plugins from C concurrent callers and, every K
 * calls, prints the sandbox process's VmRSS (from /proc) next to what its workers' isolate caches
 * hold: live isolates, the sum of their heaps (used, total, external) and the heap retained by idle
 * isolates. RSS rising while the isolate heaps stay bounded means native memory outside the heaps;
 * both rising together means heap retained by isolates.
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/sandbox-memory.js [--calls 100000]
 * [--every 10000] [--clients 32] [--workers 8] [--calls-per-worker 4] [--plugins echo,echo-big,http]
 * [--json]`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { policySchema } from '../host/policy/schema.js';
import { createSandbox } from '../host/supervisor/index.js';
import type { MemoryStats } from '../contracts/worker-protocol.js';
import type { RunTask } from '../contracts/protocol.js';
import { FIXTURE_PLUGINS_DIR } from './bench-gateway.js';
import { startLoopbackUpstream } from './loopback-upstream.js';
import { plainFetchHandler } from './sandbox-cost.js';

const defaults = policySchema.parse({});
const { values: argv } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    every: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '32' },
    workers: { type: 'string', default: String(defaults.sandbox.workers) },
    'calls-per-worker': { type: 'string', default: String(defaults.sandbox.callsPerWorker) },
    /** echo: echo_args (as the load run); echo-big: echo_big 20,000 chars; http: http_get through ctx.http */
    plugins: { type: 'string', default: 'echo,echo-big,http' },
    json: { type: 'boolean', default: false },
  },
});
const total = Number(argv.calls);
const every = Number(argv.every);

const CASES: Record<string, { plugin: string; tool: string; args: Record<string, unknown> }> = {
  echo: { plugin: 'fixture-echo', tool: 'echo_args', args: { text: 'hi', times: 1 } },
  'echo-big': { plugin: 'fixture-echo', tool: 'echo_big', args: { chars: 20_000 } },
  http: { plugin: 'fixture-http', tool: 'http_get', args: { path: '/ping' } },
};

function task(name: string): RunTask {
  const c = CASES[name];
  if (!c) throw new Error(`unknown case ${name} (one of ${Object.keys(CASES).join(', ')})`);
  const source = readFileSync(path.join(FIXTURE_PLUGINS_DIR, c.plugin, 'plugin.js'), 'utf8');
  return {
    callId: '',
    plugin: { name: c.plugin, version: '1.0.0', source, sourceHash: createHash('sha256').update(source).digest('hex') },
    tool: c.tool,
    argsJson: JSON.stringify(c.args),
    config: {},
    limits: { ...defaults.limits, maxRequestBodyBytes: defaults.http.maxRequestBodyBytes },
  };
}

function vmRssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

const mb = (bytes: number): number => Math.round((bytes / 1048576) * 10) / 10;

interface Sample {
  calls: number;
  seconds: number;
  rssMb: number;
  isolates: number;
  busy: number;
  usedHeapMb: number;
  totalHeapMb: number;
  externalMb: number;
  retainedIdleMb: number;
  maxRetainedIdlePerWorkerMb: number;
  created: number;
  recycled: number;
  evicted: number;
  /** the Node heaps of the worker threads and the main thread: committed, and in use */
  threadHeapsMb: number;
  threadHeapsUsedMb: number;
  /** RSS − isolate heaps − thread heaps (committed): native memory, code, malloc slack */
  otherMb: number;
  load1: number;
}

function summarise(calls: number, seconds: number, pid: number | undefined, s: MemoryStats | undefined): Sample {
  const w = s?.workers ?? [];
  const sum = (f: (x: (typeof w)[number]) => number): number => w.reduce((a, x) => a + f(x), 0);
  const row = {
    calls,
    seconds: Math.round(seconds),
    rssMb: Math.round(vmRssMb(pid)),
    isolates: sum((x) => x.isolates),
    busy: sum((x) => x.busy),
    usedHeapMb: mb(sum((x) => x.usedHeap)),
    totalHeapMb: mb(sum((x) => x.totalHeap)),
    externalMb: mb(sum((x) => x.external)),
    retainedIdleMb: mb(sum((x) => x.idleHeld)),
    maxRetainedIdlePerWorkerMb: mb(Math.max(0, ...w.map((x) => x.idleHeld))),
    created: sum((x) => x.created),
    recycled: sum((x) => x.recycled),
    evicted: sum((x) => x.evicted),
    threadHeapsMb: mb(sum((x) => x.threadHeapTotal) + (s?.mainHeapTotal ?? 0)),
    threadHeapsUsedMb: mb(sum((x) => x.threadHeapUsed) + (s?.mainHeapUsed ?? 0)),
    otherMb: 0,
    load1: Math.round((loadavg()[0] ?? 0) * 10) / 10,
  };
  row.otherMb = Math.round(row.rssMb - row.totalHeapMb - row.threadHeapsMb);
  return row;
}

async function main(): Promise<void> {
  const upstream = await startLoopbackUpstream();
  const http = plainFetchHandler(upstream.origin);
  const { workers, callsPerWorker, maxWorkerShare } = defaults.sandbox;
  const sandbox = await createSandbox({
    workers: Number(argv.workers ?? workers),
    callsPerWorker: Number(argv['calls-per-worker'] ?? callsPerWorker),
    maxWorkerShare,
  });
  const tasks = String(argv.plugins).split(',').map(task);
  const samples: Sample[] = [];
  const t0 = performance.now();
  const errors: Record<string, number> = {};
  let started = 0;
  let done = 0;
  let nextSample = every;
  let sampling: Promise<void> = Promise.resolve();
  const sample = async (): Promise<void> => {
    const stats = await sandbox.memoryStats();
    const s = summarise(done, (performance.now() - t0) / 1000, sandbox.stats().pid, stats);
    samples.push(s);
    if (!argv.json) {
      console.log(
        `${String(s.calls).padStart(7)} calls ${String(s.seconds).padStart(4)} s | RSS ${s.rssMb} MiB | ${s.isolates} isolates (${s.busy} busy) heap used ${s.usedHeapMb} total ${s.totalHeapMb} ext ${s.externalMb} MiB, idle retained ${s.retainedIdleMb} MiB (max/worker ${s.maxRetainedIdlePerWorkerMb}) | created ${s.created} recycled ${s.recycled} evicted ${s.evicted} | thread heaps ${s.threadHeapsMb} MiB (used ${s.threadHeapsUsedMb}), other ${s.otherMb} MiB | load ${s.load1}`,
      );
    }
  };
  await sample();
  const loop = async (): Promise<void> => {
    while (started < total) {
      const t = tasks[started++ % tasks.length] as RunTask;
      const r = await sandbox.run({ ...t, callId: randomUUID() }, http);
      if (!r.ok) errors[r.error.code] = (errors[r.error.code] ?? 0) + 1;
      done++;
      if (done >= nextSample) {
        nextSample += every;
        sampling = sampling.then(sample);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Number(argv.clients) }, loop));
    await sampling;
    // idle for a while: what stays behind once the traffic stops
    await new Promise((r) => setTimeout(r, 3000));
    await sample();
  } finally {
    await sandbox.close();
    await upstream.close();
  }
  const rss = samples.map((s) => s.rssMb);
  const warm = rss.slice(Math.max(1, Math.floor(rss.length / 5)));
  const summary = {
    calls: done,
    errors,
    warmRssMinMb: Math.min(...warm),
    warmRssMaxMb: Math.max(...warm),
    peakRetainedIdlePerWorkerMb: Math.max(...samples.map((s) => s.maxRetainedIdlePerWorkerMb)),
  };
  if (argv.json) console.log(JSON.stringify({ samples, summary }));
  else console.log(`summary ${JSON.stringify(summary)}`);
}

void main();
