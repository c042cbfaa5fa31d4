#!/usr/bin/env node
// @module bench/load/run
// The full-length load run: the real server process, a second process driving N concurrent MCP
// sessions (default 200) until a call budget (default 100,000 execute_tools calls) or a time cap,
// while this script samples the resident memory of the server and of its sandbox child from
// /proc/<pid>/status. At the end: zero lost/misaligned results, no 5xx, audit rows = executions,
// and no growth trend in memory after warm-up. Needs a build (`npx tsc -p .`) and Linux.
//
//   node --no-node-snapshot bench/load/run.mjs [--calls 100000] [--minutes 60] [--sessions 200] [--batch 1] [--workers 2]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { spawnServer } = await import(path.join(root, 'dist', 'test', 'helpers', 'server-process.js'));
const { runDriver } = await import(path.join(root, 'dist', 'test', 'load', 'run-driver.js'));
const Database = (await import('better-sqlite3')).default;

const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? Number(argv[i + 1]) : fallback;
};
const CALLS = flag('calls', 100_000);
const MINUTES = flag('minutes', 60);
const SESSIONS = flag('sessions', 200);
const BATCH = flag('batch', 1);
const WORKERS = flag('workers', 2);
const SAMPLE_MS = flag('sample-ms', 2000);

/** VmRSS of a process in MiB, or undefined once it is gone */
function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** the server's child processes (the sandbox process) */
function childrenOf(pid) {
  const out = [];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    /* gone */
  }
  return out;
}

/** least-squares slope (MiB per minute) of samples {t (ms), v} */
function slopePerMinute(samples) {
  const n = samples.length;
  if (n < 2) return 0;
  const mt = samples.reduce((a, s) => a + s.t, 0) / n;
  const mv = samples.reduce((a, s) => a + s.v, 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.t - mt) * (s.v - mv);
    den += (s.t - mt) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60_000;
}

/**
 * After warm-up (the first fifth), the steady samples are cut in thirds. Memory that is bounded
 * moves in a sawtooth (garbage collection, isolates disposed and re-created), so neither single
 * samples nor the slope over a few minutes say "leak"; a leak lifts the whole band instead. So the
 * verdict compares the band of the last third with the band of the middle third: its top (90th
 * percentile) and its bottom (10th percentile) may each be at most 5 % + 8 MiB higher, unless the
 * slope over all steady samples is zero or negative (see `flat` below). Percentiles rather than
 * max/min, so that one sample caught at a GC peak decides nothing.
 */
function trend(series) {
  const steady = series.slice(Math.floor(series.length / 5));
  const third = Math.max(1, Math.floor(steady.length / 3));
  const middle = steady.slice(third, 2 * third).map((s) => s.v);
  const last = steady.slice(2 * third).map((s) => s.v);
  const pct = (xs, p) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : 0;
  };
  const band = (xs) => ({ min: pct(xs, 0.1), max: pct(xs, 0.9) });
  return {
    samples: series.length,
    firstMb: series[0]?.v ?? 0,
    peakMb: Math.max(...series.map((s) => s.v)),
    middle: band(middle),
    last: band(last),
    slopeMbPerMin: slopePerMinute(steady),
  };
}

/** the band (p10–p90) of the last third is no higher than the middle third's, within 5 % + 8 MiB at both ends */
const within = (late, early) => late <= early * 1.05 + 8;
/**
 * Flat unless BOTH say "rising": the band lifted beyond the tolerance, and the least-squares slope
 * of all steady samples is positive. A sawtooth caught in another phase in the last third can lift
 * the band while the trend over the whole steady part is flat or falling; a leak does both.
 */
const flat = (m) => (within(m.last.max, m.middle.max) && within(m.last.min, m.middle.min)) || m.slopeMbPerMin <= 0;

/** one sample in `every`, rounded, for the report */
const thin = (series, every) =>
  series
    .filter((_, i) => i % every === 0 || i === series.length - 1)
    .map((s) => `${Math.round(s.t / 1000)}s:${Math.round(s.v)}`);

const fixtures = path.join(root, 'test', 'fixtures', 'plugins');
const server = await spawnServer({ pluginDirs: [fixtures], policy: { sandbox: { workers: WORKERS } } });
const serverPid = server.proc.pid;
const memory = { server: [], sandbox: [] };
const t0 = Date.now();
const sample = () => {
  const t = Date.now() - t0;
  const s = rssMb(serverPid);
  if (s !== undefined) memory.server.push({ t, v: s });
  const sandboxPid = childrenOf(serverPid)[0];
  const b = sandboxPid ? rssMb(sandboxPid) : undefined;
  if (b !== undefined) memory.sandbox.push({ t, v: b });
};
sample();
const sampler = setInterval(sample, SAMPLE_MS);
console.log(
  `load run: ${SESSIONS} sessions, batch ${BATCH}, up to ${CALLS} calls or ${MINUTES} min, server pid ${serverPid}, sandbox pid ${childrenOf(serverPid)[0]}`,
);

let summary;
let failed = false;
try {
  summary = await runDriver({
    url: server.url,
    apiKey: server.apiKey,
    sessions: SESSIONS,
    durationMs: MINUTES * 60_000,
    batch: BATCH,
    maxCalls: CALLS,
    timeoutMs: MINUTES * 60_000 + 120_000,
  });
} finally {
  clearInterval(sampler);
}
sample();
const code = await server.stop(true);
const db = new Database(server.dbFile, { readonly: true });
const auditRows = db.prepare('SELECT COUNT(*) AS n FROM audit_events').get().n;
db.close();
fs.rmSync(server.dataDir, { recursive: true, force: true });

const mem = { server: trend(memory.server), sandbox: trend(memory.sandbox) };
const fmt = (m) =>
  `first ${m.firstMb.toFixed(0)} MiB, peak ${m.peakMb.toFixed(0)} MiB, steady p10–p90 middle third ${m.middle.min.toFixed(0)}–${m.middle.max.toFixed(0)} → last third ${m.last.min.toFixed(0)}–${m.last.max.toFixed(0)} MiB, slope ${m.slopeMbPerMin.toFixed(2)} MiB/min (${m.samples} samples)`;
console.log(
  `calls ${summary.calls} (${summary.executions} executions) in ${(summary.durationMs / 1000).toFixed(1)} s: ${summary.callsPerSec} calls/s, ` +
    `${summary.executionsPerSec} executions/s, p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms, max ${summary.maxMs} ms`,
);
console.log(`server RSS:  ${fmt(mem.server)}`);
console.log(`sandbox RSS: ${fmt(mem.sandbox)}`);
const every = Math.max(1, Math.round(memory.sandbox.length / 30));
console.log(`server RSS samples (s:MiB): ${thin(memory.server, every).join(' ')}`);
console.log(`sandbox RSS samples (s:MiB): ${thin(memory.sandbox, every).join(' ')}`);
console.log(`audit rows ${auditRows}, server exit ${code}`);
console.log(`RESULT ${JSON.stringify({ summary, memory: mem, auditRows, exitCode: code })}`);

const check = (ok, what) => {
  if (!ok) {
    failed = true;
    console.error(`FAIL: ${what}`);
  }
};
check(summary.misaligned === 0 && summary.okItems === summary.executions, 'every result present and aligned');
check(summary.http5xx === 0 && Object.keys(summary.callErrors).length === 0, 'no failed call, no 5xx');
check(auditRows === summary.executions, `audit rows (${auditRows}) = executions (${summary.executions})`);
check(code === 0, 'the server exited 0 on SIGTERM');
// "No growth trend" (see trend above): after warm-up, the band of the last third is no higher than
// the band of the middle third, for the server and the sandbox process alike.
for (const [name, m] of Object.entries(mem)) {
  check(
    flat(m),
    `${name} memory flat (p10–p90 middle third ${m.middle.min.toFixed(0)}–${m.middle.max.toFixed(0)} MiB, last third ${m.last.min.toFixed(0)}–${m.last.max.toFixed(0)} MiB)`,
  );
}
process.exit(failed ? 1 : 0);
