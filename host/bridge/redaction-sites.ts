/**
 * @module host/bridge/redaction-sites
 * Where in a text an encoded echo of a secret may be, found in linear time: the sites of clues
 * (plain runs of a secret's letters and digits) and the stretches around escaped letters and
 * digits. redaction.ts runs the exact but slow pattern of redaction-pattern.ts only there.
 */

/** A stretch of a text: [start, end). */
export type Range = [number, number];

/** Overlapping ranges joined, in order. */
export function mergeRanges(ranges: Range[]): Range[] {
  const merged: Range[] = [];
  for (const [start, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const last = merged[merged.length - 1];
    if (last && start < last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

/** The text with each range replaced by `by` (ranges merged and in order). */
export function replaceRanges(text: string, ranges: readonly Range[], by: (part: string) => string): string {
  let out = '';
  let at = 0;
  for (const [start, end] of ranges) {
    out += text.slice(at, start) + by(text.slice(start, end));
    at = end;
  }
  return at === 0 && ranges.length === 0 ? text : out + text.slice(at);
}

/** How much of a text the ranges cover. */
export const coverage = (ranges: readonly Range[]): number =>
  ranges.reduce((sum, [start, end]) => sum + end - start, 0);

/**
 * The ranges within `reach` of each match of `clues` (a global pattern), merged: an echo lies
 * within `reach` of its clue when `reach` is as long as an echo can be. Undefined once they cover
 * more than `budget` characters (the loop stops there too).
 */
export function clueSites(text: string, clues: RegExp, reach: number, budget: number): Range[] | undefined {
  const sites: Range[] = [];
  let covered = 0;
  clues.lastIndex = 0;
  for (let m = clues.exec(text); m !== null; m = clues.exec(text)) {
    const last = sites[sites.length - 1];
    const start = Math.max(0, m.index - reach);
    const end = Math.min(text.length, m.index + m[0].length + reach);
    covered += last && start <= last[1] ? end - last[1] : end - start;
    if (covered > budget) return undefined;
    if (last && start <= last[1]) last[1] = end;
    else sites.push([start, end]);
  }
  return sites;
}

/** An escape that decodes to a letter or digit (`%41`, `\u0041`, `%u0041`, either case): rare outside an echo. */
export const ALNUM_ESCAPE = /(?:%|[\\%]u00)(?:3[0-9]|[46][1-9a-f]|[57][0-9a])/i;
const ALNUM_ESCAPES = new RegExp(ALNUM_ESCAPE.source, 'gi');

const HEX_DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++)
  HEX_DIGIT['0123456789abcdef'.charCodeAt(i)] = HEX_DIGIT['0123456789ABCDEF'.charCodeAt(i)] = i;

/** The value of `digits` hex digits at `at`, or -1 when they are not all hex digits. */
function hexAt(text: string, at: number, digits: number): number {
  let value = 0;
  for (let k = 0; k < digits; k++) {
    const c = text.charCodeAt(at + k);
    const digit = c < 128 ? (HEX_DIGIT[c] as number) : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

const UTF16 = new TextDecoder('utf-16le');

/**
 * The text with `%XX` (as the character of that code), `%uXXXX` and `\uXXXX` decoded, read left
 * to right, to search for clues (never handed on). One pass over the text (a regular-expression
 * replacement took 350 ms over 8 MB of escapes, this about 100). An escape just before an echo
 * can swallow up to five of its first characters (`%4` before a secret starting `1…` reads `%41`);
 * every later one decodes as the secret has it, so a clue is taken from a secret without its first
 * five characters.
 */
export function decodedView(text: string): string {
  const out = new Uint16Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const unit = (c === 0x25 || c === 0x5c) && text.charCodeAt(i + 1) === 0x75 ? hexAt(text, i + 2, 4) : -1;
    const byte = c === 0x25 && unit < 0 ? hexAt(text, i + 1, 2) : -1;
    out[n++] = unit >= 0 ? unit : byte >= 0 ? byte : c;
    i += unit >= 0 ? 5 : byte >= 0 ? 2 : 0;
  }
  return UTF16.decode(out.subarray(0, n));
}

/**
 * The stretches of the text within `reach` of an escaped letter or digit, merged: an echo holding
 * such an escape lies within one. Random bytes hold a few dozen in 8 MB, a text hardly any.
 * Undefined when they are so many that the stretches could cover the whole text.
 */
export function escapedStretches(text: string, reach: number): Range[] | undefined {
  const stretches: Range[] = [];
  let count = 0;
  ALNUM_ESCAPES.lastIndex = 0;
  for (let m = ALNUM_ESCAPES.exec(text); m !== null; m = ALNUM_ESCAPES.exec(text)) {
    if (++count * 2 * reach > text.length) return undefined;
    const last = stretches[stretches.length - 1];
    const start = Math.max(0, m.index - reach);
    const end = Math.min(text.length, m.index + reach);
    if (last && start <= last[1]) last[1] = end;
    else stretches.push([start, end]);
  }
  return stretches;
}
