/**
 * @module test/host/bridge/redaction-forms.unit.test
 * The forms of a secret redaction removes, in text and in bytes: case-folded (lower and upper, as
 * URL parsing and undici fold host names and header names), percent-encoded as the URL parser does
 * it (only some characters) or as any encoder may (every one), JSON-escaped, punycode (a secret in
 * a host name label), base64 of the secret and of `user:secret`; and, by property, any mix of those
 * encodings character by character behind any prefix (the cheap search for clues must never rule
 * out a text the full pattern would match).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_ENCODED_SITES, Redactor, secretSpellings } from '../../../host/bridge/redaction.js';

const KEY = 'GhpQ7xVb2LmN9kTzR4sWc8YdA1';
const USER = 'Sk-7 Qx/Ab+Cd=Ef"Gh';
const BASIC = Buffer.from(`${USER}:${KEY}`).toString('base64');
const redactor = Redactor.of([USER, KEY, BASIC, `Basic ${BASIC}`]) as Redactor;

const hex = (b: number): string => b.toString(16).padStart(2, '0');
const b64url = (s: string): string => Buffer.from(s).toString('base64url');

/** form → the text an echo holds */
const FORMS: Record<string, string> = {
  'lower case': KEY.toLowerCase(),
  'upper case': KEY.toUpperCase(),
  'a URL path (the parser encodes the space and the quote, not / + =)': new URL(
    `https://h.example/${USER}`,
  ).pathname.slice(1),
  'a URL query': new URL(`https://h.example/?q=${USER}`).search.slice(3),
  'every byte percent-encoded, lower-case hex': [...Buffer.from(USER)].map((b) => `%${hex(b)}`).join(''),
  'encodeURIComponent, upper-cased': encodeURIComponent(USER).toUpperCase(),
  'a form body (+ for a space)': new URLSearchParams({ u: USER }).toString().slice(2),
  'JSON, every character \\u-escaped': [...USER].map((c) => `\\u${hex(c.charCodeAt(0)).padStart(4, '0')}`).join(''),
  'JSON with \\/ (PHP)': JSON.stringify(USER).slice(1, -1).replace(/\//g, '\\/'),
  'punycode of a host label': new URL(`https://${KEY}\u00fc.example/`).hostname.split('.')[0] as string,
  'a scheme (lower-cased)': new URL(`${KEY}:x`).protocol,
  'base64, lower-cased': Buffer.from(KEY).toString('base64').toLowerCase(),
  'base64 at another alignment, upper-cased': Buffer.from(`xy${KEY}`).toString('base64').toUpperCase(),
  base64url: b64url(KEY),
  'base64 of user:secret, lower-cased': BASIC.toLowerCase(),
  'base64url of user:secret, lower-cased': b64url(`${USER}:${KEY}`).toLowerCase(),
};

/** A text with percent-encoded runs, `\uXXXX` and JSON's short escapes decoded, as plugin code could. */
function decoded(text: string): string {
  const percent = text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  return percent
    .replace(/\\u([0-9a-f]{4})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\(["\\/])/g, '$1')
    .replace(/\+/g, ' ');
}

/**
 * Asserts that the echo was redacted and that no 9 characters of it in a row are left, in any case.
 * A base64 form keeps up to 4 characters at each end: those depend on the bytes around the secret.
 */
function assertRedacted(out: string, echo: string): void {
  assert.match(out, /\[REDACTED\]/, echo);
  for (let i = 0; i + 9 <= echo.length; i++)
    assert.ok(
      !out.toLowerCase().includes(echo.slice(i, i + 9).toLowerCase()),
      `${echo} left ${echo.slice(i, i + 9)} in ${out}`,
    );
}

describe('redaction forms', () => {
  for (const [form, echo] of Object.entries(FORMS))
    it(`removes the secret written as ${form}, in text and in bytes`, () => {
      assertRedacted(redactor.text(`<<${echo}>>`), echo);
      const bytes = Buffer.from(
        redactor.bytes(Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.from(echo), Buffer.from([0xc3])])),
      );
      assert.deepEqual([...bytes.subarray(0, 2), bytes.at(-1)], [0xff, 0x00, 0xc3], 'the bytes around are kept');
      assertRedacted(bytes.toString('latin1'), echo);
    });

  it('leaves text without a secret as it is, and bytes without one as the same object', () => {
    const text = `{"a":"%41%42 \\u0041 ${KEY.slice(0, 10)}"}`;
    assert.equal(redactor.text(text), text);
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    assert.equal(redactor.bytes(bytes), bytes);
  });

  it('removes case-folded non-ASCII secrets, percent-encoded and in bytes', () => {
    const r = Redactor.of(['Ünïcödé-Sécret']) as Redactor;
    for (const echo of [
      'ünïcödé-sécret',
      'ÜNÏCÖDÉ-SÉCRET',
      encodeURIComponent('ünïcödé-sécret'),
      encodeURIComponent('ÜNÏCÖDÉ-SÉCRET'),
    ]) {
      assert.equal(r.text(`(${echo})`), '([REDACTED])', echo);
      assert.equal(
        Buffer.from(r.bytes(Buffer.concat([Buffer.from([0xff]), Buffer.from(echo)])))
          .subarray(1)
          .toString(),
        '[REDACTED]',
        echo,
      );
    }
  });

  it('finds an escaped echo anywhere in a large body among escaped letters; a body dense with them and holding one is withheld whole', () => {
    const r = Redactor.of([KEY]) as Redactor;
    const everyByte = [...Buffer.from(KEY)].map((b) => `%${hex(b)}`).join('');
    // one escaped letter in the middle: the decoded stretch around it must hold all the rest
    const oneLetter = `${KEY.slice(0, 14)}%${hex(KEY.charCodeAt(14))}${KEY.slice(15)}`;
    const filler = (n: number, every: number): string =>
      Array.from({ length: n }, (_, i) =>
        i % every === every - 1 ? '%41' : String.fromCharCode(0x80 + (i % 100)),
      ).join('');
    for (const [every, echo] of [
      [50_000, everyByte],
      [50_000, oneLetter],
      [100, oneLetter],
    ] as const) {
      const body = filler(400_000, every);
      for (const at of [0, 1, 200_000, body.length]) {
        const text = body.slice(0, at) + echo + body.slice(at);
        const want = every === 100 ? '[REDACTED]' : `${body.slice(0, at)}[REDACTED]${body.slice(at)}`;
        assert.ok(r.text(text) === want, `escaped letters every ${every}, echo at ${at}`);
        assert.ok(
          Buffer.from(r.bytes(Buffer.from(text, 'latin1'))).toString('latin1') === want,
          `as bytes: escaped letters every ${every}, echo at ${at}`,
        );
      }
      assert.equal(r.text(body), body, 'without an echo the body is kept');
    }
  });

  it(`withholds a long body with more than ${MAX_ENCODED_SITES} encoded echoes whole, and redacts one with as many exact echoes one by one`, () => {
    const r = Redactor.of([KEY]) as Redactor;
    const pad = 'x'.repeat(2000);
    const encoded = `${KEY.slice(0, 10)}%${hex(KEY.charCodeAt(10))}${KEY.slice(11)}`;
    assert.equal(
      r.text(
        Array(MAX_ENCODED_SITES + 1)
          .fill(encoded)
          .join(pad),
      ),
      '[REDACTED]',
    );
    assert.equal(
      r.text(Array(MAX_ENCODED_SITES).fill(encoded).join(pad)),
      Array(MAX_ENCODED_SITES).fill('[REDACTED]').join(pad),
    );
    assert.equal(r.text(Array(1000).fill(KEY.toLowerCase()).join(pad)), Array(1000).fill('[REDACTED]').join(pad));
  });

  it('redacts 6 MB a hostile upstream made costly in well under the seconds that matching every encoding over it all took', () => {
    const secrets = [USER, KEY, BASIC, `Basic ${BASIC}`];
    const r = Redactor.of(secrets) as Redactor;
    const escapedKey = [...KEY].map((ch, i) => (i % 3 === 0 ? `%${hex(ch.charCodeAt(0))}` : ch)).join('');
    const size = 6e6;
    const bodies: Record<string, string> = {
      'escapes everywhere': '%41%42%43\\u0044\\u0065 '.repeat(size / 25),
      'escaped echoes everywhere': `${escapedKey} `.repeat(size / (escapedKey.length + 1)),
      'exact echoes everywhere': `${KEY.toLowerCase()} `.repeat(size / (KEY.length + 1)),
      // every spelling a candidate, then escaped letters throughout: 4 s before sites
      'a clue of every spelling, then escaped letters': `${secretSpellings(secrets)
        .map((sp) => sp.slice(5))
        .join(' ')} ${'lorem ipsum %41 dolor '.repeat(size / 22)}`,
    };
    for (const [name, body] of Object.entries(bodies)) {
      const started = performance.now();
      const out = r.text(body);
      const ms = performance.now() - started;
      assert.ok(ms < 2500, `${name}: ${Math.round(ms)} ms`);
      assert.ok(!decoded(out).toLowerCase().includes(KEY.toLowerCase()), name);
    }
  });

  it('removes any mix of encodings, character by character, behind any prefix, in a short text or a long one', () => {
    const secretChar = fc.constantFrom(...'abcXYZ019-_./+=: "~%\\é'.split(''));
    const encodings = ['raw', 'lower', 'upper', 'pct', 'PCT', 'json', 'JSON', 'short', 'plus'] as const;
    const encode = (ch: string, how: (typeof encodings)[number]): string => {
      const bytes = [...Buffer.from(ch)];
      if (how === 'lower') return ch.toLowerCase();
      if (how === 'upper') return ch.toUpperCase();
      if (how === 'pct' || how === 'PCT')
        return bytes.map((b) => `%${how === 'pct' ? hex(b) : hex(b).toUpperCase()}`).join('');
      const unit = hex(ch.charCodeAt(0)).padStart(4, '0');
      if (how === 'json' || how === 'JSON') return `\\u${how === 'json' ? unit : unit.toUpperCase()}`;
      if (how === 'short' && '"\\/'.includes(ch)) return `\\${ch}`;
      if (how === 'plus' && ch === ' ') return '+';
      return ch;
    };
    const prefix = fc.constantFrom('', '%', '%4', '%u00', '\\', '\\u00', '\\u004', 'x', '%%', '\\\\');
    fc.assert(
      fc.property(
        fc.array(secretChar, { minLength: 6, maxLength: 40 }),
        fc.array(fc.constantFrom(...encodings), { minLength: 40, maxLength: 40 }),
        prefix,
        fc.constantFrom(0, 30),
        (chars, hows, before, padding) => {
          const secret = chars.join('');
          const echo = chars.map((ch, i) => encode(ch, hows[i] ?? 'raw')).join('');
          // a long text is searched site by site (around clues and escaped letters), a short one whole
          const filler = 'lorem %20 ipsum\\n dolor \\" sit '.repeat(padding * 25);
          const whole = (Redactor.of([secret]) as Redactor).text(`${filler}${before}${echo}.${filler}`);
          assert.ok(whole.startsWith(filler) && whole.endsWith(`.${filler}`), 'the filler around is kept');
          const out = whole.slice(filler.length, whole.length - filler.length);
          // the echo goes, but for at most one character's escape at its edges (a raw match may start inside `\u0030…`)
          const left = decoded(out).toLowerCase();
          const pieces = [secret.slice(1), secret.slice(0, -1)].map((p) => p.toLowerCase().replace(/\+/g, ' '));
          assert.ok(
            out.includes('[REDACTED]') && !pieces.some((p) => left.includes(p)),
            `${JSON.stringify(secret)} as ${JSON.stringify(echo)} after ${JSON.stringify(before)}: ${out}`,
          );
        },
      ),
      { numRuns: 500 },
    );
  });
});
