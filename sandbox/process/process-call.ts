/**
 * @module sandbox/process/process-call
 * One call as the sandbox process sees it, between the host's IPC and the worker thread that runs
 * it. Its methods read in the order they happen: started (it takes a CPU slot, then goes to a
 * worker without its source) → the worker's messages relayed to the host (requests, log lines; the
 * source when the worker asks for it) → the host's answers to its requests handed back to the
 * worker (after the call takes a CPU slot again: a call that waits on ctx.http only parks its slot)
 * → the worker's outcome, sent on once every message the worker posted before it has arrived.
 */
import type { MessagePort } from 'node:worker_threads';
import type {
  FromChild,
  FromWorker,
  PluginIdentity,
  ToChild,
  ToWorker,
  WorkerOutcome,
} from '../../contracts/worker-protocol.js';
import type { RunTask } from '../../contracts/protocol.js';
import type { Dispatcher, Lease } from '../../common/dispatcher.js';
import type { WorkerTask } from '../worker/worker-entry.js';

const NO_LEASE: Lease = { park: () => undefined, resume: () => Promise.resolve(), release: () => undefined };
/** how long after its worker returned a call waits for the port messages its outcome counts */
const LATE_MESSAGES_MS = 1000;

/** What a call needs of the process it runs in. */
export interface CallPlace {
  /** the calls running, by id: a call is in it from its start until its outcome is sent */
  readonly calls: Map<number, ProcessCall>;
  /** the CPU slots: at most one busy call per worker, a plugin at most its share of the workers */
  readonly cpu: Dispatcher;
  /** benchmarks only (SandboxOptions.traceHops): outcomes carry RunHops */
  readonly traceHops: boolean;
  /** queues a message for the host */
  send(msg: FromChild): void;
  /** the worker watch learns the call's plugin (its work is marked with its id) */
  started(id: number, plugin: PluginIdentity): void;
  /** runs the task on a worker, routed to the plugin's home worker when it is idle */
  runOnWorker(plugin: string, work: WorkerTask): Promise<WorkerOutcome>;
  /** a call's outcome has been sent */
  ended(): void;
}

export function crashedOutcome(message: string): WorkerOutcome {
  return {
    outcome: {
      ok: false,
      error: { code: 'GW_ERR_SANDBOX_CRASHED', message },
      stats: { wallMs: 0, cpuMs: 0, requests: 0, coldStart: false },
    },
    strike: true,
  };
}

export class ProcessCall {
  readonly #id: number;
  readonly #task: RunTask;
  /** the plugin source (the worker asks for it when it does not have it) */
  readonly #source: string;
  readonly #sentAt: number;
  readonly #place: CallPlace;
  /** the port of the worker running the call (known from the call's first message) */
  #port: MessagePort | undefined;
  #lease: Lease = NO_LEASE;
  /** ctx.http requests sent to the host and not answered yet */
  #pendingHttp = 0;
  #receivedAt = 0;
  /** port messages of the call received so far */
  #received = 0;
  /** no more port messages are expected (the worker died, or a grace period ran out) */
  #ended = false;
  #result: WorkerOutcome | undefined;

  constructor(id: number, task: RunTask, source: string, sentAt: number, place: CallPlace) {
    this.#id = id;
    this.#task = task;
    this.#source = source;
    this.#sentAt = sentAt;
    this.#place = place;
  }

  /** Takes a CPU slot, then hands the call to a worker. */
  start(): void {
    const place = this.#place;
    place.calls.set(this.#id, this);
    place.started(this.#id, this.#task.plugin);
    this.#receivedAt = place.traceHops ? performance.timeOrigin + performance.now() : 0;
    void place.cpu.acquire(this.#task.plugin.name).then((lease) => {
      if (typeof lease === 'string') return; // never: the CPU queue is unbounded, never closed, and its calls have no user
      this.#lease = lease;
      this.#toWorker();
    });
  }

  #toWorker(): void {
    const task = this.#task;
    // the worker keeps sources too: it asks over the port when it lacks this one
    const stripped: RunTask = { ...task, plugin: { ...task.plugin, source: '' } };
    const work: WorkerTask = { task: stripped, id: this.#id, sentAt: this.#sentAt };
    this.#place.runOnWorker(task.plugin.name, work).then(
      (r: WorkerOutcome) => this.#workerReturned(r),
      (e: unknown) => this.#workerDied(e),
    );
  }

  /** A message of this call from its worker: relayed to the host, or answered here. */
  fromWorker(m: FromWorker, port: MessagePort): void {
    this.#port = port;
    this.#received++;
    const id = this.#id;
    if (m.t === 'http') {
      this.#pendingHttp++;
      this.#place.send({ t: 'http', id, reqId: m.reqId, request: m.request });
      if (m.park) this.#lease.park();
    } else if (m.t === 'log') this.#place.send({ t: 'log', id, level: m.level, message: m.message });
    else if (m.t === 'need-source') {
      const reply: ToWorker = { t: 'source', id, source: this.#source };
      port.postMessage(reply);
    } else if (m.t === 'park') {
      if (this.#pendingHttp > 0) this.#lease.park();
    }
    this.#flush();
  }

  /** The host's answer to one of the call's requests goes to its worker. */
  answer(m: Extract<ToChild, { t: 'http-result' }>): void {
    this.#pendingHttp = Math.max(0, this.#pendingHttp - 1);
    const msg: ToWorker = { t: 'http-result', id: m.id, reqId: m.reqId, result: m.result };
    // a parked call takes a CPU slot again before it runs
    void this.#lease.resume().then(() => {
      if (this.#isRunning()) this.#port?.postMessage(msg);
    });
  }

  #workerReturned(r: WorkerOutcome): void {
    this.#result = r;
    this.#flush();
    if (this.#isRunning()) setTimeout(() => ((this.#ended = true), this.#flush()), LATE_MESSAGES_MS).unref();
  }

  #workerDied(e: unknown): void {
    this.#result = crashedOutcome(
      `the sandbox worker died during the call (${e instanceof Error ? e.message.slice(0, 200) : 'unknown'})`,
    );
    this.#ended = true;
    this.#flush();
  }

  /**
   * The outcome goes out only once every message the task posted on its port has arrived (the
   * outcome says how many), so that its log lines and requests reach the host first.
   */
  #flush(): void {
    const result = this.#result;
    if (!result || !(this.#ended || this.#received >= (result.messages ?? 0)) || !this.#isRunning()) return;
    const place = this.#place;
    place.calls.delete(this.#id);
    this.#lease.release();
    if (place.traceHops && result.worker) {
      const { started, finished } = result.worker;
      result.outcome.stats.hops = {
        received: this.#receivedAt,
        started,
        finished,
        sent: performance.timeOrigin + performance.now(),
      };
    }
    place.send({ t: 'outcome', id: this.#id, outcome: result.outcome, strike: result.strike });
    place.ended();
  }

  #isRunning(): boolean {
    return this.#place.calls.get(this.#id) === this;
  }
}
