/**
 * @module test/host/bridge/binary-bodies.test
 * ctx.http bodies that are bytes, through real isolates, the real sandbox process and the real
 * bridge against a loopback upstream: a response read with arrayBuffer() or bytes() arrives byte
 * for byte (every byte value), text() and json() give what they always gave (UTF-8 decoded, U+FFFD
 * for each invalid sequence, no byte-order mark), every read is a copy of its own; a request body
 * may be an ArrayBuffer or any view of one and reaches the upstream byte for byte; the request and
 * response caps count bytes, not base64 characters; a body of any other type is refused with
 * GW_ERR_BRIDGE_BAD_REQUEST before it leaves the sandbox; a body larger than the isolate's memory
 * fails the call with GW_ERR_SANDBOX_MEMORY; the credential echoed in a binary body never reaches
 * plugin code; and the multipart example of docs/plugin-runtime.md uploads what it should.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { createSandbox, type Sandbox } from '../../../host/supervisor/index.js';
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
import { EVERY_BYTE, INVALID_UTF8, startUpstream, UTF8_TEXT, type Upstream } from '../../helpers/sandbox/upstream.js';

const TOKEN = 'tok_live_9c1e5b7a3f2d4c60';
let up: Upstream;
let sandbox: Sandbox;
let bridge: Bridge;

before(async () => {
  up = await startUpstream();
  sandbox = await createSandbox({
    workers: 1,
    maxQueue: 100,
    quarantineAfterCrashes: 100,
    quarantineWindowMs: 1000,
    maxWorkerShare: 1,
    logger: captureLogger(),
  });
  bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin } }));
});
after(async () => {
  await sandbox?.close();
  await bridge?.close();
  await up?.close();
});

const tool = (body: string): string => `export default { async run(ctx, args) { ${body} } };`;
// no test here is about time: every call has room for a busy machine
const run = (spec: CallSpec, through: Bridge = bridge) =>
  callTool(sandbox, through, { ...spec, limits: { ...ROOMY, ...spec.limits } });
async function result(spec: CallSpec, through?: Bridge): Promise<any> {
  const r = await run(spec, through);
  assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
  return r.result;
}

describe('responses read as bytes', () => {
  it('arrive byte for byte through arrayBuffer() and bytes(), every byte value, and their text is what a text decoder makes of them', async () => {
    const r = await result({
      source: tool(`
        const res = await ctx.http('https://api.example.com/every-byte');
        const ab = await res.arrayBuffer(), u = await res.bytes();
        return { arrayBuffer: [Object.prototype.toString.call(ab), ab instanceof ArrayBuffer, ab.byteLength], bytes: [Object.prototype.toString.call(u), u.buffer.byteLength],
          fromArrayBuffer: [...new Uint8Array(ab)], fromBytes: [...u], base64: u.toBase64(), text: await res.text(), body: res.body };`),
    });
    assert.deepEqual(r.arrayBuffer, ['[object ArrayBuffer]', true, 256]);
    assert.deepEqual(r.bytes, ['[object Uint8Array]', 256]);
    assert.deepEqual(r.fromArrayBuffer, [...EVERY_BYTE]);
    assert.deepEqual(r.fromBytes, [...EVERY_BYTE]);
    assert.equal(r.base64, EVERY_BYTE.toString('base64'));
    assert.equal(r.text, new TextDecoder().decode(EVERY_BYTE));
    assert.equal(r.body, r.text);
  });

  it('text() and json() of UTF-8 text are as before, and arrayBuffer() gives its exact bytes (1 to 4 a character)', async () => {
    const r = await result({
      source: tool(`
        const res = await ctx.http('https://api.example.com/utf8');
        return { json: await res.json(), text: await res.text(), body: res.body, bytes: [...new Uint8Array(await res.arrayBuffer())] };`),
    });
    const served = JSON.stringify({ text: UTF8_TEXT });
    assert.deepEqual(r.json, { text: UTF8_TEXT });
    assert.equal(r.text, served);
    assert.equal(r.body, served);
    assert.deepEqual(r.bytes, [...Buffer.from(served)]);
  });

  it('text() of invalid UTF-8 has U+FFFD for each invalid sequence, as a text decoder has it, while bytes() keeps the bytes', async () => {
    const r = await result({
      source: tool(`
        const res = await ctx.http('https://api.example.com/invalid-utf8');
        const json = await res.json().then(() => 'parsed', (e) => e.name);
        return { text: await res.text(), body: res.body, bytes: [...await res.bytes()], json };`),
    });
    assert.equal(r.text, new TextDecoder().decode(INVALID_UTF8));
    assert.equal(r.text, 'ok \ufffd\ufffd(\ufffd \ufffd\ufffd\ufffd\ufffd end');
    assert.equal(r.body, r.text);
    assert.deepEqual(r.bytes, [...INVALID_UTF8]);
    assert.equal(r.json, 'SyntaxError');
  });

  it('text() and json() drop a byte-order mark, as before; bytes() keeps it', async () => {
    const r = await result({
      source: tool(`
        const res = await ctx.http('https://api.example.com/bom');
        return { json: await res.json(), text: await res.text(), bytes: [...await res.bytes()] };`),
    });
    assert.deepEqual(r.json, { a: 'é' });
    assert.equal(r.text, '{"a":"é"}');
    assert.deepEqual(r.bytes, [0xef, 0xbb, 0xbf, ...Buffer.from('{"a":"é"}')]);
  });

  it('may be read again and again, as text() and json() always could: each arrayBuffer() and bytes() is a copy of its own', async () => {
    const r = await result({
      source: tool(`
        const out = {};
        for (const path of ['/every-byte', '/utf8']) {
          const res = await ctx.http('https://api.example.com' + path);
          const first = await res.bytes();
          first.fill(7);
          const ab = await res.arrayBuffer();
          new Uint8Array(ab).fill(9);
          const again = await res.bytes();
          out[path] = { textTwice: (await res.text()) === (await res.text()), jsonTwice: path === '/utf8' ? (await res.json()).text === (await res.json()).text : null,
            fresh: first.buffer !== again.buffer && ab !== (await res.arrayBuffer()),
            again: again.toBase64() };
        }
        return out;`),
    });
    assert.deepEqual(r['/every-byte'], {
      textTwice: true,
      jsonTwice: null,
      fresh: true,
      again: EVERY_BYTE.toString('base64'),
    });
    assert.deepEqual(r['/utf8'], {
      textTwice: true,
      jsonTwice: true,
      fresh: true,
      again: Buffer.from(JSON.stringify({ text: UTF8_TEXT })).toString('base64'),
    });
  });

  it('over the response cap are refused at the cap counted in bytes, not base64 characters', async () => {
    const capped = createBridge(
      egressPolicy({ upstreams: { 'https://api.example.com': up.origin }, maxResponseBytes: 3000 }),
    );
    try {
      const r = await result(
        {
          source: tool(`
            const at = (await (await ctx.http('https://api.example.com/ff?n=3000')).arrayBuffer()).byteLength;
            const over = await ctx.http('https://api.example.com/ff?n=3001').then(() => 'read', (e) => e.code);
            return { at, over };`),
        },
        capped,
      );
      assert.deepEqual(r, { at: 3000, over: 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE' });
    } finally {
      await capped.close();
    }
  });

  it('larger than the isolate may hold fail the call with GW_ERR_SANDBOX_MEMORY, and the next call works', async () => {
    const big = createBridge(
      egressPolicy({ upstreams: { 'https://api.example.com': up.origin }, maxResponseBytes: 16 * 1024 * 1024 }),
    );
    try {
      const spec = { name: 'small-isolate', limits: { memoryMb: 8 } };
      const r = await run(
        {
          ...spec,
          source: tool(
            `const res = await ctx.http('https://api.example.com/ff?n=' + args.n); return (await res.bytes()).length;`,
          ),
          args: { n: 12 * 1024 * 1024 },
        },
        big,
      );
      assert.equal(errorCode(r), 'GW_ERR_SANDBOX_MEMORY', JSON.stringify(r.outcome));
      const next = await run(
        {
          ...spec,
          source: tool(
            `const res = await ctx.http('https://api.example.com/ff?n=' + args.n); return (await res.bytes()).length;`,
          ),
          args: { n: 1024 },
        },
        big,
      );
      assert.equal(next.result, 1024);
    } finally {
      await big.close();
    }
  });

  it('never hand plugin code the credential a binary body echoes (raw or in base64), in its bytes or its text', async () => {
    const r = await run({
      credential: { values: { token: TOKEN } },
      source: tool(`
        const res = await ctx.http('https://api.example.com/latin1-401');
        return { status: res.status, text: await res.text(), latin1: String.fromCharCode(...await res.bytes()) };`),
    });
    assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
    const text = JSON.stringify(r.result);
    assert.ok(!text.includes(TOKEN) && !text.includes(Buffer.from(`Bearer ${TOKEN}`).toString('base64')), text);
    assert.equal(
      up.received.at(-1)?.headers['authorization'],
      `Bearer ${TOKEN}`,
      'the upstream did get the credential',
    );
    assert.deepEqual(r.result, {
      status: 401,
      text: '<p>Ung\ufffdltiges Token: [REDACTED] ([REDACTED])</p>',
      latin1: '<p>Ungültiges Token: [REDACTED] ([REDACTED])</p>',
    });
  });
});

describe('request bodies that are bytes', () => {
  it('reach the upstream byte for byte with their content-length: a Uint8Array of every byte value, an ArrayBuffer, a window of a buffer, a DataView, a Uint16Array', async () => {
    const from = up.received.length;
    const r = await result({
      source: tool(`
        const all = new Uint8Array(256).map((_, i) => i);
        const sent = [
          [all, 'application/octet-stream'],
          [all.buffer, undefined],
          [new Uint8Array(all.buffer, 10, 5), undefined],
          [new DataView(all.buffer, 250), undefined],
          [new Uint16Array([0x0102, 0xfffe]), undefined],
        ];
        const echoed = [];
        for (const [body, type] of sent) {
          const res = await ctx.http('https://api.example.com/echo-bytes', { method: 'POST', body, headers: type ? { 'content-type': type } : {} });
          echoed.push((await res.bytes()).toBase64());
        }
        return echoed;`),
    });
    const expected = [
      EVERY_BYTE,
      EVERY_BYTE,
      EVERY_BYTE.subarray(10, 15),
      EVERY_BYTE.subarray(250),
      Buffer.from([0x02, 0x01, 0xfe, 0xff]),
    ];
    const got = up.received.slice(from);
    assert.deepEqual(
      got.map((g) => g.bytes),
      expected,
    );
    assert.deepEqual(
      got.map((g) => g.headers['content-length']),
      expected.map((b) => String(b.length)),
    );
    assert.deepEqual(
      got.map((g) => g.headers['content-type']),
      ['application/octet-stream', undefined, undefined, undefined, undefined],
      'no content-type of its own, as in fetch',
    );
    assert.deepEqual(
      r,
      expected.map((b) => b.toString('base64')),
    );
  });

  it('are taken for what they are, not what they say: a subclass lying about its length, patched prototype getters, a fake tag', async () => {
    const from = up.received.length;
    const r = await result({
      source: tool(`
        class Liar extends Uint8Array { get byteLength() { return 1; } get length() { return 1; } get buffer() { return new ArrayBuffer(1); } }
        const liar = new Liar([1, 2, 3]);
        const send = async (body) => (await ctx.http('https://api.example.com/echo-bytes', { method: 'POST', body })).text();
        const first = await send(liar);
        const TypedArray = Object.getPrototypeOf(Uint8Array.prototype);
        for (const key of ['buffer', 'byteOffset', 'byteLength', 'length']) Object.defineProperty(TypedArray, key, { get() { return 0; }, configurable: true });
        Object.defineProperty(TypedArray, Symbol.toStringTag, { get() { return 'Uint8Array'; }, configurable: true });
        const second = await send(new Uint8Array([4, 5, 6]));
        const third = await send({ [Symbol.toStringTag]: 'Uint8Array', 0: 7, length: 1 });
        return [first, second, third];`),
    });
    assert.deepEqual(
      up.received.slice(from).map((g) => [...g.bytes]),
      [[1, 2, 3], [4, 5, 6], [...Buffer.from('{"0":7,"length":1}')]],
    );
    assert.deepEqual(r, ['\u0001\u0002\u0003', '\u0004\u0005\u0006', '{"0":7,"length":1}']);
  });

  it('are held to the request body cap counted in bytes: at the cap one is sent, one byte over it is refused before it leaves the sandbox', async () => {
    const max = LIMITS.maxRequestBodyBytes;
    const from = up.received.length;
    const r = await result({
      args: { max },
      source: tool(`
        const send = (n) => ctx.http('https://api.example.com/echo-bytes', { method: 'POST', body: new Uint8Array(n).fill(255) }).then(async (res) => (await res.bytes()).length, (e) => e.code + ' ' + e.message);
        return [await send(args.max), await send(args.max + 1)];`),
    });
    assert.deepEqual(r, [
      max,
      `GW_ERR_BRIDGE_BAD_REQUEST GW_ERR_BRIDGE_BAD_REQUEST: the request body is ${max + 1} bytes; the limit is ${max}`,
    ]);
    assert.deepEqual(
      up.received.slice(from).map((g) => g.bytes.length),
      [max],
      'the one over the cap never reached the upstream',
    );
  });

  it('of any other type are refused with GW_ERR_BRIDGE_BAD_REQUEST; strings and objects are sent as before; no SharedArrayBuffer or detached buffer can be made on this V8 (and either is refused where it can)', async () => {
    const from = up.received.length;
    const r = await result({
      source: tool(`
        const refusal = (body) => ctx.http('https://api.example.com/echo-bytes', { method: 'POST', body }).then(() => 'sent', (e) => e.code + ' ' + e.message);
        const refused = [];
        for (const body of [5, true, 10n, Symbol('s'), () => 1]) refused.push(await refusal(body));
        const sent = [];
        for (const body of ['plain text', { a: [1, 'é'] }]) {
          const res = await ctx.http('https://api.example.com/echo-bytes', { method: 'POST', body });
          sent.push(await res.text());
        }
        const detachedRefusals = [];
        const canDetach = typeof ArrayBuffer.prototype.transfer === 'function';
        if (canDetach) {
          const b = new ArrayBuffer(8); b.transfer();
          const d = new ArrayBuffer(8); const view = new Uint8Array(d); d.transfer();
          detachedRefusals.push(await refusal(b), await refusal(view));
        }
        return { refused, sent, shared: [typeof SharedArrayBuffer, typeof Atomics], canDetach, detachedRefusals };`),
    });
    const because = (type: string): string =>
      `GW_ERR_BRIDGE_BAD_REQUEST GW_ERR_BRIDGE_BAD_REQUEST: TypeError: init.body must be a string, an ArrayBuffer, a typed array or DataView, a URLSearchParams, or an object or array to send as JSON (not a ${type})`;
    assert.deepEqual(r.refused, ['number', 'boolean', 'bigint', 'symbol', 'function'].map(because));
    assert.deepEqual(r.sent, ['plain text', '{"a":[1,"é"]}']);
    assert.deepEqual(
      up.received.slice(from).map((g) => g.headers['content-type']),
      ['text/plain;charset=UTF-8', 'application/json'],
      'only the string and the object reached the upstream, the object as JSON',
    );
    assert.deepEqual(r.shared, ['undefined', 'undefined']);
    if (r.canDetach)
      assert.deepEqual(
        r.detachedRefusals,
        Array(2).fill(
          'GW_ERR_BRIDGE_BAD_REQUEST GW_ERR_BRIDGE_BAD_REQUEST: TypeError: init.body is a detached ArrayBuffer, or a view of one',
        ),
      );
    else
      assert.equal(
        process.versions.node.split('.')[0],
        '20',
        'ArrayBuffer.prototype.transfer is missing only where V8 predates it (Node.js 20)',
      );
  });

  it('that are URLSearchParams are sent form-encoded as fetch sends them (a content-type of the plugin kept), and one that only claims to be is refused', async () => {
    const from = up.received.length;
    const r = await result({
      source: tool(`
        const sent = [];
        const post = async (body, headers) => sent.push(await (await ctx.http('https://api.example.com/echo-bytes', { method: 'POST', body, headers })).text());
        await post(new URLSearchParams({ text: 'a b&c=d', name: 'résumé ✓' }));
        class Mine extends URLSearchParams {}
        const mine = new Mine([['k', '1'], ['k', '2']]);
        // a plugin replacing the prototype's toString changes nothing: the body is the params' own
        URLSearchParams.prototype.toString = () => 'forged';
        await post(mine, { 'content-type': 'application/x-www-form-urlencoded' });
        const fake = Object.create(URLSearchParams.prototype);
        const refused = await ctx.http('https://api.example.com/echo-bytes', { method: 'POST', body: fake }).then(() => 'sent', (e) => e.code);
        return { sent, refused };`),
    });
    assert.deepEqual(r.sent, ['text=a+b%26c%3Dd&name=r%C3%A9sum%C3%A9+%E2%9C%93', 'k=1&k=2']);
    assert.equal(r.refused, 'GW_ERR_BRIDGE_BAD_REQUEST');
    assert.deepEqual(
      up.received.slice(from).map((g) => g.headers['content-type']),
      ['application/x-www-form-urlencoded;charset=UTF-8', 'application/x-www-form-urlencoded'],
    );
  });

  it('built as multipart/form-data as docs/plugin-runtime.md shows upload the text fields and the file byte for byte', async () => {
    const file = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), EVERY_BYTE]);
    const r = await result({
      args: { file: file.toString('base64') },
      source: `
        ${MULTIPART_EXAMPLE}
        export default { async run(ctx, args) {
          const { body, contentType } = multipart({ comment: 'résumé ✓' }, { field: 'file', name: 'pic "1".png', type: 'image/png', bytes: Uint8Array.fromBase64(args.file) }, 'BOUNDARY');
          const res = await ctx.http('https://api.example.com/echo-bytes', { method: 'POST', headers: { 'content-type': contentType }, body });
          return res.status;
        } };`,
    });
    assert.equal(r, 200);
    const got = up.received.at(-1);
    assert.equal(got?.headers['content-type'], 'multipart/form-data; boundary=BOUNDARY');
    const expected = Buffer.concat([
      Buffer.from('--BOUNDARY\r\nContent-Disposition: form-data; name="comment"\r\n\r\nrésumé ✓\r\n'),
      Buffer.from(
        '--BOUNDARY\r\nContent-Disposition: form-data; name="file"; filename="pic %221%22.png"\r\nContent-Type: image/png\r\n\r\n',
      ),
      file,
      Buffer.from('\r\n--BOUNDARY--\r\n'),
    ]);
    assert.deepEqual(got?.bytes, expected);
  });
});

/**
 * The multipart builder of docs/plugin-runtime.md, read from the document itself (its first code
 * block with `function multipart`, up to the function's closing line), so that the test runs what
 * readers copy.
 */
const MULTIPART_EXAMPLE = ((): string => {
  const doc = fs.readFileSync(path.join(PACKAGE_ROOT, 'docs', 'plugin-runtime.md'), 'utf8');
  const start = doc.indexOf('// multipart/form-data as bytes');
  const end = doc.indexOf('\n}\n', start);
  assert.ok(start >= 0 && end > start, 'docs/plugin-runtime.md shows the multipart builder');
  return doc.slice(start, end + 2);
})();
