/**
 * @module sandbox/process/balancer
 * Which worker thread a call goes to (Piscina's `loadBalancer`), with plugin affinity. Each worker
 * keeps at most MAX_IDLE_ISOLATES idle isolates (and IDLE_HEAP_BUDGET_MB of them), and Piscina's
 * own balancer sends every call to the first idle worker, so calls made one after another all land
 * on one worker: with more plugins in turn than it keeps, every call evicted the isolate the next
 * one needed and started cold. So each plugin gets a home worker, given out in Piscina's order,
 * PLUGINS_PER_HOME plugins to a worker before the next one is used (calls of a few plugins stay on
 * one warm worker, as before); a call goes to its plugin's home when that worker is idle, and
 * otherwise, as in Piscina's balancer, to the first idle worker, else the least busy one under
 * `maximumUsage` calls.
 *
 * Piscina does not show a balancer the task, but it calls the balancer synchronously inside
 * `pool.run()` when no task is queued: the sandbox process names the call's plugin with `routing()`
 * around that call. A task distributed later (from Piscina's queue) is balanced without affinity.
 */
import type { PiscinaTask } from 'piscina';

/** plugins given the same home worker before the next worker is used (below MAX_IDLE_ISOLATES) */
export const PLUGINS_PER_HOME = 6;
/** homes remembered at most (plugins are few; past this, homes start over) */
const MAX_HOMES = 10_000;

/** what a Piscina balancer sees of a worker (PiscinaWorker, not exported by the package's root) */
export interface BalancedWorker {
  readonly id: number;
  readonly currentUsage: number;
  readonly isRunningAbortableTask: boolean;
}

export interface AffinityBalancer<W extends BalancedWorker> {
  balance(task: Pick<PiscinaTask, 'isAbortable'>, workers: W[]): W | null;
  /** runs `dispatch` (which calls pool.run) with `plugin` as the call being balanced */
  routing<T>(plugin: string, dispatch: () => T): T;
  /** the home worker's thread id of a plugin, if it has one */
  homeOf(plugin: string): number | undefined;
}

/**
 * `poolSize`: the pool's workers. Piscina shows the balancer only the workers that are ready, so
 * homes are given out only once all are: plugins called while the pool starts (or replaces a
 * worker) would otherwise all be homed on the few workers up first, for good.
 */
export function affinityBalancer<W extends BalancedWorker>(
  maximumUsage: number,
  poolSize: number,
): AffinityBalancer<W> {
  const homes = new Map<string, number>();
  const plugins = new Map<number, number>(); // thread id → plugins at home there
  let current: string | undefined;

  const leastBusy = (task: Pick<PiscinaTask, 'isAbortable'>, workers: W[]): W | null => {
    let candidate: W | null = null;
    let checkpoint = maximumUsage;
    for (const worker of workers) {
      if (worker.currentUsage === 0) return worker;
      if (worker.isRunningAbortableTask) continue;
      if (task.isAbortable === false && worker.currentUsage < checkpoint) {
        candidate = worker;
        checkpoint = worker.currentUsage;
      }
    }
    return candidate;
  };

  const homeFor = (plugin: string, workers: W[]): number | undefined => {
    const home = homes.get(plugin);
    if (home !== undefined && workers.some((w) => w.id === home)) return home;
    if (workers.length < poolSize) return undefined; // workers still starting: no home yet
    if (home !== undefined) plugins.set(home, Math.max(0, (plugins.get(home) ?? 1) - 1)); // its worker is gone
    if (homes.size >= MAX_HOMES) {
      homes.clear();
      plugins.clear();
    }
    const free = workers.find((w) => (plugins.get(w.id) ?? 0) < PLUGINS_PER_HOME);
    const chosen =
      free ??
      workers.reduce<W | undefined>(
        (a, w) => (a === undefined || (plugins.get(w.id) ?? 0) < (plugins.get(a.id) ?? 0) ? w : a),
        undefined,
      );
    if (!chosen) return undefined;
    homes.set(plugin, chosen.id);
    plugins.set(chosen.id, (plugins.get(chosen.id) ?? 0) + 1);
    return chosen.id;
  };

  return {
    balance(task, workers) {
      if (current !== undefined) {
        const home = homeFor(current, workers);
        const there = workers.find((w) => w.id === home);
        if (there && there.currentUsage === 0) return there;
      }
      return leastBusy(task, workers);
    },
    routing(plugin, dispatch) {
      current = plugin;
      try {
        return dispatch();
      } finally {
        current = undefined;
      }
    },
    homeOf: (plugin) => homes.get(plugin),
  };
}
