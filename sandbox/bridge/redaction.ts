/**
 * @module sandbox/bridge/redaction
 * Removes secret values from text before it is returned towards plugin code. An upstream that
 * echoes request headers, or an error page that quotes the token, would otherwise hand the
 * credential to the plugin (sandbox.md §0.9). Besides the raw value we remove the forms a server
 * is likely to echo: URL-encoded (both hex cases, `+` for space), JSON-escaped, base64 and
 * base64url, including base64 that starts at a different byte alignment inside a longer blob.
 *
 * JSON lets a server escape any character, and servers differ: PHP's json_encode writes `/` as `\/`,
 * .NET's System.Text.Json writes `+` as `\u002B`, others escape every non-ASCII character. Those
 * forms are too many to list (each character escaped or not), so a text holding a backslash is
 * also searched with a pattern per secret in which every character may appear escaped; a plugin's
 * JSON.parse would otherwise give the exact secret back.
 *
 * A body that is not UTF-8 text (which reaches plugin code as bytes) is searched byte for byte for
 * the UTF-8 bytes of the same forms (redactBytes). That covers its text too: the isolate decodes
 * each character of it from that character's own bytes, so text holding a secret comes from bytes
 * holding the secret's UTF-8. What no form covers is a secret transformed otherwise: compressed
 * inside a zip or gzip file, hex-encoded, UTF-16: as in text, redaction catches echoes, not an
 * upstream set on disguising the credential.
 */

export const REDACTED = '[REDACTED]';
/** Shorter values are not redacted: replacing 1–3 characters everywhere would destroy bodies. */
export const MIN_SECRET_LENGTH = 4;

function base64Forms(value: string): string[] {
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

/** Every form of every secret, longest first (so a longer form is replaced before its parts). */
export function secretForms(values: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const v of values) {
    if (typeof v !== 'string' || v.length < MIN_SECRET_LENGTH) continue;
    const uri = encodeURIComponent(v);
    const json = JSON.stringify(v).slice(1, -1);
    for (const f of [v, uri, uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), uri.replace(/%20/g, '+'), json, ...base64Forms(v)]) {
      if (f.length >= MIN_SECRET_LENGTH) forms.add(f);
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

const hexDigit = (d: string): string => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d);
/** JSON's two-character escapes, as regular-expression source matching them literally. */
const SHORT_ESCAPES: Record<string, string> = { '"': '\\\\"', '\\': '\\\\\\\\', '/': '\\\\/', '\b': '\\\\b', '\f': '\\\\f', '\n': '\\\\n', '\r': '\\\\r', '\t': '\\\\t' };

/** A string read one character per byte: how bytes are searched for text (latin1 maps each byte to one character and back). */
const byteView = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

/**
 * One character of a secret as JSON may write it: itself, `\uXXXX` (either hex case, a pair for
 * astral), or a short escape. `bytes`: itself as its UTF-8 bytes read one character per byte.
 */
function escapedChar(ch: string, bytes: boolean): string {
  const unicode = [...Array(ch.length).keys()].map((i) => '\\\\u' + [...ch.charCodeAt(i).toString(16).padStart(4, '0')].map(hexDigit).join('')).join('');
  const alternatives = [(bytes ? byteView(ch) : ch).replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'), unicode];
  const short = SHORT_ESCAPES[ch];
  if (short) alternatives.push(short);
  return `(?:${alternatives.join('|')})`;
}

/**
 * A pattern matching each secret with any of its characters JSON-escaped; undefined when no secret
 * is long enough. `bytes`: for text read one character per byte (see redactBytes).
 */
export function escapedSecretPattern(values: readonly string[], bytes = false): RegExp | undefined {
  const secrets = [...new Set(values.filter((v) => typeof v === 'string' && v.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return undefined;
  return new RegExp(secrets.map((s) => [...s].map((ch) => escapedChar(ch, bytes)).join('')).join('|'), 'g');
}

export function redactText(text: string, forms: readonly string[], escaped?: RegExp): string {
  let out = text;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
  if (escaped && out.includes('\\')) out = out.replace(escaped, REDACTED);
  return out;
}

/**
 * Removes secret values from bytes (a body that is not UTF-8 text): the forms redactText removes,
 * found as their UTF-8 bytes, each replaced by the bytes of REDACTED. Returns `bytes` itself when
 * nothing was found.
 */
export function redactBytes(bytes: Uint8Array, values: readonly string[]): Uint8Array {
  const forms = secretForms(values).map(byteView).sort((a, b) => b.length - a.length);
  if (forms.length === 0) return bytes;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const redacted = redactText(view, forms, escapedSecretPattern(values, true));
  return redacted === view ? bytes : Buffer.from(redacted, 'latin1');
}

export function redactHeaders(headers: Record<string, string>, forms: readonly string[], escaped?: RegExp): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[redactText(k, forms, escaped)] = redactText(v, forms, escaped);
  return out;
}
