/**
 * @module host/telemetry/sandbox-metrics
 * The sandbox's state as Prometheus metrics, read from `sandbox.stats()` when /metrics is scraped:
 * gauges for whether it is up, calls holding a worker slot and waiting for one, plugins in
 * quarantine and the sandbox process's resident memory (the host's own memory is in the default
 * `workbench_process_resident_memory_bytes`; the sandbox's is another process, read from /proc
 * where there is one), counters for restarts, crashes, calls run again after a crash and failed reads and writes of the
 * crash strikes shared by replicas since start, and for calls refused by
 * reason (labelled by reason only, never by user or plugin: three series whatever the load).
 * Nothing here talks to the sandbox process: a scrape costs no IPC.
 */
import { readFileSync } from 'node:fs';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { SandboxStats } from '../supervisor/index.js';
import { registerReadCounter } from './metrics.js';

/** VmRSS of a process in bytes, or undefined where /proc cannot tell (not Linux, process gone). */
export function residentBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export function registerSandboxMetrics(registry: Registry, stats: () => SandboxStats): void {
  const gauge = (name: string, help: string, read: (s: SandboxStats) => number | undefined): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const value = read(stats());
        if (value === undefined) this.reset();
        else this.set(value);
      },
    });
  };
  gauge(
    'workbench_sandbox_up',
    '1 when a sandbox process is up and passed its self-test, 0 while it starts or restarts.',
    (s) => (s.ready ? 1 : 0),
  );
  gauge('workbench_sandbox_active_calls', 'Sandbox calls holding a worker slot now.', (s) => s.active);
  gauge(
    'workbench_sandbox_queued_calls',
    'Sandbox calls waiting for a worker slot now (sandbox.maxQueue refuses beyond it).',
    (s) => s.queued,
  );
  registerReadCounter(
    registry,
    'workbench_sandbox_restarts_total',
    'Sandbox processes started after the first, since start.',
    () => stats().restarts,
  );
  registerReadCounter(
    registry,
    'workbench_sandbox_crashes_total',
    'Sandbox processes that died unexpectedly, since start.',
    () => stats().crashes,
  );
  registerReadCounter(
    registry,
    'workbench_sandbox_reruns_total',
    'Sandbox calls run again in a new process after another plugin brought theirs down, before they had sent any request but GET, HEAD or OPTIONS, since start.',
    () => stats().reruns,
  );
  registerRefusedCounter(registry, stats);
  gauge(
    'workbench_sandbox_quarantined_plugins',
    'Plugins suspended now for crashing the sandbox too often (on PostgreSQL, counting the crashes of every replica).',
    (s) => s.quarantined.length,
  );
  registerReadCounter(
    registry,
    'workbench_sandbox_strike_sync_failures_total',
    'Writes and reads of the crash strikes replicas share on PostgreSQL that failed, since start (quarantine then goes on with the strikes this replica knows); always 0 on SQLite.',
    () => stats().strikeSyncFailures,
  );
  gauge(
    'workbench_sandbox_resident_memory_bytes',
    'Resident memory of the sandbox process (its isolates and workers), where /proc can tell.',
    (s) => (s.pid === undefined ? undefined : residentBytes(s.pid)),
  );
}

/** the `reason` label of each tally in SandboxStats.refused */
const REFUSAL_REASONS = { queueFull: 'queue_full', pluginShare: 'plugin_share', userShare: 'user_share' } as const;

/** Calls refused with GW_ERR_SANDBOX_OVERLOADED, read from the supervisor's tallies like registerReadCounter's. */
function registerRefusedCounter(registry: Registry, stats: () => SandboxStats): void {
  const counted = { queueFull: 0, pluginShare: 0, userShare: 0 };
  const counter = new Counter({
    name: 'workbench_sandbox_refused_total',
    help: 'Sandbox calls refused with GW_ERR_SANDBOX_OVERLOADED since start, by reason: queue_full (sandbox.maxQueue), plugin_share (a plugin at its share of the queue, sandbox.maxWorkerShare), user_share (a user at its share of the queue, sandbox.maxUserShare).',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const now = stats().refused;
      for (const key of Object.keys(REFUSAL_REASONS) as (keyof typeof REFUSAL_REASONS)[]) {
        if (now[key] > counted[key]) {
          this.inc({ reason: REFUSAL_REASONS[key] }, now[key] - counted[key]);
          counted[key] = now[key];
        }
      }
    },
  });
  // every reason is exported from the start, at 0, so that rate() sees the first refusal
  for (const reason of Object.values(REFUSAL_REASONS)) counter.inc({ reason }, 0);
}
