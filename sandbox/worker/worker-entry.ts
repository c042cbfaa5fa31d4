/**
 * @module sandbox/worker/worker-entry
 * The Piscina task function: one call per task (a worker interleaves up to callsPerWorker of them,
 * each in its own isolate, while they wait on ctx.http). The task comes without its plugin source
 * when the sandbox process expects this worker to have it; the worker asks for it over its port
 * when it does not. The worker thread is never terminated by the pool (no AbortSignal,
 * idleTimeout Infinity): deadlines are enforced inside by disposing the isolate, and a broken
 * process is replaced as a whole.
 */
import { BroadcastChannel, MessageChannel, parentPort } from 'node:worker_threads';
import {
  CONTROL_CHANNEL,
  type ControlMessage,
  type ToWorker,
  type WorkerHello,
  type WorkerMessage,
  type WorkerOutcome,
} from '../../contracts/worker-protocol.js';
import type { RunTask } from '../../contracts/protocol.js';
import { SourceCache } from '../source-cache.js';
import { runCall, type TaskPort } from './run-call.js';
import { markBuffer } from './busy-mark.js';
// answers the sandbox process's control channel (dispose-all, memory-query)
import './worker-control.js';

export interface WorkerTask {
  task: RunTask;
  /** the call's id: every message about it on this worker's port carries it */
  id: number;
  /** when the host sent the call (ms since the epoch): its wall-clock deadline counts from then */
  sentAt: number;
}

const sources = new SourceCache();

/**
 * This worker's port to the main thread, for its whole life: handed over once through the pool's
 * 'message' event, so that no call needs a MessageChannel (and a port transfer) of its own.
 */
const { port1: toMain, port2 } = new MessageChannel();
if (parentPort) {
  const hello: WorkerHello = { t: 'worker-port', port: port2, mark: markBuffer };
  parentPort.postMessage(hello, [port2]);
}
/** per call id, what its messages from the main thread go to */
const listeners = new Map<number, Set<(m: ToWorker) => void>>();
toMain.on('message', (m: ToWorker) => {
  const subs = listeners.get(m?.id);
  if (subs) for (const f of subs) f(m);
});

/** calls running in this worker, for the tests-only fault injection below */
const running = new Set<string>();
if (process.env['WB_SANDBOX_FAULT_INJECTION'] === '1') {
  const control = new BroadcastChannel(CONTROL_CHANNEL);
  control.unref();
  control.onmessage = (event: unknown) => {
    const data = (event as { data?: ControlMessage }).data;
    // ends this worker thread only (process.exit in a worker stops the thread)
    if (data?.t === 'exit-worker' && running.has(data.callId)) process.exit(1);
  };
}

type CallPort = TaskPort & { sent: number; off(event: 'message', listener: (m: ToWorker) => void): void };

/** A call's view of the worker's port: its messages carry its id, and the ones it posts are counted. */
function callPort(id: number, sentAt: number): CallPort {
  const subs = new Set<(m: ToWorker) => void>();
  listeners.set(id, subs);
  return {
    id,
    sentAt,
    sent: 0,
    post(msg: WorkerMessage) {
      this.sent++;
      toMain.postMessage({ ...msg, id });
    },
    on: (_event, listener) => void subs.add(listener),
    off: (_event, listener) => void subs.delete(listener),
  };
}

function askSource(port: CallPort): Promise<string> {
  return new Promise((resolve) => {
    const onMessage = (m: ToWorker): void => {
      if (m?.t !== 'source' || typeof m.source !== 'string') return;
      port.off('message', onMessage);
      resolve(m.source);
    };
    port.on('message', onMessage);
    port.post({ t: 'need-source' });
  });
}

const traceHops = process.env['WB_SANDBOX_TRACE_HOPS'] === '1';
const now = (): number => performance.timeOrigin + performance.now();

export default async function runWorkerTask({ task, id, sentAt }: WorkerTask): Promise<WorkerOutcome> {
  const started = traceHops ? now() : 0;
  const port = callPort(id, sentAt);
  const hash = task.plugin.sourceHash;
  running.add(task.callId);
  try {
    const source = task.plugin.source || sources.get(hash) || (await askSource(port));
    sources.set(hash, source);
    const outcome = await runCall(
      source === task.plugin.source ? task : { ...task, plugin: { ...task.plugin, source } },
      port,
    );
    return { ...outcome, messages: port.sent, ...(traceHops ? { worker: { started, finished: now() } } : {}) };
  } finally {
    running.delete(task.callId);
    listeners.delete(id);
  }
}
