/**
 * @module bench/process-cpu
 * CPU time spent while a piece of load runs, in this process (process.cpuUsage: the gateway's host
 * side and the load generator) and in the sandbox child (/proc/<pid>/stat, user + system). CPU per
 * execution is the figure that a loaded, shared machine disturbs least: throughput there mostly
 * measures how much of a core the scheduler gave each thread.
 */
import { readFileSync } from 'node:fs';

/** CPU time (user + system) of a process in ms from /proc, assuming 100 clock ticks per second; 0 where there is no /proc. */
export function procCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

export interface CpuSpent {
  /** this process (gateway host side + load generator), ms */
  hostMs: number;
  /** the sandbox process, ms (0 when none was given) */
  sandboxMs: number;
}

/** Starts a CPU reading of this process and, if a pid is given, of the sandbox process. */
export function startCpuReading(sandboxPid: number | undefined): () => CpuSpent {
  const h0 = process.cpuUsage();
  const s0 = procCpuMs(sandboxPid);
  return () => {
    const h = process.cpuUsage(h0);
    return { hostMs: (h.user + h.system) / 1000, sandboxMs: sandboxPid === undefined ? 0 : procCpuMs(sandboxPid) - s0 };
  };
}
