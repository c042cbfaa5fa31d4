/**
 * @module bench/abort-signals
 * The bridge gives every ctx.http request a deadline merged with its call's signal. This compares
 * the two ways to build that signal, side by side in one run: `AbortSignal.timeout` +
 * `AbortSignal.any` (what the bridge used) and one AbortController with a timer and a listener on
 * the call's signal (what `host/bridge/interceptors/timeout.ts` does), each with a new call
 * signal per request, CPU per request including the garbage it leaves (a GC after each round).
 * Run: `npx tsc -p . && node --expose-gc dist/bench/abort-signals.js [--requests 100000] [--rounds 2]`.
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '2' } },
});

async function composite(): Promise<boolean> {
  const call = new AbortController();
  const signal = AbortSignal.any([call.signal, AbortSignal.timeout(30_000)]);
  // eslint-disable-next-line @typescript-eslint/await-thenable -- one microtask, as a call that awaits something would
  await null;
  return signal.aborted;
}

async function controllerAndTimer(): Promise<boolean> {
  const call = new AbortController();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  timer.unref();
  const ended = (): void => controller.abort();
  call.signal.addEventListener('abort', ended, { once: true });
  // eslint-disable-next-line @typescript-eslint/await-thenable -- one microtask, as a call that awaits something would
  await null;
  clearTimeout(timer);
  call.signal.removeEventListener('abort', ended);
  return controller.signal.aborted;
}

async function main(): Promise<void> {
  const n = Number(values.requests);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) console.log('(run with --expose-gc to count the garbage each way leaves)');
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const [name, f] of [
      ['AbortSignal.timeout + AbortSignal.any', composite],
      ['AbortController + setTimeout', controllerAndTimer],
    ] as const) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < n; i++) await f();
      gc?.();
      const c = process.cpuUsage(c0);
      console.log(`round ${round} ${name.padEnd(38)} ${((c.user + c.system) / n).toFixed(1)} µs CPU per request`);
    }
  }
}

void main();
