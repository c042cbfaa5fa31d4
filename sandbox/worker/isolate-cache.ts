/**
 * @module sandbox/worker/isolate-cache
 * One isolate per (plugin name, source hash) in each worker, with the memory limit of the task
 * that created it. Isolates are never shared across plugins. A disposed isolate (timeout, memory
 * limit, wall-clock deadline) is dropped and rebuilt on next use. Idle isolates beyond
 * MAX_ISOLATES are disposed, least recently used first (a worker runs one call at a time, so every
 * isolate but the current one is idle).
 */
import ivm from 'isolated-vm';
import { BroadcastChannel } from 'node:worker_threads';
import { CONTROL_CHANNEL, type ControlMessage } from '../internal-protocol.js';
import type { RunTask } from '../protocol.js';
import type { PreparedContext } from './prepare-context.js';

export const MAX_ISOLATES = 8;
export const MAX_TENANT_CONTEXTS = 32;

export interface IsolateEntry {
  key: string;
  isolate: ivm.Isolate;
  memoryMb: number;
  /** cached contexts for per-tenant calls, by contextKey */
  tenants: Map<string, PreparedContext>;
  disposed: boolean;
}

const entries = new Map<string, IsolateEntry>();
const control = new BroadcastChannel(CONTROL_CHANNEL);
control.unref();

function onCatastrophicError(message: string): void {
  // V8 lost control of an isolate: this process must be drained and replaced (sandbox.md §5.5)
  const msg: ControlMessage = { t: 'catastrophic', message: String(message).slice(0, 500) };
  control.postMessage(msg);
}

export function disposeEntry(entry: IsolateEntry): void {
  if (entry.disposed) return;
  entry.disposed = true;
  if (entries.get(entry.key) === entry) entries.delete(entry.key);
  entry.tenants.clear();
  try {
    if (!entry.isolate.isDisposed) entry.isolate.dispose();
  } catch {
    // already disposed by isolated-vm itself (memory limit)
  }
}

export function disposeAll(): void {
  for (const entry of [...entries.values()]) disposeEntry(entry);
}

/** The isolate for this task's plugin, created (cold) if missing, disposed, or of another limit. */
export function acquireIsolate(task: RunTask): { entry: IsolateEntry; cold: boolean } {
  const key = `${task.plugin.name}\u0000${task.plugin.sourceHash}`;
  const found = entries.get(key);
  if (found && !found.disposed && !found.isolate.isDisposed && found.memoryMb === task.limits.memoryMb) {
    entries.delete(key);
    entries.set(key, found); // most recently used last
    return { entry: found, cold: false };
  }
  if (found) disposeEntry(found);
  while (entries.size >= MAX_ISOLATES) {
    const oldest = entries.values().next().value as IsolateEntry;
    disposeEntry(oldest);
  }
  const isolate = new ivm.Isolate({ memoryLimit: task.limits.memoryMb, onCatastrophicError });
  const entry: IsolateEntry = { key, isolate, memoryMb: task.limits.memoryMb, tenants: new Map(), disposed: false };
  entries.set(key, entry);
  return { entry, cold: true };
}

control.onmessage = (event: unknown) => {
  const data = (event as { data?: ControlMessage }).data;
  if (data?.t === 'dispose-all') disposeAll();
};
