/**
 * @module common/ipc-outbox
 * Batches the messages one side of the host ⇄ sandbox process IPC channel sends in one turn of the
 * event loop into a single `{ t: 'batch', msgs }` message: under load many calls start, end or
 * make ctx.http requests in the same turn, and each IPC message costs a serialisation, a write and
 * a wake-up of the other process. Order is kept. The receiver unpacks with `unbatch`, and checks
 * every message inside as it would a lone one. A message may carry a `written` callback: it runs
 * once the message has left (the writer says when: after the channel took it, or dropped it).
 */

export interface Batch<M> {
  t: 'batch';
  msgs: M[];
}

/** At most this many messages per batch (a bound on one IPC message's size and parse time). */
const MAX_BATCH = 256;

/**
 * Sends one IPC message. When `written` is given the writer must call it exactly once, when the
 * channel has taken the message (its write completed) or the message was dropped.
 */
export type OutboxWriter<M> = (msg: M | Batch<M>, written?: () => void) => void;

export class Outbox<M> {
  readonly #write: OutboxWriter<M>;
  #queue: M[] = [];
  /** the `written` callbacks of queued messages, by position in the queue (most are undefined) */
  #written: ((() => void) | undefined)[] = [];
  #scheduled = false;

  constructor(write: OutboxWriter<M>) {
    this.#write = write;
  }

  push(msg: M, written?: () => void): void {
    this.#queue.push(msg);
    this.#written.push(written);
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
      const callbacks = this.#written.splice(0, MAX_BATCH).filter((f) => f !== undefined);
      const written = callbacks.length === 0 ? undefined : (): void => callbacks.forEach((f) => f());
      this.#write(msgs.length === 1 ? (msgs[0] as M) : { t: 'batch', msgs }, written);
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
