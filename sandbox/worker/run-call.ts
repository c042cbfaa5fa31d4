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
 */
import ivm from 'isolated-vm';
import type { ToWorker, WorkerMessage, WorkerOutcome } from '../../contracts/worker-protocol.js';
import type { BridgeRequest, BridgeResult, RunTask, SandboxErrorCode } from '../../contracts/protocol.js';
import { jsonDepth, MAX_RESULT_DEPTH } from '../../common/json-depth.js';
import { maxRequestTextChars, oversizedRequest } from '../../contracts/request-limits.js';
import { ENTRY_DELIVER, ENTRY_PROBE, ENTRY_START, ENTRY_TAKE, LOG_LEVELS } from '../isolate/bootstrap-source.js';
import { classifyIsolateError, classifyReport, cleanMessage, type Classified } from './classify-error.js';
import { acquireIsolate, disposeEntry, housekeepingBudgetMs, MAX_TENANT_CONTEXTS, releaseIsolate, takeSpare, type IsolateEntry } from './isolate-cache.js';
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

async function contextFor(entry: IsolateEntry, task: RunTask, callId: number, remainingMs: number): Promise<{ prepared: PreparedContext; shared: boolean }> {
  const key = task.contextKey;
  // past the call's deadline by STEP_OVERRUN_MS (as a step), or past what its work can take, the
  // preparation has wedged the worker
  // (a collection of the isolate's live heap may run in it too: as long as housekeeping may take)
  const mark = { call: callId, budgetMs: Math.min(Math.max(PREPARE_MAX_MS, housekeepingBudgetMs(entry)), Math.max(MAX_MODULE_COMPILE_MS, remainingMs + STEP_OVERRUN_MS)) };
  if (key === undefined) {
    // a context prepared ahead of demand (never used by any call), or a new one made now
    const ready = takeSpare(entry, task.limits.cpuMsPerCall) ?? prepareContext(entry.isolate, task.plugin.source, task.limits.cpuMsPerCall, mark);
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
    return await runOneCall(task, port);
  } finally {
    callsHere--;
  }
}

async function runOneCall(task: RunTask, port: TaskPort): Promise<WorkerOutcome> {
  const t0 = performance.now();
  const { limits } = task;
  // the wall-clock deadline counts from when the host sent the call (its watchdog does too): time
  // spent waiting here for a CPU slot is the call's time
  // (measured once against the system clock, both processes' own, then on the monotonic one)
  const waited = Math.min(limits.wallMsPerCall, Math.max(0, Date.now() - (port.sentAt ?? Date.now())));
  const deadline = t0 + limits.wallMsPerCall - waited;
  const remaining = (): number => deadline - performance.now();
  if (Buffer.byteLength(task.argsJson, 'utf8') > limits.maxArgsBytes) {
    return {
      outcome: { ok: false, error: { code: 'GW_ERR_SANDBOX_ARGS_TOO_LARGE', message: `the arguments are larger than ${limits.maxArgsBytes} bytes` }, stats: { wallMs: 0, cpuMs: 0, requests: 0, coldStart: false } },
      strike: false,
    };
  }
  if (remaining() <= 0) {
    // it spent its whole time waiting for a worker: nothing of it runs
    return {
      outcome: { ok: false, error: { code: 'GW_ERR_SANDBOX_TIMEOUT', message: `the call exceeded its wall-clock deadline of ${limits.wallMsPerCall} ms waiting for a sandbox worker` }, stats: { wallMs: Math.round(waited), cpuMs: 0, requests: 0, coldStart: false } },
      strike: false,
    };
  }
  const { entry, cold } = acquireIsolate(task, port.id);
  const cpu0 = cpuMsOf(entry);
  let closed = false;
  let requests = 0;
  let logLines = 0;
  let forwardedTotal = 0;
  const maxRequestText = maxRequestTextChars(limits.maxRequestBodyBytes);
  let prepared: PreparedContext | undefined;
  let shared = false;
  let failure: Classified | undefined;
  let resultJson: string | undefined;
  const forwarded = new Set<number>();
  let parked = false;
  /** host→isolate steps running (the bridge callback may be delivered before or after its step ends) */
  let steps = 0;
  /** a step failed after the call had ended: the isolate is in an unknown state */
  let lateFailure = false;
  /** runs once no step is running (set when the call has ended) */
  let whenIdle: (() => void) | undefined;
  const stepEnded = (failed?: { error: unknown }, queued: unknown[] = []): void => {
    steps--;
    // a step's messages come before its failure (a result sent before the step failed stands)
    for (const m of queued) if (Array.isArray(m)) onBridge(m[0], m[1], m[2]);
    if (failed) {
      if (!closed) finish(classifyIsolateError(failed.error, 'run'));
      else lateFailure = true;
    }
    if (steps === 0 && whenIdle) {
      const run = whenIdle;
      whenIdle = undefined;
      run();
    }
  };
  let cpuAtDisposal: number | undefined;
  let settle: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));

  const finish = (error: Classified | undefined, json?: string): void => {
    if (closed) return;
    closed = true; // before any dispose: no apply may follow
    failure = error;
    resultJson = json;
    if (error?.dispose) {
      cpuAtDisposal = cpuMsOf(entry); // a disposed isolate reports no CPU time
      disposeEntry(entry);
    }
    settle();
  };
  const fail = (code: SandboxErrorCode, message: string, dispose = false): void => finish({ code, message, dispose });

  const wallTimer = setTimeout(
    () => fail('GW_ERR_SANDBOX_TIMEOUT', `the call exceeded its wall-clock deadline of ${limits.wallMsPerCall} ms`, true),
    Math.max(0, remaining()),
  );

  // after a step: if the call now only waits on ctx.http, say so (the host parks its slot)
  const maybePark = (): void => {
    if (closed || parked || forwarded.size === 0) return;
    parked = true;
    const msg: WorkerMessage = { t: 'park' };
    port.post(msg);
  };

  /**
   * Runs one host→isolate step (the module doc says where). On the worker's thread the bootstrap
   * queues the step's bridge messages and they are taken as it returns, before its failure if any.
   */
  const step = (p: PreparedContext, op: number, args: unknown[]): void => {
    steps++;
    if (callsHere > 1 || slowSteps.has(entry.key)) {
      p.entry.apply(undefined, [op, 0, ...args], { timeout: limits.cpuMsPerCall }).then(
        () => {
          stepEnded();
          maybePark();
        },
        (error: unknown) => stepEnded({ error }),
      );
      return;
    }
    const started = performance.now();
    // a step that holds this thread past the call's deadline by STEP_OVERRUN_MS has wedged it
    const budget = Math.min(limits.cpuMsPerCall, Math.max(0, remaining()) + STEP_OVERRUN_MS);
    let failed: { error: unknown } | undefined;
    try {
      marked(port.id, budget, () => p.entry.applySync(undefined, [op, 1, ...args], { timeout: limits.cpuMsPerCall }));
    } catch (error) {
      failed = { error };
    }
    if (performance.now() - started > SYNC_STEP_MS) markSlowSteps(entry.key);
    let queued: unknown;
    try {
      queued = marked(port.id, budget, () => p.entry.applySync(undefined, [ENTRY_TAKE], { timeout: limits.cpuMsPerCall, result: { copy: true } }));
    } catch {
      // the isolate is gone (memory limit): its messages with it
    }
    stepEnded(failed, Array.isArray(queued) ? queued : []);
    if (!failed) maybePark();
  };

  const deliver = (reqId: number, result: BridgeResult): void => {
    const p = prepared;
    if (closed || !p || entry.disposed || entry.isolate.isDisposed) return;
    parked = false; // the sandbox process resumed the call before it sent this answer
    if (result.ok && typeof result.response.bodyBase64 === 'string') {
      // the bytes go in as an ArrayBuffer of their own, beside the rest of the answer
      const bytes = bytesInto(result.response.bodyBase64);
      const { bodyBase64: _inBytes, ...response } = result.response;
      step(p, ENTRY_DELIVER, [reqId, JSON.stringify({ ok: true, response }), bytes]);
    } else step(p, ENTRY_DELIVER, [reqId, JSON.stringify(result)]);
  };
  /** an answer made here (not by the host) goes in on a later turn: never inside the step that asked */
  const refuse = (reqId: number, result: BridgeResult): void => void setImmediate(() => deliver(reqId, result));

  const onBridge = (kind: unknown, id: unknown, payload: unknown): void => {
    if (closed || typeof id !== 'number' || typeof payload !== 'string') return;
    if (kind === 'http') {
      if (++requests > limits.maxRequestsPerCall) {
        refuse(id, { ok: false, error: { code: 'GW_ERR_BRIDGE_TOO_MANY_REQUESTS', message: `a call may make at most ${limits.maxRequestsPerCall} requests` } });
        return;
      }
      if (payload.length > maxRequestText) {
        refuse(id, { ok: false, error: { code: 'GW_ERR_BRIDGE_BAD_REQUEST', message: `the request is larger than the limits allow (${maxRequestText} characters of JSON)` } });
        return;
      }
      let request: BridgeRequest;
      try {
        // Unchecked here: the host's bridge validates every field before anything is sent.
        request = JSON.parse(payload) as BridgeRequest;
      } catch {
        refuse(id, { ok: false, error: { code: 'GW_ERR_BRIDGE_BAD_REQUEST', message: 'malformed request' } });
        return;
      }
      const oversized = typeof request === 'object' && request !== null ? oversizedRequest(request, limits.maxRequestBodyBytes) : undefined;
      if (oversized !== undefined) {
        refuse(id, { ok: false, error: { code: 'GW_ERR_BRIDGE_BAD_REQUEST', message: oversized } });
        return;
      }
      forwarded.add(id);
      forwardedTotal++;
      const msg: WorkerMessage = { t: 'http', reqId: id, request };
      if (steps === 0 && !parked) {
        // the request came after its step ended: the call now waits on I/O only
        parked = true;
        msg.park = true;
      }
      port.post(msg);
    } else if (kind === 'log') {
      if (++logLines > MAX_LOG_LINES) return;
      const level = LOG_LEVELS[id] ?? 'info';
      const msg: WorkerMessage = { t: 'log', level, message: cleanMessage(payload) };
      port.post(msg);
    } else if (kind === 'done') {
      const bytes = Buffer.byteLength(payload, 'utf8');
      if (bytes > limits.maxResultBytes) fail('GW_ERR_SANDBOX_RESULT_TOO_LARGE', `the result is ${bytes} bytes; the limit is ${limits.maxResultBytes}`);
      else if (jsonDepth(payload) > MAX_RESULT_DEPTH) fail('GW_ERR_SANDBOX_RESULT_INVALID', `the result is nested deeper than ${MAX_RESULT_DEPTH} levels`);
      else finish(undefined, payload);
    } else if (kind === 'fail') {
      let report: Record<string, unknown> = {};
      try {
        report = JSON.parse(payload) as Record<string, unknown>;
      } catch {
        // keep the generic message
      }
      finish(classifyReport(report));
    }
  };

  port.on('message', (m: ToWorker) => {
    if (closed || m?.t !== 'http-result' || !forwarded.delete(m.reqId)) return;
    deliver(m.reqId, m.result);
  });

  void (async () => {
    try {
      ({ prepared, shared } = await contextFor(entry, task, port.id, remaining()));
    } catch (e) {
      if (!closed) finish(classifyIsolateError(e, 'setup'));
      return;
    }
    if (closed) return;
    prepared.router.current = onBridge;
    if (task.probe) {
      step(prepared, ENTRY_PROBE, [prepared.namespace.derefInto(), JSON.stringify(task.probe)]);
      return;
    }
    const limitsJson = JSON.stringify({ maxResultBytes: limits.maxResultBytes, maxRequestsPerCall: limits.maxRequestsPerCall, maxRequestBodyBytes: limits.maxRequestBodyBytes, memoryMb: limits.memoryMb });
    step(prepared, ENTRY_START, [prepared.namespace.derefInto(), task.tool, task.argsJson, JSON.stringify(task.config ?? {}), limitsJson]);
  })();

  await settled;
  clearTimeout(wallTimer);
  if (prepared) {
    prepared.router.current = null;
    if (!shared) releaseContext(prepared);
    else if (failure && task.contextKey !== undefined && entry.tenants.get(task.contextKey) === prepared && failure.code !== 'GW_ERR_SANDBOX_HANDLER_THREW') {
      // a tenant context that timed out or broke is not reused
      entry.tenants.delete(task.contextKey);
      releaseContext(prepared);
    }
  }
  const stats = { wallMs: Math.round(performance.now() - t0), cpuMs: Math.round(Math.max(0, (cpuAtDisposal ?? cpuMsOf(entry)) - cpu0)), requests: forwardedTotal, coldStart: cold };
  const giveBack = (): void => {
    // a probe leaves no isolate behind: start-up holds no more memory than before (at most one
    // isolate per plugin being probed, for a moment); the first call starts cold as it always did
    if (lateFailure || (task.probe && cold)) entry.retire = true;
    releaseIsolate(entry, task.contextKey === undefined && !failure?.dispose ? { timeoutMs: limits.cpuMsPerCall } : undefined);
  };
  if (steps === 0) giveBack();
  else whenIdle = giveBack;
  if (failure) return { outcome: { ok: false, error: { code: failure.code, message: failure.message }, stats }, strike: false };
  return { outcome: { ok: true, resultJson: resultJson ?? 'null', stats }, strike: false };
}

