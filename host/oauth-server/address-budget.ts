/**
 * @module host/oauth-server/address-budget
 * How many client registrations and client metadata document fetches one network address may
 * cause per hour (oauthServer.registrationsPerHourPerAddress): each registration is a row, and each
 * fetch is a request this server makes on someone's behalf, so neither may be had without bound. A
 * fixed window per address, counted in this process: replicas count apart, so the bound is per
 * replica. The map is emptied of past windows as it grows, so it holds at most the addresses of
 * one hour.
 */

export const WINDOW_MS = 3_600_000;
/** past this many addresses, windows that have ended are dropped before a new one is added */
const PRUNE_AT = 10_000;

export class AddressBudget {
  readonly limit: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, { start: number; spent: number }>();

  constructor(limit: number, now: () => number = Date.now) {
    this.limit = limit;
    this.#now = now;
  }

  /** Takes one from the address's budget: undefined when taken, else the seconds until its window ends. */
  take(address: string): number | undefined {
    const now = this.#now();
    let w = this.#windows.get(address);
    if (!w || now - w.start >= WINDOW_MS) {
      if (!w && this.#windows.size >= PRUNE_AT) this.#prune(now);
      w = { start: now, spent: 0 };
      this.#windows.set(address, w);
    }
    if (w.spent >= this.limit) return Math.max(1, Math.ceil((w.start + WINDOW_MS - now) / 1000));
    w.spent++;
    return undefined;
  }

  #prune(now: number): void {
    for (const [address, w] of this.#windows) if (now - w.start >= WINDOW_MS) this.#windows.delete(address);
  }
}
