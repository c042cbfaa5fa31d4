/**
 * @module sandbox/bridge/redaction
 * Removes secret values from text before it is returned towards plugin code. An upstream that
 * echoes request headers, or an error page that quotes the token, would otherwise hand the
 * credential to the plugin (sandbox.md §0.9). Besides the raw value we remove the forms a server
 * is likely to echo: URL-encoded (both hex cases, `+` for space), JSON-escaped, base64 and
 * base64url, including base64 that starts at a different byte alignment inside a longer blob.
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

export function redactText(text: string, forms: readonly string[]): string {
  let out = text;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
  return out;
}

export function redactHeaders(headers: Record<string, string>, forms: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[redactText(k, forms)] = redactText(v, forms);
  return out;
}
