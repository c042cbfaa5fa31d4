/**
 * @module host/builtins/browser/memory-watch
 * Keeps the browser under `builtins.browser.maxMemoryMb`. Every few seconds it adds up the memory of
 * the browser process and all its descendants (renderers, GPU, network and utility processes),
 * read from /proc: the proportional set size (PSS, shared pages split between the processes that
 * share them — plain RSS would count Chromium's shared libraries once per process), or RSS where
 * the kernel offers no smaps_rollup. Over the limit, the least recently used context is closed
 * (its calls in flight answer GW_ERR_BROWSER_MEMORY_LIMIT) and no new context opens; with no
 * context left to close, the browser itself is restarted. On a system without /proc the watch
 * reads nothing and polices nothing (docs/operations.md says so).
 */
import fs from 'node:fs/promises';
import type { Logger } from '../../telemetry/logger.js';
import type { BrowserProcess } from './browser-process.js';
import type { ContextPool } from './context-pool.js';

const CHECK_EVERY_MS = 5_000;
const PAGE_BYTES = 4096;

/** Bytes of memory the process `rootPid` and its descendants use, or undefined when /proc cannot tell. */
export async function treeMemoryBytes(rootPid: number): Promise<number | undefined> {
  let entries: string[];
  try {
    entries = (await fs.readdir('/proc')).filter((e) => /^\d+$/.test(e));
  } catch {
    return undefined;
  }
  const children = new Map<number, number[]>();
  await Promise.all(
    entries.map(async (e) => {
      const stat = await fs.readFile(`/proc/${e}/stat`, 'utf8').catch(() => '');
      // the command name (in parentheses) may hold spaces: the fields after its last ")" are fixed
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (Number.isInteger(ppid)) children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    }),
  );
  const tree: number[] = [];
  for (const queue = [rootPid]; queue.length > 0;) {
    const pid = queue.pop() as number;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  const sizes = await Promise.all(tree.map(processBytes));
  return sizes.some((s) => s !== undefined) ? sizes.reduce<number>((a, s) => a + (s ?? 0), 0) : undefined;
}

async function processBytes(pid: number): Promise<number | undefined> {
  const rollup = await fs.readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
  const pss = /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1];
  if (pss !== undefined) return Number(pss) * 1024;
  const statm = await fs.readFile(`/proc/${pid}/statm`, 'utf8').catch(() => '');
  const resident = Number(statm.split(' ')[1]);
  return Number.isFinite(resident) && statm !== '' ? resident * PAGE_BYTES : undefined;
}

export class MemoryWatch {
  readonly #process: BrowserProcess;
  readonly #pool: ContextPool;
  readonly #limitBytes: number;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  /** the latest reading, bytes */
  lastBytes: number | undefined;

  constructor(process: BrowserProcess, pool: ContextPool, limitMb: number, logger: Logger) {
    this.#process = process;
    this.#pool = pool;
    this.#limitBytes = limitMb * 1024 * 1024;
    this.#logger = logger;
  }

  start(everyMs = CHECK_EVERY_MS): void {
    this.#timer ??= setInterval(() => void this.check(), everyMs).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One look: under the limit, or one step taken to get back under it. */
  async check(): Promise<void> {
    const pid = this.#process.pid;
    if (pid === undefined || this.#checking) {
      if (pid === undefined) this.#pool.overMemory = false;
      return;
    }
    this.#checking = true;
    try {
      this.lastBytes = await treeMemoryBytes(pid);
      const over = this.lastBytes !== undefined && this.lastBytes > this.#limitBytes;
      this.#pool.overMemory = over;
      if (!over) return;
      const victim = this.#pool.leastRecentlyUsed();
      this.#logger.warn(
        {
          mb: Math.round((this.lastBytes ?? 0) / 1048576),
          limitMb: this.#limitBytes / 1048576,
          closing: victim ? 'context' : 'browser',
        },
        'browser: over its memory limit',
      );
      if (victim) await victim.close('memory');
      else await this.#process.recycle();
    } finally {
      this.#checking = false;
    }
  }
}
