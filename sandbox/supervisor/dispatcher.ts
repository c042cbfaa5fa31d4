/**
 * @module sandbox/supervisor/dispatcher
 * Hands out worker slots: at most `slots` calls in the sandbox at once, and at most `perPlugin` of
 * them for one plugin, so a slow or hostile plugin cannot occupy every worker. Calls beyond that
 * wait in FIFO order; a waiting call is skipped (not blocked on) while its plugin is at its share.
 * More than `maxQueue` waiting calls are refused.
 */

export type Release = () => void;

interface Waiter {
  plugin: string;
  grant: (release: Release | undefined) => void;
}

export class Dispatcher {
  readonly #slots: number;
  readonly #perPlugin: number;
  readonly #maxQueue: number;
  readonly #byPlugin = new Map<string, number>();
  #active = 0;
  #queue: Waiter[] = [];

  constructor(slots: number, perPlugin: number, maxQueue: number) {
    this.#slots = slots;
    this.#perPlugin = Math.max(1, Math.min(slots, perPlugin));
    this.#maxQueue = maxQueue;
  }

  get active(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Resolves with a release function, or undefined if refused (queue full, or closed). */
  acquire(plugin: string): Promise<Release | undefined> {
    if (this.#canRun(plugin)) return Promise.resolve(this.#take(plugin));
    if (this.#queue.length >= this.#maxQueue) return Promise.resolve(undefined);
    return new Promise((grant) => this.#queue.push({ plugin, grant }));
  }

  /** Refuses every waiting call (used by close()). */
  refuseWaiting(): void {
    const waiting = this.#queue;
    this.#queue = [];
    for (const w of waiting) w.grant(undefined);
  }

  #canRun(plugin: string): boolean {
    return this.#active < this.#slots && (this.#byPlugin.get(plugin) ?? 0) < this.#perPlugin;
  }

  #take(plugin: string): Release {
    this.#active++;
    this.#byPlugin.set(plugin, (this.#byPlugin.get(plugin) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
      const n = (this.#byPlugin.get(plugin) ?? 1) - 1;
      if (n === 0) this.#byPlugin.delete(plugin);
      else this.#byPlugin.set(plugin, n);
      this.#pump();
    };
  }

  #pump(): void {
    for (let i = 0; i < this.#queue.length && this.#active < this.#slots; ) {
      const w = this.#queue[i] as Waiter;
      if (this.#canRun(w.plugin)) {
        this.#queue.splice(i, 1);
        w.grant(this.#take(w.plugin));
      } else i++;
    }
  }
}
