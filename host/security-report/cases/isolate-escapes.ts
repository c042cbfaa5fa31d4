/**
 * @module host/security-report/cases/isolate-escapes
 * Ways out the corpus does not try: every constructor that compiles source (Function, async,
 * generator, async generator, indirect eval, Reflect.construct); the capabilities the sandbox
 * removes (SharedArrayBuffer, Atomics, WebAssembly, FinalizationRegistry, WeakRef, timers, the gc
 * hook); import() of data: URLs and files; the host's file paths in stacks and import.meta; the
 * response objects' constructor chains; frozen ctx; hijacked built-ins the bootstrap might use
 * (Array.prototype.push, Promise.prototype.then, JSON.stringify, global getters); arguments that
 * carry __proto__. Each handler reports `escaped: true` when it got what it must not have.
 */
import { PACKAGE_ROOT } from '../../paths.js';
import type { AttackCase, Observation } from '../catalogue.js';

function escape(id: string, tries: string, handler: string, extra: Partial<AttackCase> = {}): AttackCase {
  return { id, class: 'isolate-escape', origin: 'new', tries, handler, expected: { outcome: 'any' }, ...extra };
}

/** Runs `make` (a function source returning a compiled function) and reports whether it compiled and ran. */
const compiles = (make: string): string => `async (ctx, args) => {
  try { const f = (${make})(); const v = await f(); return { escaped: v === 42, value: String(v) }; }
  catch (e) { return { escaped: false, refused: String(e && e.message).slice(0, 120) }; }
}`;

/** The answer names no file of the gateway's installation. */
function noHostPaths(obs: Observation): string | undefined {
  const text = JSON.stringify(obs.item);
  return text.includes(PACKAGE_ROOT) || /node:internal|dist\/sandbox|isolated-vm/.test(text)
    ? `the answer names the host's files: ${text.slice(0, 200)}`
    : undefined;
}

export const ISOLATE_ESCAPE_CASES: AttackCase[] = [
  escape(
    'esc-function-constructor',
    'Function("return 42") straight from the global.',
    compiles(`() => Function('return 42')`),
  ),
  escape(
    'esc-async-function-constructor',
    "The AsyncFunction constructor, reached through an async arrow's constructor.",
    compiles(`() => (async () => {}).constructor('return 42')`),
  ),
  escape(
    'esc-generator-function-constructor',
    "The GeneratorFunction constructor, reached through a generator's constructor.",
    compiles(`() => { const G = (function* () {}).constructor('yield 42'); return () => G().next().value; }`),
  ),
  escape(
    'esc-async-generator-constructor',
    'The AsyncGeneratorFunction constructor.',
    compiles(
      `() => { const G = (async function* () {}).constructor('yield 42'); return async () => (await G().next()).value; }`,
    ),
  ),
  escape(
    'esc-indirect-eval',
    'Indirect eval, (0, eval)("…"), which runs in the global scope.',
    compiles(`() => () => (0, eval)('40 + 2')`),
  ),
  escape(
    'esc-reflect-construct-function',
    'Reflect.construct(Function, ["return 42"]).',
    compiles(`() => Reflect.construct(Function, ['return 42'])`),
  ),
  escape(
    'esc-removed-globals',
    'Looks for what the sandbox removes: SharedArrayBuffer, Atomics, WebAssembly, FinalizationRegistry, WeakRef, timers, queueMicrotask, process, require.',
    `async (ctx, args) => {
      const names = ['SharedArrayBuffer', 'Atomics', 'WebAssembly', 'FinalizationRegistry', 'WeakRef', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'process', 'require', 'Buffer', 'fetch', 'performance'];
      const present = names.filter((n) => typeof globalThis[n] !== 'undefined' || Object.getOwnPropertyNames(globalThis).includes(n));
      return { escaped: present.length > 0, present };
    }`,
  ),
  escape(
    'esc-shared-memory-by-other-paths',
    "Reaches shared memory without the global: a growable SharedArrayBuffer through a typed array's buffer species, structuredClone, WebAssembly.Memory.",
    `async (ctx, args) => {
      const found = [];
      try { const b = new Int32Array(4).buffer; const S = b.constructor; if (S && S.name === 'SharedArrayBuffer') found.push('species'); } catch (e) {}
      try { if (typeof structuredClone === 'function') found.push('structuredClone'); } catch (e) {}
      try { const M = globalThis['Web' + 'Assembly']; if (M && new M.Memory({ initial: 1, maximum: 1, shared: true })) found.push('wasm-shared'); } catch (e) {}
      return { escaped: found.length > 0, found };
    }`,
  ),
  escape(
    'esc-gc-hook',
    'Calls or restores the gc function V8 exposes to the sandbox process (__wb_gc).',
    `async (ctx, args) => {
      const before = typeof globalThis.__wb_gc;
      let restored = false;
      try { Object.defineProperty(globalThis, '__wb_gc', { value: () => 42 }); restored = typeof globalThis.__wb_gc === 'function'; } catch (e) {}
      return { escaped: before === 'function' || restored, before };
    }`,
  ),
  escape(
    'esc-import-data-url',
    'import() of a data: URL holding a module, and of the database file.',
    `async (ctx, args) => {
      const out = [];
      for (const s of ['data:text/javascript,export default globalThis.process', 'file:///etc/passwd', 'node:fs']) {
        try { const m = await import(s); out.push('LEAK ' + s + ' ' + typeof m); } catch (e) { out.push(String(e && e.message).slice(0, 60)); }
      }
      return out;
    }`,
  ),
  escape(
    'esc-host-paths-in-stacks',
    'Reads stacks of its own errors, of a bridge refusal and of import.meta, to learn where the gateway is installed.',
    `async (ctx, args) => {
      const out = [new Error('own').stack];
      try { await ctx.http('https://evil.example.net/'); } catch (e) { out.push(String(e.stack)); }
      try { out.push(JSON.stringify(import.meta)); } catch (e) { out.push(String(e)); }
      const o = {}; Error.captureStackTrace(o, ctx.http); out.push(String(o.stack));
      return { stacks: out.map((s) => String(s).slice(0, 400)) };
    }`,
    { check: noHostPaths },
  ),
  escape(
    'esc-response-constructor-chain',
    'Walks the constructor chains of a ctx.http response, its headers and its methods to a Function that sees process.',
    `async (ctx, args) => {
      const res = await ctx.http('https://api.attack.test/json');
      const hits = [];
      for (const o of [res, res.headers, res.headers.get, res.text, res.json, res.bytes, Object.getPrototypeOf(res)]) {
        try { const p = o.constructor.constructor('return typeof process === "undefined" ? null : process')(); if (p) hits.push(String(p.version)); } catch (e) {}
      }
      return { escaped: hits.length > 0, hits };
    }`,
  ),
  escape(
    'esc-mutate-ctx',
    "Replaces ctx.http, ctx.config and ctx.log, and adds to ctx's prototype, to tamper with what other code sees.",
    `async (ctx, args) => {
      const fake = () => 'forged';
      for (const f of [() => { ctx.http = fake; }, () => { ctx.config = { admin: true }; }, () => { ctx.log = fake; }, () => { Object.getPrototypeOf(ctx).isAdmin = true; }, () => { ctx.http.fetch = fake; }]) { try { f(); } catch (e) {} }
      return { escaped: ctx.http === fake || ctx.http.fetch === fake || ctx.log === fake || (ctx.config && ctx.config.admin === true) };
    }`,
  ),
  escape(
    'esc-hijack-array-push',
    'Replaces Array.prototype.push and Map.prototype.set before calling ctx.http, to read or forge what the bootstrap queues for the bridge.',
    `async (ctx, args) => {
      const seen = [];
      const push = Array.prototype.push, set = Map.prototype.set;
      Array.prototype.push = function (...a) { for (const v of a) if (typeof v === 'string') seen.push(v.slice(0, 100)); return push.apply(this, a); };
      Map.prototype.set = function (k, v) { seen.push(typeof k + ':' + typeof v); return set.call(this, k, v); };
      let status;
      try { status = (await ctx.http('https://api.attack.test/echo')).status; } finally { Array.prototype.push = push; Map.prototype.set = set; }
      return { status, seen: seen.slice(0, 20), escaped: seen.some((s) => /Bearer|Basic /.test(s)) };
    }`,
  ),
  escape(
    'esc-hijack-promise-then',
    'Replaces Promise.prototype.then to catch the values the bridge resolves with, looking for host objects.',
    `async (ctx, args) => {
      const then = Promise.prototype.then; const kinds = []; let got = null;
      Promise.prototype.then = function (a, b) { return then.call(this, (v) => { kinds.push(Object.prototype.toString.call(v)); try { if (v && typeof v === 'object') got = got || v.constructor.constructor('return typeof process === "undefined" ? null : process')(); } catch (e) {} return a ? a(v) : v; }, b); };
      let status;
      try { status = (await ctx.http('https://api.attack.test/json')).status; } finally { Promise.prototype.then = then; }
      return { escaped: !!got, status, kinds: [...new Set(kinds)] };
    }`,
  ),
  escape(
    'esc-hijack-json-stringify',
    'Replaces JSON.stringify and JSON.parse, then calls ctx.http and returns: the bridge request and the result must not be forged by them.',
    `async (ctx, args) => {
      JSON.stringify = () => '{"url":"https://127.0.0.1/forged","method":"GET","headers":{}}';
      JSON.parse = () => ({ forged: true });
      const res = await ctx.http('https://api.attack.test/json').catch((e) => ({ status: String(e && e.message) }));
      return { status: res.status, honest: true };
    }`,
  ),
  escape(
    'esc-global-getters-for-bootstrap',
    'Defines getters on globalThis for the names the bootstrap and the host use (__wb_bridge, __wb_deliver, __wb_start, …) and calls ctx.http, to be handed something from outside.',
    `async (ctx, args) => {
      const names = ['__wb_bridge', '__wb_deliver', '__wb_start', '__wb_result', '__wb_step', '__wb_gc', 'ivm', '_ivm'];
      const hits = [];
      for (const n of names) { try { Object.defineProperty(globalThis, n, { configurable: true, get() { hits.push(n); return undefined; }, set(v) { hits.push(n + '=' + typeof v); } }); } catch (e) {} }
      await ctx.http('https://api.attack.test/json');
      return { escaped: hits.some((h) => h.includes('=') && !h.endsWith('=undefined')), hits };
    }`,
  ),
  escape(
    'esc-log-proxy-argument',
    'Hands ctx.log a Proxy and objects with throwing getters and toString, to run code on the host side while it is logged.',
    `async (ctx, args) => {
      let got = null;
      const trap = (t, k) => { try { got = got || k.constructor.constructor('return typeof process === "undefined" ? null : process')(); } catch (e) {} return () => 'x'; };
      const p = new Proxy({}, { get: trap, ownKeys: () => { throw new Error('keys'); }, getPrototypeOf: () => { throw new Error('proto'); } });
      for (const v of [p, { get a() { throw new Error('getter'); } }, { toString() { throw new Error('toString'); } }]) { try { ctx.log.info(v); } catch (e) {} try { ctx.log.info('msg', v); } catch (e) {} }
      return { escaped: !!got };
    }`,
  ),
  escape(
    'esc-prototype-keys-in-arguments',
    'The caller sends arguments with __proto__ and constructor.prototype keys, to pollute the host or the isolate while they are parsed, validated and copied.',
    `async (ctx, args) => ({ insideIsolate: ['isAdmin', 'polluted'].filter((k) => k in {}), ownKeys: Object.keys(args), escaped: ({}).isAdmin === true })`,
    {
      args: JSON.parse(
        '{"__proto__":{"isAdmin":true,"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"a":1}',
      ) as Record<string, unknown>,
    },
  ),
];
