/**
 * @module test/sandbox/worker/runtime.test
 * The plugin runtime as plugin code sees it, on the real sandbox: the ctx API, every limit, every
 * way a handler can fail (each gets a clear error for its own call only), module loading rules,
 * and that no state is carried from one call to the next.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import {
  callTool,
  captureLogger,
  egressPolicy,
  errorCode,
  LIMITS,
  ROOMY,
  type CallSpec,
} from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

let up: Upstream;
let sandbox: Awaited<ReturnType<typeof createSandbox>>;
let bridge: Bridge;
const logger = captureLogger();
const run = (spec: CallSpec) => callTool(sandbox, bridge, spec);
const tool = (body: string): string => `export default { async run(ctx, args) { ${body} } };`;

before(async () => {
  up = await startUpstream();
  sandbox = await createSandbox({
    workers: 2,
    maxQueue: 100,
    quarantineAfterCrashes: 100,
    quarantineWindowMs: 1000,
    maxWorkerShare: 1,
    logger,
  });
  bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin } }));
});
after(async () => {
  await sandbox.close();
  await bridge.close();
  await up.close();
});

describe('ctx API', () => {
  it('ctx.http returns a fetch-like, frozen response', async () => {
    const r = await run({
      source: tool(`
        const res = await ctx.http('https://api.example.com/json', { headers: { 'X-A': '1' } });
        const again = await ctx.http.fetch('https://api.example.com/status/401');
        return { status: res.status, ok: res.ok, statusText: res.statusText, url: res.url, type: res.headers.get('Content-Type'),
          has: res.headers.has('content-type'), missing: res.headers.get('x-nope'), json: await res.json(), text: await res.text(),
          body: res.body, frozen: Object.isFrozen(res) && Object.isFrozen(res.headers), notOk: again.ok, notOkStatus: again.status };`),
      limits: ROOMY, // the first call starts cold: room for a busy machine
    });
    assert.deepEqual(r.result, {
      status: 200,
      ok: true,
      statusText: 'OK',
      url: 'https://api.example.com/json',
      type: 'application/json',
      has: true,
      missing: null,
      json: { items: [1, 2, 3] },
      text: '{"items":[1,2,3]}',
      body: '{"items":[1,2,3]}',
      frozen: true,
      notOk: false,
      notOkStatus: 401,
    });
    assert.equal(r.outcome.stats.requests, 2);
  });

  it('sends methods, headers and JSON bodies', async () => {
    const r = await run({
      source: tool(`
        const a = await (await ctx.http('https://api.example.com/echo', { method: 'POST', json: { x: 1 } })).json();
        const b = await (await ctx.http('https://api.example.com/echo', { method: 'PUT', body: 'raw', headers: [['x-pair', 'p']] })).json();
        return { a: [a.method, a.body, a.youSent['content-type']], b: [b.method, b.body, b.youSent['x-pair']] };`),
    });
    assert.deepEqual(r.result, { a: ['POST', '{"x":1}', 'application/json'], b: ['PUT', 'raw', 'p'] });
  });

  it('ctx.http errors carry a code and do not fail the call unless unhandled', async () => {
    const r = await run({
      source: tool(
        `try { await ctx.http('https://evil.example.net/'); } catch (e) { return { name: e.name, code: e.code, isError: e instanceof Error }; }`,
      ),
    });
    assert.deepEqual(r.result, { name: 'HttpError', code: 'GW_ERR_BRIDGE_HOST_NOT_ALLOWED', isError: true });
    const unhandled = await run({ source: tool(`await ctx.http('https://evil.example.net/');`) });
    assert.equal(errorCode(unhandled), 'GW_ERR_SANDBOX_HANDLER_THREW');
    assert.match(unhandled.outcome.ok ? '' : unhandled.outcome.error.message, /GW_ERR_BRIDGE_HOST_NOT_ALLOWED/);
  });

  it('ctx.config is a frozen copy and ctx is frozen', async () => {
    const r = await run({
      config: { region: 'eu', nested: { a: 1 } },
      source: tool(`
        const errs = [];
        try { ctx.config.region = 'us'; } catch (e) { errs.push('config'); }
        try { ctx.config.nested.a = 2; } catch (e) { errs.push('nested'); }
        try { ctx.http = null; } catch (e) { errs.push('ctx'); }
        try { ctx.log.info = null; } catch (e) { errs.push('log'); }
        try { ctx.limits.maxRequests = 1e6; } catch (e) { errs.push('limits'); }
        return { errs, config: ctx.config, keys: Object.keys(ctx).sort() };`),
    });
    assert.deepEqual(r.result, {
      errs: ['config', 'nested', 'ctx', 'log', 'limits'],
      config: { region: 'eu', nested: { a: 1 } },
      keys: ['config', 'http', 'limits', 'log'],
    });
  });

  it('offers URLSearchParams, atob and btoa, and no timers, URL, fetch or Blob', async () => {
    const r = await run({
      source: tool(`
        const q = new URLSearchParams({ city: 'São Paulo', units: 'metric', skip: undefined });
        q.append('tag', "a&b=c!'()~*");
        q.append('lone', 'x\ud800y');
        const p = new URLSearchParams('?a=1&b=x+y&a=2&c=%E2%9C%93');
        return { q: q.toString(), a: p.getAll('a'), b: p.get('b'), c: p.get('c'), entries: [...p].length,
          b64: btoa('user:pässword'), back: atob(btoa('user:pässword')), missing: [typeof URL, typeof fetch, typeof setTimeout, typeof Blob] };`),
    });
    assert.deepEqual(r.result, {
      q: 'city=S%C3%A3o+Paulo&units=metric&tag=a%26b%3Dc%21%27%28%29%7E*&lone=x%EF%BF%BDy',
      a: ['1', '2'],
      b: 'x y',
      c: '✓',
      entries: 4,
      b64: Buffer.from('user:pässword', 'latin1').toString('base64'),
      back: 'user:pässword',
      missing: ['undefined', 'undefined', 'undefined', 'undefined'],
    });
  });

  it('ctx.log reaches the host logger, bounded', async () => {
    const before = logger.lines.length;
    const r = await run({
      name: 'logger-plugin',
      source: tool(
        `ctx.log.warn('careful', { n: 1 }); for (let i = 0; i < 500; i++) ctx.log.info('x'.repeat(5000)); return 1;`,
      ),
    });
    assert.ok(r.outcome.ok);
    const mine = logger.lines.slice(before).filter((l) => l.obj['plugin'] === 'logger-plugin');
    assert.equal(mine[0]?.level, 'warn');
    assert.equal(mine[0]?.msg, 'careful {"n":1}');
    // every line the call was allowed (the first 100) has arrived by the time its outcome did
    assert.equal(mine.length, 100, `${mine.length} lines`);
    assert.ok(mine.every((l) => l.msg.length <= 2000));
  });
});

describe('failures give a clear error for that call only', () => {
  const cases: Array<[string, string, string, RegExp?]> = [
    ['throw new Error', `throw new Error('boom');`, 'GW_ERR_SANDBOX_HANDLER_THREW', /^boom$/],
    ['throw a TypeError', `null.x;`, 'GW_ERR_SANDBOX_HANDLER_THREW', /^TypeError: Cannot read properties of null/],
    ['throw a string', `throw 'plain';`, 'GW_ERR_SANDBOX_HANDLER_THREW', /non-Error value.*plain/],
    ['throw null', `throw null;`, 'GW_ERR_SANDBOX_HANDLER_THREW', /non-Error value/],
    ['throw a function', `throw () => 1;`, 'GW_ERR_SANDBOX_HANDLER_THREW', /function was thrown/],
    ['throw a symbol', `throw Symbol('s');`, 'GW_ERR_SANDBOX_HANDLER_THREW', /Symbol\(s\)/],
    ['throw a plain object', `throw { nope: 1 };`, 'GW_ERR_SANDBOX_HANDLER_THREW', /non-Error object/],
    [
      'hostile error getters',
      `const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw e; } }); throw e;`,
      'GW_ERR_SANDBOX_HANDLER_THREW',
    ],
    ['return undefined', `return undefined;`, 'GW_ERR_SANDBOX_RESULT_INVALID', /undefined/],
    ['return a function', `return () => 1;`, 'GW_ERR_SANDBOX_RESULT_INVALID', /function/],
    [
      'return a nested function',
      `return { a: [1, { f() {} }] };`,
      'GW_ERR_SANDBOX_RESULT_INVALID',
      /function at key "f"/,
    ],
    ['return a cycle', `const a = {}; a.self = a; return a;`, 'GW_ERR_SANDBOX_RESULT_INVALID', /circular/i],
    [
      'return a BigInt',
      `return { a: [1, { n: 10n }] };`,
      'GW_ERR_SANDBOX_RESULT_INVALID',
      /the result contains a BigInt at key "n": JSON has none; return it as a string/,
    ],
    [
      'a dynamic import()',
      `await import('some-package');`,
      'GW_ERR_SANDBOX_HANDLER_THREW',
      /^Not supported: import\(\) is not available to plugins, which are one self-contained module/,
    ],
    [
      'return 100 levels of nesting',
      `let v = 1; for (let i = 0; i < 100; i++) v = [v]; return v;`,
      'GW_ERR_SANDBOX_RESULT_INVALID',
      /deeper than 64/,
    ],
    ['return more than maxResultBytes', `return 'y'.repeat(2 * 1024 * 1024);`, 'GW_ERR_SANDBOX_RESULT_TOO_LARGE'],
    ['loop forever', `for (;;) {}`, 'GW_ERR_SANDBOX_TIMEOUT'],
    [
      'loop forever after an await',
      `await ctx.http('https://api.example.com/json'); for (;;) {}`,
      'GW_ERR_SANDBOX_TIMEOUT',
    ],
    ['never settle', `await new Promise(() => {});`, 'GW_ERR_SANDBOX_TIMEOUT', /wall-clock deadline of 2000 ms/],
    ['exhaust memory', `const keep = []; for (;;) keep.push(new Array(1000000).fill(1.5));`, 'GW_ERR_SANDBOX_MEMORY'],
  ];
  for (const [name, body, code, message] of cases) {
    it(`${name} → ${code}`, async () => {
      const r = await run({ name: 'failing-plugin', source: tool(body) });
      assert.equal(errorCode(r), code, JSON.stringify(r.outcome));
      if (message && !r.outcome.ok) assert.match(r.outcome.error.message, message);
      const next = await run({ name: 'failing-plugin', source: tool(`return 'fine';`) });
      assert.equal(next.result, 'fine', 'the next call of the same plugin works');
    });
  }

  it('a 50 MB string result is refused', async () => {
    const r = await run({ source: tool(`return 'z'.repeat(50 * 1024 * 1024);`), limits: { memoryMb: 128, ...ROOMY } });
    assert.ok(
      ['GW_ERR_SANDBOX_RESULT_TOO_LARGE', 'GW_ERR_SANDBOX_MEMORY'].includes(errorCode(r) ?? ''),
      JSON.stringify(r.outcome),
    );
  });

  it('an isolate disposed by a timeout is rebuilt (cold start) on next use; its CPU is reported, not counted as a disposal for memory', async () => {
    const source = `export default { async spin() { for (;;) {} }, async ok() { return 1; } };`;
    const recycled = async (): Promise<number> =>
      ((await sandbox.memoryStats())?.workers ?? []).reduce((n, w) => n + w.recycled, 0);
    await run({ name: 'rebuilt', source, tool: 'ok' });
    const recycledBefore = await recycled();
    const spin = await run({ name: 'rebuilt', source, tool: 'spin' });
    assert.equal(errorCode(spin), 'GW_ERR_SANDBOX_TIMEOUT');
    // the call's CPU, read before its isolate was disposed (a disposed isolate reports none)
    assert.ok(spin.outcome.stats.cpuMs >= 0.8 * LIMITS.cpuMsPerCall, `cpuMs ${spin.outcome.stats.cpuMs}`);
    const after = await run({ name: 'rebuilt', source, tool: 'ok' });
    assert.equal(after.result, 1);
    assert.equal(await recycled(), recycledBefore, 'an isolate disposed by its call is not a disposal for memory');
  });

  it('a late ctx.http answer after the call ended is dropped safely', async () => {
    const r = await run({
      source: tool(`ctx.http('https://api.example.com/slow?ms=300').catch(() => {}); return 'early';`),
    });
    assert.equal(r.result, 'early');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal((await run({ source: tool(`return 2;`) })).result, 2);
    assert.equal(sandbox.stats().crashes, 0);
  });
});

describe('limits', () => {
  it('maxRequestsPerCall', async () => {
    const r = await run({
      limits: { maxRequestsPerCall: 3 },
      source: tool(`
      const codes = [];
      for (let i = 0; i < 5; i++) codes.push(await ctx.http('https://api.example.com/json').then(() => 'ok', (e) => e.code));
      return codes;`),
    });
    assert.deepEqual(r.result, [
      'ok',
      'ok',
      'ok',
      'GW_ERR_BRIDGE_TOO_MANY_REQUESTS',
      'GW_ERR_BRIDGE_TOO_MANY_REQUESTS',
    ]);
    assert.equal(r.requests.length, 3);
  });

  it('maxArgsBytes', async () => {
    const r = await run({ source: tool(`return 1;`), args: { big: 'a'.repeat(70 * 1024) } });
    assert.equal(errorCode(r), 'GW_ERR_SANDBOX_ARGS_TOO_LARGE');
  });

  // Each bomb was counted at one character per number, boolean, null or boxed value, passed the
  // running check, and built 40 MB to 1 GB of JSON: GW_ERR_SANDBOX_MEMORY instead of this code.
  it(
    'maxResultBytes: numbers, booleans, null and boxed values count as they are written',
    { timeout: 60_000 },
    async () => {
      const limits = { maxResultBytes: 8 * 1024 * 1024, memoryMb: 32, ...ROOMY };
      const bombs: Record<string, string> = {
        numbers: 'Array(8).fill(Array(1000).fill(Array(1000).fill(-1.797e308)))',
        booleans: 'Array(8).fill(Array(1000).fill(Array(1000).fill(false)))',
        nulls: 'Array(8).fill(Array(1000).fill(Array(1000).fill(null)))',
        'Number objects': 'Array(8).fill(Array(1000).fill(Array(1000).fill(new Number(-1.797e308))))',
        'String objects': `Array(1000).fill(new String('s'.repeat(1000000)))`,
        'String objects tagged as plain objects': `Array(1000).fill(Object.defineProperty(new String('s'.repeat(1000000)), Symbol.toStringTag, { value: 'Object' }))`,
        'String objects whose toString makes the text': `Array(1000).fill(Object.assign(new String(''), { toString: () => 's'.repeat(1000000) }))`,
        // 8 million characters that are written six each: 48 MB of JSON
        'strings of control characters': `Array(8).fill('\\u0001'.repeat(1000000))`,
        'strings of lone surrogates': `Array(8).fill('\\ud800'.repeat(1000000))`,
        'keys of control characters': `Array(8).fill(0).map((_, i) => ({ [String(i) + '\\u0002'.repeat(1000000)]: 1 }))`,
      };
      for (const [name, expr] of Object.entries(bombs)) {
        const r = await run({ name: 'result-bombs', source: tool(`return ${expr};`), limits });
        assert.equal(
          errorCode(r),
          'GW_ERR_SANDBOX_RESULT_TOO_LARGE',
          `${name}: ${JSON.stringify(r.outcome).slice(0, 300)}`,
        );
      }
    },
  );

  it('maxResultBytes: a result of exactly the limit passes, one character more does not', async () => {
    const max = 4096;
    // every kind of value the count knows, padded with a string to exactly `max + args.over` characters
    const source = tool(`
      const v = [-1.797e308, 0.1, -0, NaN, -Infinity, 1e21, 123456789, true, false, null, new Number(2.5), new String('ab'), Object(false),
        { a: undefined, b: [undefined], 'k\\"y': 'v\\n', length: 12 }];
      v.push('x'.repeat(args.max + args.over - JSON.stringify(v).length - 3));
      return args.root ? 'y'.repeat(args.max + args.over - 2) : v;`);
    for (const root of [false, true]) {
      const at = await run({ source, args: { max, over: 0, root }, limits: { maxResultBytes: max } });
      assert.ok(at.outcome.ok, JSON.stringify(at.outcome).slice(0, 300));
      assert.equal(at.outcome.resultJson.length, max);
      if (!root)
        assert.deepEqual((at.result as unknown[]).slice(0, -1), [
          -1.797e308,
          0.1,
          0,
          null,
          null,
          1e21,
          123456789,
          true,
          false,
          null,
          2.5,
          'ab',
          false,
          { b: [null], 'k"y': 'v\n', length: 12 },
        ]);
      const over = await run({ source, args: { max, over: 1, root }, limits: { maxResultBytes: max } });
      assert.equal(errorCode(over), 'GW_ERR_SANDBOX_RESULT_TOO_LARGE', JSON.stringify(over.outcome).slice(0, 300));
    }
  });

  it('maxResultBytes: escaped characters count as they are written, at the limit and one over it', async () => {
    const max = 4096;
    // 6 + 2 + 1 characters for each group (a control, a quote, an ASCII letter), and a lone
    // surrogate (6): long enough that escapes could take it over, so it is counted as written; as a
    // key, {"…":1} is 4 characters more than the key's text
    const source = tool(`
      const body = '\\u0001"y'.repeat(300) + '\\udc00' + 'z'.repeat(args.max + args.over - 2 - 2700 - 6);
      return args.asKey ? { [body.slice(0, -4)]: 1 } : body;`);
    for (const asKey of [false, true]) {
      const at = await run({ source, args: { max, over: 0, asKey }, limits: { maxResultBytes: max } });
      assert.ok(at.outcome.ok, JSON.stringify(at.outcome).slice(0, 300));
      assert.equal(at.outcome.resultJson.length, max);
      const over = await run({ source, args: { max, over: 1, asKey }, limits: { maxResultBytes: max } });
      assert.equal(errorCode(over), 'GW_ERR_SANDBOX_RESULT_TOO_LARGE', JSON.stringify(over.outcome).slice(0, 300));
      // refused while counting (before the text was built), not by the check of the finished text
      assert.match(JSON.stringify(over.outcome), new RegExp(`the result is larger than ${max} bytes`));
    }
    // commas count: 2,100 zeros are 4,201 characters, refused while counting; 2,000 (4,001) pass
    const zeros = tool(`return Array(args.n).fill(0);`);
    const fits = await run({ source: zeros, args: { n: 2000 }, limits: { maxResultBytes: max } });
    assert.equal(fits.outcome.ok && fits.outcome.resultJson.length, 4001);
    const commas = await run({ source: zeros, args: { n: 2100 }, limits: { maxResultBytes: max } });
    assert.match(JSON.stringify(commas.outcome), new RegExp(`the result is larger than ${max} bytes`));
    // an emoji's surrogate pair is written as it is: 2 characters (4 bytes), not two escapes
    const pairs = await run({ source: tool(`return '\\ud83d\\ude00'.repeat(1000);`), limits: { maxResultBytes: max } });
    assert.ok(pairs.outcome.ok, JSON.stringify(pairs.outcome).slice(0, 300));
  });

  it('arguments arrive intact', async () => {
    const args = { s: 'ünïcödé ✓ \u2028', n: [1, 2.5, -3], o: { deep: { x: null, t: true } } };
    assert.deepEqual((await run({ source: tool(`return args;`), args })).result, args);
  });

  it('cpuMsPerCall stops a slow synchronous step', async () => {
    const r = await run({
      limits: { cpuMsPerCall: 100, wallMsPerCall: 5000 },
      source: tool(`const t = Date.now(); while (Date.now() - t < 1000) {} return 1;`),
    });
    assert.equal(errorCode(r), 'GW_ERR_SANDBOX_TIMEOUT');
    assert.ok(r.outcome.stats.wallMs < 900, `stopped after ${r.outcome.stats.wallMs} ms`);
  });
});

describe('module loading', () => {
  const cases: Array<[string, string, string]> = [
    ['a syntax error', `export default { run( };`, 'GW_ERR_SANDBOX_LOAD_FAILED'],
    [
      'an import',
      `import fs from 'node:fs'; export default { async run() { return 1; } };`,
      'GW_ERR_SANDBOX_LOAD_FAILED',
    ],
    ['a throwing top level', `throw new Error('top'); export default {};`, 'GW_ERR_SANDBOX_LOAD_FAILED'],
    ['a top-level infinite loop', `for (;;) {} export default {};`, 'GW_ERR_SANDBOX_TIMEOUT'],
    ['no default export', `export const run = async () => 1;`, 'GW_ERR_SANDBOX_TOOL_MISSING'],
    ['no such tool', `export default { other: async () => 1 };`, 'GW_ERR_SANDBOX_TOOL_MISSING'],
    ['an inherited name only', `export default {};`, 'GW_ERR_SANDBOX_TOOL_MISSING'],
  ];
  for (const [name, source, code] of cases) {
    it(`${name} → ${code}`, async () => {
      const r = await run({ source, tool: name === 'an inherited name only' ? 'toString' : 'run' });
      assert.equal(errorCode(r), code, JSON.stringify(r.outcome));
    });
  }

  it('dynamic import() is refused', async () => {
    const r = await run({
      source: tool(`return await import('node:fs').then(() => 'loaded', (e) => 'refused: ' + e.message);`),
    });
    assert.match(String(r.result), /^refused/);
  });
});

describe('no state carried across calls', () => {
  it('module and global state start fresh in every call', async () => {
    const source = `let n = 0; export default { async run() { globalThis.mark = (globalThis.mark || 0) + 1; Object.prototype.leak = 1; return [++n, globalThis.mark]; } };`;
    for (let i = 0; i < 4; i++) assert.deepEqual((await run({ name: 'stateful', source })).result, [1, 1]);
  });

  it('a per-tenant context keeps state for its tenant only, never across plugins', async () => {
    const solo = await createSandbox({
      workers: 1,
      maxQueue: 10,
      quarantineAfterCrashes: 10,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
    });
    try {
      const source = `let n = 0; export default { async run() { return ++n; } };`;
      const call = (name: string, contextKey: string) =>
        callTool(solo, bridge, { name, source, contextKey }).then((r) => r.result);
      assert.deepEqual(
        [
          await call('tenant-plugin', 'A'),
          await call('tenant-plugin', 'A'),
          await call('tenant-plugin', 'B'),
          await call('tenant-plugin', 'A'),
        ],
        [1, 2, 1, 3],
      );
      assert.equal(await call('tenant-plugin-2', 'A'), 1);
    } finally {
      await solo.close();
    }
  });
});
