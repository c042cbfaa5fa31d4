/**
 * @module plugins/google-gmail/plugin
 * Gmail API v1 tools acting as the connected Google user (users/me). Self-contained (the plugin
 * format allows no imports), so the request helper, the one error mapping, the MIME reader (a
 * message's part tree → text, charsets, HTML → text, attachments) and the MIME writer (RFC 2822
 * with RFC 2047 encoded words, base64url `raw`) live here beside the handlers; the file is longer
 * than 400 lines for that reason. The credential is added by the gateway: this code never sets it.
 */

const API = 'https://gmail.googleapis.com/gmail/v1/users/me';
const SCOPE = 'https://www.googleapis.com/auth/gmail.modify';
const LIST_HEADERS = ['From', 'To', 'Subject', 'Date'];
const REPLY_HEADERS = ['Subject', 'Message-ID', 'References', 'From', 'Reply-To', 'To'];
/** A reply's References: the thread's first id and the last ones (RFC 5322 §3.6.4), one per folded line. */
const MAX_REFERENCES = 21;
const MAX_HTML_INPUT = 500000;
/** A thread's messages read in full (newest first); older ones come with their headers only. */
const THREAD_FULL_MESSAGES = 20;
/** Text parts of one message whose body Gmail left out (body.attachmentId only) fetched at most. */
const MAX_TEXT_PART_FETCHES = 4;
const THREAD_HEADERS = ['From', 'To', 'Cc', 'Subject', 'Date'];
/** Bridge failures of one optional request that leave that one part of the answer out instead of failing the call. */
const SKIPPABLE = {
  GW_ERR_BRIDGE_RESPONSE_TOO_LARGE: 'too large to download (over the gateway\'s response cap)',
  GW_ERR_BRIDGE_TIMEOUT: 'Gmail did not answer in time',
  GW_ERR_BRIDGE_TOO_MANY_REQUESTS: 'over the number of requests one call may make',
};

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Google answer becomes a message an agent can act on.

const RATE_REASONS = ['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded', 'RATE_LIMIT_EXCEEDED', 'RESOURCE_EXHAUSTED'];
const SCOPE_REASONS = ['insufficientPermissions', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT'];
const DISABLED_REASONS = ['accessNotConfigured', 'SERVICE_DISABLED'];

/** Google's error body: {error: {code, message, status, errors: [{reason, message}], details: [{reason}]}}. */
function googleDetail(data) {
  const err = data && typeof data === 'object' ? data.error : undefined;
  if (err && typeof err === 'object') {
    const reasons = [];
    for (const e of Array.isArray(err.errors) ? err.errors : []) if (e && typeof e.reason === 'string') reasons.push(e.reason);
    for (const d of Array.isArray(err.details) ? err.details : []) if (d && typeof d.reason === 'string') reasons.push(d.reason);
    return { message: typeof err.message === 'string' ? err.message.slice(0, 500) : '', status: typeof err.status === 'string' ? err.status : '', reasons };
  }
  if (err && typeof err === 'string') return { message: String(data.error_description || err).slice(0, 500), status: '', reasons: [] };
  if (typeof data === 'string') return { message: data.trim().slice(0, 300), status: '', reasons: [] };
  return { message: '', status: '', reasons: [] };
}

function gmailError(action, status, retryAfter, data) {
  const { message, status: gStatus, reasons } = googleDetail(data);
  const said = message ? ` Gmail said: ${message.replace(/[.\s]+$/, '')}.` : '';
  const has = (list) => reasons.some((r) => list.includes(r));
  const wait = retryAfter && /^\d+$/.test(retryAfter.trim()) ? `retry after ${Number(retryAfter)} seconds` : 'wait a minute and retry';
  if (status === 429 || (status === 403 && has(RATE_REASONS))) {
    return new Error(`Gmail rate limited the request to ${action} (${status}${reasons.length ? ` ${reasons[0]}` : ''}): ${wait}.`);
  }
  if (status === 401) return new Error(`Google rejected the access token (401) while trying to ${action}: reconnect google-gmail.${said}`);
  if (status === 403 && (has(SCOPE_REASONS) || /scope/i.test(message))) {
    return new Error(`The Gmail connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-gmail and approve every permission on Google's consent screen.`);
  }
  if (status === 403 && has(DISABLED_REASONS)) {
    return new Error(`The Gmail API is not enabled in the Google Cloud project of this Workbench's OAuth client (403): the operator must enable it, then retry.${said}`);
  }
  if (status === 403) return new Error(`Gmail refused permission to ${action} (403).${said || ' Your account or its Google Workspace domain policy does not allow this.'}`);
  if (status === 404) return new Error(`Gmail found nothing while trying to ${action} (404): the id is wrong or the message is gone (ids come from gmail_search_emails).${said}`);
  if (status === 400 || status === 409 || status === 412 || status === 422) {
    return new Error(`Gmail refused to ${action} (${status}${gStatus ? ` ${gStatus}` : ''}): ${message || 'the request was not valid'}.`);
  }
  if (status >= 500) return new Error(`Gmail had a server error (${status}) while trying to ${action}: retry later.${said}`);
  return new Error(`Gmail answered HTTP ${status} while trying to ${action}.${said}`);
}

// ---------------------------------------------------------------------------------------------
// Requests

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

/** Query string; an array value repeats its key (metadataHeaders=From&metadataHeaders=To). */
function qs(params) {
  const parts = [];
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    for (const one of Array.isArray(v) ? v : [v]) parts.push(`${enc(k)}=${enc(one)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

async function gmail(ctx, method, path, { query, body, action }) {
  const headers = { accept: 'application/json' };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await ctx.http(`${API}${path}${qs(query)}`, init);
  } catch (err) {
    if (err && (err.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE' || err.code === 'GW_ERR_BRIDGE_TIMEOUT')) {
      const e = new Error(
        err.code === 'GW_ERR_BRIDGE_TIMEOUT'
          ? `Gmail did not answer in time while trying to ${action} (${err.code}): retry later.`
          : `Gmail's answer while trying to ${action} is larger than the gateway accepts (${err.code}).`,
      );
      e.code = err.code;
      throw e;
    }
    throw err;
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) {
    const err = gmailError(action, res.status, res.headers.get('retry-after'), data);
    err.status = res.status;
    throw err;
  }
  return data;
}

// ---------------------------------------------------------------------------------------------
// Reading: headers, charsets, the part tree, HTML → text

/** Windows-1252's 0x80–0x9F (the rest of the byte range is Latin-1, i.e. the code point itself). */
const CP1252 = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];
/** Labels the WHATWG Encoding standard decodes as windows-1252 (latin1 and us-ascii among them). */
const SINGLE_BYTE = new Set(['us-ascii', 'ascii', 'iso-8859-1', 'iso8859-1', 'iso_8859-1', 'latin1', 'l1', 'cp819', 'windows-1252', 'cp1252', 'x-cp1252', 'ansi_x3.4-1968']);

function decodeSingleByte(bytes) {
  const out = [];
  for (let i = 0; i < bytes.length; i += 8192) {
    const chunk = bytes.subarray(i, i + 8192);
    const codes = new Array(chunk.length);
    for (let j = 0; j < chunk.length; j++) {
      const b = chunk[j];
      codes[j] = b >= 0x80 && b < 0xa0 ? CP1252[b - 0x80] : b;
    }
    out.push(String.fromCharCode(...codes));
  }
  return out.join('');
}

/** Bytes → text in the part's charset: UTF-8, the Latin-1 family, or (no charset) UTF-8 falling back to Windows-1252. */
function decodeText(bytes, charset, notes) {
  const cs = String(charset || '').trim().toLowerCase();
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

function base64urlBytes(data) {
  try {
    return Uint8Array.fromBase64(String(data || ''), { alphabet: 'base64url' });
  } catch {
    return Uint8Array.fromBase64(String(data || '').replace(/[^A-Za-z0-9+/_-]/g, '').replace(/\+/g, '-').replace(/\//g, '_'), { alphabet: 'base64url' });
  }
}

/** RFC 2047 encoded words (=?charset?B|Q?…?=) in a header value; whitespace between two of them goes. */
function decodeWords(value) {
  if (typeof value !== 'string' || !value.includes('=?')) return value ?? '';
  return value
    .replace(/(=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)/g, '$1')
    .replace(/=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g, (whole, charset, kind, text) => {
      try {
        let bytes;
        if (kind.toUpperCase() === 'B') bytes = Uint8Array.fromBase64(text);
        else {
          const t = text.replace(/_/g, ' ');
          const out = [];
          for (let i = 0; i < t.length; i++) {
            if (t[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(t.slice(i + 1, i + 3))) {
              out.push(parseInt(t.slice(i + 1, i + 3), 16));
              i += 2;
            } else out.push(t.charCodeAt(i) & 0xff);
          }
          bytes = Uint8Array.from(out);
        }
        return decodeText(bytes, charset.split('*')[0], []);
      } catch {
        return whole;
      }
    });
}

function headerMap(headers) {
  const map = {};
  for (const h of Array.isArray(headers) ? headers : []) {
    if (!h || typeof h.name !== 'string') continue;
    const key = h.name.toLowerCase();
    if (!(key in map)) map[key] = typeof h.value === 'string' ? h.value : '';
  }
  return map;
}

function paramOf(headerValue, name) {
  const m = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(headerValue || '');
  return m ? (m[1] ?? m[2]) : '';
}

const NAMED_ENTITIES = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', hellip: '…', mdash: '—', ndash: '–', rsquo: '’', lsquo: '‘',
  ldquo: '“', rdquo: '”', copy: '©', reg: '®', trade: '™', euro: '€', bull: '•', middot: '·', laquo: '«', raquo: '»', shy: '',
};

function decodeEntities(s) {
  return String(s || '').replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/gi, (whole, ent) => {
    if (ent[0] === '#') {
      const cp = ent[1] === 'x' || ent[1] === 'X' ? parseInt(ent.slice(2), 16) : parseInt(ent.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : whole;
    }
    const v = NAMED_ENTITIES[ent.toLowerCase()];
    return v === undefined ? whole : v;
  });
}

const SKIPPED_ELEMENTS = new Set(['head', 'style', 'script', 'title']);
const BLOCK_OPEN = new Set(['p', 'div', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'table', 'blockquote', 'hr']);
const BLOCK_CLOSE = new Set(['p', 'div', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'table', 'blockquote', 'section', 'article', 'header', 'footer']);

/**
 * HTML → readable plain text: blocks become lines, links keep their address, tags and entities go.
 * One left-to-right scan whose every search (the end of a tag, of a comment, of a skipped element)
 * starts where the last one ended, and whose failed searches are remembered: linear in the input,
 * whatever it holds (lazy regular expressions over unclosed openers were quadratic). A comment or
 * skipped element without its closer is not removed beyond its opening tag.
 */
function htmlToText(html) {
  const s = String(html || '').slice(0, MAX_HTML_INPUT);
  const out = [];
  const noCloser = new Set();
  let anchor = null;
  let i = 0;
  const text = (t) => {
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
    const gt = noCloser.has('>') || !/[A-Za-z/!?]/.test(s[lt + 1] || '') ? -1 : s.indexOf('>', lt + 1);
    if (gt < 0) {
      if (/[A-Za-z/!?]/.test(s[lt + 1] || '')) noCloser.add('>');
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
        const href = anchor.href;
        if (href && /^https?:/i.test(href) && inner !== href) out.push(` (${href})`);
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

function isAttachment(part, h) {
  const disposition = (h['content-disposition'] || '').toLowerCase();
  return Boolean(part.filename) || disposition.startsWith('attachment') || (Boolean(part.body && part.body.attachmentId) && !/^text\/(plain|html)/i.test(part.mimeType || ''));
}

/** The readable body of a part tree: plain text preferred in multipart/alternative, HTML converted otherwise. */
function bodyOf(part, notes, fetched) {
  if (!part || typeof part !== 'object') return null;
  const h = headerMap(part.headers);
  const mime = String(part.mimeType || h['content-type'] || 'text/plain').toLowerCase().split(';')[0].trim();
  if (!mime.startsWith('multipart/') && isAttachment(part, h)) return null;
  const children = Array.isArray(part.parts) ? part.parts : [];
  if (mime === 'multipart/alternative') {
    const found = children.map((c) => bodyOf(c, notes, fetched)).filter((b) => b && b.text !== '');
    return found.find((b) => !b.html) || found[found.length - 1] || null;
  }
  if (mime.startsWith('multipart/')) {
    const found = children.map((c) => bodyOf(c, notes, fetched)).filter((b) => b && b.text !== '');
    if (!found.length) return null;
    return { text: found.map((b) => b.text).join('\n\n'), html: found.every((b) => b.html) };
  }
  if (mime !== 'text/plain' && mime !== 'text/html') return null;
  const data = part.body && typeof part.body.data === 'string' ? part.body.data : fetched && fetched.get(part);
  if (typeof data !== 'string') return null;
  const text = decodeText(base64urlBytes(data), paramOf(h['content-type'], 'charset'), notes);
  return mime === 'text/html' ? { text: htmlToText(text), html: true } : { text: text.replace(/\r\n?/g, '\n').trim(), html: false };
}

/** Text parts (not attachments) whose body Gmail gave as an attachmentId only, as a large part's is. */
function textPartsToFetch(part, out = []) {
  if (!part || typeof part !== 'object') return out;
  const mime = String(part.mimeType || '').toLowerCase().split(';')[0].trim();
  if ((mime === 'text/plain' || mime === 'text/html') && !isAttachment(part, headerMap(part.headers)) && part.body && part.body.attachmentId && typeof part.body.data !== 'string') out.push(part);
  for (const c of Array.isArray(part.parts) ? part.parts : []) textPartsToFetch(c, out);
  return out;
}

/**
 * Fetches those parts (GET messages/{id}/attachments/{attachmentId}) while `budget.left` allows.
 * Returns { fetched: Map part → base64url data, skipped: [{ part, reason }] }; a part not fetched is
 * listed with the attachments and named in the message's note.
 */
async function fetchTextParts(ctx, m, budget) {
  const fetched = new Map();
  const skipped = [];
  const parts = textPartsToFetch(m && m.payload);
  await Promise.all(
    parts.map(async (part, k) => {
      if (k >= MAX_TEXT_PART_FETCHES || budget.left <= 0) {
        skipped.push({ part, reason: 'over the requests one call may make' });
        return;
      }
      budget.left--;
      try {
        const a = await gmail(ctx, 'GET', `/messages/${enc(m.id)}/attachments/${enc(part.body.attachmentId)}`, { action: `read part ${part.partId ?? ''} of message ${m.id}` });
        if (a && typeof a.data === 'string') fetched.set(part, a.data);
        else skipped.push({ part, reason: 'Gmail gave no data' });
      } catch (err) {
        skipped.push({ part, reason: (err && SKIPPABLE[err.code]) || String((err && err.message) || err).slice(0, 200) });
      }
    }),
  );
  return { fetched, skipped };
}

function attachmentsOf(part, out = []) {
  if (!part || typeof part !== 'object') return out;
  const h = headerMap(part.headers);
  const mime = String(part.mimeType || '').toLowerCase();
  if (!mime.startsWith('multipart/') && isAttachment(part, h)) {
    out.push({
      filename: decodeWords(part.filename || paramOf(h['content-disposition'], 'filename') || paramOf(h['content-type'], 'name')) || null,
      mimeType: part.mimeType || null,
      size: part.body && typeof part.body.size === 'number' ? part.body.size : null,
      attachmentId: (part.body && part.body.attachmentId) || null,
      partId: part.partId ?? null,
    });
  }
  for (const c of Array.isArray(part.parts) ? part.parts : []) attachmentsOf(c, out);
  return out;
}

function clip(text, max) {
  return text.length > max ? { body: `${text.slice(0, max)}…`, truncated: true } : { body: text, truncated: false };
}

const labelsOf = (m) => (Array.isArray(m.labelIds) ? m.labelIds : []);

/** One row of a search result (format=metadata). */
function slimMessage(m) {
  const h = headerMap(m.payload && m.payload.headers);
  const labels = labelsOf(m);
  return {
    id: m.id,
    threadId: m.threadId ?? null,
    date: h.date || null,
    from: decodeWords(h.from) || null,
    to: decodeWords(h.to) || null,
    subject: decodeWords(h.subject) || '',
    snippet: decodeEntities(m.snippet || ''),
    labels,
    unread: labels.includes('UNREAD'),
  };
}

/**
 * A whole message (format=full): headers, the body as text, attachments listed but not downloaded.
 * `parts` are the text parts fetched apart (fetchTextParts); those it could not fetch are listed.
 */
function fullMessage(m, maxChars, parts = { fetched: new Map(), skipped: [] }) {
  const h = headerMap(m.payload && m.payload.headers);
  const labels = labelsOf(m);
  const notes = [];
  const found = bodyOf(m.payload, notes, parts.fetched);
  const { body, truncated } = clip(found ? found.text : '', maxChars);
  const out = {
    id: m.id,
    threadId: m.threadId ?? null,
    date: h.date || null,
    from: decodeWords(h.from) || null,
    to: decodeWords(h.to) || null,
    cc: decodeWords(h.cc) || null,
    subject: decodeWords(h.subject) || '',
    messageId: h['message-id'] || null,
    labels,
    unread: labels.includes('UNREAD'),
    body,
    bodyFormat: found ? (found.html ? 'text from html' : 'text') : 'none',
    truncated,
    attachments: attachmentsOf(m.payload),
  };
  const said = [];
  if (notes.length) said.push(`charset ${notes.join(', ')} is not supported: decoded as UTF-8, some characters may be wrong`);
  for (const { part, reason } of parts.skipped) {
    const size = part.body && typeof part.body.size === 'number' ? part.body.size : null;
    out.attachments.push({ filename: null, mimeType: part.mimeType || null, size, attachmentId: part.body.attachmentId, partId: part.partId ?? null });
    said.push(`a ${part.mimeType} part of the body (partId ${part.partId ?? '?'}${size === null ? '' : `, ${size} bytes`}) was not read (${reason}): it is listed in attachments`);
  }
  if (said.length) out.note = `${said.join('; ')}.`;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writing: RFC 2822 with RFC 2047 encoded words, base64url raw

const isAscii = (s) => /^[\x20-\x7e]*$/.test(s);

function refuseLineBreaks(name, value) {
  if (/[\r\n]/.test(value)) {
    throw new Error(`${name} contains a line break (CR or LF): header values must be one line (a line break would inject headers). Remove it and retry.`);
  }
  if (/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(value)) throw new Error(`${name} contains a control character: remove it and retry.`);
}

/** =?UTF-8?B?…?= words of at most 75 characters (45 UTF-8 bytes each, never splitting a character), folded. */
function encodeWords(text) {
  const utf8 = new TextEncoder();
  const words = [];
  let cur = '';
  for (const ch of text) {
    if (utf8.encode(cur + ch).length > 45) {
      words.push(cur);
      cur = '';
    }
    cur += ch;
  }
  if (cur) words.push(cur);
  return words.map((w) => `=?UTF-8?B?${utf8.encode(w).toBase64()}?=`).join('\r\n ');
}

const headerText = (text) => (isAscii(text) ? text : encodeWords(text));

const ADDR = /^[^\s<>()[\]\\,;:"@]+@[^\s<>()[\]\\,;:"@]+\.[^\s<>()[\]\\,;:"@]+$/;

/** A mailbox in header form: the name encoded when it is not ASCII, quoted when it holds specials. */
function mailboxHeader(name, addr) {
  if (!name) return addr;
  if (!isAscii(name)) return `${encodeWords(name)} <${addr}>`;
  if (/[()<>[\]:;@\\,."]|=\?/.test(name)) name = `"${name.replace(/["\\]/g, '\\$&')}"`;
  return `${name} <${addr}>`;
}

/**
 * An entry of to/cc/bcc → { header, address }. An agent's entry is "a@b.c" or "Name <a@b.c>"; an
 * entry taken from the original message (a reply's default) is { name, address } already parsed
 * (parseAddressList), whose name is only ever written back encoded or quoted.
 */
function formatAddress(field, entry) {
  if (typeof entry === 'object') {
    return { header: mailboxHeader(entry.name.replace(/[\x00-\x1f\x7f]+/g, ' ').trim(), entry.address), address: entry.address };
  }
  refuseLineBreaks(field, entry);
  const s = entry.trim();
  if (ADDR.test(s)) return { header: s, address: s };
  const m = /^(.*?)\s*<([^<>]+)>$/.exec(s);
  if (!m || !ADDR.test(m[2].trim())) {
    throw new Error(`${field}: "${entry}" is not an email address; give one address per entry, as "name@example.com" or "Name <name@example.com>".`);
  }
  const addr = m[2].trim();
  return { header: mailboxHeader(m[1].trim().replace(/^"(.*)"$/, '$1').replace(/\\(.)/g, '$1'), addr), address: addr };
}

const usableAddress = (a) => ADDR.test(a) && !/[\x00-\x1f\x7f]/.test(a);

/** The RFC 2822 message: headers (to, cc, bcc already formatted), then the UTF-8 text body in base64 lines of 76. */
function buildMessage({ to, cc, bcc, subject, body, inReplyTo, references }) {
  refuseLineBreaks('subject', subject);
  const lines = [];
  if (to.length) lines.push(`To: ${to.map((a) => a.header).join(',\r\n ')}`);
  if (cc.length) lines.push(`Cc: ${cc.map((a) => a.header).join(',\r\n ')}`);
  if (bcc.length) lines.push(`Bcc: ${bcc.map((a) => a.header).join(',\r\n ')}`);
  lines.push(`Subject: ${headerText(subject)}`);
  if (inReplyTo) {
    refuseLineBreaks('In-Reply-To', inReplyTo);
    lines.push(`In-Reply-To: ${inReplyTo}`);
  }
  if (references && references.length) {
    for (const id of references) refuseLineBreaks('References', id);
    lines.push(`References: ${references.join('\r\n ')}`);
  }
  lines.push('MIME-Version: 1.0', 'Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: base64');
  const text = String(body || '').replace(/\r\n?/g, '\n').replace(/\n/g, '\r\n');
  const b64 = new TextEncoder().encode(text).toBase64();
  const wrapped = b64.match(/.{1,76}/g) || [];
  return `${lines.join('\r\n')}\r\n\r\n${wrapped.join('\r\n')}\r\n`;
}

const toRaw = (message) => new TextEncoder().encode(message).toBase64({ alphabet: 'base64url', omitPadding: true });

/** The message being answered: its thread, Message-ID, References, subject, and who a reply goes to by default. */
async function replyContext(ctx, messageId) {
  const m = await gmail(ctx, 'GET', `/messages/${enc(messageId)}`, {
    query: { format: 'metadata', metadataHeaders: REPLY_HEADERS },
    action: `read message ${messageId} to reply to it`,
  });
  const h = headerMap(m.payload && m.payload.headers);
  const mid = (h['message-id'] || '').trim();
  const ids = (h.references || '').match(/<[^<>\s]+>/g) || [];
  if (mid && !ids.includes(mid)) ids.push(mid);
  const subject = decodeWords(h.subject || '');
  // one's own sent message: a reply goes to its recipients (as Gmail's Reply does), not to oneself
  const sent = labelsOf(m).includes('SENT');
  const header = sent ? 'To' : h['reply-to'] ? 'Reply-To' : 'From';
  return {
    threadId: m.threadId,
    inReplyTo: mid || undefined,
    references: ids.length > MAX_REFERENCES ? [ids[0], ...ids.slice(-(MAX_REFERENCES - 1))] : ids,
    subject: /^re:/i.test(subject.trim()) ? subject.trim() : `Re: ${subject.trim()}`.trim(),
    sent,
    header,
    recipients: parseAddressList(h[header.toLowerCase()] || ''),
  };
}

/** The message to send or save: a new one, or a reply threaded on the original. */
async function composed(ctx, args) {
  let to = args.to || [];
  let subject = args.subject;
  let thread;
  const notes = [];
  if (args.replyToMessageId) {
    const r = await replyContext(ctx, args.replyToMessageId);
    thread = { threadId: r.threadId, inReplyTo: r.inReplyTo, references: r.references };
    if (subject === undefined) subject = r.subject;
    if (!to.length) {
      to = r.recipients.filter((a) => usableAddress(a.address));
      const bad = r.recipients.filter((a) => !usableAddress(a.address)).map((a) => a.address.slice(0, 100));
      if (bad.length) notes.push(`left out of to, not being email addresses (from the original's ${r.header}): ${bad.join(', ')}`);
      if (!to.length) throw new Error(`The original message's ${r.header} header has no address to reply to: give to.`);
      if (r.sent) notes.push(`message ${args.replyToMessageId} is one you sent, so to defaults to its recipients (its To), not to you`);
    }
  }
  if (subject === undefined) throw new Error('subject is required for a new email (it may be omitted only with replyToMessageId).');
  if (!to.length && !(args.cc || []).length && !(args.bcc || []).length) throw new Error('Give at least one recipient in to, cc or bcc.');
  const lists = { to: to.map((a) => formatAddress('to', a)), cc: (args.cc || []).map((a) => formatAddress('cc', a)), bcc: (args.bcc || []).map((a) => formatAddress('bcc', a)) };
  const message = buildMessage({ ...lists, subject, body: args.body, ...(thread || {}) });
  return {
    raw: toRaw(message),
    threadId: thread ? thread.threadId : undefined,
    // who the email goes to, as addresses: the agent sees exactly whom it wrote to
    recipients: { to: lists.to.map((a) => a.address), cc: lists.cc.map((a) => a.address), bcc: lists.bcc.map((a) => a.address) },
    note: notes.length ? `${notes.join('; ')}.` : undefined,
  };
}

/**
 * An address-list header value (To, From, Reply-To) → [{ name, address }], parsed before anything
 * is decoded: quoted strings, comments, angle brackets and RFC 2047 encoded words are tokens, so a
 * comma or an angle bracket inside a (decoded) display name never makes another address. Groups
 * (`Team: a@x.org, b@y.org;`) give their members. The name is decoded afterwards, for display only.
 */
function parseAddressList(value) {
  const s = String(value || '');
  const out = [];
  const word = /=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=/y;
  let phrase = '';
  let bare = '';
  let angle = null;
  const flush = () => {
    if (angle !== null) {
      const address = angle.replace(/^(@[^:]*:)/, '').replace(/\s+/g, '');
      if (address) out.push({ name: decodeWords(phrase.replace(/\s+/g, ' ').trim()), address });
    } else if (bare.trim()) out.push({ name: '', address: bare.replace(/\s+/g, '') });
    phrase = '';
    bare = '';
    angle = null;
  };
  for (let i = 0; i < s.length; ) {
    const ch = s[i];
    if (ch === '"') {
      let j = i + 1;
      let text = '';
      while (j < s.length && s[j] !== '"') {
        if (s[j] === '\\' && j + 1 < s.length) j++;
        text += s[j++];
      }
      phrase += text;
      bare += s.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '(') {
      let depth = 0;
      let j = i;
      for (; j < s.length; j++) {
        if (s[j] === '\\') j++;
        else if (s[j] === '(') depth++;
        else if (s[j] === ')' && --depth === 0) break;
      }
      phrase += ' ';
      i = j + 1;
    } else if (ch === '<') {
      const end = s.indexOf('>', i + 1);
      const stop = end < 0 ? s.length : end;
      angle = (angle ?? '') + s.slice(i + 1, stop);
      i = stop + 1;
    } else if (ch === ',') {
      flush();
      i++;
    } else if (ch === ';') {
      flush();
      i++;
    } else if (ch === ':' && angle === null) {
      // a group's name: what came before is not an address
      phrase = '';
      bare = '';
      i++;
    } else {
      word.lastIndex = i;
      const m = ch === '=' ? word.exec(s) : null;
      const piece = m ? m[0] : ch;
      phrase += piece;
      bare += piece;
      i += piece.length;
    }
  }
  flush();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Labels

const SYSTEM_LABEL = /^(INBOX|SPAM|TRASH|UNREAD|STARRED|IMPORTANT|SENT|DRAFT|CHAT|CATEGORY_(PERSONAL|SOCIAL|PROMOTIONS|UPDATES|FORUMS))$/i;

/** Label ids for names or ids: system labels by name, Label_… ids as they are, user labels looked up by name. */
async function labelIds(ctx, wanted) {
  const out = [];
  let all;
  for (const w of wanted) {
    const v = w.trim();
    if (SYSTEM_LABEL.test(v)) out.push(v.toUpperCase());
    else if (/^Label_[0-9]+$/.test(v)) out.push(v);
    else {
      if (!all) {
        const data = await gmail(ctx, 'GET', '/labels', { action: 'list labels' });
        all = Array.isArray(data && data.labels) ? data.labels : [];
      }
      const hit = all.find((l) => String(l.name || '').toLowerCase() === v.toLowerCase());
      if (!hit) {
        const names = all.filter((l) => l.type === 'user').map((l) => `"${l.name}"`).slice(0, 20).join(', ') || 'none';
        throw new Error(`No Gmail label is named "${v}". User labels: ${names}. System labels: INBOX, STARRED, IMPORTANT, UNREAD, SPAM, TRASH, CATEGORY_*.`);
      }
      out.push(hit.id);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function searchMessages(ctx, args) {
  const asked = args.maxResults ?? 10;
  // each row costs a metadata request after the list's own: a page is as long as the call's requests allow
  const perPage = Math.max(1, Math.min(asked, ctx.limits.requestsLeft() - 1));
  const list = await gmail(ctx, 'GET', '/messages', {
    query: {
      q: args.query,
      maxResults: perPage,
      pageToken: args.cursor,
      labelIds: args.labelIds,
      includeSpamTrash: args.includeSpamTrash ? 'true' : undefined,
    },
    action: 'search messages',
  });
  const ids = (Array.isArray(list && list.messages) ? list.messages : []).slice(0, perPage);
  const rows = await Promise.all(
    ids.map(async (ref) => {
      try {
        const m = await gmail(ctx, 'GET', `/messages/${enc(ref.id)}`, {
          query: { format: 'metadata', metadataHeaders: LIST_HEADERS },
          action: `read message ${ref.id}`,
        });
        return slimMessage(m);
      } catch (err) {
        // a message deleted between the list and the read is left out; any other failure counts
        if (err && err.status === 404) return null;
        throw err;
      }
    }),
  );
  const messages = rows.filter(Boolean);
  return {
    messages,
    count: messages.length,
    resultSizeEstimate: typeof list?.resultSizeEstimate === 'number' ? list.resultSizeEstimate : null,
    next: (list && list.nextPageToken) || null,
    ...(perPage < asked ? { note: `Pages are ${perPage} messages here (a call may make ${ctx.limits.maxRequests} requests, one per message): pass next for more.` } : {}),
  };
}

async function getMessage(ctx, args) {
  let m;
  try {
    m = await gmail(ctx, 'GET', `/messages/${enc(args.messageId)}`, { query: { format: 'full' }, action: `read message ${args.messageId}` });
  } catch (err) {
    if (!(err && SKIPPABLE[err.code])) throw err;
    // the whole message cannot come through: its headers can, with a note saying what is missing
    const meta = await gmail(ctx, 'GET', `/messages/${enc(args.messageId)}`, { query: { format: 'metadata' }, action: `read the headers of message ${args.messageId}` });
    return {
      ...fullMessage(meta, args.maxBodyChars ?? 20000),
      body: null,
      bodyFormat: 'none',
      attachments: null,
      note: `The body and attachments of message ${args.messageId} could not be read (${SKIPPABLE[err.code]}): only its headers are here; open it in Gmail to read the rest.`,
    };
  }
  const parts = await fetchTextParts(ctx, m, { left: ctx.limits.requestsLeft() });
  return fullMessage(m, args.maxBodyChars ?? 20000, parts);
}

/** A thread message as gmail_get_thread gives it. */
function threadMessage(full) {
  return {
    id: full.id,
    date: full.date,
    from: full.from,
    to: full.to,
    cc: full.cc,
    subject: full.subject,
    unread: full.unread,
    body: full.body,
    truncated: full.truncated,
    attachments: full.attachments.map((a) => ({ filename: a.filename, mimeType: a.mimeType, size: a.size })),
    ...(full.note ? { note: full.note } : {}),
  };
}

/**
 * A thread: its messages' headers in one request (format=metadata), then the newest
 * THREAD_FULL_MESSAGES in full, one request each, within the call's request budget (a thread in
 * format=full can be larger than the response cap). Messages not read in full keep their headers,
 * with body null and the reason, and are named in `notRead`.
 */
async function getThread(ctx, args) {
  const t = await gmail(ctx, 'GET', `/threads/${enc(args.threadId)}`, {
    query: { format: 'metadata', metadataHeaders: THREAD_HEADERS },
    action: `read thread ${args.threadId}`,
  });
  const all = (Array.isArray(t && t.messages) ? t.messages : []).slice();
  all.sort((a, b) => Number(a.internalDate || 0) - Number(b.internalDate || 0));
  const per = args.maxBodyCharsPerMessage ?? 4000;
  const budget = { left: ctx.limits.requestsLeft() };
  const full = new Map();
  const notRead = new Map();
  const gone = new Set();
  for (const m of all.slice(0, Math.max(0, all.length - THREAD_FULL_MESSAGES))) notRead.set(m.id, `only the newest ${THREAD_FULL_MESSAGES} messages of a thread are read in full`);
  const newest = all.slice(-THREAD_FULL_MESSAGES).reverse();
  for (let k = 0; k < newest.length; k += 5) {
    await Promise.all(
      newest.slice(k, k + 5).map(async (meta) => {
        if (budget.left <= 0) {
          notRead.set(meta.id, SKIPPABLE.GW_ERR_BRIDGE_TOO_MANY_REQUESTS);
          return;
        }
        budget.left--;
        try {
          full.set(meta.id, await gmail(ctx, 'GET', `/messages/${enc(meta.id)}`, { query: { format: 'full' }, action: `read message ${meta.id} of thread ${args.threadId}` }));
        } catch (err) {
          if (err && err.status === 404) gone.add(meta.id);
          else if (err && SKIPPABLE[err.code]) notRead.set(meta.id, SKIPPABLE[err.code]);
          else throw err;
        }
      }),
    );
  }
  const parts = new Map();
  for (const meta of newest) if (full.has(meta.id)) parts.set(meta.id, await fetchTextParts(ctx, full.get(meta.id), budget));
  const messages = all
    .filter((meta) => !gone.has(meta.id))
    .map((meta) => {
      if (full.has(meta.id)) return threadMessage(fullMessage(full.get(meta.id), per, parts.get(meta.id)));
      const slim = fullMessage({ ...meta, payload: { headers: meta.payload && meta.payload.headers } }, per);
      return { ...threadMessage(slim), body: null, attachments: null, note: `not read in full (${notRead.get(meta.id)}): read it with gmail_get_email` };
    });
  const out = { threadId: t.id, subject: messages.length ? messages[0].subject : '', messageCount: messages.length, messages };
  if (notRead.size) {
    out.notRead = messages.filter((m) => notRead.has(m.id)).map((m) => m.id);
    out.note = `${out.notRead.length} of the ${messages.length} messages are given with their headers only (body null): read them with gmail_get_email.`;
  }
  return out;
}

async function sendEmail(ctx, args) {
  const { raw, threadId, recipients, note } = await composed(ctx, args);
  const sent = await gmail(ctx, 'POST', '/messages/send', {
    body: threadId ? { raw, threadId } : { raw },
    action: args.replyToMessageId ? `send a reply to message ${args.replyToMessageId}` : 'send the email',
  });
  return { id: sent.id, threadId: sent.threadId ?? null, labels: labelsOf(sent), reply: Boolean(args.replyToMessageId), ...recipients, note };
}

async function createDraft(ctx, args) {
  const { raw, threadId, recipients, note } = await composed(ctx, args);
  const draft = await gmail(ctx, 'POST', '/drafts', {
    body: { message: threadId ? { raw, threadId } : { raw } },
    action: 'create the draft',
  });
  const m = draft.message || {};
  return { draftId: draft.id, messageId: m.id ?? null, threadId: m.threadId ?? null, reply: Boolean(args.replyToMessageId), ...recipients, note };
}

async function modifyLabels(ctx, args) {
  const add = [];
  const remove = [];
  if (args.archive === true) remove.push('INBOX');
  if (args.archive === false) add.push('INBOX');
  if (args.read === true) remove.push('UNREAD');
  if (args.read === false) add.push('UNREAD');
  if (args.starred === true) add.push('STARRED');
  if (args.starred === false) remove.push('STARRED');
  add.push(...(await labelIds(ctx, args.addLabels || [])));
  remove.push(...(await labelIds(ctx, args.removeLabels || [])));
  const addIds = [...new Set(add)];
  const removeIds = [...new Set(remove)];
  const both = addIds.filter((l) => removeIds.includes(l));
  if (both.length) throw new Error(`Label ${both.join(', ')} is both added and removed: pick one.`);
  if (!addIds.length && !removeIds.length) {
    throw new Error('Nothing to change: give archive, read, starred, addLabels or removeLabels.');
  }
  const ids = [...new Set(args.messageIds)];
  if (ids.length === 1) {
    const m = await gmail(ctx, 'POST', `/messages/${enc(ids[0])}/modify`, {
      body: { addLabelIds: addIds, removeLabelIds: removeIds },
      action: `change the labels of message ${ids[0]}`,
    });
    return { messageIds: ids, added: addIds, removed: removeIds, labels: labelsOf(m) };
  }
  await gmail(ctx, 'POST', '/messages/batchModify', {
    body: { ids, addLabelIds: addIds, removeLabelIds: removeIds },
    action: `change the labels of ${ids.length} messages`,
  });
  return { messageIds: ids, added: addIds, removed: removeIds };
}

async function listLabels(ctx) {
  const data = await gmail(ctx, 'GET', '/labels', { action: 'list labels' });
  const labels = (Array.isArray(data && data.labels) ? data.labels : []).map((l) => ({ id: l.id, name: l.name, type: l.type ?? null }));
  labels.sort((a, b) => (a.type === b.type ? String(a.name).localeCompare(String(b.name)) : a.type === 'system' ? -1 : 1));
  return { labels };
}

async function trashMessage(ctx, args) {
  const m = await gmail(ctx, 'POST', `/messages/${enc(args.messageId)}/trash`, { action: `move message ${args.messageId} to the trash` });
  return { id: m.id, threadId: m.threadId ?? null, labels: labelsOf(m), trashed: labelsOf(m).includes('TRASH') };
}

export default {
  gmail_search_emails: searchMessages,
  gmail_get_email: getMessage,
  gmail_get_thread: getThread,
  gmail_send_email: sendEmail,
  gmail_create_draft: createDraft,
  gmail_modify_labels: modifyLabels,
  gmail_list_labels: listLabels,
  gmail_trash_email: trashMessage,
};
