/**
 * @module test/sandbox/isolate/plugin-view.test
 * What plugin code can reach: no Node object, no isolated-vm handle, no host function (the
 * constructor / process / require escape family), and never the credential: not through ctx
 * internals, prototypes, property enumeration, bridge errors, stack frames, nor an upstream that
 * echoes request headers back. The credential is not even in the sandbox process's environment.
 * No WebAssembly either: its compilers are not reachable from plugin code.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createSandbox, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import { callTool, captureLogger, egressPolicy, manifest, type CallRecord } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

const CANARY = `wbsecret_${randomBytes(16).toString('hex')}`;
const HOST_SECRET = `wbhostenv_${randomBytes(8).toString('hex')}`;
let up: Upstream;
let sandbox: Sandbox;
let bridge: Bridge;
const logger = captureLogger();
const m = manifest({ name: 'nosy', egress: ['api.example.com', 'other.example.com'] });
const run = (source: string): Promise<CallRecord> =>
  callTool(sandbox, bridge, { source, manifest: m, credential: { values: { token: CANARY } } });

before(async () => {
  process.env['WB_TEST_HOST_SECRET'] = HOST_SECRET;
  up = await startUpstream();
  sandbox = await createSandbox({
    workers: 1,
    maxQueue: 10,
    quarantineAfterCrashes: 10,
    quarantineWindowMs: 1000,
    maxWorkerShare: 1,
    logger,
  });
  bridge = createBridge(
    egressPolicy({ upstreams: { 'https://api.example.com': up.origin, 'https://other.example.com': up.origin } }),
  );
});
after(async () => {
  delete process.env['WB_TEST_HOST_SECRET'];
  await sandbox.close();
  await bridge.close();
  await up.close();
});

const INTROSPECT = `
async function handler(ctx, args) {
  const dump = [];
  const seen = new Set();
  const queue = [ctx, globalThis];
  const visit = (v) => { if (v && (typeof v === 'object' || typeof v === 'function')) { if (!seen.has(v)) queue.push(v); } else if (v !== undefined) dump.push(String(v)); };
  const responses = [];
  const errors = [];
  for (const [url, init] of [['https://api.example.com/echo'], ['https://api.example.com/status/401'], ['https://api.example.com/redirect?status=307&to=' + encodeURIComponent('https://other.example.com/echo')], ['https://evil.example.net/'], ['https://api.example.com/echo', { headers: { authorization: 'x' } }]]) {
    try { const r = await ctx.http(url, init); responses.push(r, r.headers.entries(), r.headers.toJSON(), await r.text()); }
    catch (e) { errors.push(e, e.message, e.stack, Object.getOwnPropertyNames(e).map((k) => String(e[k]))); }
  }
  let frames = [];
  Error.prepareStackTrace = (e, cs) => cs.map((c) => [String(c.getFileName()), typeof c.getThis(), String(c.getFunction && c.getFunction())]);
  try { await ctx.http('https://evil.example.net/x'); } catch (e) { frames = e.stack; }
  try { null.x; } catch (e) { frames = frames.concat(e.stack); }
  delete Error.prepareStackTrace;
  queue.push(responses, errors, frames);
  while (queue.length && seen.size < 20000) {
    const o = queue.pop();
    if (!o || seen.has(o)) continue;
    seen.add(o);
    if (typeof o === 'function') dump.push(Function.prototype.toString.call(o));
    for (const k of Reflect.ownKeys(o)) {
      dump.push(String(k));
      let d; try { d = Object.getOwnPropertyDescriptor(o, k); } catch (e) { continue; }
      if (d && 'value' in d) visit(d.value);
      if (d && d.get) visit(d.get);
    }
    visit(Object.getPrototypeOf(o));
  }
  return { text: dump.join('\\n'), scanned: seen.size };
}
export default { run: handler };`;

describe('the credential is never readable by plugin code', () => {
  it('not through ctx, globals, prototypes, errors, stack frames or echoed headers', async () => {
    const r = await run(INTROSPECT);
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    const { text, scanned } = r.result as { text: string; scanned: number };
    assert.ok(scanned > 100, `walked ${scanned} objects`);
    assert.ok(
      up.received.some((q) => q.headers['authorization'] === `Bearer ${CANARY}`),
      'the credential was really sent upstream',
    );
    assert.ok(text.includes('[REDACTED]'), 'the echo came back, redacted');
    assert.ok(!text.includes(CANARY) && !text.includes(Buffer.from(CANARY).toString('base64').slice(0, 20)));
    assert.ok(!JSON.stringify(r.results).includes(CANARY), 'no bridge result carried it into the sandbox process');
    assert.ok(!JSON.stringify(logger.lines).includes(CANARY));
  });

  it('the cross-origin redirect hop carried no credential', () => {
    const hop = up.received.filter((q) => q.url === '/echo' && q.headers['authorization'] === undefined);
    assert.ok(hop.length >= 1);
  });

  it(
    'the sandbox process environment holds none of the host environment',
    { skip: !fs.existsSync('/proc/self/environ') },
    () => {
      const env = fs.readFileSync(`/proc/${sandbox.stats().pid}/environ`, 'utf8');
      assert.ok(!env.includes(HOST_SECRET));
      assert.ok(!env.includes('WB_TEST_HOST_SECRET'));
    },
  );
});

const ESCAPES = `
const P = 'return typeof process === "undefined" ? null : process';
async function handler(ctx, args) {
  const hits = [];
  const tryCtor = (label, o) => { try { const F = o.constructor.constructor; if (F(P)()) hits.push(label); } catch (e) {} };
  tryCtor('this', (function () { return this; })() ?? globalThis);
  tryCtor('globalThis', globalThis);
  tryCtor('ctx', ctx); tryCtor('ctx.http', ctx.http); tryCtor('ctx.http.fetch', ctx.http.fetch); tryCtor('ctx.log', ctx.log); tryCtor('ctx.log.info', ctx.log.info); tryCtor('ctx.config', ctx.config);
  const r = await ctx.http('https://api.example.com/json');
  tryCtor('response', r); tryCtor('response.headers', r.headers); tryCtor('response.headers.get', r.headers.get); tryCtor('response.json', r.json); tryCtor('json promise', r.json());
  try { await ctx.http('http://127.0.0.1/'); } catch (e) { tryCtor('bridge error', e); tryCtor('bridge error proto', Object.getPrototypeOf(e)); }
  try { ctx.http(Symbol()); } catch (e) { tryCtor('sync error', e); }
  const g = globalThis;
  // code built from strings is refused (EvalError): what eval would have seen is not reachable
  const ev = (s) => { try { return (0, eval)(s); } catch (e) { return e.name; } };
  const names = ['process', 'require', 'module', 'exports', 'Buffer', 'global', 'setTimeout', 'setImmediate', 'queueMicrotask', 'fetch', 'SharedArrayBuffer', 'Atomics', 'WebAssembly', 'FinalizationRegistry', 'WeakRef', '__wb_bridge', '__wb_codecs', '__wb_start', '__wb_deliver'];
  const present = names.filter((n) => typeof g[n] !== 'undefined' || Object.getOwnPropertyNames(g).includes(n));
  let direct; try { direct = eval('typeof require'); } catch (e) { direct = e.name; }
  const viaEval = direct + ',' + ev('typeof process');
  const imported = await import('node:child_process').then(() => 'loaded', (e) => 'refused');
  const handles = [];
  const seen = new Set(); const q = [globalThis, ctx, r];
  while (q.length) { const o = q.pop(); if (!o || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) continue; seen.add(o);
    for (const k of ['derefInto', 'applySync', 'applySyncPromise', 'copyInto', 'setSync', 'getSync', 'compileScriptSync', 'createContextSync']) { try { if (typeof o[k] === 'function') handles.push(k); } catch (e) {} }
    for (const k of Reflect.ownKeys(o)) { try { const d = Object.getOwnPropertyDescriptor(o, k); if (d && 'value' in d) q.push(d.value); } catch (e) {} }
    q.push(Object.getPrototypeOf(o)); }
  return { hits, present, viaEval, imported, handles, scanned: seen.size };
}
export default { run: handler };`;

describe('the constructor / process / require escape family', () => {
  it('finds no host object, Node global or isolated-vm handle', async () => {
    const r = await run(ESCAPES);
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    const report = r.result as Record<string, unknown>;
    assert.deepEqual(
      { ...report, scanned: undefined },
      { hits: [], present: [], viaEval: 'EvalError,EvalError', imported: 'refused', handles: [], scanned: undefined },
    );
    assert.ok((report['scanned'] as number) > 50);
  });
});

describe('WebAssembly', () => {
  it('is not reachable from plugin code, and asm.js code runs as plain JavaScript', async () => {
    const r = await run(`export default { async run() {
      function Asm(stdlib) { 'use asm'; function add(a, b) { a = a | 0; b = b | 0; return (a + b) | 0; } return { add: add }; }
      const names = Object.getOwnPropertyNames(globalThis);
      return { typeofGlobal: typeof WebAssembly, listed: names.includes('WebAssembly'), viaEval: (() => { try { return (0, eval)('typeof WebAssembly'); } catch (e) { return e.name; } })(), sum: Asm(globalThis).add(2, 3) };
    } };`);
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    assert.deepEqual(r.result, { typeofGlobal: 'undefined', listed: false, viaEval: 'EvalError', sum: 5 });
  });
});

describe("V8's gc function", () => {
  it('is not reachable from plugin code, at module level or in a call (the sandbox process exposes it to collect idle isolates)', async () => {
    const r = await run(`
      const atLoad = { type: typeof globalThis.__wb_gc, gc: typeof globalThis.gc };
      export default { async run() {
        const d = Object.getOwnPropertyDescriptor(globalThis, '__wb_gc');
        let redefine = 'allowed';
        try { Object.defineProperty(globalThis, '__wb_gc', { value: () => 1 }); } catch (e) { redefine = e.constructor.name; }
        let assign = 'allowed';
        try { globalThis.__wb_gc = () => 1; } catch (e) { assign = e.constructor.name; }
        return { atLoad, type: typeof __wb_gc, viaEval: (() => { try { return (0, eval)('typeof __wb_gc'); } catch (e) { return e.name; } })(), gc: typeof gc,
          descriptor: d && { value: d.value === undefined ? 'undefined' : typeof d.value, writable: d.writable },
          redefine, assign, after: typeof globalThis.__wb_gc };
      } };`);
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    assert.deepEqual(r.result, {
      atLoad: { type: 'undefined', gc: 'undefined' },
      type: 'undefined',
      viaEval: 'EvalError',
      gc: 'undefined',
      descriptor: { value: 'undefined', writable: false },
      redefine: 'TypeError',
      assign: 'TypeError',
      after: 'undefined',
    });
  });
});
