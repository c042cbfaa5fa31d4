/**
 * @module host/engine/rate-limit
 * Per-user and per-tenant execution budgets per minute (fixed one-minute windows), counted in the
 * process's memory: the limiter of a server on SQLite (one replica). Replicas on PostgreSQL count
 * in the database instead (host/engine/shared-rate-limit.ts). Zero means unlimited. Returns the
 * seconds until the window resets when a budget is spent.
 *
 * Windows are timed on the process's monotonic clock (performance.now), not the wall clock: a
 * wall clock stepped forward (NTP, an operator) would end every running window early and hand out
 * fresh budgets, and one stepped back would stretch them and answer a retry-after of hours.
 *
 * Memory is bounded to `maxKeys` windows (users and tenants together). Windows that have ended are
 * dropped first; only when every kept window is still running is the one that started longest ago
 * forgotten (its key starts afresh), one at a time. Forgetting every window at once, as a plain
 * `clear()` would, hands every caller a fresh budget: a way around the limit.
 */
import { performance } from 'node:perf_hooks';

export interface RateLimiter {
  /** Takes one execution from the budgets; undefined when allowed, else seconds to wait. */
  take(userId: string, tenant: string): number | undefined;
}

/** What the engine asks: the in-memory limiter answers at once, the shared one after a round trip. */
export interface ExecutionRateLimiter {
  take(userId: string, tenant: string): number | undefined | Promise<number | undefined>;
}

export interface RateLimits {
  perUserPerMinute: number;
  perTenantPerMinute: number;
}

interface Window {
  key: string;
  start: number;
  count: number;
}

const WINDOW_MS = 60_000;

/** Most windows kept at once; each is a Map entry and an object of about 100 bytes. */
export const RATE_LIMIT_MAX_KEYS = 100_000;

/**
 * The windows by key, and the same windows in the order they started. The order is a queue of our
 * own, not the Map's insertion order: V8 leaves a hole for each entry deleted from a Map until it
 * rehashes, and iterating from the front walks every hole, so a Map used as a queue costs O(n) per
 * take at the bound. A queue entry is stale once its key holds another window (it restarted) or
 * none; stale entries are skipped at the front and compacted away in bulk.
 */
class Windows {
  readonly #byKey = new Map<string, Window>();
  #order: Window[] = [];
  #head = 0;

  constructor(readonly maxKeys: number) {}

  /** The running window of `key` at time t, starting a new one (and making room) when needed. */
  current(key: string, t: number, keep: Window | undefined): Window {
    const w = this.#byKey.get(key);
    if (w && t - w.start < WINDOW_MS) return w;
    this.#dropEnded(t);
    if (!w && this.#byKey.size >= this.maxKeys) this.#forgetOldest(keep);
    const fresh = { key, start: t, count: 0 };
    this.#byKey.set(key, fresh);
    this.#order.push(fresh);
    if (this.#order.length > 2 * this.#byKey.size + 1024) this.#compact();
    return fresh;
  }

  #live(w: Window): boolean {
    return this.#byKey.get(w.key) === w;
  }

  /** Drops the windows at the front that have ended (and stale entries); stops at a running one. */
  #dropEnded(t: number): void {
    while (this.#head < this.#order.length) {
      const w = this.#order[this.#head] as Window;
      if (this.#live(w)) {
        if (t - w.start < WINDOW_MS) return;
        this.#byKey.delete(w.key);
      }
      this.#head++;
    }
  }

  /** Every kept window is running: forgets the one that started first, other than `keep`. */
  #forgetOldest(keep: Window | undefined): void {
    for (let i = this.#head; i < this.#order.length; i++) {
      const w = this.#order[i] as Window;
      if (w === keep || !this.#live(w)) continue;
      this.#byKey.delete(w.key);
      // Skipped over: `keep` at the front, then stale entries. `keep` takes the freed place, where
      // it still comes before every other live window, so the next call does not walk them again.
      this.#order[i] = this.#order[this.#head] as Window;
      this.#head++;
      return;
    }
  }

  /** Keeps only live entries, in order: O(n), run once at least n stale entries have built up. */
  #compact(): void {
    this.#order = this.#order.slice(this.#head).filter((w) => this.#live(w));
    this.#head = 0;
  }
}

/** Milliseconds on a clock no wall-clock change moves (only differences between readings mean anything). */
const monotonicMs = (): number => performance.now();

/** `now`: the clock in milliseconds (tests move one by hand); default the monotonic clock. */
export function createRateLimiter(
  limits: RateLimits,
  now: () => number = monotonicMs,
  maxKeys: number = RATE_LIMIT_MAX_KEYS,
): RateLimiter {
  // a take holds up to two windows, and making room for the second never drops the first
  const windows = new Windows(Math.max(2, maxKeys));
  const wait = (w: Window, t: number): number => Math.max(1, Math.ceil((w.start + WINDOW_MS - t) / 1000));
  return {
    take(userId, tenant) {
      const t = now();
      const budgets: Array<[Window, number]> = [];
      if (limits.perTenantPerMinute > 0)
        budgets.push([windows.current(`t:${tenant}`, t, undefined), limits.perTenantPerMinute]);
      if (limits.perUserPerMinute > 0)
        budgets.push([windows.current(`u:${userId}`, t, budgets[0]?.[0]), limits.perUserPerMinute]);
      // Check every budget before spending any: a refused execution spends nothing.
      for (const [w, limit] of budgets) if (w.count >= limit) return wait(w, t);
      for (const [w] of budgets) w.count++;
      return undefined;
    },
  };
}
