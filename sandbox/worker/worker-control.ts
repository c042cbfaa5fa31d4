/**
 * @module sandbox/worker/worker-control
 * What a worker answers on the sandbox process's control channel (a BroadcastChannel every worker
 * listens on): `dispose-all` when the process shuts down, and `memory-query` (benchmarks and tests
 * only) with a report of this worker's isolates and their heaps. Imported once by worker-entry.
 */
import type ivm from 'isolated-vm';
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { CONTROL_CHANNEL, type ControlMessage, type WorkerMemory } from '../../contracts/worker-protocol.js';
import { allEntries, disposeAll, lifetimeCounters, type IsolateEntry } from './isolate-cache.js';

/**
 * This worker's isolates and their heaps (see WorkerMemory; sandbox-internal). A busy isolate is
 * read asynchronously, so that the report never waits on the worker thread for one running a
 * step. An idle one is read synchronously, as the idle budget measures it: nothing holds its lock,
 * and entering it asynchronously would first run the V8 tasks it has pending since its last step
 * on the worker's thread (a collection that grows its heap by a page or two), changing what the
 * report is meant to show.
 */
export async function memoryReport(): Promise<WorkerMemory> {
  const own = getHeapStatistics();
  const r: WorkerMemory = {
    threadId,
    isolates: 0,
    busy: 0,
    usedHeap: 0,
    totalHeap: 0,
    external: 0,
    idleHeld: 0,
    ...lifetimeCounters(),
    threadHeapUsed: own.used_heap_size,
    threadHeapTotal: own.total_heap_size,
  };
  const entries = allEntries();
  const heapOf = async (e: IsolateEntry): Promise<ivm.HeapStatistics | undefined> => {
    try {
      if (e.disposed || e.isolate.isDisposed) return undefined;
      return !e.busy && !e.filling ? e.isolate.getHeapStatisticsSync() : await e.isolate.getHeapStatistics();
    } catch {
      return undefined; // disposed under our feet
    }
  };
  const stats = await Promise.all(entries.map(heapOf));
  for (const [i, e] of entries.entries()) {
    const h = stats[i];
    if (!h || e.disposed) continue;
    r.isolates++;
    if (e.busy) r.busy++;
    r.usedHeap += h.used_heap_size;
    r.totalHeap += h.total_heap_size;
    r.external += h.externally_allocated_size;
    if (!e.busy) r.idleHeld += h.total_heap_size + h.externally_allocated_size;
  }
  return r;
}

const control = new BroadcastChannel(CONTROL_CHANNEL);
control.unref();
control.onmessage = (event: unknown) => {
  const data = (event as { data?: ControlMessage }).data;
  if (data?.t === 'dispose-all') disposeAll();
  else if (data?.t === 'memory-query') {
    memoryReport().then(
      (report) => {
        const reply: ControlMessage = { t: 'memory-report', seq: data.seq, report };
        control.postMessage(reply);
      },
      () => undefined, // diagnostics only: the asker times out
    );
  }
};
