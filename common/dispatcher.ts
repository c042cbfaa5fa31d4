/**
 * @module common/dispatcher
 * Admission and worker slots. Two limits, each with a per-plugin share:
 *   - calls in flight: at most `inFlight` calls in the sandbox at once (workers × callsPerWorker),
 *     at most `perPluginInFlight` of them for one plugin, and at most `perUserInFlight` for one
 *     user (the user the call runs for; a call with no user counts against no user's share);
 *   - busy slots: at most `slots` calls (one per worker) using CPU at once, at most `perPlugin` for
 *     one plugin. A call that waits on ctx.http with nothing else to run PARKS: it gives its busy
 *     slot back while it waits, and takes one again (ahead of new calls) before its answer goes in.
 * So a slow or hostile plugin cannot occupy every worker, one user cannot occupy every call in
 * flight, and calls parked on I/O do not hold workers. A call starts only when every limit allows
 * it (its plugin's and its user's alike). Calls beyond the limits wait; a waiting call is skipped
 * (not blocked on) while its plugin or its user is at its share. When a slot frees, it goes to the
 * user with the fewest calls in flight among those with a waiting call that may start; among
 * equals, to the one served longest ago (round robin; a user new to the queue joins its end); and
 * of that user's calls, to the earliest. So a user with nothing in flight waits behind no user with
 * calls in flight, and behind at most one call of each other user, however deep their queues. With
 * one user, or none (start-up probes; the sandbox process's CPU slots), the order is the arrival
 * order. More than `maxQueue` waiting calls are refused, and so are a plugin's waiting calls beyond
 * `perPluginQueue` and a user's beyond `perUserQueue` (their shares of the queue), so that neither
 * can fill the queue the others need. Waiting calls are kept in one FIFO per plugin and user (all
 * the calls of one FIFO wait on the same limits), so that handing out a slot costs O(plugin-user
 * pairs waiting), not O(calls waiting): under overload one user may have thousands of calls of one
 * plugin queued, and every slot given back would otherwise scan them all.
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
  /** calls in flight one user may have (default: inFlight) */
  perUserInFlight?: number;
  /** waiting calls one user may have (default: maxQueue) */
  perUserQueue?: number;
}

/**
 * Why `acquire` gave no lease: the caller's signal was aborted first ('cancelled'), or the call was
 * refused: the dispatcher closed (refuseWaiting), the queue is full, or the call's plugin or its
 * user already has its share of the queue waiting.
 */
export type NoLease = 'cancelled' | 'closed' | 'queue-full' | 'plugin-queue-full' | 'user-queue-full';

/** The user key of calls made for no user (start-up probes, `plugin validate`): no share limits it. */
const NO_USER = '';

interface Waiter {
  plugin: string;
  grant: (ok: boolean) => void;
}

interface Queued extends Waiter {
  user: string;
  /** arrival order across plugins and users */
  seq: number;
}

/** A count in all, and by plugin or by user (a key is dropped when its count returns to 0). */
class Counter {
  total = 0;
  readonly #by = new Map<string, number>();
  of(key: string): number {
    return this.#by.get(key) ?? 0;
  }
  add(key: string, d: number): void {
    this.total += d;
    const n = this.of(key) + d;
    if (n <= 0) this.#by.delete(key);
    else this.#by.set(key, n);
  }
}

export class Dispatcher {
  readonly #l: Required<DispatcherLimits>;
  readonly #waiting = new Counter();
  readonly #busy = new Counter();
  readonly #flying = new Counter();
  /** by user (NO_USER included: the queue orders it like a user, no limit applies to it) */
  readonly #userWaiting = new Counter();
  readonly #userFlying = new Counter();
  /**
   * the turn at which each user with calls in flight or waiting was last admitted, or came to the
   * queue with none (round robin among users with as many calls in flight; dropped when idle)
   */
  readonly #served = new Map<string, number>();
  #turn = 0;
  /** waiting calls, one FIFO per plugin and user (an entry is removed when its FIFO empties) */
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
      perUserInFlight: Math.max(1, Math.min(inFlight, limits.perUserInFlight ?? inFlight)),
      perUserQueue: Math.max(1, Math.min(limits.maxQueue, limits.perUserQueue ?? limits.maxQueue)),
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
   * Resolves with a lease, or with why none was given: refused (queue full, the plugin's or the
   * user's share of it full, or closed), or 'cancelled' when `signal` is aborted before the call was
   * admitted (it leaves the queue at once; an admitted call is not taken back). `user` is whom the
   * call runs for (a stable id); without one, the call counts against no user's share.
   */
  acquire(plugin: string, signal?: AbortSignal, user: string = NO_USER): Promise<Lease | NoLease> {
    if (signal?.aborted) return Promise.resolve('cancelled');
    if (this.#canAdmit(plugin, user)) return Promise.resolve(this.#admit(plugin, user));
    const full = this.#queueFull(plugin, user);
    if (full) return Promise.resolve(full);
    this.#waiting.add(plugin, 1);
    this.#userWaiting.add(user, 1);
    if (!this.#served.has(user)) this.#served.set(user, this.#turn++);
    const key = `${plugin}\u0000${user}`;
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const fifo = this.#queues.get(key);
        const i = fifo ? fifo.indexOf(waiter) : -1;
        if (!fifo || i < 0) return; // already granted or refused
        fifo.splice(i, 1);
        if (fifo.length === 0) this.#queues.delete(key);
        this.#queuedTotal--;
        this.#waiting.add(plugin, -1);
        this.#userWaiting.add(user, -1);
        this.#forgetIfIdle(user);
        resolve('cancelled');
      };
      const waiter: Queued = {
        plugin,
        user,
        seq: this.#seq++,
        grant: (ok) => {
          signal?.removeEventListener('abort', onAbort);
          this.#waiting.add(plugin, -1);
          this.#userWaiting.add(user, -1);
          if (ok) resolve(this.#admit(plugin, user));
          else {
            this.#forgetIfIdle(user);
            resolve('closed');
          }
        },
      };
      const fifo = this.#queues.get(key);
      if (fifo) fifo.push(waiter);
      else this.#queues.set(key, [waiter]);
      this.#queuedTotal++;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Why a call that cannot start now may not wait either (the user's own share first: the caller can change that). */
  #queueFull(plugin: string, user: string): NoLease | undefined {
    if (user !== NO_USER && this.#userWaiting.of(user) >= this.#l.perUserQueue) return 'user-queue-full';
    if (this.#waiting.of(plugin) >= this.#l.perPluginQueue) return 'plugin-queue-full';
    if (this.#queuedTotal >= this.#l.maxQueue) return 'queue-full';
    return undefined;
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

  #canAdmit(plugin: string, user: string): boolean {
    return (
      this.#canBusy(plugin) &&
      this.#flying.total < this.#l.inFlight &&
      this.#flying.of(plugin) < this.#l.perPluginInFlight &&
      (user === NO_USER || this.#userFlying.of(user) < this.#l.perUserInFlight)
    );
  }

  #forgetIfIdle(user: string): void {
    if (this.#userFlying.of(user) === 0 && this.#userWaiting.of(user) === 0) this.#served.delete(user);
  }

  #admit(plugin: string, user: string): Lease {
    this.#flying.add(plugin, 1);
    this.#userFlying.add(user, 1);
    this.#served.set(user, this.#turn++);
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
        this.#userFlying.add(user, -1);
        this.#forgetIfIdle(user);
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
    for (let i = 0; i < this.#resuming.length && this.#busy.total < this.#l.slots;) {
      const w = this.#resuming[i] as Waiter;
      if (this.#canBusy(w.plugin)) {
        this.#resuming.splice(i, 1);
        w.grant(true);
      } else i++;
    }
    while (this.#queuedTotal > 0 && this.#busy.total < this.#l.slots) {
      // among the FIFOs whose calls may start now (every call of a FIFO waits on the same limits,
      // so a FIFO whose first call may not start holds none that may), the first by precedes()
      let next: Queued[] | undefined;
      for (const fifo of this.#queues.values()) {
        const head = fifo[0] as Queued;
        if (this.#canAdmit(head.plugin, head.user) && (next === undefined || this.#precedes(head, next[0] as Queued)))
          next = fifo;
      }
      if (!next) return;
      const w = next.shift() as Queued;
      if (next.length === 0) this.#queues.delete(`${w.plugin}\u0000${w.user}`);
      this.#queuedTotal--;
      w.grant(true);
    }
  }

  /** fewer calls of its user in flight; then its user served longer ago; then arrived earlier */
  #precedes(a: Queued, b: Queued): boolean {
    const flyingA = this.#userFlying.of(a.user);
    const flyingB = this.#userFlying.of(b.user);
    if (flyingA !== flyingB) return flyingA < flyingB;
    const servedA = this.#served.get(a.user) ?? 0;
    const servedB = this.#served.get(b.user) ?? 0;
    return servedA !== servedB ? servedA < servedB : a.seq < b.seq;
  }
}
