/**
 * @module host/supervisor/child-handle
 * One sandbox process, from fork to exit, seen from the host: it sends calls and routes what the
 * process says of each back to it (sandbox-call.ts: its requests, its log lines, its outcome), and
 * when the process dies it fails every call in
 * flight with GW_ERR_SANDBOX_CRASHED (and tells the supervisor which plugins to blame, and which
 * of those calls may run again: see CallEnd). A per-call
 * watchdog (wall deadline + grace) covers a process whose own deadline enforcement is stuck: it
 * fails the call and kills the process.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { GC_GLOBAL } from '../../contracts/isolate.js';
import type { SandboxFault } from './sandbox-options.js';
import type { FromChild, MemoryStats, PluginIdentity, ToChild } from '../../contracts/worker-protocol.js';
import { Outbox, unbatch, type Batch } from '../../common/ipc-outbox.js';
import type { BridgeRequest, BridgeResult, RunOutcome, RunTask } from '../../contracts/protocol.js';
import type { ResolvedSandboxOptions } from './sandbox-options.js';
import { checkOutcome, failure } from './check-outcome.js';
import { fail } from '../../contracts/errors.js';

/**
 * V8 flags of the sandbox process (they apply to every isolate in it). No WebAssembly in plugin
 * contexts: `--no-expose-wasm` removes the global and `--no-validate-asm` keeps V8 from installing
 * the hidden WebAssembly objects for asm.js. Wasm's compilers are a large attack surface that
 * integrations do not need, and installing its objects was ~18 % of the CPU of every fresh context.
 * The sandbox process itself runs no WebAssembly (the host makes the HTTP requests).
 * `--expose-gc-as` puts V8's gc function on the global of every context under GC_GLOBAL: the
 * bootstrap takes it and empties that (non-configurable) global before plugin code runs, and the
 * isolate cache uses it to collect an idle isolate's dead contexts instead of disposing the
 * isolate (isolate-cache.ts).
 * `--no-regexp-tier-up` bounds work V8 does without stopping for an isolate's time limit (a step
 * that runs out of time is terminated, but not in the middle of compiling a regular expression;
 * isolated-vm gives a termination about 5 s, then declares the isolate lost and the process is
 * replaced, failing every call in flight): it compiles a pattern straight to machine code, linear
 * in its size, instead of through V8's interpreter first (a million alternatives took 7 s there,
 * 0.5 s here). The bootstrap bounds the rest (bootstrap-source.ts: no code built from strings,
 * patterns built at run time of at most MAX_REGEXP_SOURCE characters), and a module's compile
 * time is bounded (prepare-context.ts).
 */
export const SANDBOX_V8_FLAGS: readonly string[] = [
  '--no-expose-wasm',
  '--no-validate-asm',
  `--expose-gc-as=${GC_GLOBAL}`,
  '--no-regexp-tier-up',
];

const isPluginIdentity = (v: unknown): v is PluginIdentity =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as PluginIdentity).name === 'string' &&
  typeof (v as PluginIdentity).version === 'string' &&
  typeof (v as PluginIdentity).sourceHash === 'string';

/** by name, whatever the version: while a plugin is being upgraded, both its versions are suspects */
const samePlugin = (a: PluginIdentity, b: PluginIdentity): boolean => a.name === b.name;

const ENTRY = fileURLToPath(new URL('../../sandbox/process/process-main.js', import.meta.url));
const WATCHDOG_GRACE_MS = 5_000;
const MAX_SENT_SOURCES = 1024;
/** only these variables reach the sandbox process: no secrets, no proxies, no NODE_OPTIONS */
const ENV_KEEP = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'NODE_ENV'];

/**
 * How a call ended, seen from the host. `rerun` is set on a call that the death of its process
 * failed although it did not cause it (the culprit is known to be another plugin) and that had
 * asked for no request with a method other than GET, HEAD or OPTIONS: it may run again in the next
 * process. `requests`: the ctx.http requests it had asked for, which count against its budget.
 */
export interface CallEnd {
  outcome: RunOutcome;
  strike: boolean;
  rerun?: { requests: number };
}

/** A call as a process carries it (sandbox-call.ts): what the process says of it goes to it. */
export interface CarriedCall {
  /** ctx.http requests the call asked the host for in this process */
  readonly requests: number;
  /** one of them had a method outside GET, HEAD and OPTIONS (or none that could be read) */
  readonly unsafe: boolean;
  /** a ctx.http request of the call; `answer` writes the result to the process (`written`: once written or dropped) */
  onHttp(request: BridgeRequest, answer: (result: BridgeResult, written: () => void) => void): void;
  onLog(level: unknown, message: unknown): void;
}

interface InFlight {
  task: RunTask;
  carried: CarriedCall;
  resolve: (r: CallEnd) => void;
  watchdog: NodeJS.Timeout;
}

/** Told when a sandbox process has exited: the plugins blamed, and whether the blame is certain. */
type OnChildExit = (
  child: ChildHandle,
  blamed: PluginIdentity[],
  code: number | null,
  signal: string | null,
  certain: boolean,
) => void;

export class ChildHandle {
  readonly ready: Promise<number>;
  exited = false;
  readonly #proc: ChildProcess;
  readonly #options: ResolvedSandboxOptions;
  readonly #inFlight = new Map<number, InFlight>();
  readonly #outbox = new Outbox<ToChild>((msg, written) => this.#write(msg, written));
  /** plugin sources (by hash) already sent to this process: later calls go without theirs */
  readonly #sentSources = new Set<string>();
  /** memory-stats requests waiting for their answer, by request id */
  readonly #memoryWaiters = new Map<number, (stats: MemoryStats | undefined) => void>();
  #seq = 0;
  /** the plugin whose isolate V8 lost control of, which brought this process down (set once, before it exits) */
  #culprit: PluginIdentity | undefined;
  /** the call whose work brought this process down, when known (a worker it wedged), and what the process said */
  #culpritCall: { id: number; message: string } | undefined;

  /**
   * `restarts` says whether a process that dies now is replaced (false once the host is shutting
   * down); the calls it fails say so.
   */
  constructor(options: ResolvedSandboxOptions, onExit: OnChildExit, restarts: () => boolean = () => true) {
    this.#options = options;
    const env: Record<string, string> = {
      WB_SANDBOX_WORKERS: String(options.workers),
      WB_SANDBOX_CALLS_PER_WORKER: String(options.callsPerWorker),
      WB_SANDBOX_WORKER_SHARE: String(options.maxWorkerShare),
    };
    if (options.faultInjection) env['WB_SANDBOX_FAULT_INJECTION'] = '1';
    if (options.traceHops) env['WB_SANDBOX_TRACE_HOPS'] = '1';
    for (const k of ENV_KEEP) if (process.env[k] !== undefined) env[k] = process.env[k];
    this.#proc = fork(ENTRY, [], {
      execArgv: ['--no-node-snapshot', ...SANDBOX_V8_FLAGS, ...options.execArgv],
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // every message is plain JSON data; JSON costs ~30 % less CPU per message than 'advanced'
      // (V8's serializer) on these messages (bench/ipc-serialization.ts)
      serialization: 'json',
    });
    for (const stream of [this.#proc.stdout, this.#proc.stderr]) {
      if (stream)
        createInterface({ input: stream }).on('line', (line) =>
          options.logger.warn({ sandboxPid: this.#proc.pid }, `sandbox process: ${line.slice(0, 2000)}`),
        );
    }
    let markReady: (pid: number) => void = () => undefined;
    let markFailed: (e: Error) => void = () => undefined;
    this.ready = new Promise<number>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    this.ready.catch(() => undefined);
    this.#proc.on('message', (raw: unknown) => {
      for (const m of unbatch(raw) as FromChild[]) {
        if (m?.t === 'ready') markReady(m.pid);
        else if (m?.t === 'fatal') {
          if (isPluginIdentity(m.culprit) && !this.#culprit) {
            this.#culprit = m.culprit;
            if (typeof m.culpritCall === 'number')
              this.#culpritCall = { id: m.culpritCall, message: String(m.message).slice(0, 300) };
          }
          options.logger.error(
            { sandboxPid: this.#proc.pid, culprit: this.#culprit?.name },
            `sandbox process: ${String(m.message).slice(0, 1000)}`,
          );
          // a process that says it must end may not manage to (a worker thread stuck in V8): end it
          // now, so that its calls fail at once instead of at their watchdogs
          if (this.#culprit) this.kill();
          markFailed(fail('GW_ERR_SANDBOX_CRASHED', { message: String(m.message).slice(0, 1000) }));
        } else this.#onMessage(m);
      }
    });
    this.#proc.on('error', (e) => markFailed(e));
    this.#proc.on('exit', (code, signal) => this.#onExit(code, signal, markFailed, onExit, restarts));
  }

  /**
   * The process has exited: every call still in flight is settled, saying whether it may run again,
   * and `onExit` learns which plugins to blame.
   */
  #onExit(
    code: number | null,
    signal: NodeJS.Signals | null,
    markFailed: (e: Error) => void,
    onExit: OnChildExit,
    restarts: () => boolean,
  ): void {
    this.exited = true;
    markFailed(fail('GW_ERR_SANDBOX_CRASHED', { message: `the sandbox process exited (${signal ?? code})` }));
    // a plugin known to have brought the process down (V8 lost control of its isolate, or one of its
    // calls wedged a worker) is blamed alone; otherwise every plugin with a call in flight is
    const culprit = this.#culprit;
    const blamed: PluginIdentity[] = culprit ? [culprit] : [];
    const next = restarts() ? 'it is being restarted' : 'the gateway is shutting down';
    const why = culprit
      ? `another call in the same sandbox process brought it down (${signal ?? `exit code ${code}`})`
      : (signal ?? `exit code ${code}`);
    for (const [id, call] of this.#inFlight) {
      if (!culprit) blamed.push(call.task.plugin);
      if (id === this.#culpritCall?.id) {
        // this call's own work held the worker (a step V8 did not interrupt): it ran out of time
        this.#settle(id, {
          outcome: failure(
            'GW_ERR_SANDBOX_TIMEOUT',
            `the call held its sandbox worker past its time limits in work that could not be interrupted, and the sandbox process was replaced (${this.#culpritCall.message})`,
          ),
          strike: false,
        });
        continue;
      }
      const own = culprit !== undefined && samePlugin(call.task.plugin, culprit);
      const outcome = failure(
        'GW_ERR_SANDBOX_CRASHED',
        `the sandbox process died during the call (${own ? `a call of this plugin brought it down (${signal ?? `exit code ${code}`})` : why}); ${next}`,
      );
      // a bystander of a known culprit that has changed nothing outside the sandbox may run again;
      // when the culprit is not known, any call in flight may be it, and running them all again
      // could bring the next process down too
      const bystander = culprit !== undefined && !own && !call.carried.unsafe;
      this.#settle(
        id,
        bystander ? { outcome, strike: false, rerun: { requests: call.carried.requests } } : { outcome, strike: false },
      );
    }
    for (const resolve of this.#memoryWaiters.values()) resolve(undefined);
    this.#memoryWaiters.clear();
    // certain: the plugin blamed is known to have brought the process down (else every plugin in flight is a suspect)
    onExit(this, blamed, code, signal, culprit !== undefined);
  }

  get pid(): number | undefined {
    return this.#proc.pid;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Runs a call in this process. Resolves (never rejects) when it ends or the process dies. */
  call(task: RunTask, carried: CarriedCall): Promise<CallEnd> {
    if (this.exited)
      return Promise.resolve({
        outcome: failure('GW_ERR_SANDBOX_CRASHED', 'the sandbox process is not running'),
        strike: false,
      });
    const id = ++this.#seq;
    return new Promise((resolve) => {
      const watchdog = setTimeout(() => {
        this.#options.logger.error(
          { plugin: task.plugin.name, sandboxPid: this.pid },
          'sandbox call outlived its deadline; recycling the sandbox process',
        );
        // its worker stopped answering; which call wedged it is not known (this one may only have
        // been queued behind it), so this plugin and every other one in flight get a strike
        this.#settle(id, {
          outcome: failure(
            'GW_ERR_SANDBOX_TIMEOUT',
            `the call exceeded its wall-clock deadline of ${task.limits.wallMsPerCall} ms`,
          ),
          strike: true,
        });
        this.kill();
      }, task.limits.wallMsPerCall + WATCHDOG_GRACE_MS);
      this.#inFlight.set(id, { task, carried, resolve, watchdog });
      this.#send({ t: 'run', id, task: this.#asSent(task), sentAt: Date.now() });
    });
  }

  /**
   * The task as sent: without its user (the supervisor's alone: the sandbox process has no use for
   * it), and without its source when this process was sent it before (it asks if it lost it).
   */
  #asSent({ user: _user, ...task }: RunTask): RunTask {
    const hash = task.plugin.sourceHash;
    if (this.#sentSources.has(hash)) return { ...task, plugin: { ...task.plugin, source: '' } };
    if (this.#sentSources.size >= MAX_SENT_SOURCES) this.#sentSources.clear();
    this.#sentSources.add(hash);
    return task;
  }

  /** Memory of the process and its workers' isolates (benchmarks and tests); undefined if it is gone. */
  memoryStats(): Promise<MemoryStats | undefined> {
    if (this.exited) return Promise.resolve(undefined);
    const id = ++this.#seq;
    return new Promise((resolve) => {
      this.#memoryWaiters.set(id, resolve);
      this.#send({ t: 'memory-stats', id });
    });
  }

  /** Asks the process to finish its calls and exit. */
  close(graceMs: number): void {
    this.#send({ t: 'close', graceMs });
  }

  /** Tests only (see SandboxOptions.faultInjection). */
  injectFault(fault: SandboxFault): void {
    this.#send({ t: 'fault', fault });
  }

  kill(): void {
    if (!this.exited) this.#proc.kill('SIGKILL');
  }

  /** Queues a message; `written` runs once it has been written to the channel or dropped. */
  #send(msg: ToChild, written?: () => void): void {
    if (this.exited || !this.#proc.connected) return written?.();
    this.#outbox.push(msg, written);
  }

  #write(msg: ToChild | Batch<ToChild>, written?: () => void): void {
    if (this.exited || !this.#proc.connected) return written?.();
    try {
      // with a callback, a failed write is reported to it instead of as an 'error' event: either
      // way the exit handler fails the calls in flight
      if (written) this.#proc.send(msg, () => written());
      else this.#proc.send(msg);
    } catch {
      written?.();
    }
  }

  #settle(id: number, result: CallEnd): void {
    const call = this.#inFlight.get(id);
    if (!call) return;
    this.#inFlight.delete(id);
    clearTimeout(call.watchdog);
    call.resolve(result);
  }

  #onMessage(m: FromChild): void {
    if (m?.t === 'memory-stats') {
      this.#memoryWaiters.get(m.id)?.(m.stats);
      this.#memoryWaiters.delete(m.id);
      return;
    }
    if (
      typeof m !== 'object' ||
      m === null ||
      (m.t !== 'outcome' && m.t !== 'http' && m.t !== 'log' && m.t !== 'need-source')
    )
      return;
    const call = this.#inFlight.get(m.id);
    if (!call) return;
    if (m.t === 'outcome') {
      this.#settle(m.id, { outcome: checkOutcome(m.outcome, call.task), strike: m.strike === true });
    } else if (m.t === 'http') {
      const { id, reqId } = m;
      if (typeof reqId !== 'number') return;
      call.carried.onHttp(m.request, (result, written) => {
        // an answer that comes after its call ended (or its process died) is dropped
        if (this.#inFlight.get(id) === call) this.#send({ t: 'http-result', id, reqId, result }, written);
        else written();
      });
    } else if (m.t === 'need-source') {
      this.#send({ t: 'source', id: m.id, source: call.task.plugin.source });
    } else if (m.t === 'log') call.carried.onLog(m.level, m.message);
  }
}
