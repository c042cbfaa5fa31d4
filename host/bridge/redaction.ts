/**
 * @module host/bridge/redaction
 * Removes secret values from text before it is returned towards plugin code. An upstream that
 * echoes request headers, or an error page that quotes the token, would otherwise hand the
 * credential to the plugin (sandbox.md §0.9).
 *
 * Each secret is searched for in several spellings: itself, base64 and base64url (including base64
 * that starts at a different byte alignment inside a longer blob) and punycode (a secret beyond
 * ASCII placed in a host name label comes back from URL parsing as `xn--…`). Within a spelling,
 * every character may appear as itself, percent-encoded or JSON-escaped, each character its own
 * way (redaction-pattern.ts): encoders differ in which characters they escape.
 *
 * Matching ignores case. The gateway folds case itself before redaction sees an answer: URL parsing
 * lower-cases host names (and schemes) in redirect targets, undici lower-cases response header
 * names. An exact match would let an upstream that echoes the credential there hand it to plugin
 * code in lower case, which for a checksummed token is nearly the whole secret. Upper case (an
 * echo that shouts) is matched the same way.
 *
 * A body that is not UTF-8 text (which reaches plugin code as bytes) is searched byte for byte for
 * the UTF-8 bytes of the same forms (`Redactor.bytes`). That covers its text too: the isolate
 * decodes each character of it from that character's own bytes, so text holding a secret comes
 * from bytes holding the secret's UTF-8. What no form covers is a secret transformed otherwise:
 * split into pieces, compressed inside a zip or gzip file, hex-encoded, UTF-16: redaction catches
 * echoes, not an upstream set on disguising the credential. An answer holding more encoded echoes
 * than can be searched one by one is withheld whole (`MAX_ENCODED_SITES`).
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import { byteView, spellingPattern } from './redaction-pattern.js';
import {
  ALNUM_ESCAPE,
  clueSites,
  coverage,
  decodedView,
  escapedStretches,
  mergeRanges,
  replaceRanges,
  type Range,
} from './redaction-sites.js';

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

/**
 * A value with characters beyond ASCII as a host name label after URL parsing (`xn--…`), when it
 * is one (an ASCII value is only lower-cased there, which matching in any case covers).
 */
function punycodeSpellings(value: string): string[] {
  if (!/[^\x00-\x7f]/.test(value)) return [];
  const ascii = domainToASCII(value);
  return ascii !== '' && domainToUnicode(ascii) === value.toLowerCase() ? [ascii] : [];
}

/** Every spelling of every secret, longest first (so a longer one is replaced before its parts). */
export function secretSpellings(values: readonly string[]): string[] {
  const spellings = new Set<string>();
  for (const v of values) {
    if (typeof v !== 'string' || v.length < MIN_SECRET_LENGTH) continue;
    for (const s of [v, ...base64Spellings(v), ...punycodeSpellings(v)])
      if (s.length >= MIN_SECRET_LENGTH) spellings.add(s);
  }
  return [...spellings].sort((a, b) => b.length - a.length);
}

/**
 * Encoded echoes a long text may hold before it is withheld whole: the sites searched in full may
 * cover this many times the longest an echo can be, on both sides (none but a hostile upstream
 * sends so many).
 */
export const MAX_ENCODED_SITES = 64;
const EVERYWHERE = 'everywhere';
/** The shortest clue: a shorter run of letters and digits would be found all over a text. */
const MIN_CLUE = 6;

interface Spelling {
  text: string;
  /** the longest run of its letters and digits past its first five characters, which an echo holds raw or once decoded; undefined: none long enough */
  clue: RegExp | undefined;
  /** it holds `%` or `\\`, which a decoded view may read otherwise anywhere in it */
  escapes: boolean;
}

function spellingOf(text: string): Spelling {
  const runs = text.slice(Math.min(5, text.length - 1)).match(/[a-z0-9]+/gi) ?? [];
  const clue = runs.reduce((a, b) => (b.length > a.length ? b : a), '');
  return { text, clue: clue.length >= MIN_CLUE ? new RegExp(clue, 'i') : undefined, escapes: /[%\\]/.test(text) };
}

const literal = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/**
 * The spellings as they are, in any case: one pattern of plain alternatives (cheap to compile and
 * to run). As bytes, the UTF-8 of each case form is spelt out, since those of a character beyond
 * ASCII differ in bytes the `i` flag does not relate.
 */
function exactPattern(spellings: readonly string[], bytes: boolean): RegExp {
  const forms = bytes
    ? spellings.flatMap((s) => [...new Set([s, s.toLowerCase(), s.toUpperCase()])].map(byteView))
    : spellings;
  return new RegExp(
    [...new Set(forms)]
      .sort((a, b) => b.length - a.length)
      .map(literal)
      .join('|'),
    'gi',
  );
}

/**
 * Removes the secrets of one call from what is handed to plugin code, with work linear in the text.
 * Exact echoes, in any case, go in one pass of a pattern of plain alternatives. Encoded echoes are
 * looked for only where one may be (see #sites), and there each spelling whose clue is present is
 * matched with its exact pattern, which reads every character in any encoding. That pattern cannot
 * run over a whole answer: irregexp cannot skip ahead in it, and 8 MB of escapes took 20 s against
 * the spellings of an HTTP Basic credential.
 */
export class Redactor {
  readonly #spellings: readonly Spelling[];
  readonly #exact: { text: RegExp; bytes: RegExp };
  readonly #anyClue: RegExp | undefined;
  readonly #clueSites: RegExp | undefined;
  /** the longest an echo can be: 12 characters for each UTF-8 byte of a spelling (`%XX` of each, or `\\uXXXX` for each half of a pair) */
  readonly #reach: number;
  /** spellings without a clue: every text is searched with their exact patterns */
  readonly #unclued: readonly string[];
  readonly #patterns = new Map<string, RegExp>();

  /** Undefined when no secret is long enough to be redacted. */
  static of(values: readonly string[]): Redactor | undefined {
    const spellings = secretSpellings(values);
    return spellings.length === 0 ? undefined : new Redactor(spellings);
  }

  private constructor(spellings: readonly string[]) {
    this.#spellings = spellings.map(spellingOf);
    this.#exact = { text: exactPattern(spellings, false), bytes: exactPattern(spellings, true) };
    const clues = [...new Set(this.#spellings.flatMap((s) => (s.clue ? [s.clue.source] : [])))];
    this.#anyClue = clues.length > 0 ? new RegExp(clues.join('|'), 'i') : undefined;
    this.#clueSites = clues.length > 0 ? new RegExp(clues.join('|'), 'gi') : undefined;
    this.#reach = 12 * Math.max(...spellings.map((s) => Buffer.byteLength(s)));
    this.#unclued = this.#spellings.filter((s) => !s.clue).map((s) => s.text);
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
    // exact echoes first, in one pass: an encoded one is then looked for where a clue is left
    let out = text.replace(bytes ? this.#exact.bytes : this.#exact.text, REDACTED);
    // a spelling without a clue is short (or oddly made): its exact pattern is small enough to run over the whole text
    for (const s of this.#unclued) out = out.replace(this.#pattern(s, bytes), REDACTED);
    const sites = this.#sites(out);
    if (sites === EVERYWHERE) return REDACTED;
    return replaceRanges(out, sites, (part) => this.#redactSite(part, bytes));
  }

  /**
   * Where an encoded echo may be: a short text whole, a long one within reach of a clue, or of an
   * escaped letter or digit whose decoded stretch holds a clue; everywhere (the text is then
   * withheld) when those would cover more than the budget, or when escaped letters are too dense
   * for stretches and the decoded text holds a clue.
   */
  #sites(text: string): Range[] | typeof EVERYWHERE {
    const escaped = ALNUM_ESCAPE.test(text);
    if (text.length <= 4 * this.#reach) return escaped || this.#holdsClue(text) ? [[0, text.length]] : [];
    const budget = MAX_ENCODED_SITES * 2 * this.#reach;
    const sites = this.#clueSites ? clueSites(text, this.#clueSites, this.#reach, budget) : [];
    if (sites === undefined) return EVERYWHERE;
    if (!escaped) return sites;
    const stretches = escapedStretches(text, this.#reach);
    if (stretches === undefined) return this.#holdsClue(decodedView(text)) ? EVERYWHERE : sites;
    const escapes = this.#spellings.some((s) => s.escapes);
    const merged = mergeRanges([
      ...sites,
      ...stretches.filter(([start, end]) => escapes || this.#holdsClue(decodedView(text.slice(start, end)))),
    ]);
    return coverage(merged) > budget ? EVERYWHERE : merged;
  }

  /** One site: the exact pattern of each spelling whose clue it holds (raw or decoded), longest spelling first. */
  #redactSite(part: string, bytes: boolean): string {
    const view = ALNUM_ESCAPE.test(part) ? `${part}\n${decodedView(part)}` : part;
    let out = part;
    for (const s of this.#spellings)
      if (s.clue && (s.escapes || s.clue.test(view))) out = out.replace(this.#pattern(s.text, bytes), REDACTED);
    return out;
  }

  #holdsClue(view: string): boolean {
    return this.#anyClue?.test(view) ?? false;
  }

  #pattern(spelling: string, bytes: boolean): RegExp {
    const key = `${bytes ? 'bytes' : 'text'}\0${spelling}`;
    let pattern = this.#patterns.get(key);
    if (!pattern) this.#patterns.set(key, (pattern = spellingPattern(spelling, bytes)));
    return pattern;
  }
}
