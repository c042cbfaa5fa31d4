/**
 * @module sandbox/worker/worker-entry
 * The Piscina task function: one call per task (a worker interleaves up to callsPerWorker of them,
 * each in its own isolate, while they wait on ctx.http). The worker thread
 * is never terminated by the pool (no AbortSignal, idleTimeout Infinity): deadlines are enforced
 * inside by disposing the isolate, and a broken process is replaced as a whole.
 */
import type { MessagePort } from 'node:worker_threads';
import type { WorkerOutcome } from '../internal-protocol.js';
import type { RunTask } from '../protocol.js';
import { runCall } from './run-call.js';

export interface WorkerTask {
  task: RunTask;
  port: MessagePort;
}

export default async function runWorkerTask({ task, port }: WorkerTask): Promise<WorkerOutcome> {
  return runCall(task, port);
}
