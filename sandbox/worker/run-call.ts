/**
 * @module sandbox/worker/run-call
 * Runs one plugin call in a worker thread. Every host→isolate call has a timeout (cpuMsPerCall)
 * and is made only while the call is open: the `closed` flag is set BEFORE any dispose and checked
 * synchronously before every `apply`, so nothing is ever delivered into a disposed isolate
 * (sandbox.md §1.7: that is what aborted processes). The wall-clock deadline disposes the isolate,
 * which also stops promises that never settle and pending ctx.http calls.
 *
 * The isolate goes back to its pool only once no step of the call is running any more: the
 * outcome can be out while the step that produced it is still draining plugin microtasks (up to
 * the step timeout), and the next user of the isolate calls into it synchronously (preparing a
 * context), which must not wait on the isolate's lock while this worker's other calls stall. A
 * step that fails after the call ended retires the isolate.
 *
 * Where a step runs: on this worker's own thread (isolated-vm's synchronous apply) when the call is
 * the only one in the worker and its plugin has never had a slow step here; otherwise on
 * isolated-vm's thread pool, which leaves the worker free for its other calls while the step runs.
 * The hand-off to the pool and back costs more than most steps (~0.1 ms of CPU and two thread
 * wake-ups per step). A step on the worker's thread blocks it: it can only hold up calls that
 * arrive meanwhile (never one already in the worker), for at most the step timeout, and once per
 * plugin and worker: a step over SYNC_STEP_MS moves that plugin's steps in this worker to the pool
 * for good. On the worker's thread the bootstrap queues the step's bridge messages (requests, log
 * lines, the result) and they are taken with one more synchronous call as the step returns, before
 * its failure if it failed: as on the pool, a result sent before its step failed stands.
 *
 * A probe (`task.probe`) prepares its context like a call (the same compile, evaluate and limits)
 * and then only asks the bootstrap which tools the module exports no function for.
 *
 * A ctx.http request over a size limit is refused here, never posted on (the bootstrap refuses it
 * first, but it is untrusted-side code): its text is measured before it is parsed, then its parts.
 *
 * A response body that is not UTF-8 text comes from the host as base64 (the IPC is JSON); it goes
 * into the isolate as an ArrayBuffer, decoded here and copied in by isolated-vm, which counts it
 * against the isolate's memory limit (an ArrayBuffer that does not fit fails the call with
 * GW_ERR_SANDBOX_MEMORY, as any allocation over the limit does).
 *
 * One file on purpose (over 400 lines): the worker side of a call is one object, IsolateCall, whose
 * methods run in the order written (docs/architecture.md); splitting it across files would break
 * the order a reader follows, and its state (closed, steps, forwarded requests) is shared by all.
 */
import ivm from 'isolated-vm';
import type { ToWorker, WorkerMessage, WorkerOutcome } from '../../contracts/worker-protocol.js';
import type { BridgeRequest, BridgeResult, RunStats, RunTask, SandboxErrorCode } from '../../contracts/protocol.js';
import { jsonDepth, MAX_RESULT_DEPTH } from '../../common/json-depth.js';
import { maxRequestTextChars, oversizedRequest } from '../../contracts/request-limits.js';
import { ENTRY_DELIVER, ENTRY_PROBE, ENTRY_START, ENTRY_TAKE, LOG_LEVELS } from '../isolate/bootstrap-source.js';
import { classifyIsolateError, classifyReport, cleanMessage, type Classified } from './classify-error.js';
import {
  acquireIsolate,
  disposeEntry,
  housekeepingBudgetMs,
  MAX_TENANT_CONTEXTS,
  releaseIsolate,
  takeSpare,
  type IsolateEntry,
} from './isolate-cache.js';
import { MAX_MODULE_COMPILE_MS, prepareContext, releaseContext, type PreparedContext } from './prepare-context.js';
import { marked } from './busy-mark.js';

const MAX_LOG_LINES = 100;

/**
 * A step that took longer than this (ms, wall clock) on the worker's thread moves its plugin's
 * steps in this worker to isolated-vm's thread pool. Plugin steps take ~0.01–1 ms.
 */
export const SYNC_STEP_MS = 20;
/**
 * A step on the worker's thread may run for its step timeout (cpuMsPerCall), but it is taken to
 * have wedged the worker (busy-mark.ts) once it has held the thread this long past its call's
 * wall-clock deadline: the call's own deadline cannot fire while the thread is held, and the host's
 * watchdog (5 s past the deadline) would blame every plugin in flight.
 */
const STEP_OVERRUN_MS = 1000;
/** plugins (isolate pool keys) whose steps run on the thread pool in this worker */
const slowSteps = new Set<string>();
const MAX_SLOW_STEP_KEYS = 1024;
/** calls running in this worker */
let callsHere = 0;

function markSlowSteps(key: string): void {
  if (slowSteps.size >= MAX_SLOW_STEP_KEYS) slowSteps.clear();
  slowSteps.add(key);
}

function cpuMsOf(entry: IsolateEntry): number {
  try {
    return Number(entry.isolate.cpuTime) / 1e6;
  } catch {
    return 0;
  }
}

/**
 * The most a preparation's synchronous part may hold the worker's thread: it compiles the module
 * (at most MAX_MODULE_COMPILE_MS of CPU, then it is refused; its wall time stretches on a busy
 * machine), runs the setup script (~0.05 ms) and evaluates the module for at most SYNC_EVALUATE_MS.
 */
const PREPARE_MAX_MS = 5 * MAX_MODULE_COMPILE_MS;

async function contextFor(
  entry: IsolateEntry,
  task: RunTask,
  callId: number,
  remainingMs: number,
): Promise<{ prepared: PreparedContext; shared: boolean }> {
  const key = task.contextKey;
  // past the call's deadline by STEP_OVERRUN_MS (as a step), or past what its work can take, the
  // preparation has wedged the worker
  // (a collection of the isolate's live heap may run in it too: as long as housekeeping may take)
  const mark = {
    call: callId,
    budgetMs: Math.min(
      Math.max(PREPARE_MAX_MS, housekeepingBudgetMs(entry)),
      Math.max(MAX_MODULE_COMPILE_MS, remainingMs + STEP_OVERRUN_MS),
    ),
  };
  if (key === undefined) {
    // a context prepared ahead of demand (never used by any call), or a new one made now
    const ready =
      takeSpare(entry, task.limits.cpuMsPerCall) ??
      prepareContext(entry.isolate, task.plugin.source, task.limits.cpuMsPerCall, mark);
    return { prepared: await ready, shared: false };
  }
  const found = entry.tenants.get(key);
  if (found) return { prepared: found, shared: true };
  const prepared = await prepareContext(entry.isolate, task.plugin.source, task.limits.cpuMsPerCall, mark);
  if (entry.tenants.size >= MAX_TENANT_CONTEXTS) {
    const [oldestKey, oldest] = entry.tenants.entries().next().value as [string, PreparedContext];
    entry.tenants.delete(oldestKey);
    releaseContext(oldest);
  }
  entry.tenants.set(key, prepared);
  return { prepared, shared: true };
}

/** The worker's port as one call sees it: what it posts carries its id and is counted. */
export interface TaskPort {
  /** the call's id (the sandbox process's), which its synchronous work is marked with (busy-mark.ts) */
  readonly id: number;
  /**
   * when the host sent the call (ms since the epoch; now when absent): its wall-clock deadline counts
   * from then, as the host's watchdog does, not from when a worker took it up
   */
  readonly sentAt?: number;
  post(msg: WorkerMessage): void;
  on(event: 'message', listener: (m: ToWorker) => void): void;
}

/**
 * A body's bytes from their base64, as an argument that becomes an ArrayBuffer in the isolate: the
 * buffer decoded here is handed over whole (transferOut) and copied once, into the isolate's own
 * allocator.
 */
function bytesInto(base64: string): ivm.Copy<ArrayBuffer> {
  const buffer = new ArrayBuffer(Buffer.byteLength(base64, 'base64'));
  const written = Buffer.from(buffer).write(base64, 'base64');
  const bytes = written === buffer.byteLength ? buffer : buffer.slice(0, written);
  return new ivm.ExternalCopy(bytes, { transferOut: true }).copyInto({ release: true });
}

export async function runCall(task: RunTask, port: TaskPort): Promise<WorkerOutcome> {
  callsHere++;
  try {
    return await new IsolateCall(task, port).run();
  } finally {
    callsHere--;
  }
}

/**
 * One call in its isolate, its methods in the order they happen: refused at the door (arguments
 * too large, no time left) → isolate acquired and the deadline armed → context prepared and the
 * handler started → its bridge messages forwarded (requests, log lines) and the host's answers
 * delivered → its result or failure taken → context and isolate given back → the outcome.
 */
class IsolateCall {
  readonly #task: RunTask;
  readonly #port: TaskPort;
  readonly #limits: RunTask['limits'];
  readonly #t0: number;
  /** ms the call waited between the host sending it and this worker taking it up */
  readonly #waited: number;
  /** the call's wall-clock deadline, on the monotonic clock */
  readonly #deadline: number;
  readonly #maxRequestText: number;
  #entry!: IsolateEntry;
  #cold = false;
  #cpu0 = 0;
  /** set BEFORE any dispose and checked synchronously before every apply */
  #closed = false;
  #requests = 0;
  #logLines = 0;
  #forwardedTotal = 0;
  #prepared: PreparedContext | undefined;
  #shared = false;
  #failure: Classified | undefined;
  #resultJson: string | undefined;
  /** ctx.http requests posted to the host and not answered yet */
  readonly #forwarded = new Set<number>();
  #parked = false;
  /** host→isolate steps running (the bridge callback may be delivered before or after its step ends) */
  #steps = 0;
  /** a step failed after the call had ended: the isolate is in an unknown state */
  #lateFailure = false;
  /** runs once no step is running (set when the call has ended) */
  #whenIdle: (() => void) | undefined;
  #cpuAtDisposal: number | undefined;
  #settle: () => void = () => undefined;
  readonly #settled = new Promise<void>((resolve) => (this.#settle = resolve));

  constructor(task: RunTask, port: TaskPort) {
    this.#task = task;
    this.#port = port;
    this.#limits = task.limits;
    this.#t0 = performance.now();
    // the wall-clock deadline counts from when the host sent the call (its watchdog does too): time
    // spent waiting here for a CPU slot is the call's time
    // (measured once against the system clock, both processes' own, then on the monotonic one)
    this.#waited = Math.min(this.#limits.wallMsPerCall, Math.max(0, Date.now() - (port.sentAt ?? Date.now())));
    this.#deadline = this.#t0 + this.#limits.wallMsPerCall - this.#waited;
    this.#maxRequestText = maxRequestTextChars(this.#limits.maxRequestBodyBytes);
  }

  async run(): Promise<WorkerOutcome> {
    const refused = this.#refusedAtTheDoor();
    if (refused) return refused;
    ({ entry: this.#entry, cold: this.#cold } = acquireIsolate(this.#task, this.#port.id));
    this.#cpu0 = cpuMsOf(this.#entry);
    const limits = this.#limits;
    const wallTimer = setTimeout(
      () =>
        this.#fail(
          'GW_ERR_SANDBOX_TIMEOUT',
          `the call exceeded its wall-clock deadline of ${limits.wallMsPerCall} ms`,
          true,
        ),
      Math.max(0, this.#remaining()),
    );
    this.#port.on('message', (m: ToWorker) => this.#onAnswer(m));
    void this.#prepareAndStart();
    await this.#settled;
    clearTimeout(wallTimer);
    this.#releaseContext();
    const stats = this.#stats();
    if (this.#steps === 0) this.#giveBackIsolate();
    else this.#whenIdle = () => this.#giveBackIsolate();
    return this.#outcome(stats);
  }

  #remaining(): number {
    return this.#deadline - performance.now();
  }

  #refusedAtTheDoor(): WorkerOutcome | undefined {
    const limits = this.#limits;
    if (Buffer.byteLength(this.#task.argsJson, 'utf8') > limits.maxArgsBytes) {
      return {
        outcome: {
          ok: false,
          error: {
            code: 'GW_ERR_SANDBOX_ARGS_TOO_LARGE',
            message: `the arguments are larger than ${limits.maxArgsBytes} bytes`,
          },
          stats: { wallMs: 0, cpuMs: 0, requests: 0, coldStart: false },
        },
        strike: false,
      };
    }
    if (this.#remaining() <= 0) {
      const waited = this.#waited;
      // it spent its whole time waiting for a worker: nothing of it runs
      return {
        outcome: {
          ok: false,
          error: {
            code: 'GW_ERR_SANDBOX_TIMEOUT',
            message: `the call exceeded its wall-clock deadline of ${limits.wallMsPerCall} ms waiting for a sandbox worker`,
          },
          stats: { wallMs: Math.round(waited), cpuMs: 0, requests: 0, coldStart: false },
        },
        strike: false,
      };
    }
    return undefined;
  }

  /** Prepares (or finds) the call's context, then starts the handler (or the probe) in it. */
  async #prepareAndStart(): Promise<void> {
    let prepared: PreparedContext;
    try {
      ({ prepared, shared: this.#shared } = await contextFor(
        this.#entry,
        this.#task,
        this.#port.id,
        this.#remaining(),
      ));
      this.#prepared = prepared;
    } catch (e) {
      if (!this.#closed) this.#finish(classifyIsolateError(e, 'setup'));
      return;
    }
    if (this.#closed) return;
    prepared.router.current = (kind, id, payload) => this.#onBridge(kind, id, payload);
    const task = this.#task;
    const limits = this.#limits;
    if (task.probe) {
      this.#step(prepared, ENTRY_PROBE, [prepared.namespace.derefInto(), JSON.stringify(task.probe)]);
      return;
    }
    const limitsJson = JSON.stringify({
      maxResultBytes: limits.maxResultBytes,
      maxRequestsPerCall: limits.maxRequestsPerCall,
      maxRequestBodyBytes: limits.maxRequestBodyBytes,
      memoryMb: limits.memoryMb,
      // what is left of the call's wall-clock deadline as the handler starts (ctx.limits.timeLeftMs)
      wallMsLeft: Math.max(0, Math.floor(this.#remaining())),
    });
    this.#step(prepared, ENTRY_START, [
      prepared.namespace.derefInto(),
      task.tool,
      task.argsJson,
      JSON.stringify(task.config ?? {}),
      limitsJson,
    ]);
  }

  /**
   * Runs one host→isolate step (the module doc says where). On the worker's thread the bootstrap
   * queues the step's bridge messages and they are taken as it returns, before its failure if any.
   */
  #step(p: PreparedContext, op: number, args: unknown[]): void {
    const entry = this.#entry;
    const limits = this.#limits;
    const port = this.#port;
    this.#steps++;
    if (callsHere > 1 || slowSteps.has(entry.key)) {
      p.entry.apply(undefined, [op, 0, ...args], { timeout: limits.cpuMsPerCall }).then(
        () => {
          this.#stepEnded();
          this.#maybePark();
        },
        (error: unknown) => this.#stepEnded({ error }),
      );
      return;
    }
    const started = performance.now();
    // a step that holds this thread past the call's deadline by STEP_OVERRUN_MS has wedged it
    const budget = Math.min(limits.cpuMsPerCall, Math.max(0, this.#remaining()) + STEP_OVERRUN_MS);
    let failed: { error: unknown } | undefined;
    try {
      marked(port.id, budget, () => p.entry.applySync(undefined, [op, 1, ...args], { timeout: limits.cpuMsPerCall }));
    } catch (error) {
      failed = { error };
    }
    if (performance.now() - started > SYNC_STEP_MS) markSlowSteps(entry.key);
    let queued: unknown;
    try {
      queued = marked(port.id, budget, () =>
        p.entry.applySync(undefined, [ENTRY_TAKE], { timeout: limits.cpuMsPerCall, result: { copy: true } }),
      );
    } catch {
      // the isolate is gone (memory limit): its messages with it
    }
    this.#stepEnded(failed, Array.isArray(queued) ? queued : []);
    if (!failed) this.#maybePark();
  }

  #stepEnded(failed?: { error: unknown }, queued: unknown[] = []): void {
    this.#steps--;
    // a step's messages come before its failure (a result sent before the step failed stands)
    for (const m of queued) if (Array.isArray(m)) this.#onBridge(m[0], m[1], m[2]);
    if (failed) {
      if (!this.#closed) this.#finish(classifyIsolateError(failed.error, 'run'));
      else this.#lateFailure = true;
    }
    if (this.#steps === 0 && this.#whenIdle) {
      const run = this.#whenIdle;
      this.#whenIdle = undefined;
      run();
    }
  }

  // after a step: if the call now only waits on ctx.http, say so (the host parks its slot)
  #maybePark(): void {
    if (this.#closed || this.#parked || this.#forwarded.size === 0) return;
    this.#parked = true;
    const msg: WorkerMessage = { t: 'park' };
    this.#port.post(msg);
  }

  /** What the bootstrap sends through the bridge: a request, a log line, the result or a failure. */
  #onBridge(kind: unknown, id: unknown, payload: unknown): void {
    if (this.#closed || typeof id !== 'number' || typeof payload !== 'string') return;
    if (kind === 'http') this.#forwardRequest(id, payload);
    else if (kind === 'log') this.#forwardLog(id, payload);
    else if (kind === 'done') this.#takeResult(payload);
    else if (kind === 'fail') this.#takeFailure(payload);
  }

  #forwardRequest(id: number, payload: string): void {
    const limits = this.#limits;
    if (++this.#requests > limits.maxRequestsPerCall) {
      this.#refuse(id, {
        ok: false,
        error: {
          code: 'GW_ERR_BRIDGE_TOO_MANY_REQUESTS',
          message: `a call may make at most ${limits.maxRequestsPerCall} requests`,
        },
      });
      return;
    }
    const maxRequestText = this.#maxRequestText;
    if (payload.length > maxRequestText) {
      this.#refuse(id, {
        ok: false,
        error: {
          code: 'GW_ERR_BRIDGE_BAD_REQUEST',
          message: `the request is larger than the limits allow (${maxRequestText} characters of JSON)`,
        },
      });
      return;
    }
    let request: BridgeRequest;
    try {
      request = JSON.parse(payload) as BridgeRequest;
    } catch {
      this.#refuse(id, { ok: false, error: { code: 'GW_ERR_BRIDGE_BAD_REQUEST', message: 'malformed request' } });
      return;
    }
    const oversized =
      typeof request === 'object' && request !== null
        ? oversizedRequest(request, limits.maxRequestBodyBytes)
        : undefined;
    if (oversized !== undefined) {
      this.#refuse(id, { ok: false, error: { code: 'GW_ERR_BRIDGE_BAD_REQUEST', message: oversized } });
      return;
    }
    this.#forwarded.add(id);
    this.#forwardedTotal++;
    const msg: WorkerMessage = { t: 'http', reqId: id, request };
    if (this.#steps === 0 && !this.#parked) {
      // the request came after its step ended: the call now waits on I/O only
      this.#parked = true;
      msg.park = true;
    }
    this.#port.post(msg);
  }

  #forwardLog(id: number, payload: string): void {
    if (++this.#logLines > MAX_LOG_LINES) return;
    const level = LOG_LEVELS[id] ?? 'info';
    const msg: WorkerMessage = { t: 'log', level, message: cleanMessage(payload) };
    this.#port.post(msg);
  }

  /** An answer from the host to a request this call forwarded. */
  #onAnswer(m: ToWorker): void {
    if (this.#closed || m?.t !== 'http-result' || !this.#forwarded.delete(m.reqId)) return;
    this.#deliver(m.reqId, m.result);
  }

  #deliver(reqId: number, result: BridgeResult): void {
    const p = this.#prepared;
    const entry = this.#entry;
    if (this.#closed || !p || entry.disposed || entry.isolate.isDisposed) return;
    this.#parked = false; // the sandbox process resumed the call before it sent this answer
    if (result.ok && typeof result.response.bodyBase64 === 'string') {
      // the bytes go in as an ArrayBuffer of their own, beside the rest of the answer
      const bytes = bytesInto(result.response.bodyBase64);
      const { bodyBase64: _inBytes, ...response } = result.response;
      this.#step(p, ENTRY_DELIVER, [reqId, JSON.stringify({ ok: true, response }), bytes]);
    } else this.#step(p, ENTRY_DELIVER, [reqId, JSON.stringify(result)]);
  }

  /** an answer made here (not by the host) goes in on a later turn: never inside the step that asked */
  #refuse(reqId: number, result: BridgeResult): void {
    void setImmediate(() => this.#deliver(reqId, result));
  }

  #takeResult(payload: string): void {
    const limits = this.#limits;
    const bytes = Buffer.byteLength(payload, 'utf8');
    if (bytes > limits.maxResultBytes)
      this.#fail(
        'GW_ERR_SANDBOX_RESULT_TOO_LARGE',
        `the result is ${bytes} bytes; the limit is ${limits.maxResultBytes}`,
      );
    else if (jsonDepth(payload) > MAX_RESULT_DEPTH)
      this.#fail('GW_ERR_SANDBOX_RESULT_INVALID', `the result is nested deeper than ${MAX_RESULT_DEPTH} levels`);
    else this.#finish(undefined, payload);
  }

  #takeFailure(payload: string): void {
    let report: Record<string, unknown> = {};
    try {
      report = JSON.parse(payload) as Record<string, unknown>;
    } catch {
      // keep the generic message
    }
    this.#finish(classifyReport(report));
  }

  #finish(error: Classified | undefined, json?: string): void {
    if (this.#closed) return;
    this.#closed = true; // before any dispose: no apply may follow
    this.#failure = error;
    this.#resultJson = json;
    if (error?.dispose) {
      this.#cpuAtDisposal = cpuMsOf(this.#entry); // a disposed isolate reports no CPU time
      disposeEntry(this.#entry);
    }
    this.#settle();
  }

  #fail(code: SandboxErrorCode, message: string, dispose = false): void {
    this.#finish({ code, message, dispose });
  }

  #releaseContext(): void {
    const prepared = this.#prepared;
    const failure = this.#failure;
    const task = this.#task;
    const entry = this.#entry;
    if (!prepared) return;
    prepared.router.current = null;
    if (!this.#shared) releaseContext(prepared);
    else if (
      failure &&
      task.contextKey !== undefined &&
      entry.tenants.get(task.contextKey) === prepared &&
      failure.code !== 'GW_ERR_SANDBOX_HANDLER_THREW'
    ) {
      // a tenant context that timed out or broke is not reused
      entry.tenants.delete(task.contextKey);
      releaseContext(prepared);
    }
  }

  #stats(): RunStats {
    return {
      wallMs: Math.round(performance.now() - this.#t0),
      cpuMs: Math.round(Math.max(0, (this.#cpuAtDisposal ?? cpuMsOf(this.#entry)) - this.#cpu0)),
      requests: this.#forwardedTotal,
      coldStart: this.#cold,
    };
  }

  /** The isolate goes back to its pool once no step of the call is running any more (module doc). */
  #giveBackIsolate(): void {
    const entry = this.#entry;
    const task = this.#task;
    // a probe leaves no isolate behind: start-up holds no more memory than before (at most one
    // isolate per plugin being probed, for a moment); the first call starts cold as it always did
    if (this.#lateFailure || (task.probe && this.#cold)) entry.retire = true;
    releaseIsolate(
      entry,
      task.contextKey === undefined && !this.#failure?.dispose ? { timeoutMs: this.#limits.cpuMsPerCall } : undefined,
    );
  }

  #outcome(stats: RunStats): WorkerOutcome {
    const failure = this.#failure;
    if (failure)
      return { outcome: { ok: false, error: { code: failure.code, message: failure.message }, stats }, strike: false };
    return { outcome: { ok: true, resultJson: this.#resultJson ?? 'null', stats }, strike: false };
  }
}
