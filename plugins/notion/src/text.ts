/**
 * @module plugins/notion/src/text
 * Notion's rich text both ways (read as plain text with links, written in pieces Notion accepts),
 * and cutting text without ever splitting a surrogate pair.
 */

const MAX_TEXT = 2000; // Notion's limit for one rich text object's content

/** Where to cut `s` at most `n` characters past `start`, moved back by one so a surrogate pair is never split. */
export function cutIndex(s: string, n: number, start = 0): number {
  const end = start + n;
  if (end >= s.length) return s.length;
  const c = s.charCodeAt(end - 1);
  return c >= 0xd800 && c <= 0xdbff ? end - 1 : end;
}

/** `s` cut to `n` characters with "…" when it is longer. */
export const shorten = (s: string, n: number): string => (s.length > n ? `${s.slice(0, cutIndex(s, n))}…` : s);

type RichText = { plain_text?: unknown; text?: { content?: unknown } | null; href?: unknown };

/** Rich text as plain text; a link becomes [text](href). */
export function plain(rich: unknown): string {
  if (!Array.isArray(rich)) return '';
  let out = '';
  for (const r of rich as unknown[]) {
    if (!r || typeof r !== 'object') continue;
    const { plain_text, text, href } = r as RichText;
    const t =
      typeof plain_text === 'string' ? plain_text : text && typeof text.content === 'string' ? text.content : '';
    out += href && typeof href === 'string' && href !== t ? `[${t}](${href})` : t;
  }
  return out;
}

/** Rich text for `s`, in pieces of at most 2000 characters (Notion's limit per text object). */
export function richText(s: unknown) {
  const str = String(s ?? '');
  const out: Array<{ type: 'text'; text: { content: string } }> = [];
  for (let i = 0; i < str.length;) {
    const end = cutIndex(str, MAX_TEXT, i);
    out.push({ type: 'text', text: { content: str.slice(i, end) } });
    i = end;
  }
  if (out.length > 100)
    throw new Error('A block of text is too long for Notion (more than 200,000 characters): split it.');
  return out;
}
