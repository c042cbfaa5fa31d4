/**
 * @module sandbox/worker/prepare-context
 * Makes a V8 context ready for a call: installs the bridge callback, runs the bootstrap, takes the
 * host-held References to `__wb_start` / `__wb_deliver` and deletes every `__wb_` global, then
 * compiles, instantiates (every import is refused) and evaluates the plugin module. All steps run
 * with a timeout. Nothing isolated-vm-made stays reachable from plugin code: the Callback becomes
 * a plain function captured by the bootstrap closure.
 */
import ivm from 'isolated-vm';
import { BOOTSTRAP_SOURCE } from './bootstrap-source.js';
import { WEB_GLOBALS_SOURCE } from './web-globals-source.js';

/** Receives what the bootstrap sends through the bridge: kind, id and a string payload. */
export type BridgeListener = (kind: unknown, id: unknown, payload: unknown) => void;

export interface PreparedContext {
  context: ivm.Context;
  module: ivm.Module;
  start: ivm.Reference;
  deliver: ivm.Reference;
  /** routes bridge messages to the call currently using this context (null between calls) */
  router: { current: BridgeListener | null };
}

export async function prepareContext(isolate: ivm.Isolate, source: string, timeoutMs: number): Promise<PreparedContext> {
  const context = await isolate.createContext();
  const router: PreparedContext['router'] = { current: null };
  const callback = new ivm.Callback((kind: unknown, id: unknown, payload: unknown) => router.current?.(kind, id, payload), { ignored: true });
  await context.global.set('__wb_bridge', callback);
  await context.eval(WEB_GLOBALS_SOURCE, { timeout: timeoutMs, filename: 'file:///workbench-web-globals.js' });
  await context.eval(BOOTSTRAP_SOURCE, { timeout: timeoutMs, filename: 'file:///workbench-bootstrap.js' });
  const start = (await context.global.get('__wb_start', { reference: true })) as ivm.Reference;
  const deliver = (await context.global.get('__wb_deliver', { reference: true })) as ivm.Reference;
  await context.global.delete('__wb_start');
  await context.global.delete('__wb_deliver');
  await context.global.delete('__wb_bridge');
  const module = await isolate.compileModule(source, { filename: 'file:///plugin.js' });
  await module.instantiate(context, (specifier: string) => {
    throw new Error(`import "${specifier.slice(0, 100)}" is not allowed: a plugin must be one self-contained module`);
  });
  await module.evaluate({ timeout: timeoutMs });
  return { context, module, start, deliver, router };
}

/** Releases the handles of a per-call context (never throws; the isolate may be gone). */
export function releaseContext(prepared: PreparedContext): void {
  prepared.router.current = null;
  for (const handle of [prepared.start, prepared.deliver, prepared.module, prepared.context]) {
    try {
      handle.release();
    } catch {
      // isolate already disposed
    }
  }
}
