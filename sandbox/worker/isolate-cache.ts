/**
 * @module sandbox/worker/isolate-cache
 * A pool of isolates per (plugin name, source hash) in each worker. An isolate serves ONE call at a
 * time: a worker that interleaves several calls of a plugin (while they wait on ctx.http) gives
 * each its own isolate, so a timeout or a memory-limit disposal only ever ends the call that
 * caused it. Isolates are never shared across plugins. A disposed isolate (timeout, memory limit,
 * wall-clock deadline) leaves the pool; idle isolates beyond MAX_IDLE_ISOLATES are disposed, least
 * recently used first.
 *
 * Contexts prepared ahead of demand: when a per-call call ends, its idle isolate prepares the next
 * fresh context (bootstrap evaluated, module instantiated and evaluated) after the outcome has gone
 * out, so the next call starts on a ready context. A spare has never run a call: it is made fresh,
 * handed to exactly one call, and dropped with its isolate.
 *
 * Memory bound: an isolate reclaims the contexts of past calls only in a full collection, and
 * with a 64 MiB limit V8 lets tens of MiB of dead contexts pile up first, in every isolate
 * (~50–75 KiB per call), so idle isolates would hold most of the sandbox process's memory. So an
 * idle isolate whose used heap has reached its collection threshold (COLLECT_AT_MB, then that
 * much over what the last collection left) is collected between calls, right after its spare is
 * prepared (ENTRY_COLLECT: ~1 ms for a hundred dead contexts). Without it, idle isolates of a
 * worker that serves several plugins went over the idle budget every ~50–100 calls and were
 * disposed, and the next call of their plugin started cold. The heap idle isolates hold is still
 * bounded per worker by IDLE_HEAP_BUDGET_MB (enforceIdleBudget: a disposed isolate gives its whole
 * heap back; the next call of its plugin starts cold). Busy isolates are bounded by the plugin's
 * memoryMb.
 *
 * One module on purpose (a little over 400 lines): the pools, their spares, the idle budget and the
 * collections all read and change the same entries and counters; apart, each would reach into the
 * others' state.
 */
import ivm from 'isolated-vm';
import { BroadcastChannel } from 'node:worker_threads';
import { CONTROL_CHANNEL, type ControlMessage, type PluginIdentity } from '../../contracts/worker-protocol.js';
import type { RunTask } from '../../contracts/protocol.js';
import { classifyIsolateError } from './classify-error.js';
import { MAX_MODULE_COMPILE_MS, prepareContext, releaseContext, type PreparedContext } from './prepare-context.js';
import { ENTRY_COLLECT } from '../isolate/bootstrap-source.js';
import { marked } from './busy-mark.js';
import { fail } from '../../contracts/errors.js';

/**
 * How long a synchronous housekeeping step on an idle isolate (a collection, a heap measure, a
 * disposal) may hold the worker's thread before the sandbox process takes the worker to be wedged
 * by the isolate's last call (busy-mark.ts): ~1 ms usually; a full collection of a large live heap
 * (per-tenant contexts keep data) took up to 3.8 s for 1.1 GB on a busy 2-core machine, so 1 s plus
 * 4 ms per MiB the isolate may hold.
 */
export const housekeepingBudgetMs = (entry: IsolateEntry): number => 1000 + 4 * entry.memoryMb;

export const MAX_IDLE_ISOLATES = 8;
export const MAX_TENANT_CONTEXTS = 32;
/** spare contexts an idle isolate keeps ready */
export const SPARES_PER_ISOLATE = 1;
/**
 * A per-call call that finds no idle isolate with a READY spare starts another isolate for the
 * plugin while the plugin has fewer than this many in the worker (calls that find every isolate of
 * their plugin busy always get one of their own). It was 2 while spares were prepared on
 * isolated-vm's thread pool, so that back-to-back calls could alternate between two isolates while
 * the other prepared in parallel; spares are now prepared on the worker's own thread, where nothing
 * runs in parallel, and a second idle isolate per plugin only halved how many plugins a worker
 * keeps warm (four plugins called in turn then went over MAX_IDLE_ISOLATES and kept starting cold).
 */
export const WARM_ISOLATES_PER_PLUGIN = 1;
/**
 * An idle isolate whose heap (live data and garbage not yet collected) is over this share of its
 * limit is disposed rather than reused: contexts of past calls are reclaimed slowly, and a reused
 * isolate must never fail a small call for memory that earlier calls left behind.
 */
export const RECYCLE_AT_HEAP_SHARE = 0.5;
/**
 * Per worker, the most heap its idle isolates may hold together: V8 heap committed
 * (total_heap_size) plus external allocations, as measured when each became idle. Over it, see
 * enforceIdleBudget. An idle isolate of a catalog plugin's size commits 3.5–6 MiB (its new space,
 * pages a collection does not give back at once, its spare context), so this lets a worker keep
 * MAX_IDLE_ISOLATES of them (3.5–6.5 MiB with the byte APIs); at 32 MiB it kept 6–7, and an eighth plugin in turn churned (83 cold
 * starts in 3,000 calls). At 48 MiB, 8 such plugins in turn held 47–48 MiB between collections,
 * at the edge: once the byte APIs (TextEncoder, base64) added ~0.5 MiB per idle isolate, one was
 * disposed now and then; 56 leaves room. The sandbox process's isolate heaps at rest are thus at
 * most workers × IDLE_HEAP_BUDGET_MB (plus what busy isolates use, each under its memoryMb).
 */
export const IDLE_HEAP_BUDGET_MB = 56;
/**
 * An idle isolate is collected once its used heap reaches this (or a quarter of its memory limit if
 * that is less); after a collection, once this much more has piled up on top of what the collection
 * left, so that an isolate with a large live heap is not collected after every call.
 */
export const COLLECT_AT_MB = 4;
/** over the idle budget, idle isolates holding at least this much garbage are collected before any is disposed */
const MIN_GARBAGE_TO_COLLECT = 1024 * 1024;

interface Spare {
  ready: Promise<PreparedContext>;
  /** the step timeout the module was evaluated with */
  timeoutMs: number;
  /** preparation has finished (successfully) */
  settled: boolean;
  /** the prepared context, once settled */
  context?: PreparedContext;
}

export interface IsolateEntry {
  key: string;
  isolate: ivm.Isolate;
  memoryMb: number;
  source: string;
  /** cached contexts for per-tenant calls, by contextKey */
  tenants: Map<string, PreparedContext>;
  disposed: boolean;
  /** a call is using this isolate */
  busy: boolean;
  /** dispose when the current call releases it (a spare's preparation left it in an unknown state) */
  retire: boolean;
  /** fresh contexts prepared ahead, oldest first */
  spares: Spare[];
  /** a spare is being prepared */
  filling: boolean;
  /** preparing ahead failed once for this isolate: do not try again */
  noSpare: boolean;
  lastUsed: number;
  /** the call that uses it or used it last (what synchronous work on it is marked with: busy-mark.ts) */
  lastCall: number;
  /** heap committed + external when it last became idle (what it holds against the idle budget) */
  heldBytes: number;
  /** used heap + external when it was last measured (live data and garbage not yet collected) */
  usedBytes: number;
  /** used heap + external at which it is collected next */
  collectAt: number;
  /** its used heap reached collectAt: collect it before its next call if it stays idle */
  collectDue: boolean;
  /** the process exposes no gc (ENTRY_COLLECT returned false): never try again */
  cannotCollect: boolean;
}

const pools = new Map<string, IsolateEntry[]>();
/** lifetime counters of this worker, for the memory report (worker-control.ts) */
const counters = { created: 0, recycled: 0, evicted: 0, collected: 0 };
const control = new BroadcastChannel(CONTROL_CHANNEL);
control.unref();

function onCatastrophicError(plugin: PluginIdentity, message: string): void {
  // V8 lost control of an isolate: this process must be drained and replaced (sandbox.md §5.5);
  // the isolate's plugin is the one to blame
  const msg: ControlMessage = { t: 'catastrophic', message: String(message).slice(0, 500), plugin };
  control.postMessage(msg);
}

function discardSpare(spare: Spare | undefined): void {
  spare?.ready.then(releaseContext, () => undefined);
}

export function disposeEntry(entry: IsolateEntry): void {
  if (entry.disposed) return;
  entry.disposed = true;
  const list = pools.get(entry.key);
  if (list) {
    const i = list.indexOf(entry);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) pools.delete(entry.key);
  }
  entry.tenants.clear();
  entry.spares = [];
  try {
    // disposing an isolate whose thread is stuck in V8 waits for it
    if (!entry.isolate.isDisposed) marked(entry.lastCall, housekeepingBudgetMs(entry), () => entry.isolate.dispose());
  } catch {
    // already disposed by isolated-vm itself (memory limit)
  }
}

/** Every isolate of this worker, busy or idle (for the memory report). */
export function allEntries(): IsolateEntry[] {
  return [...pools.values()].flat();
}

/** This worker's lifetime counters (for the memory report). */
export function lifetimeCounters(): typeof counters {
  return { ...counters };
}

export function disposeAll(): void {
  for (const list of [...pools.values()]) for (const entry of [...list]) disposeEntry(entry);
}

const usable = (e: IsolateEntry, memoryMb: number): boolean =>
  !e.busy && !e.disposed && !e.retire && !e.isolate.isDisposed && e.memoryMb === memoryMb;

/** An idle isolate for this task's plugin (marked busy, and used by call `callId`), created (cold) if there is none. */
export function acquireIsolate(task: RunTask, callId: number): { entry: IsolateEntry; cold: boolean } {
  const key = `${task.plugin.name}\u0000${task.plugin.sourceHash}`;
  const list = pools.get(key) ?? [];
  let pick: IsolateEntry | undefined;
  let preferred = false;
  for (const e of list) {
    if (!usable(e, task.limits.memoryMb)) continue;
    preferred = task.contextKey === undefined ? e.spares[0]?.settled === true : e.tenants.has(task.contextKey);
    if (preferred) {
      pick = e;
      break;
    }
    pick ??= e;
  }
  for (const e of [...list]) if (!e.busy && e !== pick && e.memoryMb !== task.limits.memoryMb) disposeEntry(e);
  const grow = task.contextKey === undefined && !preferred && list.length < WARM_ISOLATES_PER_PLUGIN;
  if (pick && !grow) {
    pick.busy = true;
    pick.lastCall = callId;
    return { entry: pick, cold: false };
  }
  const plugin: PluginIdentity = {
    name: task.plugin.name,
    version: task.plugin.version,
    sourceHash: task.plugin.sourceHash,
  };
  const isolate = new ivm.Isolate({
    memoryLimit: task.limits.memoryMb,
    onCatastrophicError: (message: string) => onCatastrophicError(plugin, message),
  });
  counters.created++;
  const entry: IsolateEntry = {
    key,
    isolate,
    memoryMb: task.limits.memoryMb,
    source: task.plugin.source,
    tenants: new Map(),
    disposed: false,
    busy: true,
    retire: false,
    spares: [],
    filling: false,
    noSpare: false,
    lastUsed: Date.now(),
    lastCall: callId,
    heldBytes: 0,
    usedBytes: 0,
    collectAt: firstCollectAt(task.limits.memoryMb),
    collectDue: false,
    cannotCollect: false,
  };
  const updated = pools.get(key) ?? [];
  updated.push(entry);
  pools.set(key, updated);
  return { entry, cold: true };
}

const firstCollectAt = (memoryMb: number): number => Math.min(COLLECT_AT_MB, memoryMb / 4) * 1024 * 1024;

/**
 * A full collection of an idle isolate, run through one of its prepared contexts on this thread
 * (gc() cannot be interrupted, but it only ever has an idle isolate's live data to mark: one
 * context's worth plus whatever the plugin keeps at module level). Returns whether it ran.
 */
function collect(entry: IsolateEntry, via: PreparedContext): boolean {
  if (entry.cannotCollect || entry.busy || entry.disposed || entry.isolate.isDisposed) return false;
  try {
    if (
      marked(entry.lastCall, housekeepingBudgetMs(entry), () => via.entry.applySync(undefined, [ENTRY_COLLECT])) !==
      true
    ) {
      entry.cannotCollect = true;
      return false;
    }
  } catch (e) {
    entry.cannotCollect = true;
    if (classifyIsolateError(e, 'setup').dispose) disposeEntry(entry);
    return false;
  }
  counters.collected++;
  entry.collectDue = false;
  // one collection does not always free every dead context (V8 keeps some a cycle longer): the
  // next one comes once as much again has piled up on top of what this one left
  entry.collectAt = firstCollectAt(entry.memoryMb) + measureHeld(entry);
  return true;
}

/** A context an idle isolate keeps (a ready spare, else a tenant's) that a collection can run through. */
const keptContext = (entry: IsolateEntry): PreparedContext | undefined =>
  entry.spares.find((s) => s.settled)?.context ?? entry.tenants.values().next().value;

/** Collects an idle isolate whose collection is due, through a context it keeps (spare or tenant). */
function collectIfDue(entry: IsolateEntry, via?: PreparedContext): void {
  if (!entry.collectDue) return;
  const context = via ?? keptContext(entry);
  if (context) collect(entry, context);
}

/** A spare context of this isolate prepared with this step timeout (each is handed out once). */
export function takeSpare(entry: IsolateEntry, timeoutMs: number): Promise<PreparedContext> | undefined {
  while (entry.spares.length > 0) {
    const spare = entry.spares.shift() as Spare;
    if (spare.timeoutMs === timeoutMs) return spare.ready;
    discardSpare(spare);
  }
  return undefined;
}

/** Prepares spares one after another while the isolate is idle, up to SPARES_PER_ISOLATE. */
function fillSpares(entry: IsolateEntry, timeoutMs: number): void {
  if (entry.filling || entry.noSpare || entry.busy || entry.disposed || entry.spares.length >= SPARES_PER_ISOLATE)
    return;
  entry.filling = true;
  const ready = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    if (entry.disposed || entry.isolate.isDisposed)
      throw fail('GW_ERR_SANDBOX_UNAVAILABLE', { message: 'the isolate was disposed' });
    // ahead of demand: the module is in V8's compilation cache, the rest is ~1 ms
    return prepareContext(entry.isolate, entry.source, timeoutMs, {
      call: entry.lastCall,
      budgetMs: MAX_MODULE_COMPILE_MS,
    });
  });
  const spare: Spare = { ready, timeoutMs, settled: false };
  entry.spares.push(spare);
  ready.then(
    (prepared) => {
      spare.settled = true;
      spare.context = prepared;
      entry.filling = false;
      if (!entry.busy) collectIfDue(entry, prepared);
      fillSpares(entry, timeoutMs);
      // the spare's context counts against the idle budget
      if (!entry.busy && !entry.filling && !entry.disposed) {
        measureHeld(entry);
        enforceIdleBudget();
      }
    },
    (e: unknown) => {
      entry.filling = false;
      const i = entry.spares.indexOf(spare);
      if (i < 0) return; // a call took it and handles the failure itself
      entry.spares.splice(i, 1);
      entry.noSpare = true;
      if (entry.disposed) return;
      if (classifyIsolateError(e, 'setup').dispose) {
        if (entry.busy) entry.retire = true;
        else disposeEntry(entry);
      }
      enforceIdleBudget();
    },
  );
}

/**
 * Measures an isolate that runs nothing (synchronous: it must not be preparing a spare), records
 * what it holds against the idle budget, and returns its used heap + external allocations.
 */
function measureHeld(entry: IsolateEntry): number {
  try {
    const h = marked(entry.lastCall, housekeepingBudgetMs(entry), () => entry.isolate.getHeapStatisticsSync());
    entry.heldBytes = h.total_heap_size + h.externally_allocated_size;
    entry.usedBytes = h.used_heap_size + h.externally_allocated_size;
  } catch {
    entry.heldBytes = Infinity;
    entry.usedBytes = Infinity; // disposed under our feet
  }
  return entry.usedBytes;
}

/** garbage an idle isolate holds, as far as known: used now over what its last collection left */
const garbageOf = (e: IsolateEntry): number => e.usedBytes - (e.collectAt - firstCollectAt(e.memoryMb));
const idleEntries = (): IsolateEntry[] => allEntries().filter((e) => !e.busy && !e.disposed);
const heldBy = (idle: IsolateEntry[]): number => idle.reduce((sum, e) => sum + (e.disposed ? 0 : e.heldBytes), 0);

/**
 * Brings what idle isolates hold within IDLE_HEAP_BUDGET_MB: first by collecting the isolates that
 * hold garbage (most first; no cold start follows), then by disposing the largest. Disposing first
 * churned: a worker keeping 7–8 plugins of a catalog plugin's size (each ~3.5 MiB committed after
 * a collection, up to COLLECT_AT_MB more before its next) went over the budget every few calls and
 * disposed the isolate of a plugin still in use (measured in commit e04aa59; the current figures are
 * in bench/README.md, "The sandbox alone").
 */
function enforceIdleBudget(): void {
  const budget = IDLE_HEAP_BUDGET_MB * 1024 * 1024;
  const idle = idleEntries();
  let held = heldBy(idle);
  if (held <= budget) return;
  const collectable = idle.filter((e) => !e.filling && !e.cannotCollect && garbageOf(e) >= MIN_GARBAGE_TO_COLLECT);
  for (const e of collectable.sort((a, b) => garbageOf(b) - garbageOf(a))) {
    if (held <= budget) return;
    const context = keptContext(e);
    if (context && collect(e, context)) held = heldBy(idle);
  }
  for (const e of idle.filter((x) => !x.disposed).sort((a, b) => b.heldBytes - a.heldBytes)) {
    if (held <= budget) return;
    held -= e.heldBytes;
    counters.recycled++;
    disposeEntry(e);
  }
}

/** Disposes idle isolates over MAX_IDLE_ISOLATES, least recently used first. */
function evictIdle(): void {
  const idle = idleEntries();
  if (idle.length <= MAX_IDLE_ISOLATES) return;
  idle.sort((a, b) => a.lastUsed - b.lastUsed);
  for (const e of idle.slice(0, idle.length - MAX_IDLE_ISOLATES)) {
    counters.evicted++;
    disposeEntry(e);
  }
}

/**
 * The call using `entry` is over. With `prepareAhead` (a per-call call that ended cleanly), the idle
 * isolate prepares the next fresh context once the current turn of the event loop is done.
 */
export function releaseIsolate(entry: IsolateEntry, prepareAhead: { timeoutMs: number } | undefined): void {
  entry.busy = false;
  entry.lastUsed = Date.now();
  if (entry.disposed) return; // by its call (timeout, memory limit): not a disposal for memory
  if (entry.retire) disposeEntry(entry);
  else {
    const used = measureHeld(entry);
    if (used > RECYCLE_AT_HEAP_SHARE * entry.memoryMb * 1024 * 1024) {
      counters.recycled++;
      disposeEntry(entry);
    } else if (used >= entry.collectAt && !entry.cannotCollect) entry.collectDue = true;
  }
  if (entry.disposed) return;
  // the budget is enforced now, or by the deferred step that first collects this isolate
  let deferred = false;
  if (prepareAhead) {
    fillSpares(entry, prepareAhead.timeoutMs);
    deferred = entry.filling;
  }
  if (!deferred && entry.collectDue) {
    // no spare being prepared (per-tenant, or preparing failed before): collect through a kept
    // context once this turn (the outcome) is done, if the isolate is still idle
    deferred = true;
    setImmediate(() => {
      if (!entry.busy && !entry.disposed) collectIfDue(entry);
      enforceIdleBudget();
    });
  }
  evictIdle();
  if (!deferred) enforceIdleBudget();
}
