/**
 * @module host/telemetry/sandbox-metrics
 * The sandbox's state as Prometheus metrics, read from `sandbox.stats()` when /metrics is scraped:
 * gauges for whether it is up, calls holding a worker slot and waiting for one, plugins in
 * quarantine and the sandbox process's resident memory, counters for restarts and crashes since
 * start (the host's own memory is in
 * the default `workbench_process_resident_memory_bytes`; the sandbox's is another process, read
 * from /proc where there is one). Nothing here talks to the sandbox process: a scrape costs no IPC.
 */
import { readFileSync } from 'node:fs';
import { Gauge, type Registry } from 'prom-client';
import type { SandboxStats } from '../../sandbox/index.js';
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
  gauge('workbench_sandbox_up', '1 when a sandbox process is up and passed its self-test, 0 while it starts or restarts.', (s) => (s.ready ? 1 : 0));
  gauge('workbench_sandbox_active_calls', 'Sandbox calls holding a worker slot now.', (s) => s.active);
  gauge('workbench_sandbox_queued_calls', 'Sandbox calls waiting for a worker slot now (sandbox.maxQueue refuses beyond it).', (s) => s.queued);
  registerReadCounter(registry, 'workbench_sandbox_restarts_total', 'Sandbox processes started after the first, since start.', () => stats().restarts);
  registerReadCounter(registry, 'workbench_sandbox_crashes_total', 'Sandbox processes that died unexpectedly, since start.', () => stats().crashes);
  gauge('workbench_sandbox_quarantined_plugins', 'Plugins suspended now for crashing the sandbox too often.', (s) => s.quarantined.length);
  gauge('workbench_sandbox_resident_memory_bytes', 'Resident memory of the sandbox process (its isolates and workers), where /proc can tell.', (s) => (s.pid === undefined ? undefined : residentBytes(s.pid)));
}
