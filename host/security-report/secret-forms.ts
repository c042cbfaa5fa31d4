/**
 * @module host/security-report/secret-forms
 * Where a secret shows through: its raw text, case-folded, percent-encoded (as encodeURIComponent
 * writes it, and every byte as %XX in either hex case), and base64 or base64url at any alignment
 * inside a longer blob (so base64 of "user:token" or "Bearer token" is found too). Written apart
 * from the bridge's redaction on purpose: the report must not share the blind spots of what it
 * checks.
 */
import { percentEveryByte } from './hostile-upstream.js';

/** The base64 characters that depend only on the secret, at each of the three alignments. */
function base64Cores(secret: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let pad = 0; pad < 3; pad++) {
    const b64 = Buffer.from('\0'.repeat(pad) + secret).toString('base64');
    const core = pad === 0 ? b64.replace(/=+$/, '').slice(0, -1) : b64.slice(4, -4);
    if (core.length >= 8) out.push(['in base64', core], ['in base64url', core.replace(/\+/g, '-').replace(/\//g, '_')]);
  }
  return out;
}

/** Each form of the secret, with what it is. */
export function secretForms(secret: string): Array<[kind: string, form: string]> {
  const forms: Array<[string, string]> = [
    ['as it is', secret],
    ['lower-cased', secret.toLowerCase()],
    ['upper-cased', secret.toUpperCase()],
    ['URL-encoded', encodeURIComponent(secret)],
    ['percent-encoded byte by byte', percentEveryByte(secret)],
    ['percent-encoded byte by byte', percentEveryByte(secret, true)],
    ...base64Cores(secret),
  ];
  const seen = new Set<string>();
  return forms.filter(([, f]) => f.length >= 8 && !seen.has(f) && seen.add(f));
}

/** Where any form of any secret occurs in the texts: one line per find ("<kind>: …context…"), [] when nowhere. */
export function findSecrets(texts: readonly string[], secrets: readonly string[]): string[] {
  const hits: string[] = [];
  for (const secret of secrets)
    for (const [kind, form] of secretForms(secret))
      for (const text of texts) {
        const at = text.indexOf(form);
        if (at >= 0) hits.push(`${kind}: …${text.slice(Math.max(0, at - 60), at + form.length + 20)}…`);
      }
  return [...new Set(hits)];
}
