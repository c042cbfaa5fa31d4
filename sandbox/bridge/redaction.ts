/**
 * @module sandbox/bridge/redaction
 * Removes secret values from text before it is returned towards plugin code. An upstream that
 * echoes request headers, or an error page that quotes the token, would otherwise hand the
 * credential to the plugin (sandbox.md §0.9).
 *
 * Each secret is searched for in several spellings: itself, base64 and base64url (including base64
 * that starts at a different byte alignment inside a longer blob) and punycode (a secret placed in
 * a host name label comes back from URL parsing as `xn--…`). Within a spelling, every character
 * may appear as itself, percent-encoded (its UTF-8 bytes, either hex case; `+` for a space) or
 * JSON-escaped (`\uXXXX`, either hex case, or a short escape such as `\/`): encoders differ in
 * which characters they escape (PHP's json_encode writes `/` as `\/`, .NET's `+` as `\u002B`, the
 * URL parser percent-encodes a space in a path but leaves `/` and `+`), so the characters of one
 * echo may be encoded one way and another.
 *
 * Matching ignores case. The gateway folds case itself before redaction sees an answer: URL parsing
 * lower-cases host names (and schemes) in redirect targets, undici lower-cases response header
 * names. An exact match would let an upstream that echoes the credential there hand it to plugin
 * code in lower case, which for a checksummed token is nearly the whole secret. Upper case (an
 * echo that shouts) is matched the same way, and the lower- and upper-case forms of a non-ASCII
 * character are spelt out, since their UTF-8 bytes differ.
 *
 * A body that is not UTF-8 text (which reaches plugin code as bytes) is searched byte for byte for
 * the UTF-8 bytes of the same forms (`Redactor.bytes`). That covers its text too: the isolate
 * decodes each character of it from that character's own bytes, so text holding a secret comes
 * from bytes holding the secret's UTF-8. What no form covers is a secret transformed otherwise:
 * split into pieces, compressed inside a zip or gzip file, hex-encoded, UTF-16: redaction catches
 * echoes, not an upstream set on disguising the credential.
 */
import { domainToASCII } from 'node:url';

export const REDACTED = '[REDACTED]';
/** Shorter values are not redacted: replacing 1–3 characters everywhere would destroy bodies. */
export const MIN_SECRET_LENGTH = 4;

function base64Spellings(value: string): string[] {
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const full = Buffer.from('\0'.repeat(k) + value, 'utf8');
    const b64 = full.toString('base64');
    if (k === 0) out.push(b64, b64.replace(/=+$/, ''));
    // characters fully determined by the secret bytes, whatever surrounds them
    const core = b64.slice(k === 0 ? 0 : 4, b64.length - 4);
    if (core.length >= 8) out.push(core);
  }
  return out.flatMap((s) => [s, s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')]);
}

/** The value as a host name label after URL parsing, when that spells it otherwise than by case. */
function punycodeSpellings(value: string): string[] {
  const ascii = domainToASCII(value);
  return ascii !== '' && ascii.toLowerCase() !== value.toLowerCase() ? [ascii] : [];
}

/** Every spelling of every secret, longest first (so a longer one is replaced before its parts). */
export function secretSpellings(values: readonly string[]): string[] {
  const spellings = new Set<string>();
  for (const v of values) {
    if (typeof v !== 'string' || v.length < MIN_SECRET_LENGTH) continue;
    for (const s of [v, ...base64Spellings(v), ...punycodeSpellings(v)]) if (s.length >= MIN_SECRET_LENGTH) spellings.add(s);
  }
  return [...spellings].sort((a, b) => b.length - a.length);
}

/** JSON's two-character escapes. */
const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const percentEncoded = (text: string): string => [...Buffer.from(text, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0')).join('');
const jsonEscaped = (text: string): string => [...Array(text.length).keys()].map((i) => '\\u' + text.charCodeAt(i).toString(16).padStart(4, '0')).join('');
const regExpSource = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** A string read one character per byte: how bytes are searched for text (latin1 maps each byte to one character and back). */
const byteView = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

/**
 * One character (code point) of a spelling as regular-expression source: each of its case forms as
 * itself, percent-encoded or JSON-escaped, its short JSON escape, and `+` for a space. `bytes`: as
 * UTF-8 bytes read one character per byte. Alternatives the `i` flag already equates are left out.
 */
function characterPattern(ch: string, bytes: boolean): string {
  const written = new Map<string, string>();
  const add = (text: string): void => {
    const seen = bytes ? byteView(text) : text;
    if (!written.has(seen.toLowerCase())) written.set(seen.toLowerCase(), regExpSource(seen));
  };
  for (const form of new Set([ch, ch.toLowerCase(), ch.toUpperCase()])) {
    add(form);
    add(percentEncoded(form));
    add(jsonEscaped(form));
  }
  const short = SHORT_ESCAPES[ch];
  if (short) add(short);
  if (ch === ' ') add('+');
  // longest first: `\u005C` is one backslash, not a backslash followed by `u005C`
  const alternatives = [...written.values()].sort((a, b) => b.length - a.length);
  return alternatives.length === 1 ? (alternatives[0] as string) : `(?:${alternatives.join('|')})`;
}

function secretPattern(spellings: readonly string[], bytes: boolean): RegExp {
  return new RegExp(spellings.map((s) => [...s].map((ch) => characterPattern(ch, bytes)).join('')).join('|'), 'gi');
}

/** An escape that decodes to a letter or digit (`%41`, `\u0041`, `%u0041`, either case): rare outside an echo. */
const ALNUM_ESCAPE = /(?:%|[\\%]u00)(?:3[0-9]|[46][1-9a-f]|[57][0-9a])/i;
const ALNUM_ESCAPES = new RegExp(ALNUM_ESCAPE.source, 'gi');

/**
 * The text with its percent-encoded bytes and `\uXXXX` escapes decoded, for the search for clues
 * only (never handed on). `unescape` decodes `%XX` and `%uXXXX` natively in one pass and leaves a
 * `%` that starts no escape as it is.
 */
function decodedView(text: string): string {
  return unescape(text.replace(/\\u(?=[0-9a-f]{4})/gi, '%u'));
}

/**
 * The decoded view of the stretches of text within `reach` of an escaped letter or digit, joined
 * by line breaks (no clue holds one): an echo holding such an escape lies within one stretch when
 * `reach` is as long as the longest echo can be. Decoding 8 MB whole takes 60 ms; random bytes hold
 * a few dozen such escapes. Where they are too many for stretches to save work, the whole text.
 */
function escapedStretches(text: string, reach: number): string {
  const stretches: string[] = [];
  let start = 0;
  let end = -1;
  let count = 0;
  ALNUM_ESCAPES.lastIndex = 0;
  for (let m = ALNUM_ESCAPES.exec(text); m !== null; m = ALNUM_ESCAPES.exec(text)) {
    if (++count * 2 * reach > text.length) return decodedView(text);
    if (m.index - reach > end) {
      if (end >= 0) stretches.push(decodedView(text.slice(start, end)));
      start = Math.max(0, m.index - reach);
    }
    end = m.index + reach;
  }
  if (end >= 0) stretches.push(decodedView(text.slice(start, end)));
  return stretches.join('\n');
}

/**
 * What a text holding the spelling must contain, in any case, once decoded: the longest run of
 * letters and digits in the spelling without its first five characters. An escape just before an
 * echo can swallow up to five of them in the decoded view (`%4` before a secret starting `1…`
 * reads `%41`; `\` before one starting `u0041…` reads `\u0041`); every later one decodes as the
 * spelling has it. A spelling holding `%` or `\` can be read otherwise anywhere: it has no clue,
 * and neither has one without letters or digits; such a spelling is always matched in full.
 */
function clueOf(spelling: string): RegExp | undefined {
  if (/[%\\]/.test(spelling)) return undefined;
  const runs = spelling.slice(Math.min(5, spelling.length - 1)).match(/[a-z0-9]+/gi) ?? [];
  const longest = runs.reduce((a, b) => (b.length > a.length ? b : a), '');
  return longest === '' ? undefined : new RegExp(longest, 'i');
}

/**
 * Removes the secrets of one call from what is handed to plugin code. A pattern that spells out
 * every encoding of every character is exact but costly to compile (4 ms for a token and its
 * header value, more than the rest of a call), so a text is first searched for each spelling's
 * clue (plain letters and digits, one cheap pattern; in the decoded view too when the text holds
 * an escape of a letter or digit), and only the spellings whose clue it holds are matched in full.
 */
export class Redactor {
  readonly #spellings: ReadonlyArray<{ spelling: string; clue: RegExp | undefined }>;
  readonly #anyClue: RegExp;
  /** the longest an echo of a spelling can be: 12 characters for each UTF-8 byte (`%XX` of each, or `\uXXXX` for each half of a pair) */
  readonly #reach: number;
  readonly #patterns = new Map<string, RegExp>();

  /** Undefined when no secret is long enough to be redacted. */
  static of(values: readonly string[]): Redactor | undefined {
    const spellings = secretSpellings(values);
    return spellings.length === 0 ? undefined : new Redactor(spellings);
  }

  private constructor(spellings: readonly string[]) {
    this.#spellings = spellings.map((spelling) => ({ spelling, clue: clueOf(spelling) }));
    const clues = [...new Set(this.#spellings.map((s) => s.clue?.source ?? ''))];
    // a spelling without a clue makes every text a candidate ('' matches anywhere)
    this.#anyClue = new RegExp(clues.join('|'), 'i');
    this.#reach = 12 * Math.max(...spellings.map((s) => Buffer.byteLength(s)));
  }

  text(text: string): string {
    return this.#redact(text, false);
  }

  /**
   * Bytes (a body that is not UTF-8 text): the forms `text` removes, found as their UTF-8 bytes,
   * each replaced by the bytes of REDACTED. Returns `bytes` itself when nothing was found.
   */
  bytes(bytes: Uint8Array): Uint8Array {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    const redacted = this.#redact(view, true);
    return redacted === view ? bytes : Buffer.from(redacted, 'latin1');
  }

  /** Header names and values alike (undici hands names on lower-cased). */
  headers(headers: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) out[this.text(k)] = this.text(v);
    return out;
  }

  #redact(text: string, bytes: boolean): string {
    const views = ALNUM_ESCAPE.test(text) ? [text, escapedStretches(text, this.#reach)] : [text];
    if (!views.some((v) => this.#anyClue.test(v))) return text;
    const candidates = this.#spellings.filter((s) => !s.clue || views.some((v) => s.clue?.test(v))).map((s) => s.spelling);
    const key = `${bytes ? 'bytes' : 'text'}\0${candidates.join('\0')}`;
    let pattern = this.#patterns.get(key);
    if (!pattern) this.#patterns.set(key, (pattern = secretPattern(candidates, bytes)));
    return text.replace(pattern, REDACTED);
  }
}
