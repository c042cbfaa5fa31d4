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
const { spawnServer } = await import(path.join(root, 'dist', 'test', 'load', 'server-process.js'));
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

/** after warm-up (the first fifth): the slope, and the mean of the last quarter against the second */
function trend(series) {
  const steady = series.slice(Math.floor(series.length / 5));
  const q = Math.max(1, Math.floor(steady.length / 4));
  const mean = (xs) => xs.reduce((a, s) => a + s.v, 0) / Math.max(1, xs.length);
  const early = mean(steady.slice(q, 2 * q));
  const late = mean(steady.slice(-q));
  return { samples: series.length, firstMb: series[0]?.v ?? 0, peakMb: Math.max(...series.map((s) => s.v)), earlyMb: early, lateMb: late, slopeMbPerMin: slopePerMinute(steady) };
}

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
console.log(`load run: ${SESSIONS} sessions, batch ${BATCH}, up to ${CALLS} calls or ${MINUTES} min, server pid ${serverPid}, sandbox pid ${childrenOf(serverPid)[0]}`);

let summary;
let failed = false;
try {
  summary = await runDriver({ url: server.url, apiKey: server.apiKey, sessions: SESSIONS, durationMs: MINUTES * 60_000, batch: BATCH, maxCalls: CALLS, timeoutMs: MINUTES * 60_000 + 120_000 });
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
const fmt = (m) => `first ${m.firstMb.toFixed(0)} MiB, peak ${m.peakMb.toFixed(0)} MiB, steady early ${m.earlyMb.toFixed(0)} → late ${m.lateMb.toFixed(0)} MiB, slope ${m.slopeMbPerMin.toFixed(2)} MiB/min (${m.samples} samples)`;
console.log(
  `calls ${summary.calls} (${summary.executions} executions) in ${(summary.durationMs / 1000).toFixed(1)} s: ${summary.callsPerSec} calls/s, ` +
    `${summary.executionsPerSec} executions/s, p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms, max ${summary.maxMs} ms`,
);
console.log(`server RSS:  ${fmt(mem.server)}`);
console.log(`sandbox RSS: ${fmt(mem.sandbox)}`);
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
// "No growth trend": after warm-up, the late quarter may not exceed the early one by more than
// 10 % + 16 MiB (garbage-collection noise), for the server and the sandbox process alike.
for (const [name, m] of Object.entries(mem)) check(m.lateMb <= m.earlyMb * 1.1 + 16, `${name} memory flat (early ${m.earlyMb.toFixed(0)} MiB, late ${m.lateMb.toFixed(0)} MiB)`);
process.exit(failed ? 1 : 0);
