/**
 * @module sandbox/ipc-outbox
 * Batches the messages one side of the host ⇄ sandbox process IPC channel sends in one turn of the
 * event loop into a single `{ t: 'batch', msgs }` message: under load many calls start, end or
 * make ctx.http requests in the same turn, and each IPC message costs a serialisation, a write and
 * a wake-up of the other process. Order is kept. The receiver unpacks with `unbatch`, and checks
 * every message inside as it would a lone one.
 */

export interface Batch<M> {
  t: 'batch';
  msgs: M[];
}

/** At most this many messages per batch (a bound on one IPC message's size and parse time). */
const MAX_BATCH = 256;

export class Outbox<M> {
  readonly #write: (msg: M | Batch<M>) => void;
  #queue: M[] = [];
  #scheduled = false;

  constructor(write: (msg: M | Batch<M>) => void) {
    this.#write = write;
  }

  push(msg: M): void {
    this.#queue.push(msg);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Sends what is queued now (also called before anything that must follow it, e.g. an exit). */
  flush(): void {
    this.#scheduled = false;
    while (this.#queue.length > 0) {
      const msgs = this.#queue.splice(0, MAX_BATCH);
      this.#write(msgs.length === 1 ? (msgs[0] as M) : { t: 'batch', msgs });
    }
  }
}

/** The messages of a received IPC message: a batch's contents, or the message itself. */
export function unbatch(m: unknown): unknown[] {
  if (typeof m === 'object' && m !== null && (m as { t?: unknown }).t === 'batch') {
    const msgs = (m as { msgs?: unknown }).msgs;
    return Array.isArray(msgs) ? msgs.slice(0, MAX_BATCH) : [];
  }
  return [m];
}
