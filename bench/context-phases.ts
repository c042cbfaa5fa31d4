/**
 * @module bench/context-phases
 * Where the worker's time goes when it prepares a fresh V8 context for a call, phase by phase, on
 * this thread with isolated-vm's synchronous methods (as sandbox/worker/prepare-context.ts does):
 * creating the context, running the setup script (web globals + bootstrap), compiling the plugin
 * module (V8's compilation cache makes every compile after the first cheap), instantiating and
 * evaluating it, releasing the handles. Then context creation alone in an isolate made from an
 * isolated-vm snapshot holding the same setup, beside a plain isolate: whether a snapshot would make
 * the largest phase cheaper (it is the idea "isolate snapshots" in issue 8). Bench code only.
 *
 * Run with the sandbox process's V8 flags (SANDBOX_V8_FLAGS, less the gc alias): `npx tsc -p . &&
 * node --no-node-snapshot --no-expose-wasm --no-validate-asm dist/bench/context-phases.js
 * [--contexts 2000] [--plugin path/to/plugin.js ...]` (default: the fixture-http and github plugins).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import ivm from 'isolated-vm';
import { PACKAGE_ROOT } from '../host/paths.js';
import { SETUP_SOURCE } from '../sandbox/worker/prepare-context.js';
import { WEB_GLOBALS_SOURCE } from '../sandbox/isolate/web-globals-source.js';

const { values: argv } = parseArgs({
  options: {
    contexts: { type: 'string', default: '2000' },
    plugin: { type: 'string', multiple: true },
  },
});
const N = Number(argv.contexts);
const WARMUP = Math.min(200, N);
const plugins = argv.plugin ?? [
  path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins', 'fixture-http', 'plugin.js'),
  path.join(PACKAGE_ROOT, 'plugins', 'github', 'plugin.js'),
];
const SETUP = SETUP_SOURCE;
const now = (): bigint => process.hrtime.bigint();
const ms = (ns: bigint, n: number): string => (Number(ns) / 1e6 / n).toFixed(3);

type Phase = 'context' | 'setup' | 'compile' | 'instantiate' | 'evaluate' | 'release';

function phases(source: string): Record<Phase, string> & { cpuPerContext: string } {
  const isolate = new ivm.Isolate({ memoryLimit: 128 });
  const setup = isolate.compileScriptSync(SETUP, { filename: 'file:///workbench-setup.js' });
  const total: Record<Phase, bigint> = {
    context: 0n,
    setup: 0n,
    compile: 0n,
    instantiate: 0n,
    evaluate: 0n,
    release: 0n,
  };
  let cpu = process.cpuUsage();
  for (let i = 0; i < N + WARMUP; i++) {
    if (i === WARMUP) cpu = process.cpuUsage();
    const t0 = now();
    const context = isolate.createContextSync();
    const t1 = now();
    context.global.setSync('__wb_bridge', new ivm.Callback(() => undefined, { ignored: true }));
    const entry = setup.runSync(context, { reference: true });
    const t2 = now();
    const module = isolate.compileModuleSync(source, { filename: 'file:///plugin.js' });
    const t3 = now();
    module.instantiateSync(context, () => {
      throw new Error('no imports');
    });
    const t4 = now();
    module.evaluateSync({ timeout: 1000 });
    const t5 = now();
    module.namespace.release();
    entry.release();
    module.release();
    context.release();
    const t6 = now();
    if (i >= WARMUP) {
      total.context += t1 - t0;
      total.setup += t2 - t1;
      total.compile += t3 - t2;
      total.instantiate += t4 - t3;
      total.evaluate += t5 - t4;
      total.release += t6 - t5;
    }
  }
  const used = process.cpuUsage(cpu);
  isolate.dispose();
  const out = Object.fromEntries(Object.entries(total).map(([k, v]) => [k, ms(v, N)])) as Record<Phase, string>;
  return { ...out, cpuPerContext: ((used.user + used.system) / 1000 / N).toFixed(3) };
}

/** ms per createContextSync (context released at once) in `isolate`. */
function contextCreation(isolate: ivm.Isolate): string {
  for (let i = 0; i < WARMUP; i++) isolate.createContextSync().release();
  const t0 = now();
  for (let i = 0; i < N; i++) isolate.createContextSync().release();
  return ms(now() - t0, N);
}

console.log(`Preparing a fresh context, phase by phase (ms per context, mean of ${N} after ${WARMUP} unrecorded)`);
for (const p of plugins) {
  const source = readFileSync(p, 'utf8');
  console.log(`${path.relative(PACKAGE_ROOT, p)} (${(source.length / 1024).toFixed(1)} KB):`, phases(source));
}

let snapshot: ivm.ExternalCopy<ArrayBuffer> | undefined;
try {
  // the setup minus what needs the host (the bridge callback is installed per context)
  snapshot = ivm.Isolate.createSnapshot([{ code: WEB_GLOBALS_SOURCE, filename: 'file:///web-globals.js' }]);
} catch (e) {
  console.log(`isolated-vm could not make a snapshot here: ${e instanceof Error ? e.message : String(e)}`);
}
const plainMs: string[] = [];
const snapMs: string[] = [];
for (let round = 0; round < 3; round++) {
  const plain = new ivm.Isolate({ memoryLimit: 128 });
  plainMs.push(contextCreation(plain));
  plain.dispose();
  if (snapshot) {
    const fromSnapshot = new ivm.Isolate({ memoryLimit: 128, snapshot });
    const check = fromSnapshot.createContextSync();
    const has = check.evalSync('typeof URLSearchParams') as string;
    check.release();
    if (has !== 'function') console.log('the snapshot context lacks the web globals');
    snapMs.push(contextCreation(fromSnapshot));
    fromSnapshot.dispose();
  }
}
console.log(
  `createContextSync, 3 alternating rounds (ms per context): plain isolate ${plainMs.join(', ')}; isolate from a snapshot with the web globals ${snapshot ? snapMs.join(', ') : 'n/a'}`,
);
