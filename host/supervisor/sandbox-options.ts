/**
 * @module host/supervisor/sandbox-options
 * Options of `createSandbox`, with their defaults written next to them, and the public `Sandbox`
 * interface the host codes against.
 */
import type { HttpHandler, RunOutcome, RunTask } from '../../contracts/protocol.js';
import type { SandboxFault } from '../../contracts/worker-protocol.js';
import { fail } from '../../contracts/errors.js';

/** pino-compatible: `(object, message)` */
export interface SandboxLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface SandboxOptions {
  /** worker threads in the sandbox process (default 8) */
  workers?: number;
  /** calls waiting for a worker before new ones get GW_ERR_SANDBOX_OVERLOADED (default 2000) */
  maxQueue?: number;
  /** crashes attributed to one plugin within quarantineWindowMs before it is suspended (default 3) */
  quarantineAfterCrashes?: number;
  /** crash-counting window, and how long a quarantine lasts after the last crash (default 600000) */
  quarantineWindowMs?: number;
  /**
   * where the crash strikes (one per plugin blamed for a crash) are shared with the sandboxes of
   * the other replicas, so that a plugin's crashes on all of them add up and it is quarantined on
   * all at once (supervisor/strike-sync.ts). Default none: this sandbox counts the crashes it saw.
   */
  strikes?: StrikeStore;
  /** how often the strikes of other sandboxes are read from `strikes`, ms (default 2000) */
  strikeRefreshMs?: number;
  /**
   * calls one worker thread may interleave while they wait on ctx.http (default 1). Each call in
   * flight has its own isolate; only calls using CPU hold a worker slot, so the sandbox holds up
   * to workers × callsPerWorker calls, of which at most `workers` run at once.
   */
  callsPerWorker?: number;
  /**
   * share of the sandbox one plugin may occupy at once, 0..1 (default 0.5): at most
   * ceil(share × workers) calls using CPU, and at most ceil(share × workers × callsPerWorker) in flight
   */
  maxWorkerShare?: number;
  /**
   * share of the sandbox one user (RunTask.user) may occupy at once, 0..1 (default 0.5): at most
   * ceil(share × workers × callsPerWorker) calls in flight and ceil(share × maxQueue) waiting, beyond
   * which its calls get GW_ERR_SANDBOX_OVERLOADED. Calls with no user are not limited by it.
   */
  maxUserShare?: number;
  logger?: SandboxLogger;
  /** how long close() lets in-flight calls finish, ms (default 10000) */
  closeGraceMs?: number;
  /** extra node flags for the sandbox process, e.g. ["--max-old-space-size=1024"] */
  execArgv?: string[];
  /**
   * TESTS ONLY: lets `injectFault` kill a worker thread or simulate a catastrophic isolate error,
   * so that recovery paths plugin code cannot reach are tested. The host never sets it.
   */
  faultInjection?: boolean;
  /**
   * BENCHMARKS: every outcome's stats carry `hops` (RunHops), the times the call crossed each
   * hand-off inside the sandbox. Off by default; the host never sets it.
   */
  traceHops?: boolean;
}

/** The plugin a strike counts against: strikes add up per name and source hash (one version of its code). */
export interface StruckPlugin {
  name: string;
  /** for messages and stats (`name@version`) */
  version: string;
  sourceHash: string;
}

/** A strike another sandbox recorded, as read from a StrikeStore. */
export interface SharedStrike {
  plugin: StruckPlugin;
  /** how long ago it was recorded, ms on the store's clock (never negative) */
  ageMs: number;
}

/**
 * Crash strikes shared by the sandboxes of several gateway processes (implemented by the host over
 * its database). Either method may reject: the sandbox then decides with what it knows (its own
 * strikes, and the others' as last read), counts the failure and logs it. Times are the store's
 * own, given back as ages, so the sandboxes' clocks need not agree.
 */
export interface StrikeStore {
  /** Stores one strike against `plugin`, recorded now by the sandbox named `origin`. */
  record(origin: string, plugin: StruckPlugin): Promise<void>;
  /**
   * The strikes recorded within the last `windowMs` by sandboxes other than `origin`; strikes older
   * than that are deleted (by this call or a sweep of the store's own), so the store stays bounded.
   */
  recent(origin: string, windowMs: number): Promise<SharedStrike[]>;
}

/** Faults a test can inject when the sandbox was created with `faultInjection: true`. */
/**
 * Faults tests may inject (with `faultInjection`): a worker thread exiting during a call, or the
 * process ending on a catastrophic isolate error, blamed on `culprit` (as V8 losing a plugin's
 * isolate is) or on nobody (every plugin in flight is then struck).
 */
export type { SandboxFault } from '../../contracts/worker-protocol.js';

export type ResolvedSandboxOptions = Required<Omit<SandboxOptions, 'logger' | 'strikes'>> & {
  logger: SandboxLogger;
  strikes: StrikeStore | undefined;
};

export interface SandboxStats {
  /** a sandbox process is up and has passed its self-test */
  ready: boolean;
  /** pid of the current sandbox process (undefined while restarting) */
  pid: number | undefined;
  workers: number;
  /** calls holding a worker slot */
  active: number;
  /** calls waiting for a slot */
  queued: number;
  /** calls refused since start because the queue was full, or the plugin's or the user's share of it */
  refused: { queueFull: number; pluginShare: number; userShare: number };
  /** calls finished since start */
  completed: number;
  /** sandbox processes that died unexpectedly */
  crashes: number;
  /** sandbox processes started after the first */
  restarts: number;
  /** calls run again after a crash another plugin caused, before they had changed anything (sandbox-call.ts) */
  reruns: number;
  /**
   * plugins suspended now, with when their suspension ends; with a StrikeStore, those suspended by
   * the strikes of every sandbox sharing it (whether or not this one has run them)
   */
  quarantined: Array<{ plugin: string; until: string }>;
  /** reads and writes of the shared strikes (StrikeStore) that failed, since start; 0 without one */
  strikeSyncFailures: number;
}

export interface Sandbox {
  /**
   * Runs one plugin call. Never rejects: every failure is `{ ok: false, error: { code, message } }`.
   * `signal` (the caller cancelled) takes a call still waiting for a slot out of the queue
   * (GW_ERR_SANDBOX_CANCELLED, never started); a call already running is not stopped by it.
   */
  run(task: RunTask, http: HttpHandler, signal?: AbortSignal): Promise<RunOutcome>;
  stats(): SandboxStats;
  /**
   * Says the host is shutting down: calls are still accepted and run until close(), but a sandbox
   * process that dies from now on is not restarted, not counted as a crash and not blamed on the
   * plugins it was running (the calls then get GW_ERR_SANDBOX_CRASHED or _UNAVAILABLE).
   */
  beginShutdown(): void;
  /** Stops intake, lets in-flight calls finish (bounded), then ends the sandbox process. */
  close(): Promise<void>;
  /** Present only with `faultInjection: true` (tests). */
  injectFault?(fault: SandboxFault): void;
}

const silent: SandboxLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function resolveOptions(o: SandboxOptions): ResolvedSandboxOptions {
  const workers = Math.max(1, Math.floor(o.workers ?? 8));
  const share = o.maxWorkerShare ?? 0.5;
  if (!(share > 0 && share <= 1)) throw fail('GW_ERR_CONFIG_INVALID', { message: 'maxWorkerShare must be in (0, 1]' });
  const userShare = o.maxUserShare ?? 0.5;
  if (!(userShare > 0 && userShare <= 1))
    throw fail('GW_ERR_CONFIG_INVALID', { message: 'maxUserShare must be in (0, 1]' });
  return {
    workers,
    callsPerWorker: Math.max(1, Math.min(256, Math.floor(o.callsPerWorker ?? 1))),
    maxQueue: Math.max(0, Math.floor(o.maxQueue ?? 2000)),
    quarantineAfterCrashes: Math.max(1, Math.floor(o.quarantineAfterCrashes ?? 3)),
    quarantineWindowMs: Math.max(1, o.quarantineWindowMs ?? 600_000),
    strikes: o.strikes,
    strikeRefreshMs: Math.max(10, o.strikeRefreshMs ?? 2_000),
    maxWorkerShare: share,
    maxUserShare: userShare,
    logger: o.logger ?? silent,
    closeGraceMs: Math.max(0, o.closeGraceMs ?? 10_000),
    execArgv: o.execArgv ?? [],
    faultInjection: o.faultInjection === true,
    traceHops: o.traceHops === true,
  };
}
