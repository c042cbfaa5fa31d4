/**
 * @module test/sandbox/isolate/unbounded-work.test
 * Work V8 does without stopping for a step's time limit, and memory outside the isolate's limit,
 * are out of plugin code's reach: code built from strings (eval, the Function constructors) is
 * refused; regular-expression patterns built at run time are bounded (RegExp, compile, and the
 * string methods that build one from a string), read once so a getter cannot pass the check and
 * then grow; a literal of a million alternatives compiles in linear time (no interpreter tier);
 * a module that takes too long to compile is refused; resizable ArrayBuffers are refused. What the
 * bootstrap serialises cannot be rewritten by a plugin's toJSON. Ordinary regular expressions,
 * subclasses and buffers still behave as the language says.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSandbox, probePlugin, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import { MAX_REGEXP_SOURCE } from '../../../sandbox/isolate/bootstrap-source.js';
import { callTool, egressPolicy, errorCode, manifest, type CallRecord } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

let up: Upstream;
let sandbox: Sandbox;
let bridge: Bridge;

before(async () => {
  up = await startUpstream();
  sandbox = await createSandbox({
    workers: 1,
    maxQueue: 10,
    quarantineAfterCrashes: 10,
    quarantineWindowMs: 1000,
    maxWorkerShare: 1,
  });
  bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin } }));
});
after(async () => {
  await sandbox.close();
  await bridge.close();
  await up.close();
});

/** the policy's default limits, for probes */
const PROBE_LIMITS = {
  cpuMsPerCall: 1000,
  wallMsPerCall: 10_000,
  memoryMb: 64,
  maxArgsBytes: 262_144,
  maxResultBytes: 1_048_576,
  maxRequestsPerCall: 25,
  maxRequestBodyBytes: 1_048_576,
};

const run = (source: string, name = 'unbounded', limits = {}): Promise<CallRecord> =>
  callTool(sandbox, bridge, { name, source, manifest: manifest({ name, egress: ['api.example.com'] }), limits });

/** A module whose `run` returns, for each labelled expression, its value or the name of what it threw. */
const probes = (cases: Record<string, string>): string => `export default { async run() {
  const out = {};
  ${Object.entries(cases)
    .map(
      ([k, expr]) =>
        `try { out[${JSON.stringify(k)}] = (${expr}); } catch (e) { out[${JSON.stringify(k)}] = 'threw ' + e.name + ': ' + e.message; }`,
    )
    .join('\n  ')}
  return out;
} };`;

describe('code built from strings', () => {
  it('eval and every Function constructor throw EvalError; functions still work as functions', async () => {
    const r = await run(
      probes({
        direct: `eval('1 + 1')`,
        indirect: `(0, eval)('1 + 1')`,
        global: `Function('return 1')()`,
        constructed: `new Function('return 1')()`,
        viaPrototype: `(function () {}).constructor('return 1')()`,
        viaReflect: `Reflect.construct(Object.getPrototypeOf(function () {}).constructor, ['return 1'])()`,
        async: `(async function () {}).constructor('return 1')`,
        generator: `(function* () {}).constructor('yield 1')`,
        asyncGenerator: `(async function* () {}).constructor('yield 1')`,
        stillFunctions: `[(() => 1) instanceof Function, typeof Function.prototype.call, Math.max.call(null, 1, 2), Object.getPrototypeOf(function () {}) === Function.prototype].join(',')`,
      }),
    );
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    const out = r.result as Record<string, string>;
    const refused = 'threw EvalError: code generation from strings (eval, new Function) is not available to plugins';
    for (const k of [
      'direct',
      'indirect',
      'global',
      'constructed',
      'viaPrototype',
      'viaReflect',
      'async',
      'generator',
      'asyncGenerator',
    ])
      assert.equal(out[k], refused, k);
    assert.equal(out['stillFunctions'], 'true,function,2,true');
  });
});

describe('regular expressions', () => {
  const over = MAX_REGEXP_SOURCE + 1;
  it(`refuses patterns over ${MAX_REGEXP_SOURCE} characters built at run time, however they are built`, async () => {
    const big = `'a'.repeat(${over})`;
    const r = await run(
      probes({
        construct: `new RegExp(${big}).source.length`,
        call: `RegExp(${big}).source.length`,
        flags: `new RegExp(${big}, 'gi').source.length`,
        fromRegExp: `new RegExp(new RegExp('a'.repeat(${MAX_REGEXP_SOURCE})), 'g').source.length`,
        match: `'aaa'.match(${big})`,
        matchAll: `[...'aaa'.matchAll(${big})].length`,
        search: `'aaa'.search(${big})`,
        compile: `/a/.compile(${big}).source.length`,
        // a pattern that answers short to the first read and long to the next: read once
        growingToString: `(() => { let n = 0; return new RegExp({ toString: () => (n++ === 0 ? 'a' : ${big}) }).source.length; })()`,
        growingLike: `(() => { let n = 0; const like = { [Symbol.match]: true, get source() { return n++ === 0 ? 'a' : ${big}; }, flags: '' }; return new RegExp(like).source.length; })()`,
        growingMatch: `(() => { let n = 0; return 'aaa'.match({ toString: () => (n++ === 0 ? 'a' : ${big}) })[0]; })()`,
        atTheLimit: `new RegExp('a'.repeat(${MAX_REGEXP_SOURCE})).source.length`,
      }),
    );
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    const out = r.result as Record<string, unknown>;
    const refused = `threw SyntaxError: Invalid regular expression: the pattern is ${over} characters long; plugins may build patterns of at most ${MAX_REGEXP_SOURCE}`;
    for (const k of ['construct', 'call', 'flags', 'match', 'matchAll', 'search', 'compile'])
      assert.equal(out[k], refused, k);
    assert.equal(out['fromRegExp'], MAX_REGEXP_SOURCE);
    assert.equal(out['growingToString'], 1, 'the pattern was read once');
    assert.equal(out['growingLike'], 1, 'the source was read once');
    assert.equal(out['growingMatch'], 'a');
    assert.equal(out['atTheLimit'], MAX_REGEXP_SOURCE);
  });

  it('are made through the check when split and matchAll make one from a stand-in or an object without constructor', async () => {
    const big = `'a'.repeat(${over})`;
    const r = await run(
      probes({
        splitFake: `RegExp.prototype[Symbol.split].call({ constructor: undefined, source: ${big}, flags: '' }, 'x').length`,
        matchAllFake: `[...RegExp.prototype[Symbol.matchAll].call({ constructor: undefined, source: ${big}, flags: 'g', lastIndex: 0 }, 'x')].length`,
        genuineNewFlags: `(() => { const re = /[a]/; Object.defineProperty(re, 'constructor', { value: undefined }); Object.defineProperty(re, 'flags', { value: 'v' }); return 'xax'.split(re).length; })()`,
        splitOk: `'a1b2c'.split(/\\d/).join('|')`,
        matchAllOk: `[...'a1b2'.matchAll(/\\d/g)].map((m) => m[0] + m.index).join(',')`,
        speciesOk: `(() => { class R extends RegExp {} return [...'x1y2'.matchAll(new R('\\\\d', 'g'))].length + ':' + 'p-q'.split(new R('-')).join(''); })()`,
      }),
    );
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    const out = r.result as Record<string, unknown>;
    const long = `threw SyntaxError: Invalid regular expression: the pattern is ${over} characters long; plugins may build patterns of at most ${MAX_REGEXP_SOURCE}`;
    assert.equal(out['splitFake'], long);
    assert.equal(out['matchAllFake'], long);
    assert.match(
      String(out['genuineNewFlags']),
      /^threw SyntaxError: Invalid regular expression flags: the v \(unicodeSets\) flag is not available to plugins/,
    );
    assert.deepEqual([out['splitOk'], out['matchAllOk'], out['speciesOk']], ['a|b|c', '11,23', '2:pq']);
  });

  it('refuse the v (unicodeSets) flag, whose set operations compile without a time limit', async () => {
    const r = await run(
      probes({
        construct: `new RegExp('[\\\\p{L}--a]', 'v').flags`,
        fromRegExp: `new RegExp(/a/u, 'v').flags`,
        compile: `/a/.compile('a', 'v').flags`,
        unicode: `new RegExp('\\\\p{L}+', 'u').test('é')`,
      }),
    );
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    const out = r.result as Record<string, unknown>;
    for (const k of ['construct', 'fromRegExp', 'compile'])
      assert.match(
        String(out[k]),
        /^threw SyntaxError: Invalid regular expression flags: the v \(unicodeSets\) flag is not available to plugins/,
        k,
      );
    assert.equal(out['unicode'], true);
  });

  it('behave as the language says otherwise: literals, flags, subclasses, species, RegExp(re), string methods', async () => {
    const r = await run(
      probes({
        literal: `/ab+c/i.test('xABBCx')`,
        ctor: `new RegExp('x', 'gy').flags + RegExp('y').source`,
        same: `(() => { const re = /z/; return RegExp(re) === re && new RegExp(re) !== re; })()`,
        instance: `[/a/ instanceof RegExp, new RegExp('a') instanceof RegExp, /a/.constructor === RegExp, Object.prototype.toString.call(new RegExp('a'))].join(',')`,
        subclass: `(() => { class R extends RegExp { constructor(p, f) { super(p, f); this.tag = 't'; } } const r = new R('q', 'g'); return [r.tag, r instanceof R, 'qaq'.replace(r, 'z'), 'a,b'.split(new R(','))].join('|'); })()`,
        strings: `['abc'.match('b')[0], 'abc'.search('c'), [...'aXbX'.matchAll(/X/g)].length, [...'aXbX'.matchAll('X')].length, 'a.b'.split('.').length, 'abc'.match(/(?<m>b)/).groups.m].join(',')`,
        nonGlobalMatchAll: `[...'aa'.matchAll(/a/)].length`,
        ownMatcher: `'abc'.match({ [Symbol.match]: (s) => 'mine:' + s })`,
        compileSmall: `/a/.compile('b+', 'g').toString()`,
      }),
    );
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    assert.deepEqual(r.result, {
      literal: true,
      ctor: 'gyy',
      same: true,
      instance: 'true,true,true,[object RegExp]',
      subclass: 't|true|zaz|a,b',
      strings: 'b,2,2,2,2,b',
      nonGlobalMatchAll: 'threw TypeError: String.prototype.matchAll called with a non-global RegExp argument',
      ownMatcher: 'mine:abc',
      compileSmall: '/b+/g',
    });
  });

  it('compiles a literal of a million alternatives in linear time, without losing the sandbox process', async () => {
    const source = `const re = /(${'a|'.repeat(1_000_000)}b)/;\nexport default { async run() { return re.test('b'); } };`;
    const pid = sandbox.stats().pid;
    // linear fits these limits many times over (room for a busy machine); quadratic never would
    const r = await run(source, 'alternatives', { cpuMsPerCall: 15_000, wallMsPerCall: 60_000, memoryMb: 64 });
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome).slice(0, 400));
    assert.equal(r.result, true);
    assert.equal(sandbox.stats().pid, pid, 'the sandbox process was not replaced');
  });
});

describe("a module's compile time", () => {
  // case-insensitive Unicode set operations in one literal: V8 parses it when the module compiles,
  // ~2 s of CPU here
  const slow = `const re = /${'[\\p{L}--\\p{Ll}]'.repeat(8000)}/vi;\nexport default { async run() { return re.test('b'); } };`;

  it('is bounded: a module that takes too long to compile is refused, on every call, and by the probe', async () => {
    for (let i = 0; i < 2; i++) {
      // the compile is refused by its CPU, not the call's deadline: the call's wall time leaves the
      // preparation its whole budget on a busy machine
      const r = await run(slow, 'slow-compile', { wallMsPerCall: 30_000 });
      assert.equal(errorCode(r), 'GW_ERR_SANDBOX_LOAD_FAILED', JSON.stringify(r.outcome));
      assert.match(
        r.outcome.ok ? '' : r.outcome.error.message,
        /^the plugin module failed to load: plugin\.js took \d+ ms of CPU to compile; the limit is 1000 ms/,
      );
    }
    const verdict = await probePlugin(
      sandbox,
      { name: 'slow-compile-probe', version: '1.0.0', source: slow, sourceHash: 'slow-compile-probe' },
      ['run'],
      PROBE_LIMITS,
    );
    assert.equal(
      verdict.checked &&
        !verdict.ok &&
        verdict.problem.includes('took') &&
        verdict.problem.includes('ms of CPU to compile'),
      true,
      JSON.stringify(verdict),
    );
  });
});

describe('the global object', () => {
  it("is found as `self` by bundles that would otherwise ask Function('return this') (lodash's fallback)", async () => {
    const r = await run(`var freeGlobal = typeof global == 'object' && global && global.Object === Object && global;
var freeSelf = typeof self == 'object' && self && self.Object === Object && self;
var root = freeGlobal || freeSelf || Function('return this')();
export default { async run() { return root === globalThis; } };`);
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    assert.equal(r.result, true);
  });
});

describe('resizable ArrayBuffers', () => {
  it('are refused, however the constructor is reached; fixed-length buffers work', async () => {
    const r = await run(
      probes({
        global: `new ArrayBuffer(1, { maxByteLength: 2 ** 28 }).resizable`,
        viaConstructor: `new (new Uint8Array(1).buffer.constructor)(1, { maxByteLength: 2 ** 28 }).resizable`,
        viaReflect: `Reflect.construct(ArrayBuffer.prototype.constructor, [1, { maxByteLength: 2 ** 28 }]).resizable`,
        fixed: `[new ArrayBuffer(8).byteLength, new ArrayBuffer(8, {}).resizable, new Uint8Array(new ArrayBuffer(4)).length, new ArrayBuffer(8).slice(2).byteLength, new ArrayBuffer(1) instanceof ArrayBuffer].join(',')`,
      }),
    );
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    const out = r.result as Record<string, unknown>;
    const refused =
      "threw RangeError: resizable ArrayBuffers (maxByteLength) are not available to plugins: their memory is outside the isolate's limit";
    for (const k of ['global', 'viaConstructor', 'viaReflect']) assert.equal(out[k], refused, k);
    assert.equal(out['fixed'], '8,false,4,6,true');
  });
});

describe("a plugin's toJSON", () => {
  const poison = `Object.prototype.toJSON = function () { return { url: 'https://evil.example.net/', method: 'GET', headers: {}, code: 'GW_ERR_SANDBOX_TOOL_MISSING', message: 'forged' }; };
Array.prototype.toJSON = function () { return []; };`;

  it('rewrites neither a ctx.http request nor an error report', async () => {
    const seen = up.received.length;
    const r = await run(`${poison}
export default { async run(ctx) { const res = await ctx.http('https://api.example.com/json'); throw new Error('real failure ' + res.status); } };`);
    assert.equal(errorCode(r), 'GW_ERR_SANDBOX_HANDLER_THREW', JSON.stringify(r.outcome));
    assert.equal(r.outcome.ok ? '' : r.outcome.error.message, 'real failure 200');
    assert.equal(up.received.length, seen + 1, 'the request went where the plugin asked');
    assert.equal(r.requests[0]?.url, 'https://api.example.com/json');
  });

  it('does not rewrite a probe: a missing handler is still found', async () => {
    const verdict = await probePlugin(
      sandbox,
      {
        name: 'probe-json',
        version: '1.0.0',
        source: `${poison}\nexport default { present: async () => 1 };`,
        sourceHash: 'probe-json',
      },
      ['present', 'absent'],
      PROBE_LIMITS,
    );
    assert.ok(verdict.checked && !verdict.ok && /"absent"/.test(verdict.problem), JSON.stringify(verdict));
  });
});
