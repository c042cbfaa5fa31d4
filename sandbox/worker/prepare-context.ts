/**
 * @module sandbox/worker/prepare-context
 * Makes a V8 context ready for a call: installs the bridge callback, runs the setup script (the web
 * globals and the bootstrap, compiled once per isolate as ONE script and run in each context),
 * keeps the bootstrap's completion value (its entry function) as a host-held Reference, then
 * compiles, instantiates (every import is refused) and evaluates the plugin module.
 *
 * The steps that run only our own code or no code at all (the setup script, compiling and
 * instantiating the module) use isolated-vm's synchronous methods: they run on this thread, with
 * the same step timeout, and skip the hand-off to isolated-vm's thread pool and back, which costs
 * more CPU than these steps themselves. Creating the V8 context (~0.4 ms) is synchronous too when a
 * call is waiting for it; a context prepared ahead of demand is created on the thread pool instead,
 * so that this worker stays free to start the next call meanwhile. Evaluating the module runs the
 * plugin's top-level code, which may spin until the timeout, so it stays asynchronous: the worker
 * keeps serving its other calls meanwhile.
 *
 * Nothing isolated-vm-made stays reachable from plugin code: the bootstrap deletes `__wb_bridge`
 * first thing (the Callback becomes a plain function captured by its closure), and the entry
 * function is never stored in the context. A preparation that fails releases what it made.
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

/** The web globals then the bootstrap: the completion value is the bootstrap's entry function. */
const SETUP_SOURCE = `${WEB_GLOBALS_SOURCE}\n${BOOTSTRAP_SOURCE}`;

/** The setup script, compiled once per isolate (compiled code holds no context state). */
const compiled = new WeakMap<ivm.Isolate, ivm.Script>();

function setupScriptOf(isolate: ivm.Isolate): ivm.Script {
  let script = compiled.get(isolate);
  if (!script) {
    script = isolate.compileScriptSync(SETUP_SOURCE, { filename: 'file:///workbench-setup.js' });
    compiled.set(isolate, script);
  }
  return script;
}

function refuseImport(specifier: string): never {
  throw new Error(`import "${specifier.slice(0, 100)}" is not allowed: a plugin must be one self-contained module`);
}

function releaseAll(handles: readonly { release(): void }[]): void {
  for (const handle of handles) {
    try {
      handle.release();
    } catch {
      // isolate already disposed
    }
  }
}

export interface PrepareOptions {
  /** a call is waiting for this context (not prepared ahead of demand): create it on this thread */
  forCall?: boolean;
}

export async function prepareContext(isolate: ivm.Isolate, source: string, timeoutMs: number, options: PrepareOptions = {}): Promise<PreparedContext> {
  const setup = setupScriptOf(isolate);
  const context = options.forCall ? isolate.createContextSync() : await isolate.createContext();
  const made: { release(): void }[] = [context];
  try {
    const router: PreparedContext['router'] = { current: null };
    const callback = new ivm.Callback((kind: unknown, id: unknown, payload: unknown) => router.current?.(kind, id, payload), { ignored: true });
    context.global.setSync('__wb_bridge', callback);
    const entry = setup.runSync(context, { timeout: timeoutMs, reference: true }) as unknown as ivm.Reference;
    made.unshift(entry);
    if (typeof entry?.apply !== 'function' || entry.typeof !== 'function') throw new Error('the bootstrap did not return its entry function');
    const module = isolate.compileModuleSync(source, { filename: 'file:///plugin.js' });
    made.unshift(module);
    module.instantiateSync(context, refuseImport);
    await module.evaluate({ timeout: timeoutMs });
    return { context, module, namespace: module.namespace, entry, router };
  } catch (e) {
    releaseAll(made);
    throw e;
  }
}

/** Releases the handles of a per-call context (never throws; the isolate may be gone). */
export function releaseContext(prepared: PreparedContext): void {
  prepared.router.current = null;
  releaseAll([prepared.entry, prepared.namespace, prepared.module, prepared.context]);
}
