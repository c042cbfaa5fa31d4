/**
 * @module test/sandbox/isolate/byte-codecs.test
 * The byte codecs the sandbox adds to every context (TextEncoder, TextDecoder, Uint8Array's
 * toBase64 and fromBase64, and btoa and atob rebuilt on them), run in a real isolate and compared
 * with Node.js's own implementations on a corpus: byte sequences rich in invalid UTF-8 (decoded
 * whole, fatally, and streamed in two pieces split anywhere), strings with every width of character
 * and lone surrogates, base64 in both alphabets, with and without padding and whitespace, and
 * strings atob must refuse. Plus the cases of ES2026's fromBase64 and toBase64, which Node.js 20
 * lacks: the answers expected are those of Chromium 156's own implementation.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LIMITS, useOneWorkerSandbox } from '../../helpers/sandbox/harness.js';

const box = useOneWorkerSandbox();
const limits = { ...LIMITS, maxArgsBytes: 4 * 1024 * 1024, maxResultBytes: 16 * 1024 * 1024, cpuMsPerCall: 5000 };

async function inIsolate(body: string, args: unknown): Promise<any> {
  const r = await box.run({
    name: 'codecs',
    limits,
    args,
    source: `export default { async run(ctx, args) { ${body} } };`,
  });
  assert.ok(r.outcome.ok, JSON.stringify(r.outcome));
  return r.result;
}

/** A deterministic pseudo-random source (the corpus is the same on every run). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Byte sequences mostly from the bytes UTF-8 decoders trip on: leads, continuations, the edges of their ranges. */
function byteCorpus(): number[][] {
  const next = random(7);
  const interesting = [
    0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef,
    0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff, 0xbb, 0xbf,
  ];
  const out: number[][] = [
    [],
    [0xef, 0xbb, 0xbf],
    [0xef, 0xbb, 0xbf, 0x41],
    [0xef, 0xbb],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf0, 0x9f, 0x98, 0x80],
  ];
  for (let i = 0; i < 400; i++) {
    const n = 1 + Math.floor(next() * 12);
    out.push(
      Array.from({ length: n }, () =>
        next() < 0.75 ? (interesting[Math.floor(next() * interesting.length)] ?? 0) : Math.floor(next() * 256),
      ),
    );
  }
  return out;
}

const STRINGS = [
  '',
  'plain ascii',
  'é ü ß',
  '✓ 日本 €',
  '😀 𝄞',
  'lone \ud800 high',
  'lone \udc00 low',
  '\udc00\ud800 reversed',
  'end \ud83d',
  '\u0000\u007f\u0080\u07ff\u0800\uffff',
];

describe('TextDecoder (UTF-8)', () => {
  it('decodes as Node.js does: whole, fatally, streamed in two pieces split anywhere, with and without a byte-order mark', async () => {
    const corpus = byteCorpus();
    const got = await inIsolate(
      `
      const out = [];
      for (const bytes of args.corpus) {
        const u = new Uint8Array(bytes);
        const fatal = (() => { try { return new TextDecoder('utf-8', { fatal: true }).decode(u); } catch (e) { return e.name; } })();
        const split = [];
        for (let at = 0; at <= u.length; at++) {
          const d = new TextDecoder();
          split.push(d.decode(new Uint8Array(bytes.slice(0, at)), { stream: true }) + d.decode(new Uint8Array(bytes.slice(at))));
        }
        out.push([new TextDecoder().decode(u), new TextDecoder('UTF8', { ignoreBOM: true }).decode(u.buffer), fatal, split]);
      }
      return out;`,
      { corpus },
    );
    const expected = corpus.map((bytes) => {
      const u = new Uint8Array(bytes);
      let fatal: string;
      try {
        fatal = new TextDecoder('utf-8', { fatal: true }).decode(u);
      } catch (e) {
        fatal = (e as Error).name;
      }
      const split: string[] = [];
      for (let at = 0; at <= u.length; at++) {
        const d = new TextDecoder();
        split.push(
          d.decode(new Uint8Array(bytes.slice(0, at)), { stream: true }) + d.decode(new Uint8Array(bytes.slice(at))),
        );
      }
      return [new TextDecoder().decode(u), new TextDecoder('utf8', { ignoreBOM: true }).decode(u), fatal, split];
    });
    assert.deepEqual(got, expected);
  });

  it('takes any view and no other input, knows only utf-8 labels, and says what it is', async () => {
    const got = await inIsolate(
      `
      const ab = new TextEncoder().encode('xé✓').buffer;
      const d = new TextDecoder(' Unicode-1-1-UTF-8 '), strict = new TextDecoder(undefined, { fatal: 1, ignoreBOM: 'yes' });
      const threw = (f) => { try { f(); return 'no'; } catch (e) { return e.name; } };
      return { views: [d.decode(new DataView(ab, 1)), d.decode(new Uint16Array(ab, 0, 1)), d.decode()],
        props: [d.encoding, d.fatal, d.ignoreBOM, strict.fatal, strict.ignoreBOM, Object.prototype.toString.call(d)],
        refused: [threw(() => d.decode('text')), threw(() => d.decode([1, 2])), threw(() => new TextDecoder('latin1')), threw(() => new TextDecoder('utf-16le'))] };`,
      {},
    );
    assert.deepEqual(got, {
      views: ['é✓', 'x\ufffd', ''],
      props: ['utf-8', false, false, true, true, '[object TextDecoder]'],
      refused: ['TypeError', 'TypeError', 'RangeError', 'RangeError'],
    });
  });
});

describe('TextEncoder', () => {
  it('encodes as Node.js does, a lone surrogate as U+FFFD; encodeInto writes whole characters while they fit', async () => {
    const got = await inIsolate(
      `
      const e = new TextEncoder();
      return args.strings.map((s) => {
        const into = [];
        for (let room = 0; room <= 12; room += 3) { const dest = new Uint8Array(room); const r = e.encodeInto(s, dest); into.push([r.read, r.written, [...dest]]); }
        return [[...e.encode(s)], into];
      }).concat([[[...e.encode()], e.encoding]]);`,
      { strings: STRINGS },
    );
    const e = new TextEncoder();
    const expected: unknown[] = STRINGS.map((s) => {
      const into = [];
      for (let room = 0; room <= 12; room += 3) {
        const dest = new Uint8Array(room);
        const r = e.encodeInto(s, dest);
        into.push([r.read, r.written, [...dest]]);
      }
      return [[...e.encode(s)], into];
    });
    expected.push([[], 'utf-8']);
    assert.deepEqual(got, expected);
  });
});

describe('Uint8Array base64 (ES2026) and btoa/atob', () => {
  it('toBase64 and fromBase64 agree with Node.js in both alphabets, with and without padding, for every length of a short input; btoa and atob, rebuilt on them, too', async () => {
    const next = random(11);
    const inputs = Array.from({ length: 40 }, (_, n) => Array.from({ length: n }, () => Math.floor(next() * 256)));
    const got = await inIsolate(
      `
      return args.inputs.map((bytes) => {
        const u = new Uint8Array(bytes);
        const b64 = u.toBase64(), url = u.toBase64({ alphabet: 'base64url', omitPadding: true });
        return [b64, url, u.toBase64({ omitPadding: true }), [...Uint8Array.fromBase64(b64)], [...Uint8Array.fromBase64(url, { alphabet: 'base64url' })],
          [...Uint8Array.fromBase64(' ' + b64.split('').join('\\n') + '\\t')], Uint8Array.fromBase64(b64).buffer.byteLength];
      });`,
      { inputs },
    );
    const expected = inputs.map((bytes) => {
      const b = Buffer.from(bytes);
      return [
        b.toString('base64'),
        b.toString('base64url'),
        b.toString('base64').replace(/=+$/, ''),
        bytes,
        bytes,
        bytes,
        bytes.length,
      ];
    });
    assert.deepEqual(got, expected);

    // btoa and atob, refusals included
    const latin1 = inputs.map((bytes) => String.fromCharCode(...bytes));
    const base64 = [
      '',
      'YQ',
      'YQ=',
      'YQ==',
      'YQ===',
      'Y',
      'YWJj',
      'YWJj=',
      ' Y W\nJ j ',
      'YQ= =',
      'YQ==YQ==',
      'Y===',
      'YR',
      'YR==',
      'a-b_',
      'é',
      '=',
      'AAAA\f',
      'Zm9v\u00a0',
    ];
    const cases = [...latin1.map((s) => ['btoa', s]), ['btoa', 'Ā'], ...base64.map((s) => ['atob', s])];
    const web = await inIsolate(
      `return args.cases.map(([f, s]) => { try { return f === 'btoa' ? btoa(s) : atob(s); } catch (e) { return e.name; } });`,
      { cases },
    );
    assert.deepEqual(
      web,
      cases.map(([f, s]) => {
        try {
          return f === 'btoa' ? btoa(s as string) : atob(s as string);
        } catch (e) {
          return (e as Error).name;
        }
      }),
    );
  });

  it("fromBase64 and toBase64 follow the standard's options and refusals", async () => {
    const got = await inIsolate(
      `
      const out = (f) => { try { const v = f(); return typeof v === 'string' ? v : [...v]; } catch (e) { return e.name; } };
      const from = (s, o) => out(() => Uint8Array.fromBase64(s, o));
      return {
        loose: [from('YQ'), from('YR'), from('YWI'), from('YQ=='), from('YQ='), from('Y'), from('YQ==YQ=='), from('Y Q = ='), from('YQ==  '), from('='), from('YWI=x'), from('YQ===')],
        strict: [from('YQ==', { lastChunkHandling: 'strict' }), from('YQ', { lastChunkHandling: 'strict' }), from('YR==', { lastChunkHandling: 'strict' }), from('YQ=\\n=', { lastChunkHandling: 'strict' }), from('YWJ=', { lastChunkHandling: 'strict' })],
        partial: [from('YWJjZA', { lastChunkHandling: 'stop-before-partial' }), from('YWJjZA=', { lastChunkHandling: 'stop-before-partial' }), from('YWJj', { lastChunkHandling: 'stop-before-partial' }),
          from('YQ', { lastChunkHandling: 'stop-before-partial' }), from('YW=', { lastChunkHandling: 'stop-before-partial' }), from('Y=', { lastChunkHandling: 'stop-before-partial' })],
        alphabets: [from('-_8', { alphabet: 'base64url' }), from('+/8'), from('-_8'), from('+/8', { alphabet: 'base64url' })],
        refused: [from(5), from('YQ', { alphabet: 'hex' }), from('YQ', { lastChunkHandling: 'lenient' }), from('YQ', 'options'), from('é')],
        toBase64: [out(() => new Uint8Array([255, 254]).toBase64({ alphabet: 'base64url' })), out(() => Uint8Array.prototype.toBase64.call(new Uint16Array(1))),
          out(() => new Uint8Array(1).toBase64({ alphabet: 'x' })), out(() => new Uint8Array(4).subarray(1, 2).toBase64())],
        shapes: [Uint8Array.fromBase64.length, Uint8Array.prototype.toBase64.length, Object.keys(Uint8Array.prototype).includes('toBase64'), Object.keys(Uint8Array).includes('fromBase64')],
      };`,
      {},
    );
    assert.deepEqual(got, {
      loose: [
        [0x61],
        [0x61],
        [0x61, 0x62],
        [0x61],
        'SyntaxError',
        'SyntaxError',
        'SyntaxError',
        [0x61],
        [0x61],
        'SyntaxError',
        'SyntaxError',
        'SyntaxError',
      ],
      strict: [[0x61], 'SyntaxError', 'SyntaxError', [0x61], 'SyntaxError'],
      partial: [[0x61, 0x62, 0x63], [0x61, 0x62, 0x63], [0x61, 0x62, 0x63], [], [], 'SyntaxError'],
      alphabets: [[0xfb, 0xff], [0xfb, 0xff], 'SyntaxError', 'SyntaxError'],
      refused: ['TypeError', 'TypeError', 'TypeError', 'TypeError', 'SyntaxError'],
      toBase64: ['__4=', 'TypeError', 'TypeError', 'AA=='],
      shapes: [1, 0, false, false],
    });
  });

  it('turns 5 MiB of bytes into base64 and back within a step, as an _mcpImage needs', async () => {
    const got = await inIsolate(
      `
      const n = 5 * 1024 * 1024, bytes = new Uint8Array(n);
      for (let i = 0; i < n; i++) bytes[i] = Math.imul(i, 2654435761) >>> 24;
      const b64 = bytes.toBase64();
      const back = Uint8Array.fromBase64(b64);
      let same = back.length === n;
      for (let i = 0; same && i < n; i++) same = back[i] === bytes[i];
      return { b64, same };`,
      {},
    );
    const bytes = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.imul(i, 2654435761) >>> 24;
    assert.equal(got.same, true);
    assert.equal(got.b64, bytes.toString('base64'));
  });
});
