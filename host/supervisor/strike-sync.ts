/**
 * @module host/supervisor/strike-sync
 * Crash strikes shared by the sandboxes of several gateway replicas, through the StrikeStore the
 * host injects (over its PostgreSQL database), so that a plugin that keeps bringing sandbox
 * processes down is quarantined on every replica after `quarantineAfterCrashes` crashes in all,
 * not that many on each. Without a store, strikes are counted here alone, as they always were.
 *
 * - Admission stays synchronous and local: `Quarantine.until` reads memory, never the store. A
 *   strike is written to the store when it happens, not awaited by anything on a call's path, and
 *   the others' strikes are read every `refreshMs` (an unref'd timer, stopped by `stop`) and at
 *   once after each strike here. So a plugin that reaches its count on other replicas is
 *   quarantined here within about `refreshMs`, and a crash here is decided on fresh figures.
 * - Only strikes on a plugin known to have caused its crash (V8 lost its isolate, one of its calls
 *   wedged or killed a worker) are shared. A crash whose cause is unknown (a signal, the OOM
 *   killer, the host's watchdog) strikes every plugin in flight, here only: shared, a fleet's
 *   unexplained crashes would quarantine its busiest plugins on every replica.
 * - Each sandbox has an `origin` (a random id per process start) and reads only the strikes of
 *   other origins: its own are in its memory, counted once. A replica that restarts has a new
 *   origin and an empty memory, so the strikes it recorded before come back to it as others'.
 * - Times are the store's clock: a strike is dated by the store when written and read back with
 *   its age, which is dated on this process's clock on arrival. So replicas whose clocks disagree
 *   still agree on which strikes are within the window (to within a round trip, and a write
 *   delayed by a slow store dates its strike later: it lasts longer, never shorter).
 * - The store deletes strikes older than the window when it is read (StrikeStore.recent), so it
 *   holds at most a window's strikes.
 * - The store failing (unreachable, failing over) fails no call: quarantine goes on with the
 *   strikes it knows (its own, and the others' as last read, which age out as they would have).
 *   Each failed write or read is counted (`failures`) and logged at warn, at most once a minute
 *   with the count since the last line. A strike whose write failed is not written later: while
 *   the database is down the gateway cannot authenticate callers either, so few calls run then.
 */
import { randomUUID } from 'node:crypto';
import type { SandboxLogger, StrikeStore, StruckPlugin } from './sandbox-options.js';
import type { Quarantine, Quarantined } from './quarantine.js';

const LOG_EVERY_MS = 60_000;

/** Strikes add up per plugin name and source hash (one version of its code). */
export const pluginKey = (plugin: StruckPlugin): string => `${plugin.name}\u0000${plugin.sourceHash}`;
export const pluginLabel = (plugin: StruckPlugin): string => `${plugin.name}@${plugin.version}`;

export interface StrikeSyncOptions {
  quarantine: Quarantine;
  store: StrikeStore | undefined;
  windowMs: number;
  refreshMs: number;
  logger: SandboxLogger;
}

export class StrikeSync {
  /** names this sandbox's strikes in the store */
  readonly origin = randomUUID();
  readonly #o: StrikeSyncOptions;
  #failures = 0;
  #unlogged = 0;
  #loggedAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reading: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  readonly #writes = new Set<Promise<void>>();

  constructor(options: StrikeSyncOptions) {
    this.#o = options;
  }

  /** writes and reads of the store that failed, since start */
  get failures(): number {
    return this.#failures;
  }

  /**
   * Counts a crash against `plugin` here and, with a store and when `share` (the plugin is known to
   * have caused it), writes it there and reads the others'.
   */
  strike(plugin: StruckPlugin, share = true): void {
    this.#announce(this.#o.quarantine.strike(pluginKey(plugin), pluginLabel(plugin)));
    const { store } = this.#o;
    if (!store || this.#stopped || !share) return;
    const write = store
      .record(this.origin, { name: plugin.name, version: plugin.version, sourceHash: plugin.sourceHash })
      .catch((err: unknown) => this.#failed('write', err));
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
    void this.refresh();
  }

  /**
   * Reads the other sandboxes' strikes now (or once more after the read in progress), then every
   * `refreshMs`. Never rejects; resolves when the read in progress has ended.
   */
  refresh(): Promise<void> {
    if (!this.#o.store || this.#stopped) return Promise.resolve();
    if (this.#reading) {
      this.#again = true;
      return this.#reading;
    }
    clearTimeout(this.#timer);
    this.#reading = this.#read().finally(() => {
      this.#reading = undefined;
      if (this.#stopped) return;
      if (this.#again) {
        this.#again = false;
        void this.refresh();
      } else {
        this.#timer = setTimeout(() => void this.refresh(), this.#o.refreshMs).unref();
      }
    });
    return this.#reading;
  }

  /** Stops reading; resolves once the writes and the read in progress have ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all([...this.#writes, this.#reading]);
  }

  async #read(): Promise<void> {
    const { store, quarantine, windowMs } = this.#o;
    if (!store) return;
    try {
      const strikes = await store.recent(this.origin, windowMs);
      const now = Date.now();
      const became = quarantine.share(
        strikes.map((s) => ({ key: pluginKey(s.plugin), label: pluginLabel(s.plugin), ageMs: Number(s.ageMs) })),
        now,
      );
      for (const q of became) this.#announce(q);
    } catch (err) {
      this.#failed('read', err);
    }
  }

  /** Logs a quarantine that other sandboxes' strikes had a part in (one of this sandbox's alone is the crash log's). */
  #announce(q: Quarantined | undefined): void {
    if (!q || q.elsewhere === 0) return;
    this.#o.logger.warn(
      { plugin: q.label, until: new Date(q.until).toISOString(), strikesHere: q.here, strikesElsewhere: q.elsewhere },
      'plugin quarantined by crashes on other replicas too: its calls get GW_ERR_SANDBOX_QUARANTINED here until the window after its last crash has passed',
    );
  }

  #failed(what: 'write' | 'read', err: unknown): void {
    this.#failures++;
    this.#unlogged++;
    const t = performance.now();
    if (this.#loggedAt !== undefined && t - this.#loggedAt < LOG_EVERY_MS) return;
    this.#o.logger.warn(
      { err: err instanceof Error ? err.message : String(err), failed: what, failures: this.#unlogged },
      'quarantine: the crash strikes shared with other replicas could not be written or read; this replica goes on with the strikes it knows until the store answers (logged at most once a minute)',
    );
    this.#loggedAt = t;
    this.#unlogged = 0;
  }
}
