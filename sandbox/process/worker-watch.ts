/**
 * @module sandbox/process/worker-watch
 * The sandbox process's main thread watching its workers' marks (sandbox/worker/busy-mark.ts): a
 * worker's thread that has held one mark (synchronous work in an isolate, for one call) longer than
 * the mark's budget plus a grace is taken to be wedged by that call, and the watch reports it once,
 * with the call's plugin. The process then ends with that plugin as the culprit, so the host blames
 * it alone; without the mark, the host's watchdog could only blame every plugin in flight (the call
 * whose deadline fires first may be one that was merely queued behind the wedge).
 *
 * A mark is seen at the watch's ticks, so a stretch is measured from the first tick that saw it: a
 * worker is declared wedged between `budget + grace` and `budget + grace + interval` after the
 * stretch began. The marks' budgets are chosen so that this comes before the host's watchdog.
 */
import type { PluginIdentity } from '../../contracts/worker-protocol.js';
import { MARK_BUDGET, MARK_CALL, MARK_SEQ, markOf, NO_CALL } from '../worker/busy-mark.js';

export const WATCH_INTERVAL_MS = 250;
/** how long past its budget a mark may be held before its worker is taken to be wedged */
export const WEDGE_GRACE_MS = 2000;
/** calls whose plugin the watch remembers (the latest ones: work after a call, such as preparing its isolate's next context, is marked with it) */
const RECENT_CALLS = 10_000;

export interface Wedged {
  callId: number;
  /** undefined when the call is no longer among the RECENT_CALLS latest */
  plugin: PluginIdentity | undefined;
  heldMs: number;
  budgetMs: number;
}

interface Watched {
  mark: SharedArrayBuffer;
  cells: Int32Array;
  seq: number;
  since: number;
}

export class WorkerWatch {
  readonly #workers: Watched[] = [];
  /** each recent call's id and plugin, by its mark (oldest first) */
  readonly #calls = new Map<number, { id: number; plugin: PluginIdentity }>();
  readonly #onWedged: (wedged: Wedged) => void;
  readonly #intervalMs: number;
  readonly #graceMs: number;
  #timer: NodeJS.Timeout | undefined;
  #reported = false;

  constructor(onWedged: (wedged: Wedged) => void, options: { intervalMs?: number; graceMs?: number } = {}) {
    this.#onWedged = onWedged;
    this.#intervalMs = options.intervalMs ?? WATCH_INTERVAL_MS;
    this.#graceMs = options.graceMs ?? WEDGE_GRACE_MS;
  }

  /** Watches one more worker's mark. */
  add(mark: SharedArrayBuffer): void {
    this.#workers.push({ mark, cells: new Int32Array(mark), seq: Number.NaN, since: 0 });
    this.#timer ??= setInterval(() => this.check(), this.#intervalMs).unref();
  }

  /** Stops watching a worker's mark (its thread ended: a mark it left set is nobody's work). */
  remove(mark: SharedArrayBuffer): void {
    const i = this.#workers.findIndex((w) => w.mark === mark);
    if (i >= 0) this.#workers.splice(i, 1);
  }

  /** A call is starting: remembers its plugin (its id is what its work is marked with). */
  started(callId: number, plugin: PluginIdentity): void {
    const mark = markOf(callId);
    this.#calls.delete(mark);
    this.#calls.set(mark, {
      id: callId,
      plugin: { name: plugin.name, version: plugin.version, sourceHash: plugin.sourceHash },
    });
    if (this.#calls.size > RECENT_CALLS) this.#calls.delete(this.#calls.keys().next().value as number);
  }

  /** One look at every worker's mark (the timer's tick; `now` in performance.now() ms). */
  check(now = performance.now()): void {
    if (this.#reported) return;
    for (const w of this.#workers) {
      const seq = Atomics.load(w.cells, MARK_SEQ);
      const call = Atomics.load(w.cells, MARK_CALL);
      const budgetMs = Atomics.load(w.cells, MARK_BUDGET);
      // the mark moved while it was read: look again at the next tick
      if (Atomics.load(w.cells, MARK_SEQ) !== seq) continue;
      if (call === NO_CALL || seq !== w.seq) {
        w.seq = seq;
        w.since = now;
        continue;
      }
      const heldMs = Math.round(now - w.since);
      if (heldMs <= budgetMs + this.#graceMs) continue;
      this.#reported = true;
      this.stop();
      const known = this.#calls.get(call);
      this.#onWedged({ callId: known?.id ?? call, plugin: known?.plugin, heldMs, budgetMs });
      return;
    }
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
