/**
 * @module host/cli/server-record
 * How `workbench plugins reload` finds the servers it reloads and reads their answers. Each `serve`
 * process writes `<data dir>/run/serve-<pid>.json` once it listens (its pid, URL and start), writes
 * it again after each plugin reload with that reload's report, and deletes it when it stops. The
 * command sends SIGHUP to every server with a record there that is still the process that wrote it
 * (on Linux the process's start time and owner are compared too, so a pid the system gave to
 * another process since is never signalled), then waits for each to record a reload that started
 * after the signal.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PluginReport } from '../registry/plugin-loader.js';

export interface ServerRecord {
  pid: number;
  url: string;
  startedAt: string;
  /** the process's start time in clock ticks since boot (/proc/<pid>/stat), where the system tells */
  processStart?: string;
  /** the latest plugin reload's report */
  reload?: PluginReport;
  /** the latest reload that failed as a whole (the plugins serving before kept serving) */
  reloadFailed?: { startedAt: string; message: string };
}

const RUN_DIR = 'run';
const FILE = /^serve-(\d+)\.json$/;

export const recordFile = (dataDir: string, pid: number): string => path.join(dataDir, RUN_DIR, `serve-${pid}.json`);

/** The start time of a process as the kernel keeps it (field 22 of /proc/<pid>/stat), or undefined. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: count from the last ")"
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Writes the record whole or not at all (a reader never sees half of it). */
export function writeRecord(dataDir: string, record: ServerRecord): void {
  const file = recordFile(dataDir, record.pid);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(record) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export function removeRecord(dataDir: string, pid: number): void {
  fs.rmSync(recordFile(dataDir, pid), { force: true });
}

export function readRecord(dataDir: string, pid: number): ServerRecord | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(recordFile(dataDir, pid), 'utf8')) as ServerRecord;
    return record.pid === pid ? record : undefined;
  } catch {
    return undefined; // gone (the server stopped) or not a record
  }
}

/** The user owning a process and the user owning a file are the same, where /proc tells. */
function sameOwner(pid: number, file: string): boolean {
  try {
    return fs.statSync(`/proc/${pid}`).uid === fs.statSync(file).uid;
  } catch {
    return !fs.existsSync('/proc'); // no /proc: nothing to compare
  }
}

/** Whether the process that wrote the record (in `dataDir`) still runs. */
export function isRunning(dataDir: string, record: ServerRecord): boolean {
  try {
    process.kill(record.pid, 0);
  } catch {
    return false; // ESRCH: gone; EPERM: a process of another user has the pid now
  }
  if (record.processStart !== undefined && processStart(record.pid) !== record.processStart) return false;
  return sameOwner(record.pid, recordFile(dataDir, record.pid));
}

/** The records of servers still running with this data dir; records of servers gone are deleted. */
export function runningServers(dataDir: string): ServerRecord[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(dataDir, RUN_DIR));
  } catch {
    return [];
  }
  const records = names.flatMap((name) => {
    const pid = FILE.exec(name)?.[1];
    const record = pid === undefined ? undefined : readRecord(dataDir, Number(pid));
    return record ? [record] : [];
  });
  const running = records.filter((r) => isRunning(dataDir, r));
  for (const r of records) if (!running.includes(r)) forgetRecord(dataDir, r.pid);
  return running.sort((a, b) => a.pid - b.pid);
}

/** Deletes the record of a server gone, if this user may (it is skipped all the same otherwise). */
function forgetRecord(dataDir: string, pid: number): void {
  try {
    removeRecord(dataDir, pid);
  } catch {
    // another user's data dir: the record stays, and is skipped again next time
  }
}
