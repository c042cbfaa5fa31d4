/**
 * @module host/bridge/buffer-budget
 * One byte budget for the response bodies the bridge holds at once, across every call of the host
 * process (`http.maxBufferedBytes`). The per-request and per-call limits bound one call
 * (`maxResponseBytes` × `maxRequestsPerCall`), but not many calls together: a plugin with 16
 * calls in flight, each with 25 requests of 8 MiB, drove the host past 3 GB, and a host that runs
 * out of memory takes every tenant down with it.
 *
 * A body is admitted as its bytes arrive (`Reservation.grow` per chunk read) and stays counted until
 * it has been handed to the sandbox process, or its request failed. A chunk that does not fit fails
 * its request at once with GW_ERR_BRIDGE_BUSY: a request never waits for room, so nothing can hang
 * on the budget. One plugin may hold at most its share of the budget (`share` × `limit`, and at
 * least one whole response), so that one plugin fetching large bodies leaves room for the others.
 */

/** Why a reservation could not grow: the whole budget, or the plugin's share of it, is in use. */
export interface BufferRefusal {
  of: 'budget' | 'plugin';
  /** the bound that was reached, bytes */
  limit: number;
}

export interface BufferBudgetOptions {
  /** bytes of response bodies held at once, all calls together */
  limit: number;
  /** the largest share of `limit` one plugin may hold, 0..1 */
  share: number;
  /** the response cap: a plugin's share is never less, so a lone response of that size always fits */
  maxResponseBytes: number;
}

export class BufferBudget {
  readonly limit: number;
  readonly perPlugin: number;
  #held = 0;
  #refusals = 0;
  readonly #byPlugin = new Map<string, number>();

  constructor(options: BufferBudgetOptions) {
    this.limit = options.limit;
    this.perPlugin = Math.min(
      options.limit,
      Math.max(options.maxResponseBytes, Math.ceil(options.share * options.limit)),
    );
  }

  /** bytes held now, all plugins together */
  get held(): number {
    return this.#held;
  }

  /** requests refused for want of room, since start */
  get refusals(): number {
    return this.#refusals;
  }

  /** bytes one plugin holds now */
  heldBy(plugin: string): number {
    return this.#byPlugin.get(plugin) ?? 0;
  }

  /** A holder for the body bytes of one request of `plugin` (every hop of it, one at a time). */
  open(plugin: string): Reservation {
    return new Reservation(this, plugin);
  }

  /** Adds `bytes` for `plugin`, or says why they do not fit (and adds nothing). */
  take(plugin: string, bytes: number): BufferRefusal | undefined {
    const mine = this.heldBy(plugin);
    if (this.#held + bytes > this.limit || mine + bytes > this.perPlugin) {
      this.#refusals++;
      return this.#held + bytes > this.limit
        ? { of: 'budget', limit: this.limit }
        : { of: 'plugin', limit: this.perPlugin };
    }
    this.#held += bytes;
    this.#byPlugin.set(plugin, mine + bytes);
    return undefined;
  }

  /** Returns bytes `take` added. */
  give(plugin: string, bytes: number): void {
    if (bytes <= 0) return;
    this.#held -= bytes;
    const left = this.heldBy(plugin) - bytes;
    if (left > 0) this.#byPlugin.set(plugin, left);
    else this.#byPlugin.delete(plugin);
  }
}

/**
 * The bytes one request holds. `release` returns them all and may be called any number of times,
 * from any path (success handed over, failure, the call's end): a byte is returned at most once.
 */
export class Reservation {
  readonly #budget: BufferBudget;
  readonly #plugin: string;
  #bytes = 0;

  constructor(budget: BufferBudget, plugin: string) {
    this.#budget = budget;
    this.#plugin = plugin;
  }

  /** bytes held by this reservation now */
  get bytes(): number {
    return this.#bytes;
  }

  /** Holds `bytes` more, or says why they do not fit (the reservation keeps what it holds). */
  grow(bytes: number): BufferRefusal | undefined {
    const refused = this.#budget.take(this.#plugin, bytes);
    if (refused === undefined) this.#bytes += bytes;
    return refused;
  }

  /** Returns every byte held. The reservation can grow again afterwards (the next redirect hop). */
  release(): void {
    const bytes = this.#bytes;
    this.#bytes = 0;
    this.#budget.give(this.#plugin, bytes);
  }
}
