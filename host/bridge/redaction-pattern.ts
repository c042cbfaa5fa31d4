/**
 * @module host/bridge/redaction-pattern
 * The exact pattern of one spelling of a secret as an echo may write it: every character as
 * itself in any case, percent-encoded (its UTF-8 bytes, either hex case; `+` for a space) or
 * JSON-escaped (`\uXXXX`, either hex case, or a short escape such as `\/`). Encoders differ in
 * which characters they escape (PHP's json_encode writes `/` as `\/`, .NET's `+` as `\u002B`, the
 * URL parser percent-encodes a space in a path but leaves `/` and `+`), so each character is read
 * on its own. Such a pattern is slow to compile and to run over a long text (irregexp cannot skip
 * ahead in it), so redaction.ts runs it only on the short stretches where an echo may be.
 */

/** JSON's two-character escapes. */
const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

const percentEncoded = (text: string): string =>
  [...Buffer.from(text, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0')).join('');
const jsonEscaped = (text: string): string =>
  [...Array(text.length).keys()].map((i) => '\\u' + text.charCodeAt(i).toString(16).padStart(4, '0')).join('');
const regExpSource = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** A string read one character per byte: how bytes are searched for text (latin1 maps each byte to one character and back). */
export const byteView = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

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

/** The global, case-insensitive pattern of one spelling written any of those ways. `bytes`: for text read one character per byte. */
export function spellingPattern(spelling: string, bytes: boolean): RegExp {
  return new RegExp([...spelling].map((ch) => characterPattern(ch, bytes)).join(''), 'gi');
}
