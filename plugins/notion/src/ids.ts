/**
 * @module plugins/notion/src/ids
 * Notion ids: a Notion URL, or 32 hex digits with or without dashes; always sent in the dashed
 * form, so an id is never more than one safe path segment.
 */

const isHex = (c: string) => (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');

/** 32 hex digits (lower case, no dashes) from `s` when `s` is exactly an id, dashed or not; else null. */
function bareId(s: string): string | null {
  const lower = s.toLowerCase();
  let hex: string;
  if (lower.length === 32) hex = lower;
  else if (lower.length === 36 && lower[8] === '-' && lower[13] === '-' && lower[18] === '-' && lower[23] === '-')
    hex = lower.split('-').join('');
  else return null;
  if (hex.length !== 32) return null;
  for (const c of hex) if (!isHex(c)) return null;
  return hex;
}

const dashed = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** An id taken from a Notion answer, dashed, when it is one; else null (never put into a path). */
export function answerId(value: unknown): string | null {
  const hex = typeof value === 'string' ? bareId(value) : null;
  return hex ? dashed(hex) : null;
}

/**
 * The id a caller gave, as `xxxxxxxx-xxxx-…`: an id, or a notion.so / notion.site link whose last
 * path segment ends with the id (`…/Roadmap-0123…`). Anything else is refused before any request.
 */
export function parseId(value: unknown, what: string): string {
  const s = typeof value === 'string' ? value.trim() : '';
  const direct = bareId(s);
  if (direct) return dashed(direct);
  const m = /^https:\/\/([a-z0-9-]+\.)?(notion\.so|notion\.site)\/(.*)$/i.exec(s);
  if (m) {
    let path = m[3] ?? '';
    const hash = path.indexOf('#');
    if (hash >= 0) path = path.slice(0, hash);
    const q = path.indexOf('?');
    if (q >= 0) {
      // a side-peek link (…/<database>?v=<view>&p=<page>&pm=s) names the page in `p`
      const peek = new URLSearchParams(path.slice(q + 1)).get('p');
      const hex = peek ? bareId(peek) : null;
      if (hex) return dashed(hex);
      path = path.slice(0, q);
    }
    const segs = path.split('/').filter(Boolean);
    const last = segs.length ? segs[segs.length - 1] : '';
    const hex = bareId(last) || (last.length > 33 && last[last.length - 33] === '-' ? bareId(last.slice(-32)) : null);
    if (hex) return dashed(hex);
  }
  throw new Error(
    `\`${what}\` is not a Notion id or link: give the page's link (https://www.notion.so/…-<32 hex digits>) or its id (32 hex digits, with or without dashes).`,
  );
}
