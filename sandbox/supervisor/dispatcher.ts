/**
 * @module sandbox/supervisor/dispatcher
 * Admission and worker slots. Two limits, each with a per-plugin share:
 *   - calls in flight: at most `inFlight` calls in the sandbox at once (workers × callsPerWorker),
 *     at most `perPluginInFlight` of them for one plugin;
 *   - busy slots: at most `slots` calls (one per worker) using CPU at once, at most `perPlugin` for
 *     one plugin. A call that waits on ctx.http with nothing else to run PARKS: it gives its busy
 *     slot back while it waits, and takes one again (ahead of new calls) before its answer goes in.
 * So a slow or hostile plugin cannot occupy every worker, and calls parked on I/O do not hold
 * workers. Calls beyond the limits wait in FIFO order; a waiting call is skipped (not blocked on)
 * while its plugin is at its share. More than `maxQueue` waiting calls are refused, and so are a
 * plugin's waiting calls beyond `perPluginQueue` (its share of the queue), so that a plugin held at
 * its share cannot fill the queue that other plugins' calls need. Waiting calls are kept in one
 * FIFO per plugin, so that handing out a slot costs O(plugins waiting), not O(calls waiting): under
 * overload a plugin at its share may have thousands of calls queued, and every slot given back
 * would otherwise scan them all.
 */

/** One admitted call's hold on the sandbox. Every method is idempotent and safe after release. */
export interface Lease {
  /** gives the busy slot back while the call waits on I/O */
  park(): void;
  /** takes a busy slot again (resolves at once if the call holds one or was released) */
  resume(): Promise<void>;
  release(): void;
}

export interface DispatcherLimits {
  /** busy slots (workers) */
  slots: number;
  /** busy slots one plugin may hold */
  perPlugin: number;
  /** calls in flight */
  inFlight: number;
  /** calls in flight one plugin may have */
  perPluginInFlight: number;
  maxQueue: number;
  /** waiting calls one plugin may have (default: maxQueue) */
  perPluginQueue?: number;
}

interface Waiter {
  plugin: string;
  grant: (ok: boolean) => void;
}

interface Queued extends Waiter {
  /** arrival order across plugins */
  seq: number;
}

class Counter {
  total = 0;
  readonly #by = new Map<string, number>();
  of(plugin: string): number {
    return this.#by.get(plugin) ?? 0;
  }
  add(plugin: string, d: number): void {
    this.total += d;
    const n = this.of(plugin) + d;
    if (n <= 0) this.#by.delete(plugin);
    else this.#by.set(plugin, n);
  }
}

export class Dispatcher {
  readonly #l: Required<DispatcherLimits>;
  readonly #waiting = new Counter();
  readonly #busy = new Counter();
  readonly #flying = new Counter();
  /** waiting calls, one FIFO per plugin (a plugin's entry is removed when its FIFO empties) */
  #queues = new Map<string, Queued[]>();
  #queuedTotal = 0;
  #seq = 0;
  /** parked calls whose answer is ready, waiting for a busy slot (served before new calls) */
  #resuming: Waiter[] = [];

  constructor(limits: DispatcherLimits) {
    const slots = Math.max(1, limits.slots);
    const inFlight = Math.max(slots, limits.inFlight);
    this.#l = {
      slots,
      perPlugin: Math.max(1, Math.min(slots, limits.perPlugin)),
      inFlight,
      perPluginInFlight: Math.max(1, Math.min(inFlight, limits.perPluginInFlight)),
      maxQueue: limits.maxQueue,
      perPluginQueue: Math.max(1, Math.min(limits.maxQueue, limits.perPluginQueue ?? limits.maxQueue)),
    };
  }

  /** calls holding a busy slot */
  get active(): number {
    return this.#busy.total;
  }

  /** calls in the sandbox, busy or parked */
  get inFlight(): number {
    return this.#flying.total;
  }

  get queued(): number {
    return this.#queuedTotal + this.#resuming.length;
  }

  /**
   * Resolves with a lease, or undefined if refused (queue full, or closed), or 'cancelled' when
   * `signal` is aborted before the call was admitted (it leaves the queue at once; an admitted
   * call is not taken back).
   */
  acquire(plugin: string): Promise<Lease | undefined>;
  acquire(plugin: string, signal: AbortSignal | undefined): Promise<Lease | undefined | 'cancelled'>;
  acquire(plugin: string, signal?: AbortSignal): Promise<Lease | undefined | 'cancelled'> {
    if (signal?.aborted) return Promise.resolve('cancelled');
    if (this.#canAdmit(plugin)) return Promise.resolve(this.#admit(plugin));
    if (this.#queuedTotal >= this.#l.maxQueue || this.#waiting.of(plugin) >= this.#l.perPluginQueue) return Promise.resolve(undefined);
    this.#waiting.add(plugin, 1);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const fifo = this.#queues.get(plugin);
        const i = fifo ? fifo.indexOf(waiter) : -1;
        if (!fifo || i < 0) return; // already granted or refused
        fifo.splice(i, 1);
        if (fifo.length === 0) this.#queues.delete(plugin);
        this.#queuedTotal--;
        this.#waiting.add(plugin, -1);
        resolve('cancelled');
      };
      const waiter: Queued = {
        plugin,
        seq: this.#seq++,
        grant: (ok) => {
          signal?.removeEventListener('abort', onAbort);
          this.#waiting.add(plugin, -1);
          resolve(ok ? this.#admit(plugin) : undefined);
        },
      };
      const fifo = this.#queues.get(plugin);
      if (fifo) fifo.push(waiter);
      else this.#queues.set(plugin, [waiter]);
      this.#queuedTotal++;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Refuses every waiting call (used by close()), in arrival order. Parked calls still resume. */
  refuseWaiting(): void {
    const waiting = [...this.#queues.values()].flat().sort((a, b) => a.seq - b.seq);
    this.#queues = new Map();
    this.#queuedTotal = 0;
    for (const w of waiting) w.grant(false);
  }

  #canBusy(plugin: string): boolean {
    return this.#busy.total < this.#l.slots && this.#busy.of(plugin) < this.#l.perPlugin;
  }

  #canAdmit(plugin: string): boolean {
    return this.#canBusy(plugin) && this.#flying.total < this.#l.inFlight && this.#flying.of(plugin) < this.#l.perPluginInFlight;
  }

  #admit(plugin: string): Lease {
    this.#flying.add(plugin, 1);
    this.#busy.add(plugin, 1);
    let busy = true;
    let released = false;
    let resuming: Promise<void> | undefined;
    let waiter: Waiter | undefined;
    const park = (): void => {
      if (released || !busy) return;
      busy = false;
      this.#busy.add(plugin, -1);
      this.#pump();
    };
    return {
      park,
      resume: () => {
        if (released || busy) return Promise.resolve();
        if (resuming) return resuming;
        if (this.#canBusy(plugin)) {
          busy = true;
          this.#busy.add(plugin, 1);
          return Promise.resolve();
        }
        resuming = new Promise<void>((resolve) => {
          waiter = {
            plugin,
            grant: (ok) => {
              resuming = undefined;
              waiter = undefined;
              if (ok && !released && !busy) {
                busy = true;
                this.#busy.add(plugin, 1);
              }
              resolve();
            },
          };
          this.#resuming.push(waiter);
        });
        return resuming;
      },
      release: () => {
        if (released) return;
        park();
        released = true;
        this.#flying.add(plugin, -1);
        if (waiter) {
          const i = this.#resuming.indexOf(waiter);
          if (i >= 0) this.#resuming.splice(i, 1);
          waiter.grant(false);
        }
        this.#pump();
      },
    };
  }

  #pump(): void {
    for (let i = 0; i < this.#resuming.length && this.#busy.total < this.#l.slots; ) {
      const w = this.#resuming[i] as Waiter;
      if (this.#canBusy(w.plugin)) {
        this.#resuming.splice(i, 1);
        w.grant(true);
      } else i++;
    }
    while (this.#queuedTotal > 0 && this.#busy.total < this.#l.slots) {
      // the earliest waiting call among the plugins that may start one now
      let next: Queued[] | undefined;
      for (const [plugin, fifo] of this.#queues) {
        if ((next === undefined || (fifo[0] as Queued).seq < (next[0] as Queued).seq) && this.#canAdmit(plugin)) next = fifo;
      }
      if (!next) return;
      const w = next.shift() as Queued;
      if (next.length === 0) this.#queues.delete(w.plugin);
      this.#queuedTotal--;
      w.grant(true);
    }
  }
}
