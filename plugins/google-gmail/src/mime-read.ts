/**
 * @module plugins/google-gmail/src/mime-read
 * Reading a message's MIME part tree as Gmail gives it (format=full): headers (RFC 2047 encoded
 * words), charsets (UTF-8, the Latin-1 family, or none: UTF-8 falling back to Windows-1252), the
 * readable body (plain text preferred in multipart/alternative, HTML converted to text), the text
 * parts Gmail gives by attachmentId only, and the attachments, listed but not downloaded.
 */
import { fromBase64 } from 'workbench/plugin-sdk';

/** A part of a message's MIME tree, as Gmail gives it. */
export type MessagePart = {
  partId?: string;
  mimeType?: string;
  filename?: string;
  headers?: Array<{ name?: unknown; value?: unknown } | null>;
  body?: { attachmentId?: string; size?: number; data?: string };
  parts?: MessagePart[];
};

/** A message resource (format=full or metadata). */
export type GmailMessage = {
  id: string;
  threadId?: string;
  labelIds?: unknown;
  snippet?: string;
  internalDate?: string;
  payload?: MessagePart;
};

export const labelsOf = (m: GmailMessage): string[] => (Array.isArray(m.labelIds) ? (m.labelIds as string[]) : []);

/** Windows-1252's 0x80–0x9F (the rest of the byte range is Latin-1, i.e. the code point itself). */
const CP1252 = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];
/** Labels the WHATWG Encoding standard decodes as windows-1252 (latin1 and us-ascii among them). */
const SINGLE_BYTE = new Set([
  'us-ascii',
  'ascii',
  'iso-8859-1',
  'iso8859-1',
  'iso_8859-1',
  'latin1',
  'l1',
  'cp819',
  'windows-1252',
  'cp1252',
  'x-cp1252',
  'ansi_x3.4-1968',
]);

function decodeSingleByte(bytes: Uint8Array): string {
  const out: string[] = [];
  for (let i = 0; i < bytes.length; i += 8192) {
    const codes = Array.from(bytes.subarray(i, i + 8192), (b) => (b >= 0x80 && b < 0xa0 ? CP1252[b - 0x80] : b));
    out.push(String.fromCharCode(...codes));
  }
  return out.join('');
}

/** Bytes → text in the part's charset; a charset it cannot decode is decoded as UTF-8 and added to `notes`. */
function decodeText(bytes: Uint8Array, charset: string, notes: string[]): string {
  const cs = charset.trim().toLowerCase();
  if (SINGLE_BYTE.has(cs)) return decodeSingleByte(bytes);
  if (cs === 'utf-8' || cs === 'utf8') return new TextDecoder('utf-8').decode(bytes);
  if (cs === '') {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return decodeSingleByte(bytes);
    }
  }
  if (!notes.includes(cs)) notes.push(cs);
  return new TextDecoder('utf-8').decode(bytes);
}

/** A part body's base64url data; characters outside base64 are dropped when the text does not decode as it is. */
function bodyBytes(data: string): Uint8Array {
  try {
    return fromBase64(data);
  } catch {
    return fromBase64(data.replace(/[^A-Za-z0-9+/_-]/g, ''));
  }
}

/** The bytes of a Q-encoded word's text (RFC 2047 §4.2: `_` is a space, =XX a byte). */
function qBytes(text: string): Uint8Array {
  const t = text.replace(/_/g, ' ');
  const out: number[] = [];
  for (let i = 0; i < t.length; i++) {
    if (t[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(t.slice(i + 1, i + 3))) {
      out.push(parseInt(t.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(t.charCodeAt(i) & 0xff);
  }
  return Uint8Array.from(out);
}

/** RFC 2047 encoded words (=?charset?B|Q?…?=) in a header value; whitespace between two of them goes. */
export function decodeWords(value: string | undefined): string {
  if (typeof value !== 'string' || !value.includes('=?')) return value ?? '';
  return value
    .replace(/(=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)/g, '$1')
    .replace(/=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g, (whole, charset: string, kind: string, text: string) => {
      try {
        return decodeText(kind.toUpperCase() === 'B' ? fromBase64(text) : qBytes(text), charset.split('*')[0], []);
      } catch {
        return whole;
      }
    });
}

/** Header name (lower case) → its first value. */
export function headerMap(headers: MessagePart['headers']): Record<string, string | undefined> {
  const map: Record<string, string> = {};
  for (const h of Array.isArray(headers) ? headers : []) {
    if (!h || typeof h.name !== 'string') continue;
    const key = h.name.toLowerCase();
    if (!(key in map)) map[key] = typeof h.value === 'string' ? h.value : '';
  }
  return map;
}

/** A parameter of a header value (`charset` of Content-Type), quoted or not; '' when absent. */
function paramOf(headerValue: string | undefined, name: string): string {
  const m = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(headerValue || '');
  return m ? (m[1] ?? m[2] ?? '') : '';
}

const mimeOf = (part: MessagePart): string =>
  String(part.mimeType || '')
    .toLowerCase()
    .split(';')[0]
    .trim();

function isAttachment(part: MessagePart, h: Record<string, string | undefined>): boolean {
  const disposition = (h['content-disposition'] || '').toLowerCase();
  return (
    Boolean(part.filename) ||
    disposition.startsWith('attachment') ||
    (Boolean(part.body?.attachmentId) && !/^text\/(plain|html)/i.test(part.mimeType || ''))
  );
}

/** A body's text, and whether it was converted from HTML. */
export type Body = { text: string; html: boolean };

/** The readable body of a part tree: plain text preferred in multipart/alternative, HTML converted otherwise. */
export function bodyOf(part: MessagePart | undefined, notes: string[], fetched: Map<MessagePart, string>): Body | null {
  if (!part || typeof part !== 'object') return null;
  const h = headerMap(part.headers);
  const mime = String(part.mimeType || h['content-type'] || 'text/plain')
    .toLowerCase()
    .split(';')[0]
    .trim();
  if (!mime.startsWith('multipart/') && isAttachment(part, h)) return null;
  const found = mime.startsWith('multipart/')
    ? (Array.isArray(part.parts) ? part.parts : [])
        .map((c) => bodyOf(c, notes, fetched))
        .filter((b): b is Body => b !== null && b.text !== '')
    : [];
  if (mime === 'multipart/alternative') return found.find((b) => !b.html) || found[found.length - 1] || null;
  if (mime.startsWith('multipart/'))
    return found.length ? { text: found.map((b) => b.text).join('\n\n'), html: found.every((b) => b.html) } : null;
  if (mime !== 'text/plain' && mime !== 'text/html') return null;
  const data = typeof part.body?.data === 'string' ? part.body.data : fetched.get(part);
  if (typeof data !== 'string') return null;
  const text = decodeText(bodyBytes(data), paramOf(h['content-type'], 'charset'), notes);
  return mime === 'text/html'
    ? { text: htmlToText(text), html: true }
    : { text: text.replace(/\r\n?/g, '\n').trim(), html: false };
}

/** A part tree's parts, depth first. */
const partsOf = (p: MessagePart | undefined): MessagePart[] =>
  p && typeof p === 'object' ? [p, ...(Array.isArray(p.parts) ? p.parts : []).flatMap(partsOf)] : [];

/** Text parts (not attachments) whose body Gmail gave as an attachmentId only, as a large part's is. */
export const textPartsToFetch = (payload: MessagePart | undefined): MessagePart[] =>
  partsOf(payload).filter(
    (p) =>
      /^text\/(plain|html)$/.test(mimeOf(p)) &&
      !isAttachment(p, headerMap(p.headers)) &&
      p.body?.attachmentId &&
      typeof p.body.data !== 'string',
  );

/** A part as an attachment row, its filename given. */
export const attachmentRow = (part: MessagePart, filename: string | null) => ({
  filename,
  mimeType: part.mimeType || null,
  size: typeof part.body?.size === 'number' ? part.body.size : null,
  attachmentId: part.body?.attachmentId || null,
  partId: part.partId ?? null,
});

/** The attachments of a part tree, in order. */
export function attachmentsOf(payload: MessagePart | undefined) {
  return partsOf(payload)
    .map((p) => ({ p, h: headerMap(p.headers) }))
    .filter(({ p, h }) => !mimeOf(p).startsWith('multipart/') && isAttachment(p, h))
    .map(({ p, h }) =>
      attachmentRow(
        p,
        decodeWords(
          p.filename || paramOf(h['content-disposition'], 'filename') || paramOf(h['content-type'], 'name'),
        ) || null,
      ),
    );
}

/** HTML read at most (characters): a longer body is converted up to here. */
const MAX_HTML_INPUT = 500000;

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  rsquo: '’',
  lsquo: '‘',
  ldquo: '“',
  rdquo: '”',
  copy: '©',
  reg: '®',
  trade: '™',
  euro: '€',
  bull: '•',
  middot: '·',
  laquo: '«',
  raquo: '»',
  shy: '',
};

/** Numeric and the common named character references; any other `&…;` stays as it is. */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/gi, (whole, ent: string) => {
    if (ent[0] === '#') {
      const cp = ent[1] === 'x' || ent[1] === 'X' ? parseInt(ent.slice(2), 16) : parseInt(ent.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : whole;
    }
    return NAMED_ENTITIES[ent.toLowerCase()] ?? whole;
  });
}

const SKIPPED_ELEMENTS = new Set(['head', 'style', 'script', 'title']);
const BLOCK_OPEN = new Set([
  'p',
  'div',
  'tr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'table',
  'blockquote',
  'hr',
]);
const BLOCK_CLOSE = new Set([
  'p',
  'div',
  'tr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'table',
  'blockquote',
  'section',
  'article',
  'header',
  'footer',
]);
/** what may follow "<" in a tag, a comment or a declaration */
const TAG_START = /[A-Za-z/!?]/;

/**
 * HTML → readable plain text: blocks become lines, links keep their address, tags and entities go.
 * One left-to-right scan whose every search (the end of a tag, of a comment, of a skipped element)
 * starts where the last one ended, and whose failed searches are remembered: linear in the input,
 * whatever it holds (lazy regular expressions over unclosed openers were quadratic). A comment or
 * skipped element without its closer is not removed beyond its opening tag.
 */
export function htmlToText(html: string): string {
  const s = html.slice(0, MAX_HTML_INPUT);
  const out: string[] = [];
  const noCloser = new Set<string>();
  let anchor: { href: string; at: number } | null = null;
  let i = 0;
  const text = (t: string) => {
    if (t) out.push(decodeEntities(t));
  };
  while (i < s.length) {
    const lt = s.indexOf('<', i);
    if (lt < 0) {
      text(s.slice(i));
      break;
    }
    text(s.slice(i, lt));
    if (s.startsWith('<!--', lt) && !noCloser.has('-->')) {
      const end = s.indexOf('-->', lt + 4);
      if (end >= 0) {
        i = end + 3;
        continue;
      }
      noCloser.add('-->');
    }
    const tagStart = TAG_START.test(s[lt + 1] || '');
    const gt = noCloser.has('>') || !tagStart ? -1 : s.indexOf('>', lt + 1);
    if (gt < 0) {
      if (tagStart) noCloser.add('>');
      // not a tag (or a tag that never ends): the "<" is text
      text('<');
      i = lt + 1;
      continue;
    }
    const tag = s.slice(lt + 1, gt);
    i = gt + 1;
    const m = /^(\/?)([A-Za-z][A-Za-z0-9]*)/.exec(tag);
    if (!m) continue;
    const closing = m[1] === '/';
    const name = m[2].toLowerCase();
    if (!closing && SKIPPED_ELEMENTS.has(name) && !noCloser.has(name)) {
      const closer = new RegExp(`</${name}\\s*>`, 'gi');
      closer.lastIndex = i;
      const found = closer.exec(s);
      if (found) i = found.index + found[0].length;
      else noCloser.add(name);
    } else if (name === 'a' && !closing) {
      const h = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')/i.exec(tag);
      anchor = h ? { href: decodeEntities(h[1] ?? h[2] ?? '').trim(), at: out.length } : null;
    } else if (name === 'a') {
      if (anchor) {
        const inner = out.slice(anchor.at).join('').trim();
        if (anchor.href && /^https?:/i.test(anchor.href) && inner !== anchor.href) out.push(` (${anchor.href})`);
      }
      anchor = null;
    } else if (name === 'br') out.push('\n');
    else if (name === 'li' && !closing) out.push('\n- ');
    else if (closing && BLOCK_CLOSE.has(name)) out.push('\n');
    else if (!closing && BLOCK_OPEN.has(name)) out.push('\n');
    else if (closing && (name === 'td' || name === 'th')) out.push('\t');
  }
  return out
    .join('')
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
