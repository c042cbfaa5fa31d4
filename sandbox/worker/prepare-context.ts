/**
 * @module sandbox/worker/prepare-context
 * Makes a V8 context ready for a call: installs the bridge callback, runs the setup script (the web
 * globals and the bootstrap, compiled once per isolate as ONE script and run in each context),
 * keeps the bootstrap's completion value (its entry function) as a host-held Reference, then
 * compiles, instantiates (every import is refused) and evaluates the plugin module.
 *
 * Every step runs on this worker's thread with isolated-vm's synchronous methods: the hand-off to
 * isolated-vm's thread pool and back costs more CPU than creating the context (~0.4 ms), running
 * the setup script or instantiating the module, and a context prepared ahead of demand is made
 * between calls, when this thread has nothing else to do. Evaluating the module runs the plugin's
 * top-level code, which may spin: it runs here for at most SYNC_EVALUATE_MS, so this worker's
 * other calls wait at most that long. A module whose top-level code needs longer makes its isolate
 * evaluate asynchronously from then on (with the full step timeout, the worker free meanwhile); the
 * context it timed out in is dropped and the preparation starts again in a new one.
 *
 * Nothing isolated-vm-made stays reachable from plugin code: the bootstrap deletes `__wb_bridge`
 * first thing (the Callback becomes a plain function captured by its closure), and the entry
 * function is never stored in the context. A preparation that fails releases what it made.
 */
import ivm from 'isolated-vm';
import { BOOTSTRAP_SOURCE } from '../isolate/bootstrap-source.js';
import { WEB_GLOBALS_SOURCE } from '../isolate/web-globals-source.js';
import { marked } from './busy-mark.js';
import { fail } from '../../contracts/errors.js';

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

/**
 * The web globals then the bootstrap, which is a function of their byte codecs (the web globals'
 * value): the completion value is the bootstrap's entry function.
 */
export const SETUP_SOURCE = `${BOOTSTRAP_SOURCE}(${WEB_GLOBALS_SOURCE})`;

/**
 * CPU time a plugin module may take to compile, once per isolate (later compiles in the same isolate
 * hit V8's cache). Compiling does not stop for any time limit, and V8 parses every regular-expression
 * literal then: 60 KB of Unicode set operations in one literal took ~1 s. A real 9 MB bundle
 * compiles in ~0.1 s; plugin.js is at most 4 MB.
 */
export const MAX_MODULE_COMPILE_MS = 1000;

/**
 * CPU ms the module took to compile the first time, per isolate (the next compiles hit V8's cache,
 * so an isolate whose first compile was over the limit keeps failing without compiling again)
 */
const firstCompileMs = new WeakMap<ivm.Isolate, number>();

const tooSlowToCompile = (ms: number): Error =>
  fail('GW_ERR_SANDBOX_LOAD_FAILED', {
    message: `plugin.js took ${Math.round(ms)} ms of CPU to compile; the limit is ${MAX_MODULE_COMPILE_MS} ms (very large regular-expression literals are the usual cause)`,
  });

function compileModule(isolate: ivm.Isolate, source: string): ivm.Module {
  const known = firstCompileMs.get(isolate);
  if (known !== undefined && known > MAX_MODULE_COMPILE_MS) throw tooSlowToCompile(known);
  const before = known === undefined ? isolate.cpuTime : undefined;
  const module = isolate.compileModuleSync(source, { filename: 'file:///plugin.js' });
  if (before !== undefined) {
    const ms = Number(isolate.cpuTime - before) / 1e6;
    firstCompileMs.set(isolate, ms);
    if (ms > MAX_MODULE_COMPILE_MS) {
      module.release();
      throw tooSlowToCompile(ms);
    }
  }
  return module;
}

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

/**
 * How long a module's top-level code may run on the worker's thread (ms of isolated-vm's timeout,
 * wall clock). Plugins' top-level code defines functions and constants: ~0.01 ms.
 */
export const SYNC_EVALUATE_MS = 20;

/** isolates whose module needed more than SYNC_EVALUATE_MS once: they evaluate on the thread pool */
const slowModule = new WeakSet<ivm.Isolate>();

function timedOut(e: unknown): boolean {
  return e instanceof Error && /Script execution timed out/.test(e.message);
}

function refuseImport(specifier: string): never {
  throw fail('GW_ERR_SANDBOX_LOAD_FAILED', {
    message: `import "${specifier.slice(0, 100)}" is not allowed: a plugin must be one self-contained module`,
  });
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

/**
 * The call a preparation works for (or, for a context prepared ahead, the call that last used the
 * isolate), and how long its synchronous part may hold the worker's thread before the sandbox
 * process takes the worker to be wedged by that call (busy-mark.ts). The first compile of a module
 * may take up to MAX_MODULE_COMPILE_MS of CPU (then it is refused); everything else takes ~1 ms.
 */
export interface PrepareMark {
  call: number;
  budgetMs: number;
}

export async function prepareContext(
  isolate: ivm.Isolate,
  source: string,
  timeoutMs: number,
  mark: PrepareMark,
): Promise<PreparedContext> {
  const made: { release(): void }[] = [];
  try {
    const ready = marked(mark.call, mark.budgetMs, () => prepareOnThisThread(isolate, source, timeoutMs, made));
    if (ready === undefined) {
      // slow top-level code: that module instance is broken; evaluate on the thread pool from now on
      releaseAll(made);
      made.length = 0;
      return await prepareContext(isolate, source, timeoutMs, mark);
    }
    if (ready.evaluateLater) await ready.module.evaluate({ timeout: timeoutMs });
    const { context, module, entry, router } = ready;
    return { context, module, namespace: module.namespace, entry, router };
  } catch (e) {
    releaseAll(made);
    throw e;
  }
}

/**
 * The synchronous part of a preparation (everything but an evaluation on the thread pool); what it
 * makes goes into `made`. Undefined when the module's top-level code needed more than
 * SYNC_EVALUATE_MS here (its isolate evaluates on the thread pool from now on).
 */
function prepareOnThisThread(
  isolate: ivm.Isolate,
  source: string,
  timeoutMs: number,
  made: { release(): void }[],
): (Omit<PreparedContext, 'namespace'> & { evaluateLater: boolean }) | undefined {
  const setup = setupScriptOf(isolate);
  const context = isolate.createContextSync();
  made.push(context);
  const router: PreparedContext['router'] = { current: null };
  const callback = new ivm.Callback(
    (kind: unknown, id: unknown, payload: unknown) => router.current?.(kind, id, payload),
    { ignored: true },
  );
  context.global.setSync('__wb_bridge', callback);
  const entry = setup.runSync(context, { timeout: timeoutMs, reference: true });
  made.unshift(entry);
  if (typeof entry?.apply !== 'function' || entry.typeof !== 'function')
    throw fail('GW_ERR_INTERNAL_INVARIANT', { message: 'the bootstrap did not return its entry function' });
  const module = compileModule(isolate, source);
  made.unshift(module);
  module.instantiateSync(context, refuseImport);
  const evaluateLater = slowModule.has(isolate) || timeoutMs <= SYNC_EVALUATE_MS;
  if (!evaluateLater) {
    try {
      module.evaluateSync({ timeout: SYNC_EVALUATE_MS });
    } catch (e) {
      if (!timedOut(e)) throw e;
      slowModule.add(isolate);
      return undefined;
    }
  }
  return { context, module, entry, router, evaluateLater };
}

/** Releases the handles of a per-call context (never throws; the isolate may be gone). */
export function releaseContext(prepared: PreparedContext): void {
  prepared.router.current = null;
  releaseAll([prepared.entry, prepared.namespace, prepared.module, prepared.context]);
}
