/**
 * @module host/supervisor/sandbox-call
 * One call on the host's side of the sandbox. Its methods read in the order they happen:
 *
 *   admit (closing? arguments too large? quarantined? then a place in the queue, within its
 *     plugin's and its user's shares) → send (to the current sandbox process: child-handle.ts
 *     carries it over IPC and routes what comes back to it) → its ctx.http requests carried out by
 *     the host's handler (the bridge) and answered; its log lines logged → settled (the process's
 *     outcome, re-checked; a strike when its worker thread died) → run again after a crash it did
 *     not cause → its place released.
 *
 * A call that a known culprit's crash failed, and that had asked for nothing but GET, HEAD or
 * OPTIONS requests, runs once more in the new process, with what its first run left of its wall
 * time and of its request budget (child-handle.ts: CallEnd). So a plugin that brings the process
 * down fails its own calls, not the other tenants' reads that happened to be in flight beside it.
 * It is not run again when less than MIN_RERUN_MS of its wall time is left, when it has fewer
 * requests left than it had made, when its caller cancelled, when the gateway is shutting down,
 * or a second time.
 */
import type { BridgeRequest, BridgeResult, HttpHandler, RunOutcome, RunTask } from '../../contracts/protocol.js';
import type { Dispatcher, NoLease } from '../../common/dispatcher.js';
import { failure } from './check-outcome.js';
import type { CallEnd, CarriedCall, ChildHandle } from './child-handle.js';
import type { ProcessKeeper } from './process-keeper.js';
import type { Quarantine } from './quarantine.js';
import type { ResolvedSandboxOptions } from './sandbox-options.js';
import { pluginKey, pluginLabel, type StrikeSync } from './strike-sync.js';

/** wall time a call must have left to be run again after a crash it did not cause */
export const MIN_RERUN_MS = 1_000;
const MAX_LOG_LINES_PER_CALL = 200;

/**
 * Methods that by HTTP's definition (RFC 9110 §9.2.1) ask for no change on the server: a call that
 * made only requests of these may be run again without doing anything twice.
 */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the sandbox counts of its calls (SandboxStats). */
export interface CallCounts {
  refused: { queueFull: number; pluginShare: number; userShare: number };
  completed: number;
  reruns: number;
}

/** What a call needs of the sandbox it runs in (create-sandbox.ts builds it). */
export interface CallSupervision {
  readonly options: ResolvedSandboxOptions;
  readonly quarantine: Quarantine;
  readonly strikes: StrikeSync;
  /** calls in flight and their queue, per plugin and per user */
  readonly dispatcher: Dispatcher;
  readonly perPluginQueue: number;
  readonly perUserQueue: number;
  readonly processes: ProcessKeeper;
  readonly counts: CallCounts;
}

export class SandboxCall implements CarriedCall {
  readonly #sandbox: CallSupervision;
  readonly #task: RunTask;
  readonly #http: HttpHandler;
  readonly #signal: AbortSignal | undefined;
  /** the task as sent to the current process (a second run's limits are what the first left) */
  #sent: RunTask;
  /** ctx.http requests the call asked for in its current process */
  requests = 0;
  /** one of them had a method outside SAFE_METHODS (or none that could be read) */
  unsafe = false;
  #logLines = 0;

  constructor(sandbox: CallSupervision, task: RunTask, http: HttpHandler, signal: AbortSignal | undefined) {
    this.#sandbox = sandbox;
    this.#task = task;
    this.#sent = task;
    this.#http = http;
    this.#signal = signal;
  }

  /** Never rejects. */
  async run(): Promise<RunOutcome> {
    try {
      return await this.#admitAndRun();
    } catch (e) {
      this.#sandbox.options.logger.error(
        { err: e instanceof Error ? e.message : String(e) },
        'sandbox run failed unexpectedly',
      );
      return failure('GW_ERR_SANDBOX_UNAVAILABLE', 'the sandbox failed unexpectedly');
    }
  }

  async #admitAndRun(): Promise<RunOutcome> {
    const early = this.#refusedAtTheDoor();
    if (early) return early;
    const { dispatcher, counts } = this.#sandbox;
    const task = this.#task;
    const lease = await dispatcher.acquire(task.plugin.name, this.#signal, task.user);
    if (typeof lease === 'string') return this.#refusedByTheQueue(lease);
    try {
      return await this.#runAdmitted();
    } finally {
      lease.release();
      counts.completed++;
    }
  }

  #refusedAtTheDoor(): RunOutcome | undefined {
    const task = this.#task;
    if (this.#sandbox.processes.closing) return failure('GW_ERR_SANDBOX_UNAVAILABLE', 'the sandbox is shutting down');
    if (Buffer.byteLength(task.argsJson, 'utf8') > task.limits.maxArgsBytes) {
      return failure(
        'GW_ERR_SANDBOX_ARGS_TOO_LARGE',
        `the arguments are larger than ${task.limits.maxArgsBytes} bytes`,
      );
    }
    return this.#quarantined();
  }

  #quarantined(): RunOutcome | undefined {
    const task = this.#task;
    const { quarantine, options } = this.#sandbox;
    const until = quarantine.until(pluginKey(task.plugin));
    return until === undefined
      ? undefined
      : failure(
          'GW_ERR_SANDBOX_QUARANTINED',
          `plugin ${pluginLabel(task.plugin)} crashed the sandbox ${options.quarantineAfterCrashes} times and is suspended until ${new Date(until).toISOString()}`,
        );
  }

  #refusedByTheQueue(lease: NoLease): RunOutcome {
    const {
      counts: { refused },
      perUserQueue,
      perPluginQueue,
      options,
    } = this.#sandbox;
    const task = this.#task;
    switch (lease) {
      case 'cancelled':
        return failure(
          'GW_ERR_SANDBOX_CANCELLED',
          'cancelled while waiting for a sandbox slot; the call never started',
        );
      case 'closed':
        return failure('GW_ERR_SANDBOX_UNAVAILABLE', 'the sandbox is shutting down');
      case 'user-queue-full':
        refused.userShare++;
        return failure(
          'GW_ERR_SANDBOX_OVERLOADED',
          `this user's share of the sandbox queue is full: ${perUserQueue} of its calls are already waiting, besides those running; retry once some have finished`,
        );
      case 'plugin-queue-full':
        refused.pluginShare++;
        return failure(
          'GW_ERR_SANDBOX_OVERLOADED',
          `plugin ${task.plugin.name}'s share of the sandbox queue is full: ${perPluginQueue} of its calls are already waiting; retry later`,
        );
      case 'queue-full':
        refused.queueFull++;
        return failure('GW_ERR_SANDBOX_OVERLOADED', `the sandbox queue is full (${options.maxQueue} calls waiting)`);
    }
  }

  /** Admitted: quarantined meanwhile? Else to the current process, and once more if a crash allows. */
  async #runAdmitted(): Promise<RunOutcome> {
    const late = this.#quarantined();
    if (late) return late;
    const { processes } = this.#sandbox;
    let handle: ChildHandle;
    try {
      handle = await processes.ensure();
    } catch (e) {
      const { shuttingDown } = processes;
      return failure(
        'GW_ERR_SANDBOX_UNAVAILABLE',
        shuttingDown
          ? 'the sandbox is shutting down'
          : `the sandbox could not start: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    const sentAt = performance.now();
    const first = await this.#send(handle, this.#task);
    if (!first.rerun || this.#signal?.aborted || processes.shuttingDown) return first.outcome;
    return (await this.#runAgain(sentAt, first.rerun.requests)) ?? first.outcome;
  }

  /** Sends the call to `handle`'s process; resolves when it settles there (or the process dies). */
  async #send(handle: ChildHandle, task: RunTask): Promise<CallEnd> {
    this.#sent = task;
    this.requests = 0;
    this.unsafe = false;
    this.#logLines = 0;
    const end = await handle.call(task, this);
    if (end.strike && !handle.exited && !this.#sandbox.processes.shuttingDown)
      this.#sandbox.strikes.strike(task.plugin); // a worker thread died
    return end;
  }

  /**
   * A ctx.http request of the call, carried out by the host's handler (the bridge); `answer`
   * writes the result to the process. The bridge holds the response body in its buffer budget
   * until the answer is written (`written`).
   */
  onHttp(request: BridgeRequest, answer: (result: BridgeResult, written: () => void) => void): void {
    this.requests++;
    const method: unknown = (request as { method?: unknown } | null)?.method;
    if (typeof method !== 'string' || !SAFE_METHODS.has(method.toUpperCase())) this.unsafe = true;
    let written: () => void = () => undefined;
    const delivered = new Promise<void>((resolve) => (written = resolve));
    void Promise.resolve()
      .then(() => this.#http(request, delivered))
      .catch((): BridgeResult => ({
        ok: false,
        error: { code: 'GW_ERR_BRIDGE_NETWORK', message: 'the request failed' },
      }))
      .then((result) => answer(result, written));
  }

  /** A log line of the plugin's (at most MAX_LOG_LINES_PER_CALL per run). */
  onLog(level: unknown, message: unknown): void {
    if (++this.#logLines > MAX_LOG_LINES_PER_CALL) return;
    const task = this.#sent;
    const at = level === 'warn' || level === 'error' ? level : 'info';
    this.#sandbox.options.logger[at](
      { plugin: task.plugin.name, tool: task.tool, callId: task.callId, source: 'plugin' },
      String(message).slice(0, 2000),
    );
  }

  /**
   * Runs the call again after a crash it did not cause, in the process that replaces the dead one,
   * within what is left of its wall time and request budget (`sentAt`: when its first run was
   * sent, on the monotonic clock). Undefined when it should not: too little time left, fewer
   * requests left than the first run had made (a second run starts from the beginning and would
   * most likely run out), no process, shutdown, the caller cancelled, or its plugin quarantined
   * meanwhile. The first run's requests still in flight on the host are not stopped: their answers
   * are dropped when they come.
   */
  async #runAgain(sentAt: number, requestsMade: number): Promise<RunOutcome | undefined> {
    const { processes, quarantine, counts, options } = this.#sandbox;
    const task = this.#task;
    const requestsLeft = task.limits.maxRequestsPerCall - requestsMade;
    if (requestsLeft < requestsMade) return undefined;
    let handle: ChildHandle;
    try {
      handle = await processes.ensure();
    } catch {
      return undefined;
    }
    const wallMsLeft = Math.floor(task.limits.wallMsPerCall - (performance.now() - sentAt));
    if (
      wallMsLeft < MIN_RERUN_MS ||
      processes.shuttingDown ||
      this.#signal?.aborted ||
      quarantine.until(pluginKey(task.plugin)) !== undefined
    )
      return undefined;
    counts.reruns++;
    options.logger.warn(
      {
        plugin: pluginLabel(task.plugin),
        tool: task.tool,
        callId: task.callId,
        sandboxPid: handle.pid,
        wallMsLeft,
        requestsLeft,
      },
      'running a call again: another plugin brought its sandbox process down before it had changed anything',
    );
    const outcome = (
      await this.#send(handle, {
        ...task,
        limits: { ...task.limits, wallMsPerCall: wallMsLeft, maxRequestsPerCall: requestsLeft },
      })
    ).outcome;
    if (outcome.ok) return outcome;
    // its limits are what the first run left, not the policy's: say so
    const why = `this was a second run of the call, after another plugin brought the sandbox process down during the first; it had ${wallMsLeft} ms and ${requestsLeft} requests left`;
    return { ...outcome, error: { ...outcome.error, message: `${outcome.error.message} (${why})` } };
  }
}
