/**
 * @module sandbox/worker/worker-entry
 * The Piscina task function: one call per task (a worker interleaves up to callsPerWorker of them,
 * each in its own isolate, while they wait on ctx.http). The task comes without its plugin source
 * when the sandbox process expects this worker to have it; the worker asks for it over the task's
 * port when it does not. The worker thread is never terminated by the pool (no AbortSignal,
 * idleTimeout Infinity): deadlines are enforced inside by disposing the isolate, and a broken
 * process is replaced as a whole.
 */
import { BroadcastChannel, type MessagePort } from 'node:worker_threads';
import { CONTROL_CHANNEL, type ControlMessage, type FromWorker, type ToWorker, type WorkerOutcome } from '../internal-protocol.js';
import type { RunTask } from '../protocol.js';
import { SourceCache } from '../source-cache.js';
import { runCall, type TaskPort } from './run-call.js';

export interface WorkerTask {
  task: RunTask;
  port: MessagePort;
}

const sources = new SourceCache();

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

/** The task's port, counting what this task posts on it (the count travels with the outcome). */
function countingPort(port: MessagePort): TaskPort & { sent: number; off(event: 'message', listener: (m: ToWorker) => void): void } {
  return {
    sent: 0,
    post(msg: FromWorker) {
      this.sent++;
      port.postMessage(msg);
    },
    on: (event, listener) => port.on(event, listener),
    off: (event, listener) => port.off(event, listener),
  };
}

function askSource(port: ReturnType<typeof countingPort>): Promise<string> {
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

export default async function runWorkerTask({ task, port }: WorkerTask): Promise<WorkerOutcome> {
  const counted = countingPort(port);
  const hash = task.plugin.sourceHash;
  running.add(task.callId);
  try {
    const source = task.plugin.source || sources.get(hash) || (await askSource(counted));
    sources.set(hash, source);
    const outcome = await runCall(source === task.plugin.source ? task : { ...task, plugin: { ...task.plugin, source } }, counted);
    return { ...outcome, messages: counted.sent };
  } finally {
    running.delete(task.callId);
    // what was posted before still arrives
    port.close();
  }
}
