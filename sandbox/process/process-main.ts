/**
 * @module sandbox/process/process-main
 * Entry of the sandbox process, forked and supervised by the host (sandbox.md §5.1). It holds no
 * secrets: the environment is scrubbed by the supervisor and credentials stay in the host, which
 * answers ctx.http over IPC. It runs a Piscina pool configured so that it never terminates a
 * worker (minThreads = maxThreads, idleTimeout Infinity, atomics disabled, no AbortSignal), and
 * relays what each call's worker sends on its port (one per worker, messages carry the call's id)
 * to and from IPC. It also hands out the CPU slots: at most one busy call per worker, and a plugin
 * at most its share of the workers; a call whose step ended with ctx.http pending parks (frees its
 * slot) and takes one again before its answer goes in.
 *
 * Read in order: `main` starts the pool, the control channel and the worker watch, then serves the
 * host's messages (`onHostMessage`): a call is admitted here (`admit`: refused while closing, or
 * held until the host sends a source this process lacks) and from then on is a ProcessCall
 * (process-call.ts), which relays it to its worker and back.
 */
// first, before the other modules load: SIGINT and SIGTERM do not end this process; losing the host does
import './host-link.js';
import { fileURLToPath } from 'node:url';
import { BroadcastChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { getHeapStatistics } from 'node:v8';
import {
  CONTROL_CHANNEL,
  type ControlMessage,
  type FromChild,
  type FromWorker,
  type ToChild,
  type WorkerHello,
  type WorkerMemory,
  type WorkerOutcome,
} from '../../contracts/worker-protocol.js';
import type { RunTask } from '../../contracts/protocol.js';
import { Dispatcher } from '../../common/dispatcher.js';
import { Outbox, unbatch, type Batch } from '../../common/ipc-outbox.js';
import { SourceCache } from '../source-cache.js';
import { selfTest } from './self-test.js';
import { affinityBalancer, type AffinityBalancer } from './balancer.js';
import type { WorkerTask } from '../worker/worker-entry.js';
import { WorkerWatch } from './worker-watch.js';
import { ProcessCall, type CallPlace } from './process-call.js';

const workers = Math.max(1, Number(process.env['WB_SANDBOX_WORKERS'] ?? '8') | 0);
const callsPerWorker = Math.max(1, Number(process.env['WB_SANDBOX_CALLS_PER_WORKER'] ?? '1') | 0);
const share = Math.min(1, Math.max(0.01, Number(process.env['WB_SANDBOX_WORKER_SHARE'] ?? '0.5') || 0.5));
/** benchmarks only (SandboxOptions.traceHops): outcomes carry RunHops */
const traceHops = process.env['WB_SANDBOX_TRACE_HOPS'] === '1';
/** CPU slots; the host already bounds the calls in flight and their queue, per plugin and per user (calls here carry no user) */
const cpu = new Dispatcher({
  slots: workers,
  perPlugin: Math.ceil(share * workers),
  inFlight: Number.MAX_SAFE_INTEGER,
  perPluginInFlight: Number.MAX_SAFE_INTEGER,
  maxQueue: Number.MAX_SAFE_INTEGER,
});
/** a worker as Piscina shows it to a load balancer (the type is not exported by the package's root) */
type PoolWorker = Parameters<
  NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>
>[1][number];

const calls = new Map<number, ProcessCall>();
const sources = new SourceCache();
/** calls that came without a source this process has, waiting for the host to send it */
const waitingForSource = new Map<number, { task: RunTask; sentAt: number }>();
let closing = false;

const outbox = new Outbox<FromChild>((msg: FromChild | Batch<FromChild>) => {
  if (process.connected) process.send?.(msg);
});

/** Queues a message for the host; 'ready' and 'fatal' go out at once, after what is queued. */
function send(msg: FromChild): void {
  outbox.push(msg);
  if (msg.t === 'ready' || msg.t === 'fatal') outbox.flush();
}

/** What main starts once the self-test passed. */
interface Running {
  control: BroadcastChannel;
  place: CallPlace;
  /** memory-stats requests being answered: the worker reports gathered so far, by query seq */
  memoryQueries: Map<number, { reports: WorkerMemory[]; done: () => void }>;
}

async function main(): Promise<void> {
  try {
    await selfTest();
  } catch (e) {
    send({ t: 'fatal', message: `isolate self-test failed: ${e instanceof Error ? e.message : String(e)}` });
    process.exit(78);
  }
  const balancer = affinityBalancer<PoolWorker>(callsPerWorker, workers);
  const pool = startPool(balancer);
  const control = new BroadcastChannel(CONTROL_CHANNEL);
  const memoryQueries: Running['memoryQueries'] = new Map();
  control.onmessage = (event: unknown) => onControl((event as { data?: ControlMessage }).data, memoryQueries);
  const watch = watchWorkers();
  acceptWorkerPorts(pool, watch);
  const place: CallPlace = {
    calls,
    cpu,
    traceHops,
    send,
    started: (id, plugin) => watch.started(id, plugin),
    runOnWorker: (plugin, work: WorkerTask) => balancer.routing(plugin, () => pool.run(work)) as Promise<WorkerOutcome>,
    ended: () => {
      if (closing && calls.size === 0 && waitingForSource.size === 0) shutdown(running);
    },
  };
  const running: Running = { control, place, memoryQueries };
  process.on('message', (raw: unknown) => {
    for (const m of unbatch(raw) as ToChild[]) onHostMessage(m, running);
  });
  send({ t: 'ready', pid: process.pid });
}

function startPool(balancer: AffinityBalancer<PoolWorker>): Piscina {
  return new Piscina({
    filename: fileURLToPath(new URL('../worker/worker-entry.js', import.meta.url)),
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: Infinity,
    atomics: 'disabled',
    // several calls per worker only interleave while they wait on ctx.http; each has its own isolate
    concurrentTasksPerWorker: callsPerWorker,
    loadBalancer: (task, piscinaWorkers) => balancer.balance(task, piscinaWorkers),
  });
}

/** The workers' side of the control channel: memory reports, and an isolate V8 lost control of. */
function onControl(data: ControlMessage | undefined, memoryQueries: Running['memoryQueries']): void {
  if (data?.t === 'memory-report') {
    const q = memoryQueries.get(data.seq);
    q?.reports.push(data.report);
    if (q && q.reports.length >= workers) q.done();
    return;
  }
  if (data?.t !== 'catastrophic') return;
  // V8 lost control of an isolate; its thread may be stuck for good. Report and exit: the
  // supervisor fails the calls in flight and starts a fresh process.
  send({
    t: 'fatal',
    message: `catastrophic isolate error: ${data.message}`,
    ...(data.plugin ? { culprit: data.plugin } : {}),
  });
  // process.exit waits for worker threads, and the one whose isolate was lost may never stop
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), 50);
}

/**
 * A worker whose thread a call's work holds past its budget (work V8 does not interrupt) has
 * stopped answering for good: this process ends, blaming that call's plugin alone.
 */
function watchWorkers(): WorkerWatch {
  return new WorkerWatch((wedged) => {
    send({
      t: 'fatal',
      message: `a worker thread stopped answering: call ${wedged.callId} of ${wedged.plugin ? `plugin ${wedged.plugin.name}@${wedged.plugin.version}` : 'an unknown plugin'} held it ${wedged.heldMs} ms (its budget ${wedged.budgetMs} ms) in work V8 did not interrupt`,
      ...(wedged.plugin ? { culprit: wedged.plugin, culpritCall: wedged.callId } : {}),
    });
    setTimeout(() => process.kill(process.pid, 'SIGKILL'), 50);
  });
}

/**
 * Each worker hands over its own port once, when it starts; messages of every call it runs come on
 * it, with the call's id.
 */
function acceptWorkerPorts(pool: Piscina, watch: WorkerWatch): void {
  pool.on('message', (m: WorkerHello) => {
    if (m?.t !== 'worker-port' || !m.port) return;
    const port: MessagePort = m.port;
    port.on('message', (msg: FromWorker) => calls.get(msg?.id)?.fromWorker(msg, port));
    if (m.mark instanceof SharedArrayBuffer) {
      const mark = m.mark;
      watch.add(mark);
      // the port closes when the worker's thread ends (a worker that ran out of memory in a marked stretch)
      port.once('close', () => watch.remove(mark));
    }
  });
}

function onHostMessage(m: ToChild, running: Running): void {
  if (m.t === 'run') admit(m, running.place);
  else if (m.t === 'source') {
    const waiting = waitingForSource.get(m.id);
    if (!waiting || typeof m.source !== 'string') return;
    waitingForSource.delete(m.id);
    sources.set(waiting.task.plugin.sourceHash, m.source);
    new ProcessCall(m.id, waiting.task, m.source, waiting.sentAt, running.place).start();
  } else if (m.t === 'http-result') calls.get(m.id)?.answer(m);
  else if (m.t === 'fault' && process.env['WB_SANDBOX_FAULT_INJECTION'] === '1') injectFault(m.fault, running.control);
  else if (m.t === 'memory-stats') memoryStats(m.id, running);
  else if (m.t === 'close') {
    closing = true;
    if (calls.size === 0 && waitingForSource.size === 0) shutdown(running);
    setTimeout(() => shutdown(running), m.graceMs).unref();
  }
}

/** A call from the host: refused while closing, held while its source is asked for, else started. */
function admit(m: Extract<ToChild, { t: 'run' }>, place: CallPlace): void {
  if (closing) {
    const stats = { wallMs: 0, cpuMs: 0, requests: 0, coldStart: false };
    send({
      t: 'outcome',
      id: m.id,
      outcome: {
        ok: false,
        error: { code: 'GW_ERR_SANDBOX_UNAVAILABLE', message: 'the sandbox process is shutting down' },
        stats,
      },
      strike: false,
    });
    return;
  }
  const { sourceHash, source } = m.task.plugin;
  const known = source === '' ? sources.get(sourceHash) : source;
  const sentAt = Number.isFinite(m.sentAt) ? m.sentAt : Date.now();
  if (known === undefined) {
    waitingForSource.set(m.id, { task: m.task, sentAt });
    send({ t: 'need-source', id: m.id });
  } else {
    if (source !== '') sources.set(sourceHash, source);
    new ProcessCall(m.id, m.task, known, sentAt, place).start();
  }
}

/** Tests only (SandboxOptions.faultInjection). */
function injectFault(fault: Extract<ToChild, { t: 'fault' }>['fault'], control: BroadcastChannel): void {
  if (fault.kind === 'exit-worker') {
    const msg: ControlMessage = { t: 'exit-worker', callId: fault.callId };
    control.postMessage(msg);
  } else {
    const culprit = fault.culprit;
    send({
      t: 'fatal',
      message: 'catastrophic isolate error: injected by a test',
      ...(culprit
        ? {
            culprit: {
              name: String(culprit.name),
              version: String(culprit.version),
              sourceHash: String(culprit.sourceHash),
            },
          }
        : {}),
    });
    setTimeout(() => process.exit(70), 50);
  }
}

let memorySeq = 0;

/** Asks every worker for its isolates' memory; workers that do not answer within 1 s are left out. */
function memoryStats(id: number, { control, memoryQueries }: Running): void {
  const seq = ++memorySeq;
  const reports: WorkerMemory[] = [];
  // eslint-disable-next-line prefer-const -- declared before done(), which clears it, so that done() never meets it uninitialised
  let timer: NodeJS.Timeout | undefined;
  const done = (): void => {
    if (!memoryQueries.delete(seq)) return;
    clearTimeout(timer);
    reports.sort((a, b) => a.threadId - b.threadId);
    const main = getHeapStatistics();
    send({
      t: 'memory-stats',
      id,
      stats: {
        pid: process.pid,
        rss: process.memoryUsage.rss(),
        mainHeapUsed: main.used_heap_size,
        mainHeapTotal: main.total_heap_size,
        workers: reports,
      },
    });
  };
  memoryQueries.set(seq, { reports, done });
  timer = setTimeout(done, 1000);
  const query: ControlMessage = { t: 'memory-query', seq };
  control.postMessage(query);
}

function shutdown({ control }: Running): void {
  const msg: ControlMessage = { t: 'dispose-all' };
  control.postMessage(msg);
  // leave the workers a moment to dispose their isolates; exiting tears the threads down
  setTimeout(() => process.exit(0), 100);
}

process.on('uncaughtException', (e) => {
  send({
    t: 'fatal',
    message: `uncaught exception in the sandbox process: ${e instanceof Error ? e.message : String(e)}`,
  });
  process.exit(70);
});

void main();
