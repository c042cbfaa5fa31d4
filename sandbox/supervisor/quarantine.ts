/**
 * @module sandbox/supervisor/quarantine
 * Counts sandbox crashes per plugin (name + source hash) in a sliding window. A plugin with
 * `after` crashes within `windowMs` is suspended until `windowMs` after its last crash: its calls
 * get GW_ERR_SANDBOX_QUARANTINED without reaching the sandbox. A crash is attributed to the plugin
 * that brought the process down when that is known, else to every plugin that had a call in flight
 * in the process that died (sandbox.md §5.1), once per crash however
 * many of its calls were in flight, so an innocent plugin needs to be unlucky in `after` crashes
 * within the window to be suspended.
 */

export class Quarantine {
  readonly #after: number;
  readonly #windowMs: number;
  readonly #strikes = new Map<string, { label: string; times: number[] }>();

  constructor(after: number, windowMs: number) {
    this.#after = after;
    this.#windowMs = windowMs;
  }

  strike(key: string, label: string, now = Date.now()): void {
    const entry = this.#strikes.get(key) ?? { label, times: [] };
    entry.times = entry.times.filter((t) => now - t < this.#windowMs);
    entry.times.push(now);
    this.#strikes.set(key, entry);
  }

  /** When the quarantine of `key` ends, or undefined if the plugin may run. */
  until(key: string, now = Date.now()): number | undefined {
    const entry = this.#strikes.get(key);
    if (!entry) return undefined;
    entry.times = entry.times.filter((t) => now - t < this.#windowMs);
    if (entry.times.length === 0) {
      this.#strikes.delete(key);
      return undefined;
    }
    if (entry.times.length < this.#after) return undefined;
    return (entry.times[entry.times.length - 1] as number) + this.#windowMs;
  }

  list(now = Date.now()): Array<{ plugin: string; until: string }> {
    const out: Array<{ plugin: string; until: string }> = [];
    for (const [key, entry] of this.#strikes) {
      const until = this.until(key, now);
      if (until !== undefined) out.push({ plugin: entry.label, until: new Date(until).toISOString() });
    }
    return out;
  }
}
