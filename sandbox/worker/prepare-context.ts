/**
 * @module sandbox/worker/prepare-context
 * Makes a V8 context ready for a call: installs the bridge callback, runs the web globals and the
 * bootstrap (compiled once per isolate, run in each context), keeps the bootstrap's completion
 * value (its entry function) as a host-held Reference, then compiles, instantiates (every import
 * is refused) and evaluates the plugin module. All steps run with a timeout. Nothing
 * isolated-vm-made stays reachable from plugin code: the bootstrap deletes `__wb_bridge` first
 * thing (the Callback becomes a plain function captured by its closure), and the entry function is
 * never stored in the context.
 */
import ivm from 'isolated-vm';
import { BOOTSTRAP_SOURCE } from './bootstrap-source.js';
import { WEB_GLOBALS_SOURCE } from './web-globals-source.js';

/** Receives what the bootstrap sends through the bridge: kind, id and a string payload. */
export type BridgeListener = (kind: unknown, id: unknown, payload: unknown) => void;

export interface PreparedContext {
  context: ivm.Context;
  module: ivm.Module;
  /**
   * the module namespace, fetched once: every read of `module.namespace` makes a new Reference, and
   * an unreleased one keeps its whole context alive in the isolate until the host's own GC finalises
   * the handle (dead contexts then pile up in the isolate's heap and make its GC expensive)
   */
  namespace: ivm.Reference;
  /** the bootstrap's entry function (ENTRY_START / ENTRY_DELIVER) */
  entry: ivm.Reference;
  /** routes bridge messages to the call currently using this context (null between calls) */
  router: { current: BridgeListener | null };
}

interface Scripts {
  web: ivm.Script;
  boot: ivm.Script;
}

/** The two fixed scripts, compiled once per isolate (compiled code holds no context state). */
const compiled = new WeakMap<ivm.Isolate, Promise<Scripts>>();

function scriptsOf(isolate: ivm.Isolate): Promise<Scripts> {
  let scripts = compiled.get(isolate);
  if (!scripts) {
    scripts = Promise.all([
      isolate.compileScript(WEB_GLOBALS_SOURCE, { filename: 'file:///workbench-web-globals.js' }),
      isolate.compileScript(BOOTSTRAP_SOURCE, { filename: 'file:///workbench-bootstrap.js' }),
    ]).then(([web, boot]) => ({ web, boot }));
    scripts.catch(() => compiled.delete(isolate));
    compiled.set(isolate, scripts);
  }
  return scripts;
}

export async function prepareContext(isolate: ivm.Isolate, source: string, timeoutMs: number): Promise<PreparedContext> {
  const { web, boot } = await scriptsOf(isolate);
  const context = await isolate.createContext();
  const router: PreparedContext['router'] = { current: null };
  const callback = new ivm.Callback((kind: unknown, id: unknown, payload: unknown) => router.current?.(kind, id, payload), { ignored: true });
  await context.global.set('__wb_bridge', callback);
  await web.run(context, { timeout: timeoutMs });
  const entry = (await boot.run(context, { timeout: timeoutMs, reference: true })) as unknown as ivm.Reference;
  if (typeof entry?.apply !== 'function' || entry.typeof !== 'function') throw new Error('the bootstrap did not return its entry function');
  const module = await isolate.compileModule(source, { filename: 'file:///plugin.js' });
  await module.instantiate(context, (specifier: string) => {
    throw new Error(`import "${specifier.slice(0, 100)}" is not allowed: a plugin must be one self-contained module`);
  });
  await module.evaluate({ timeout: timeoutMs });
  return { context, module, namespace: module.namespace, entry, router };
}

/** Releases the handles of a per-call context (never throws; the isolate may be gone). */
export function releaseContext(prepared: PreparedContext): void {
  prepared.router.current = null;
  for (const handle of [prepared.entry, prepared.namespace, prepared.module, prepared.context]) {
    try {
      handle.release();
    } catch {
      // isolate already disposed
    }
  }
}
