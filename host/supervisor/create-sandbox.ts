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
 * Where each part lives: one call, from admission to its outcome (and its second run after a crash
 * it did not cause), is a SandboxCall (sandbox-call.ts); the current process and its restarts are
 * the ProcessKeeper's (process-keeper.ts); one process, its IPC and its death, a ChildHandle
 * (child-handle.ts). This file builds them and answers for the sandbox as a whole.
 */
import type { MemoryStats } from '../../contracts/worker-protocol.js';
import {
  resolveOptions,
  type ResolvedSandboxOptions,
  type Sandbox,
  type SandboxFault,
  type SandboxOptions,
  type SandboxStats,
} from './sandbox-options.js';
import { Dispatcher } from '../../common/dispatcher.js';
import { ProcessKeeper } from './process-keeper.js';
import { Quarantine } from './quarantine.js';
import { SandboxCall, type CallSupervision } from './sandbox-call.js';
import { StrikeSync } from './strike-sync.js';

export { MIN_RERUN_MS } from './sandbox-call.js';

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
  const quarantine = new Quarantine(options.quarantineAfterCrashes, options.quarantineWindowMs);
  // with a store, strikes are shared with the other replicas' sandboxes (strike-sync.ts)
  const strikes = new StrikeSync({
    quarantine,
    store: options.strikes,
    windowMs: options.quarantineWindowMs,
    refreshMs: options.strikeRefreshMs,
    logger: options.logger,
  });
  const processes = new ProcessKeeper(options, strikes);
  const sandbox: CallSupervision = {
    options,
    quarantine,
    strikes,
    ...admission(options),
    processes,
    counts: { refused: { queueFull: 0, pluginShare: 0, userShare: 0 }, completed: 0, reruns: 0 },
  };
  // a replica starting knows the quarantines the others decided before it serves a call
  const firstRead = strikes.refresh();
  try {
    await processes.ensure();
  } catch (e) {
    await strikes.stop();
    throw e;
  }
  await firstRead;
  return sandboxOf(sandbox);
}

/**
 * Calls in flight: workers × callsPerWorker, a plugin at most its share of them and a user at most
 * its own. Which of them may use CPU at once (a worker each, the plugin its share of the workers)
 * is decided in the sandbox process, next to the workers, so that time spent crossing the process
 * boundary or parked on ctx.http does not count as a busy worker.
 */
function admission(
  options: ResolvedSandboxOptions,
): Pick<CallSupervision, 'dispatcher' | 'perPluginQueue' | 'perUserQueue'> {
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
  return { dispatcher, perPluginQueue, perUserQueue };
}

/** The sandbox as the host sees it. */
function sandboxOf(sandbox: CallSupervision): Sandbox & SandboxInternals {
  const { options, dispatcher, processes, counts, quarantine, strikes } = sandbox;
  const injectFault = options.faultInjection
    ? (fault: SandboxFault): void => processes.child?.injectFault(fault)
    : undefined;
  return {
    ...(injectFault ? { injectFault } : {}),
    run: (task, http, signal) => new SandboxCall(sandbox, task, http, signal).run(),
    stats(): SandboxStats {
      const child = processes.child;
      return {
        ready: child !== undefined && !child.exited,
        pid: child && !child.exited ? child.pid : undefined,
        workers: options.workers,
        active: dispatcher.active,
        queued: dispatcher.queued,
        refused: { ...counts.refused },
        completed: counts.completed,
        crashes: processes.crashes,
        restarts: Math.max(0, processes.started - 1),
        reruns: counts.reruns,
        quarantined: quarantine.list(),
        strikeSyncFailures: strikes.failures,
      };
    },
    beginShutdown() {
      processes.shuttingDown = true;
    },
    memoryStats() {
      const child = processes.child;
      return child && !child.exited ? child.memoryStats() : Promise.resolve(undefined);
    },
    close: () => processes.close(() => dispatcher.refuseWaiting()),
  };
}
