/**
 * @module host/supervisor/quarantine
 * Counts sandbox crashes per plugin (name + source hash) in a sliding window. A plugin with
 * `after` crashes within `windowMs` is suspended until `windowMs` after its last crash: its calls
 * get GW_ERR_SANDBOX_QUARANTINED without reaching the sandbox. A crash is attributed to the plugin
 * that brought the process down when that is known, else to every plugin that had a call in flight
 * in the process that died (sandbox.md §5.1), once per crash however
 * many of its calls were in flight, so an innocent plugin needs to be unlucky in `after` crashes
 * within the window to be suspended.
 *
 * The crashes counted are this sandbox's own (`strike`) and, when strikes are shared between
 * replicas (strike-sync.ts), those the other sandboxes recorded, as last read (`share`: it replaces
 * that view whole, so nothing is counted twice). Every time is on this process's clock: a shared
 * strike is dated by its age on the store's clock when it was read.
 */

interface Strikes {
  label: string;
  times: number[];
}

/** A plugin that has just become quarantined, and whose strikes did it. */
export interface Quarantined {
  key: string;
  label: string;
  /** when the quarantine ends (epoch ms) */
  until: number;
  /** strikes within the window recorded here */
  here: number;
  /** strikes within the window recorded by other sandboxes */
  elsewhere: number;
}

export class Quarantine {
  readonly #after: number;
  readonly #windowMs: number;
  /** the strikes this sandbox recorded */
  readonly #local = new Map<string, Strikes>();
  /** the other sandboxes' strikes, as last read */
  #shared = new Map<string, Strikes>();

  constructor(after: number, windowMs: number) {
    this.#after = after;
    this.#windowMs = windowMs;
  }

  /** Counts a crash of `key` here; says so when it is what quarantines the plugin. */
  strike(key: string, label: string, now = Date.now()): Quarantined | undefined {
    const was = this.until(key, now) !== undefined;
    const entry = this.#local.get(key) ?? { label, times: [] };
    entry.times = entry.times.filter((t) => now - t < this.#windowMs);
    entry.times.push(now);
    this.#local.set(key, entry);
    return was ? undefined : this.#quarantined(key, label, now);
  }

  /**
   * Replaces the view of the other sandboxes' strikes with `strikes`, each `ageMs` old when read
   * at `now`. Answers the plugins this quarantines that were not quarantined before.
   */
  share(strikes: ReadonlyArray<{ key: string; label: string; ageMs: number }>, now = Date.now()): Quarantined[] {
    const before = new Set(this.#keys().filter((key) => this.until(key, now) !== undefined));
    const shared = new Map<string, Strikes>();
    for (const s of strikes) {
      const at = now - Math.max(0, s.ageMs);
      if (now - at >= this.#windowMs) continue;
      const entry = shared.get(s.key) ?? { label: s.label, times: [] };
      entry.times.push(at);
      shared.set(s.key, entry);
    }
    for (const entry of shared.values()) entry.times.sort((a, b) => a - b);
    this.#shared = shared;
    const out: Quarantined[] = [];
    for (const [key, entry] of shared) {
      if (before.has(key)) continue;
      const q = this.#quarantined(key, entry.label, now);
      if (q) out.push(q);
    }
    return out;
  }

  /** When the quarantine of `key` ends, or undefined if the plugin may run. */
  until(key: string, now = Date.now()): number | undefined {
    const here = this.#live(this.#local, key, now);
    const elsewhere = this.#live(this.#shared, key, now);
    if (here.length + elsewhere.length < this.#after) return undefined;
    return Math.max(...here, ...elsewhere) + this.#windowMs;
  }

  list(now = Date.now()): Array<{ plugin: string; until: string }> {
    const out: Array<{ plugin: string; until: string }> = [];
    for (const key of this.#keys()) {
      const until = this.until(key, now);
      const label = this.#local.get(key)?.label ?? this.#shared.get(key)?.label;
      if (until !== undefined && label !== undefined) out.push({ plugin: label, until: new Date(until).toISOString() });
    }
    return out;
  }

  #keys(): string[] {
    return [...new Set([...this.#local.keys(), ...this.#shared.keys()])];
  }

  /** the times of `key`'s strikes within the window, oldest first; forgets the others */
  #live(map: Map<string, Strikes>, key: string, now: number): number[] {
    const entry = map.get(key);
    if (!entry) return [];
    entry.times = entry.times.filter((t) => now - t < this.#windowMs);
    if (entry.times.length === 0) map.delete(key);
    return entry.times;
  }

  #quarantined(key: string, label: string, now: number): Quarantined | undefined {
    const until = this.until(key, now);
    if (until === undefined) return undefined;
    return {
      key,
      label,
      until,
      here: this.#live(this.#local, key, now).length,
      elsewhere: this.#live(this.#shared, key, now).length,
    };
  }
}
