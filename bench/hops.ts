/**
 * @module bench/hops
 * Where one call's time goes, hand-off by hand-off, for calls made one at a time. The sandbox runs
 * with `traceHops`, so every outcome carries the times the call crossed each hand-off (RunHops);
 * with the caller's own send and receive times they split a call into:
 *   - to sandbox: host → sandbox process (IPC, the sandbox process's event loop);
 *   - to worker:  sandbox process → worker thread (dispatcher, Piscina, the worker's event loop);
 *   - in worker:  the call in the worker (isolate, context, plugin code, result checks);
 *   - to main:    worker → sandbox process (the outcome, and every message before it);
 *   - to host:    sandbox process → host (IPC, the host's event loop).
 * All clocks are `performance.timeOrigin + performance.now()` of the thread that read them, so a
 * hop may be off by a few µs between threads, not more. Beside it, the floor of the same
 * hand-offs on this machine when nothing else runs: a worker thread and a child process echoing
 * messages back (round trips, so one hop is about half of each).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { PerformanceObserver } from 'node:perf_hooks';
import type { HttpHandler, RunHops, RunTask } from '../contracts/protocol.js';
import type { Sandbox } from '../host/supervisor/index.js';
import { percentile } from './latency.js';

export const HOPS = ['toSandbox', 'toWorker', 'inWorker', 'toMain', 'toHost'] as const;
export type Hop = (typeof HOPS)[number];

export interface HopSummary {
  p50: number;
  p90: number;
  p99: number;
}

export interface HopsReport {
  calls: number;
  total: HopSummary;
  hops: Record<Hop, HopSummary>;
  /** among the slowest 1 % of calls: how many had each hop over 1 ms */
  slowOverOneMs: Record<Hop, number>;
  /** among the slowest 1 % of calls: how many overlapped a garbage collection of this (the host's) thread */
  slowWithHostGc: number;
  /** this thread's collections during the calls: how many, and their total ms */
  hostGc: { count: number; ms: number };
  /** round trips when nothing else runs: thread ⇄ worker thread, process ⇄ child process */
  floor: { threadRoundTrip: HopSummary; processRoundTrip: HopSummary };
}

const now = (): number => performance.timeOrigin + performance.now();

function summary(values: number[]): HopSummary {
  const sorted = Float64Array.from(values).sort();
  return { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99) };
}

function split(sentAt: number, h: RunHops, gotAt: number): Record<Hop, number> {
  return {
    toSandbox: h.received - sentAt,
    toWorker: h.started - h.received,
    inWorker: h.finished - h.started,
    toMain: h.sent - h.finished,
    toHost: gotAt - h.sent,
  };
}

/** Round trips of one small message, `n` of them one after another, after `warmup` unrecorded. */
async function roundTrips(
  n: number,
  warmup: number,
  send: (i: number) => void,
  onReply: (f: () => void) => void,
): Promise<HopSummary> {
  const times: number[] = [];
  for (let i = 0; i < n + warmup; i++) {
    const t = performance.now();
    await new Promise<void>((resolve) => {
      onReply(resolve);
      send(i);
    });
    if (i >= warmup) times.push(performance.now() - t);
  }
  return summary(times);
}

async function floors(n: number): Promise<HopsReport['floor']> {
  const worker = new Worker(
    "require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));",
    { eval: true },
  );
  const threadRoundTrip = await roundTrips(
    n,
    200,
    (i) => worker.postMessage({ i }),
    (f) => worker.once('message', f),
  );
  await worker.terminate();
  const child = spawn(process.execPath, ['-e', 'process.on("message", (m) => process.send(m))'], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'json',
  });
  await new Promise((resolve) => child.once('spawn', resolve));
  const processRoundTrip = await roundTrips(
    n,
    200,
    (i) => child.send({ i }),
    (f) => child.once('message', f),
  );
  child.kill();
  return { threadRoundTrip, processRoundTrip };
}

/** `calls` sequential calls of `task` (after 200 unrecorded), each split into its hand-offs. */
export async function measureHops(
  sandbox: Sandbox,
  task: RunTask,
  http: HttpHandler,
  calls: number,
): Promise<HopsReport> {
  const rows: Array<Record<Hop, number> & { total: number; sentAt: number; gotAt: number }> = [];
  const gcs: Array<{ start: number; end: number }> = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcs.push({ start: performance.timeOrigin + e.startTime, end: performance.timeOrigin + e.startTime + e.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  for (let i = 0; i < calls + 200; i++) {
    const sentAt = now();
    const out = await sandbox.run({ ...task, callId: randomUUID() }, http);
    const gotAt = now();
    if (!out.ok) throw new Error(`${out.error.code}: ${out.error.message}`);
    if (!out.stats.hops) throw new Error('the outcome carries no hops: the sandbox was not created with traceHops');
    if (i >= 200) rows.push({ ...split(sentAt, out.stats.hops, gotAt), total: gotAt - sentAt, sentAt, gotAt });
  }
  await new Promise((resolve) => setImmediate(resolve)); // the observer's last entries
  observer.disconnect();
  const first = rows[0]?.sentAt ?? 0;
  const during = gcs.filter((g) => g.end >= first);
  const slowest = [...rows].sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.floor(rows.length / 100)));
  const hops = {} as Record<Hop, HopSummary>;
  const slowOverOneMs = {} as Record<Hop, number>;
  for (const hop of HOPS) {
    hops[hop] = summary(rows.map((r) => r[hop]));
    slowOverOneMs[hop] = slowest.filter((r) => r[hop] > 1).length;
  }
  const slowWithHostGc = slowest.filter((r) => during.some((g) => g.start < r.gotAt && g.end > r.sentAt)).length;
  const hostGc = { count: during.length, ms: during.reduce((sum, g) => sum + g.end - g.start, 0) };
  return {
    calls,
    total: summary(rows.map((r) => r.total)),
    hops,
    slowOverOneMs,
    slowWithHostGc,
    hostGc,
    floor: await floors(Math.min(calls, 5000)),
  };
}

export function formatHops(label: string, r: HopsReport): string {
  const f = (s: HopSummary): string => `${s.p50.toFixed(3)} / ${s.p90.toFixed(3)} / ${s.p99.toFixed(3)}`;
  const slow = Math.max(1, Math.floor(r.calls / 100));
  const lines = [
    `hops ${label}: ${r.calls} sequential calls, ms p50 / p90 / p99 (slowest ${slow} calls: how many had the hop over 1 ms)`,
    `  total        ${f(r.total)}`,
  ];
  for (const hop of HOPS) lines.push(`  ${hop.padEnd(12)} ${f(r.hops[hop])}   (${r.slowOverOneMs[hop]})`);
  lines.push(
    `  host GC: ${r.hostGc.count} collections, ${r.hostGc.ms.toFixed(1)} ms; ${r.slowWithHostGc} of the slowest ${slow} calls overlapped one`,
  );
  lines.push(
    `  floor: thread round trip ${f(r.floor.threadRoundTrip)}, process IPC round trip ${f(r.floor.processRoundTrip)}`,
  );
  return lines.join('\n');
}
