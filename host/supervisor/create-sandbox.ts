/**
 * @module host/supervisor/create-sandbox
 * The host-side sandbox: admission (quarantine, queue bound, per-plugin and per-user shares), then the
 * call goes to the current sandbox process. When that process dies, the calls in flight fail with
 * GW_ERR_SANDBOX_CRASHED, the plugin that brought it down gets a strike when that is known (V8
 * lost control of its isolate), else each plugin with calls in flight gets one, and a new process is started (with
 * back-off if it keeps failing). `run` never rejects. With a StrikeStore (SandboxOptions.strikes),
 * strikes are shared with the other replicas' sandboxes (strike-sync.ts); admission still reads
 * only memory.
 *
 * A call that a known culprit's crash failed, and that had asked for nothing but GET, HEAD or
 * OPTIONS requests, runs once more in the new process, with what its first run left of its wall
 * time and of its request budget (child-handle.ts: CallEnd). So a plugin that brings the process
 * down fails its own calls, not the other tenants' reads that happened to be in flight beside it.
 * It is not run again when less than MIN_RERUN_MS of its wall time is left, when it has fewer
 * requests left than it had made, when its caller cancelled, when the gateway is shutting down,
 * or a second time.
 */
import type { MemoryStats, PluginIdentity } from '../../contracts/worker-protocol.js';
import type { HttpHandler, RunOutcome, RunTask } from '../../contracts/protocol.js';
import { resolveOptions, type Sandbox, type SandboxFault, type SandboxOptions, type SandboxStats } from './sandbox-options.js';
import { failure } from './check-outcome.js';
import { ChildHandle, type CallEnd } from './child-handle.js';
import { Dispatcher } from '../../common/dispatcher.js';
import { Quarantine } from './quarantine.js';
import { pluginKey, pluginLabel, StrikeSync } from './strike-sync.js';
import { fail } from '../../contracts/errors.js';

const START_TIMEOUT_MS = 20_000;
/** wall time a call must have left to be run again after a crash it did not cause */
export const MIN_RERUN_MS = 1_000;
const MAX_START_ATTEMPTS = 5;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/**
 * Sandbox-internal extras of the object createSandbox returns (not part of the `Sandbox` contract
 * the host codes against): memory figures for benchmarks and tests.
 */
export interface SandboxInternals {
  /** the current sandbox process's RSS and its workers' isolate heaps; undefined while none runs */
  memoryStats(): Promise<MemoryStats | undefined>;
}

export async function createSandbox(input: SandboxOptions = {}): Promise<Sandbox & SandboxInternals> {
  const options = resolveOptions(input);
  const { logger } = options;
  const quarantine = new Quarantine(options.quarantineAfterCrashes, options.quarantineWindowMs);
  // with a store, strikes are shared with the other replicas' sandboxes (strike-sync.ts)
  const strikes = new StrikeSync({ quarantine, store: options.strikes, windowMs: options.quarantineWindowMs, refreshMs: options.strikeRefreshMs, logger });
  // calls in flight: workers × callsPerWorker, a plugin at most its share of them and a user at
  // most its own. Which of them may use CPU at once (a worker each, the plugin its share of the
  // workers) is decided in the sandbox process, next to the workers, so that time spent crossing
  // the process boundary or parked on ctx.http does not count as a busy worker.
  const inFlight = options.workers * options.callsPerWorker;
  const perPluginInFlight = Math.ceil(options.maxWorkerShare * inFlight);
  const perPluginQueue = Math.ceil(options.maxWorkerShare * options.maxQueue);
  const perUserQueue = Math.ceil(options.maxUserShare * options.maxQueue);
  const dispatcher = new Dispatcher({
    slots: inFlight,
    perPlugin: perPluginInFlight,
    inFlight,
    perPluginInFlight,
    maxQueue: options.maxQueue,
    perPluginQueue,
    perUserInFlight: Math.ceil(options.maxUserShare * inFlight),
    perUserQueue,
  });
  const refused = { queueFull: 0, pluginShare: 0, userShare: 0 };
  let child: ChildHandle | undefined;
  let starting: Promise<ChildHandle> | undefined;
  let closing = false;
  /** set by beginShutdown() or close(): a process that dies is not restarted, counted or blamed */
  let shuttingDown = false;
  let closed: Promise<void> | undefined;
  let completed = 0;
  let crashes = 0;
  let started = 0;
  let reruns = 0;

  const onExit = (dead: ChildHandle, blamed: PluginIdentity[], code: number | null, signal: string | null, certain: boolean): void => {
    if (child === dead) child = undefined;
    if (closing) return;
    if (shuttingDown) {
      logger.warn({ sandboxPid: dead.pid, code, signal }, 'sandbox process exited during shutdown; its calls in flight failed, and it is not restarted');
      return;
    }
    crashes++;
    const plugins = [...new Set(blamed.map(pluginLabel))];
    logger.error({ sandboxPid: dead.pid, code, signal, plugins }, 'sandbox process died; failing its calls in flight and restarting it');
    // one strike per plugin per crash, however many of its calls were in flight: a busy bystander
    // must not collect strikes faster than the plugin that brought the process down
    // only a strike on a known culprit is shared with other replicas: one blamed on every plugin in
    // flight (a signal, the OOM killer, the watchdog) counts here alone, or a fleet's unexplained
    // crashes would quarantine its busiest plugin everywhere
    const struck = new Map(blamed.map((plugin) => [pluginKey(plugin), plugin]));
    for (const plugin of struck.values()) strikes.strike(plugin, certain);
    void ensureChild().catch(() => undefined);
  };

  async function spawnOnce(): Promise<ChildHandle> {
    const handle = new ChildHandle(options, onExit, () => !shuttingDown);
    const timer = setTimeout(() => handle.kill(), START_TIMEOUT_MS);
    try {
      const pid = await handle.ready;
      started++;
      logger.info({ sandboxPid: pid, workers: options.workers }, 'sandbox process ready');
      return handle;
    } catch (e) {
      handle.kill();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  function ensureChild(): Promise<ChildHandle> {
    if (child && !child.exited) return Promise.resolve(child);
    starting ??= (async () => {
      let lastError: unknown;
      for (let attempt = 0; attempt < MAX_START_ATTEMPTS && !shuttingDown; attempt++) {
        if (attempt > 0) await sleep(Math.min(5_000, 100 * 2 ** attempt));
        try {
          child = await spawnOnce();
          return child;
        } catch (e) {
          lastError = e;
          logger.error({ attempt: attempt + 1, err: e instanceof Error ? e.message : String(e) }, 'sandbox process failed to start');
        }
      }
      throw lastError instanceof Error ? lastError : fail('GW_ERR_SANDBOX_UNAVAILABLE', { message: 'the sandbox is shutting down' });
    })().finally(() => {
      starting = undefined;
    });
    return starting;
  }

  // a replica starting knows the quarantines the others decided before it serves a call
  const firstRead = strikes.refresh();
  try {
    await ensureChild();
  } catch (e) {
    await strikes.stop();
    throw e;
  }
  await firstRead;

  async function admitAndRun(task: RunTask, http: HttpHandler, signal: AbortSignal | undefined): Promise<RunOutcome> {
    if (closing) return failure('GW_ERR_SANDBOX_UNAVAILABLE', 'the sandbox is shutting down');
    if (Buffer.byteLength(task.argsJson, 'utf8') > task.limits.maxArgsBytes) {
      return failure('GW_ERR_SANDBOX_ARGS_TOO_LARGE', `the arguments are larger than ${task.limits.maxArgsBytes} bytes`);
    }
    const quarantinedUntil = (): RunOutcome | undefined => {
      const until = quarantine.until(pluginKey(task.plugin));
      return until === undefined
        ? undefined
        : failure('GW_ERR_SANDBOX_QUARANTINED', `plugin ${pluginLabel(task.plugin)} crashed the sandbox ${options.quarantineAfterCrashes} times and is suspended until ${new Date(until).toISOString()}`);
    };
    const early = quarantinedUntil();
    if (early) return early;
    const lease = await dispatcher.acquire(task.plugin.name, signal, task.user);
    switch (lease) {
      case 'cancelled':
        return failure('GW_ERR_SANDBOX_CANCELLED', 'cancelled while waiting for a sandbox slot; the call never started');
      case 'closed':
        return failure('GW_ERR_SANDBOX_UNAVAILABLE', 'the sandbox is shutting down');
      case 'user-queue-full':
        refused.userShare++;
        return failure('GW_ERR_SANDBOX_OVERLOADED', `this user's share of the sandbox queue is full: ${perUserQueue} of its calls are already waiting, besides those running; retry once some have finished`);
      case 'plugin-queue-full':
        refused.pluginShare++;
        return failure('GW_ERR_SANDBOX_OVERLOADED', `plugin ${task.plugin.name}'s share of the sandbox queue is full: ${perPluginQueue} of its calls are already waiting; retry later`);
      case 'queue-full':
        refused.queueFull++;
        return failure('GW_ERR_SANDBOX_OVERLOADED', `the sandbox queue is full (${options.maxQueue} calls waiting)`);
    }
    try {
      const late = quarantinedUntil();
      if (late) return late;
      let handle: ChildHandle;
      try {
        handle = await ensureChild();
      } catch (e) {
        return failure('GW_ERR_SANDBOX_UNAVAILABLE', shuttingDown ? 'the sandbox is shutting down' : `the sandbox could not start: ${e instanceof Error ? e.message : String(e)}`);
      }
      const sentAt = performance.now();
      const first = await callOn(handle, task, http);
      if (!first.rerun || signal?.aborted || shuttingDown) return first.outcome;
      return (await runAgain(task, http, sentAt, first.rerun.requests, signal)) ?? first.outcome;
    } finally {
      lease.release();
      completed++;
    }
  }

  async function callOn(handle: ChildHandle, task: RunTask, http: HttpHandler): Promise<CallEnd> {
    const end = await handle.call(task, http);
    if (end.strike && !handle.exited && !shuttingDown) strikes.strike(task.plugin); // a worker thread died
    return end;
  }

  /**
   * Runs a call again after a crash it did not cause, in the process that replaces the dead one,
   * within what is left of its wall time and request budget (`sentAt`: when its first run was
   * sent, on the monotonic clock). Undefined when it should not: too little time left, fewer
   * requests left than the first run had made (a second run starts from the beginning and would
   * most likely run out), no process, shutdown, the caller cancelled, or its plugin quarantined
   * meanwhile. The first run's requests still in flight on the host are not stopped: their answers
   * are dropped when they come.
   */
  async function runAgain(task: RunTask, http: HttpHandler, sentAt: number, requestsMade: number, signal: AbortSignal | undefined): Promise<RunOutcome | undefined> {
    const requestsLeft = task.limits.maxRequestsPerCall - requestsMade;
    if (requestsLeft < requestsMade) return undefined;
    let handle: ChildHandle;
    try {
      handle = await ensureChild();
    } catch {
      return undefined;
    }
    const wallMsLeft = Math.floor(task.limits.wallMsPerCall - (performance.now() - sentAt));
    if (wallMsLeft < MIN_RERUN_MS || shuttingDown || signal?.aborted || quarantine.until(pluginKey(task.plugin)) !== undefined) return undefined;
    reruns++;
    logger.warn({ plugin: pluginLabel(task.plugin), tool: task.tool, callId: task.callId, sandboxPid: handle.pid, wallMsLeft, requestsLeft }, 'running a call again: another plugin brought its sandbox process down before it had changed anything');
    const outcome = (await callOn(handle, { ...task, limits: { ...task.limits, wallMsPerCall: wallMsLeft, maxRequestsPerCall: requestsLeft } }, http)).outcome;
    if (outcome.ok) return outcome;
    // its limits are what the first run left, not the policy's: say so
    const why = `this was a second run of the call, after another plugin brought the sandbox process down during the first; it had ${wallMsLeft} ms and ${requestsLeft} requests left`;
    return { ...outcome, error: { ...outcome.error, message: `${outcome.error.message} (${why})` } };
  }

  const injectFault = options.faultInjection ? (fault: SandboxFault): void => child?.injectFault(fault) : undefined;
  return {
    ...(injectFault ? { injectFault } : {}),
    async run(task, http, signal) {
      try {
        return await admitAndRun(task, http, signal);
      } catch (e) {
        logger.error({ err: e instanceof Error ? e.message : String(e) }, 'sandbox run failed unexpectedly');
        return failure('GW_ERR_SANDBOX_UNAVAILABLE', 'the sandbox failed unexpectedly');
      }
    },
    stats(): SandboxStats {
      return {
        ready: child !== undefined && !child.exited,
        pid: child && !child.exited ? child.pid : undefined,
        workers: options.workers,
        active: dispatcher.active,
        queued: dispatcher.queued,
        refused: { ...refused },
        completed,
        crashes,
        restarts: Math.max(0, started - 1),
        reruns,
        quarantined: quarantine.list(),
        strikeSyncFailures: strikes.failures,
      };
    },
    beginShutdown() {
      shuttingDown = true;
    },
    memoryStats() {
      return child && !child.exited ? child.memoryStats() : Promise.resolve(undefined);
    },
    close() {
      closed ??= (async () => {
        closing = true;
        shuttingDown = true;
        dispatcher.refuseWaiting();
        const current = child ?? (await starting?.catch(() => undefined));
        if (!current || current.exited) return strikes.stop();
        const exited = new Promise<void>((resolve) => {
          const check = setInterval(() => {
            if (current.exited) {
              clearInterval(check);
              resolve();
            }
          }, 20);
        });
        current.close(options.closeGraceMs);
        const timer = setTimeout(() => current.kill(), options.closeGraceMs + 2_000);
        await exited;
        clearTimeout(timer);
        // after the calls: a strike recorded as the last of them ended is still written
        await strikes.stop();
      })();
      return closed;
    },
  };
}

