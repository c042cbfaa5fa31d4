/**
 * @module contracts/worker-protocol
 * Messages inside the sandbox subsystem: supervisor (host process) ⇄ sandbox process over IPC,
 * and sandbox process main thread ⇄ worker thread over the worker's own MessagePort (messages carry
 * the call's id). Plain data only.
 * A `run` task's `plugin.source` is '' when the sender expects the receiver to have it (see
 * source-cache.ts); the receiver asks with `need-source` when it does not.
 * The host's public contract is `protocol.ts`; nothing outside `sandbox/` uses these.
 */
import type { MessagePort } from 'node:worker_threads';
import type { BridgeRequest, BridgeResult, RunOutcome, RunTask } from './protocol.js';

export type LogLevel = 'info' | 'warn' | 'error';

/** supervisor → sandbox process */
export type ToChild =
  /** `sentAt`: when the host sent it (ms since the epoch): the call's wall-clock deadline counts from then */
  | { t: 'run'; id: number; task: RunTask; sentAt: number }
  | { t: 'http-result'; id: number; reqId: number; result: BridgeResult }
  /** the plugin source of call `id`, asked for by the sandbox process */
  | { t: 'source'; id: number; source: string }
  | { t: 'close'; graceMs: number }
  /** memory figures of the process and of every worker's isolates (benchmarks and tests; see MemoryStats) */
  | { t: 'memory-stats'; id: number }
  /** tests only, honoured when the process runs with WB_SANDBOX_FAULT_INJECTION=1 */
  | { t: 'fault'; fault: SandboxFault };

/** sandbox process → supervisor */
export type FromChild =
  | { t: 'ready'; pid: number }
  | { t: 'outcome'; id: number; outcome: RunOutcome; strike: boolean }
  | { t: 'http'; id: number; reqId: number; request: BridgeRequest }
  /** the run message of call `id` came without its plugin source, and this process does not have it */
  | { t: 'need-source'; id: number }
  | { t: 'log'; id: number; level: LogLevel; message: string }
  | { t: 'memory-stats'; id: number; stats: MemoryStats }
  /**
   * the process must end; `culprit`: the plugin whose isolate brought it down, when known;
   * `culpritCall`: the call whose work did, when known (a worker it wedged: busy-mark.ts)
   */
  | { t: 'fatal'; message: string; culprit?: PluginIdentity; culpritCall?: number };

/** What a call sends from its worker to the sandbox process's main thread. */
export type WorkerMessage =
  /** park: no step is running (the call also parks, as with 'park', without a message of its own) */
  | { t: 'http'; reqId: number; request: BridgeRequest; park?: true }
  | { t: 'log'; level: LogLevel; message: string }
  /** the call's last step ended with ctx.http requests pending: it waits on I/O only */
  | { t: 'park' }
  /** the task came without its plugin source and this worker does not have it */
  | { t: 'need-source' };

/**
 * worker → sandbox process main thread, on the worker's own port (one per worker for its lifetime,
 * handed over once with `WorkerHello`); `id` is the call's (the sandbox process's IPC id)
 */
export type FromWorker = WorkerMessage & { id: number };

/** sandbox process main thread → worker, on the worker's port, for call `id` */
export type ToWorker = { id: number } & (
  { t: 'http-result'; reqId: number; result: BridgeResult } | { t: 'source'; source: string }
);

/** worker → Piscina pool ('message' event), once when the worker starts: the port it talks on */
export interface WorkerHello {
  t: 'worker-port';
  port: MessagePort;
  /** what the worker's thread is doing synchronously in an isolate, and for which call (busy-mark.ts) */
  mark: SharedArrayBuffer;
}

/** What a worker task resolves to: the outcome, and whether it counts as a crash of the plugin. */
export interface WorkerOutcome {
  outcome: RunOutcome;
  strike: boolean;
  /**
   * how many messages the task posted on its port: the outcome goes to the host only once that
   * many have arrived (its log lines and requests first), without a closing message per call
   */
  messages?: number;
  /** with WB_SANDBOX_TRACE_HOPS: when the worker began and ended the call (see RunHops) */
  worker?: { started: number; finished: number };
}

/** Which plugin (and which source of it) a crash is blamed on. */
export interface PluginIdentity {
  name: string;
  version: string;
  sourceHash: string;
}

/** Name of the BroadcastChannel the sandbox process uses to talk to all its workers at once. */
export const CONTROL_CHANNEL = 'workbench-sandbox-control';
export type ControlMessage =
  /** V8 lost control of an isolate of `plugin` (name, version, source hash): the process must go */
  | { t: 'catastrophic'; message: string; plugin?: PluginIdentity }
  | { t: 'dispose-all' }
  | { t: 'exit-worker'; callId: string }
  /** main thread → workers: report your isolates' memory (answered with 'memory-report') */
  | { t: 'memory-query'; seq: number }
  | { t: 'memory-report'; seq: number; report: WorkerMemory };

/**
 * Memory of one worker thread, as its isolate cache sees it. Heap figures are sums over the
 * worker's live isolates of isolated-vm's getHeapStatistics(); `idleHeld` is what its idle
 * isolates hold (heap committed + external), the figure IDLE_HEAP_BUDGET_MB bounds.
 */
export interface WorkerMemory {
  threadId: number;
  isolates: number;
  busy: number;
  usedHeap: number;
  totalHeap: number;
  external: number;
  idleHeld: number;
  /** isolates disposed so far because an idle one was over RECYCLE_AT_HEAP_SHARE or the idle budget */
  recycled: number;
  /** isolates disposed so far because there were more idle ones than MAX_IDLE_ISOLATES */
  evicted: number;
  /** isolates created so far */
  created: number;
  /** full collections of idle isolates so far (dead contexts reclaimed without disposing) */
  collected: number;
  /** the worker thread's own (Node) V8 heap: in use, and committed */
  threadHeapUsed: number;
  threadHeapTotal: number;
}

/**
 * Memory of a sandbox process: internal, for benchmarks and tests only (the supervisor asks over
 * IPC; nothing in an isolate can send or read it). Bytes throughout. Workers busy in a long
 * isolate step do not answer in time and are missing from `workers`.
 */
export interface MemoryStats {
  pid: number;
  rss: number;
  /** the sandbox process main thread's heap: in use, and committed */
  mainHeapUsed: number;
  mainHeapTotal: number;
  workers: WorkerMemory[];
}

/** a fault a test injects into the sandbox process (SandboxOptions.injectFault) */
export type SandboxFault =
  | { kind: 'exit-worker'; callId: string }
  | { kind: 'catastrophic'; culprit?: { name: string; version: string; sourceHash: string } };
