/**
 * @module bench/memory
 * Resident memory of this process (process.memoryUsage) and of the sandbox child process
 * (VmRSS from /proc/<pid>/status, Linux only; undefined elsewhere or when the pid is unknown).
 */
import fs from 'node:fs';
import type { Sandbox } from '../host/supervisor/index.js';

export interface MemorySnapshot {
  hostRssMb: number;
  hostHeapUsedMb: number;
  /** undefined when the sandbox exposes no pid or /proc is not readable */
  sandboxRssMb: number | undefined;
  totalRssMb: number;
}

const MB = 1024 * 1024;

export function childRssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export function snapshot(sandbox: Sandbox): MemorySnapshot {
  const mem = process.memoryUsage();
  const sandboxRssMb = childRssMb(sandbox.stats().pid);
  const hostRssMb = mem.rss / MB;
  return { hostRssMb, hostHeapUsedMb: mem.heapUsed / MB, sandboxRssMb, totalRssMb: hostRssMb + (sandboxRssMb ?? 0) };
}
