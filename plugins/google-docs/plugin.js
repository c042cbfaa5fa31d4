/**
 * @module plugins/google-docs/plugin
 * Google Docs API v1 tools acting as the connected Google user (OAuth 2.0), on
 * https://docs.googleapis.com/v1/documents. Self-contained (the plugin format allows no imports),
 * so the one error mapping, the reader that turns a document's structural elements into text, the
 * index checks and the result shapers live beside the handlers (so it is longer than the 400-line
 * guideline). The gateway adds the Bearer
 * token: this code never sets it.
 *
 * Indexes are UTF-16 code units, as in JavaScript strings. Edits that depend on indexes read the
 * document first and send its revisionId as writeControl.requiredRevisionId, so Google refuses
 * the write (400) instead of applying it at shifted positions when someone edited meanwhile.
 */

const API = 'https://docs.googleapis.com/v1/documents';
const SCOPE = 'https://www.googleapis.com/auth/documents';
/** characters of text one docs_get_document call returns at most */
const MAX_CHARS = 50000;
const HEADING_LEVEL = { TITLE: 0, SUBTITLE: 0, HEADING_1: 1, HEADING_2: 2, HEADING_3: 3, HEADING_4: 4, HEADING_5: 5, HEADING_6: 6 };
const HEADING_MARK = { TITLE: '#', SUBTITLE: '##', HEADING_1: '#', HEADING_2: '##', HEADING_3: '###', HEADING_4: '####', HEADING_5: '#####', HEADING_6: '######' };
const ORDERED_GLYPHS = new Set(['DECIMAL', 'ZERO_DECIMAL', 'UPPER_ALPHA', 'ALPHA', 'UPPER_ROMAN', 'ROMAN']);

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Google answer becomes a message an agent can act on.

/** Google's error body: {error: {code, message, status, errors: [{reason}], details: [{reason}]}}. */
function parseGoogleError(text) {
  let body;
  try {
    body = JSON.parse(text || '{}');
  } catch {
    return { message: String(text || '').trim().slice(0, 300), status: '', reasons: [] };
  }
  const e = body && typeof body.error === 'object' && body.error ? body.error : {};
  const reasons = [];
  for (const x of Array.isArray(e.errors) ? e.errors : []) if (x && typeof x.reason === 'string') reasons.push(x.reason);
  for (const x of Array.isArray(e.details) ? e.details : []) if (x && typeof x.reason === 'string') reasons.push(x.reason);
  const message = typeof e.message === 'string' ? e.message : typeof body.error === 'string' ? body.error : '';
  return { message: message.trim().slice(0, 500), status: typeof e.status === 'string' ? e.status : '', reasons };
}

const RATE_REASONS = ['userRateLimitExceeded', 'rateLimitExceeded', 'RATE_LIMIT_EXCEEDED'];
const SCOPE_REASONS = ['insufficientPermissions', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'insufficientScopes'];

/** `lock` is the requiredRevisionId the write carried, if any. */
function docsError(res, text, action, lock) {
  const { message, status, reasons } = parseGoogleError(text);
  const code = res.status;
  const msg = message.replace(/[.\s]+$/, '');
  const said = msg ? ` Google said: ${msg}.` : '';
  if (code === 401) {
    return new Error(`Google rejected the access token (401) while trying to ${action}: reconnect google-docs.${said}`);
  }
  if (code === 429 || status === 'RESOURCE_EXHAUSTED' || (code === 403 && reasons.some((r) => RATE_REASONS.includes(r)))) {
    const after = res.headers.get('retry-after');
    const wait = after && /^\d+$/.test(after.trim()) ? `retry after ${Number(after)} seconds` : 'Docs quotas are per minute: wait a minute and retry';
    return new Error(`Google Docs rate limited the request to ${action} (${code}): ${wait}.`);
  }
  if (code === 403 && (reasons.some((r) => SCOPE_REASONS.includes(r)) || /insufficient authentication scopes/i.test(message))) {
    return new Error(`The google-docs connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-docs and approve access to documents.`);
  }
  if (code === 403) {
    return new Error(`Google Docs refused to ${action} (403): ${msg || 'your Google account lacks access to this document'}. Ask its owner to share it with you (editor access to change it).`);
  }
  if (code === 404) {
    return new Error(`Google Docs found nothing while trying to ${action} (404): ${msg || 'no such document'}. Check the document id; Google also answers 404 for a document you cannot see.`);
  }
  if (code === 400 && lock && (status === 'FAILED_PRECONDITION' || /revision/i.test(message))) {
    return new Error(
      `Google Docs refused to ${action} (400): the document changed after revision ${lock} was read (someone else edited it), so nothing was written. ` +
        `Read it again (docs_get_outline or docs_get_document) and redo the edit with the new indexes and revisionId.${said}`,
    );
  }
  if (code === 400 && /not supported for this document/i.test(message)) {
    return new Error(`Google Docs refused to ${action} (400): ${msg}. The file is probably not a Google Docs document (e.g. a Word file stored in Drive): read it with google-drive's drive_read_file.`);
  }
  if (code === 400 || code === 409 || code === 422) {
    const guard = lock ? ` (The write required revision ${lock}: if the document changed since, read it again.)` : '';
    return new Error(`Google Docs refused to ${action} (${code}): ${msg || 'the request was not valid'}.${guard}`);
  }
  if (code >= 500) return new Error(`Google Docs had a server error (${code}) while trying to ${action}: retry later.${said}`);
  return new Error(`Google Docs answered HTTP ${code} while trying to ${action}.${said}`);
}

// ---------------------------------------------------------------------------------------------
// Requests

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

function qs(params) {
  const parts = [];
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${enc(k)}=${enc(v)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

async function docs(ctx, method, path, { query, body, action, lock, tooLarge }) {
  const init = { method, headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await ctx.http(API + path + qs(query), init);
  } catch (err) {
    if (err && err.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') throw new Error(`The answer to ${action} was larger than the gateway accepts: ${tooLarge || 'ask for less'}.`);
    if (err && err.code === 'GW_ERR_BRIDGE_TIMEOUT') {
      const next = method === 'GET' ? 'retry in a moment' : 'it may still have been done, so check the document (docs_get_document) before trying again';
      throw new Error(`Google Docs did not answer in time while trying to ${action}: ${next}.`);
    }
    throw err;
  }
  const text = await res.text();
  if (!res.ok) throw docsError(res, text, action, lock);
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`Google Docs answered ${res.status} with something that is not JSON while trying to ${action}.`);
  }
}

/**
 * A document id, or the id inside a Google Docs link (…/document/d/<id>/edit?tab=t.0); the link's
 * tab, if any, comes along. Ids hold only [A-Za-z0-9_-], so "." and ".." (dot segments that would
 * resolve to another endpoint) never reach a URL.
 */
function docRef(value) {
  const s = String(value || '').trim();
  const other = /\/(spreadsheets|presentation|forms|drawings)\/(?:u\/\d+\/)?d\//.exec(s);
  if (other) {
    const hint = { spreadsheets: 'a Google Sheets spreadsheet: use the google-sheets tools', presentation: 'a Google Slides presentation', forms: 'a Google Form', drawings: 'a Google Drawing' }[other[1]];
    throw new Error(`documentId "${s.slice(0, 100)}" is a link to ${hint}, not to a Google Docs document.`);
  }
  const m = /\/d\/([A-Za-z0-9_-]{2,})/.exec(s) || /[?&]id=([A-Za-z0-9_-]{2,})/.exec(s);
  const id = m ? m[1] : s;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id)) throw new Error(`documentId "${s.slice(0, 100)}" is neither a document id nor a Google Docs link.`);
  const tab = m ? /[?&#]tab=([A-Za-z0-9._-]{1,100})/.exec(s) : null;
  return { id, tabId: tab ? tab[1] : undefined };
}

const docUrl = (id, tabId) => `https://docs.google.com/document/d/${id}/edit${tabId ? `?tab=${enc(tabId)}` : ''}`;

/** Reads the whole document, every tab's content included. */
function readDocument(ctx, id, action, extraQuery) {
  return docs(ctx, 'GET', `/${enc(id)}`, {
    query: { includeTabsContent: 'true', ...(extraQuery || {}) },
    action,
    // the cut by offset and maxChars happens after the whole document has come
    tooLarge: `the document's structure (JSON) is over the response cap, and offset or maxChars cannot help since they cut the text after the whole document is downloaded. Read it as plain text with google-drive's drive_read_file (a much smaller export), or open ${docUrl(id)}`,
  });
}

// ---------------------------------------------------------------------------------------------
// Tabs

/** Every tab of the document, depth first, as {tab, props}. */
function allTabs(doc) {
  const out = [];
  const walk = (tabs) => {
    for (const t of Array.isArray(tabs) ? tabs : []) {
      if (!t || typeof t !== 'object') continue;
      out.push({ tab: t, props: t.tabProperties || {} });
      walk(t.childTabs);
    }
  };
  walk(doc.tabs);
  return out;
}

const slimTab = (p) => ({ tabId: p.tabId ?? null, title: p.title ?? null, level: p.nestingLevel ?? 0, ...(p.parentTabId ? { parentTabId: p.parentTabId } : {}) });

/**
 * The tab to work on: `tabId`, or the first tab. Answers the tab's content ({body, lists,
 * footnotes, inlineObjects}), its id and title, and the list of all tabs. A document answered
 * without `tabs` (the older shape) is one untitled tab whose content is the document's own.
 */
function pickTab(doc, tabId) {
  const tabs = allTabs(doc);
  if (tabs.length === 0) {
    if (tabId) throw new Error(`The document has no tab "${tabId}": it has a single tab; leave tabId out.`);
    return { content: doc, tabId: null, title: null, tabs: [] };
  }
  const found = tabId ? tabs.find((t) => t.props.tabId === tabId) : tabs[0];
  if (!found) {
    const names = tabs.slice(0, 20).map((t) => `${t.props.tabId} "${t.props.title ?? ''}"`).join(', ');
    throw new Error(`The document has no tab "${tabId}"; its tabs are: ${names}.`);
  }
  return { content: found.tab.documentTab || {}, tabId: found.props.tabId ?? null, title: found.props.title ?? null, tabs: tabs.map((t) => slimTab(t.props)) };
}

const bodyContent = (dt) => (dt && dt.body && Array.isArray(dt.body.content) ? dt.body.content : []);
const startOf = (el) => (Number.isInteger(el.startIndex) ? el.startIndex : 0);
/** The end (exclusive) of the body: its last element's endIndex. */
function bodyEnd(content) {
  const last = content[content.length - 1];
  return last && Number.isInteger(last.endIndex) ? last.endIndex : 1;
}

/** Refuses an edit planned on an older revision before anything is written. */
function checkRevision(doc, revisionId, id) {
  if (revisionId && doc.revisionId && doc.revisionId !== revisionId) {
    throw new Error(
      `Document ${id} changed since revision ${revisionId} was read (it is now at ${doc.revisionId}), so nothing was written: ` +
        'read it again (docs_get_outline or docs_get_document) and redo the edit with the new indexes and revisionId.',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Reading: structural elements as text

/** The link of a text style as a Markdown target: an external URL, or a heading / bookmark / tab in the document. */
function linkOf(style) {
  const l = style && style.link;
  if (!l || typeof l !== 'object') return null;
  if (typeof l.url === 'string' && l.url) return l.url;
  const heading = l.headingId || (l.heading && l.heading.id);
  if (heading) return `#heading=${heading}`;
  const bookmark = l.bookmarkId || (l.bookmark && l.bookmark.id);
  if (bookmark) return `#bookmark=${bookmark}`;
  if (l.tabId) return `#tab=${l.tabId}`;
  return null;
}

/**
 * An element's text, marked when it is a suggestion not yet accepted: {+…+} for a suggested
 * insertion, {-…-} for a suggested deletion (in the default, inline view both are in the text,
 * so "May" deleted and "June" suggested would otherwise read "MayJune"). A trailing paragraph
 * end stays outside the mark.
 */
function suggested(el, text) {
  const del = Array.isArray(el.suggestedDeletionIds) && el.suggestedDeletionIds.length > 0;
  const ins = Array.isArray(el.suggestedInsertionIds) && el.suggestedInsertionIds.length > 0;
  if (!del && !ins) return text;
  const [, core, tail] = /^([\s\S]*?)(\n*)$/.exec(text);
  if (!core) return text;
  return del ? `{-${core}-}${tail}` : `{+${core}+}${tail}`;
}

/** A date chip as the document shows it (dateElementProperties.displayText, output only). */
function dateText(date) {
  const p = date.dateElementProperties || {};
  return typeof p.displayText === 'string' ? p.displayText : '';
}

/** One paragraph's inline text: runs (links as [text](url)), people, smart chips (dates as shown), images, footnote marks. */
function inlineText(paragraph, r) {
  const segs = [];
  const push = (text, link) => {
    const prev = segs[segs.length - 1];
    if (prev && prev.link === link) prev.text += text;
    else segs.push({ text, link });
  };
  for (const el of Array.isArray(paragraph.elements) ? paragraph.elements : []) {
    if (el.textRun) {
      push(suggested(el.textRun, String(el.textRun.content || '').replace(/\uE907/g, '')), linkOf(el.textRun.textStyle));
    } else if (el.person) {
      const p = el.person.personProperties || {};
      push(suggested(el.person, p.name && p.email ? `${p.name} (${p.email})` : p.name || p.email || ''), null);
    } else if (el.richLink) {
      const p = el.richLink.richLinkProperties || {};
      push(suggested(el.richLink, p.title || p.uri || ''), p.uri || null);
    } else if (el.dateElement) {
      push(suggested(el.dateElement, dateText(el.dateElement)), null);
    } else if (el.inlineObjectElement) {
      const obj = r.inlineObjects[el.inlineObjectElement.inlineObjectId];
      const emb = obj && obj.inlineObjectProperties && obj.inlineObjectProperties.embeddedObject;
      const alt = emb && (emb.description || emb.title);
      push(alt ? `[image: ${alt}]` : '[image]', null);
    } else if (el.footnoteReference) {
      const n = el.footnoteReference.footnoteNumber || String(r.notes.length + 1);
      r.notes.push({ id: el.footnoteReference.footnoteId, n });
      push(`[^${n}]`, null);
    } else if (el.horizontalRule) {
      push('---', null);
    } else if (el.equation) {
      push('[equation]', null);
    }
  }
  const last = segs[segs.length - 1];
  if (last) last.text = last.text.replace(/\n$/, '');
  // a vertical tab is a line break inside the paragraph (Shift+Enter)
  return segs.map((s) => (s.link && s.text.trim() ? `[${s.text}](${s.link})` : s.text)).join('').replace(/\u000b/g, '\n');
}

/** A list item's marker: "-" for bullets, "1." (counted per list and level) for numbered lists. */
function listMarker(bullet, r) {
  const level = Number.isInteger(bullet.nestingLevel) ? bullet.nestingLevel : 0;
  const list = r.lists[bullet.listId];
  const levels = list && list.listProperties && Array.isArray(list.listProperties.nestingLevels) ? list.listProperties.nestingLevels : [];
  const spec = levels[level] || {};
  const indent = '  '.repeat(level);
  if (!ORDERED_GLYPHS.has(spec.glyphType)) return `${indent}- `;
  const counts = r.counters.get(bullet.listId) || [];
  counts[level] = counts[level] ? counts[level] + 1 : Number.isInteger(spec.startNumber) && spec.startNumber > 0 ? spec.startNumber : 1;
  counts.length = level + 1; // deeper levels start again
  r.counters.set(bullet.listId, counts);
  return `${indent}${counts[level]}. `;
}

/** Structural elements as blocks {text, list}; empty paragraphs are dropped. */
function renderContent(content, r) {
  const blocks = [];
  for (const el of Array.isArray(content) ? content : []) {
    if (el.paragraph) {
      const p = el.paragraph;
      const text = inlineText(p, r);
      if (!text.trim()) continue;
      const named = p.paragraphStyle && p.paragraphStyle.namedStyleType;
      if (p.bullet) blocks.push({ text: listMarker(p.bullet, r) + text, list: true });
      else if (HEADING_MARK[named]) blocks.push({ text: `${HEADING_MARK[named]} ${text.replace(/\n/g, ' ')}`, list: false });
      else blocks.push({ text, list: false });
    } else if (el.table) {
      const text = renderTable(el.table, r);
      if (text) blocks.push({ text, list: false });
    } else if (el.tableOfContents) {
      blocks.push({ text: '[Table of contents]', list: false });
    }
    // a section break holds no text
  }
  return blocks;
}

const joinBlocks = (blocks) => blocks.map((b, i) => (i === 0 ? '' : b.list && blocks[i - 1].list ? '\n' : '\n\n') + b.text).join('');

/** Tables nested deeper than this read as [nested table]: each level escapes the | of the levels inside it again. */
const MAX_TABLE_DEPTH = 20;

/** A table as Markdown rows: | a | b |, the first row followed by | --- |; a cell's paragraphs joined by <br>. */
function renderTable(table, r) {
  if ((r.tableDepth || 0) >= MAX_TABLE_DEPTH) return '[nested table]';
  r.tableDepth = (r.tableDepth || 0) + 1;
  let rows;
  try {
    rows = (Array.isArray(table.tableRows) ? table.tableRows : []).map((row) =>
      (Array.isArray(row.tableCells) ? row.tableCells : []).map((cell) =>
        renderContent(cell.content, r).map((b) => b.text).join('<br>').replace(/\n/g, '<br>').replace(/\|/g, '\\|'),
      ),
    );
  } finally {
    r.tableDepth -= 1;
  }
  const width = Math.max(0, ...rows.map((row) => row.length));
  if (width === 0) return '';
  const line = (cells) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
  return [line(rows[0]), line(Array(width).fill('---')), ...rows.slice(1).map(line)].join('\n');
}

/** The text of a tab's body, with its footnotes after it. */
function renderTab(dt) {
  const r = { lists: dt.lists || {}, inlineObjects: dt.inlineObjects || {}, counters: new Map(), notes: [] };
  let text = joinBlocks(renderContent(bodyContent(dt), r));
  const footnotes = dt.footnotes || {};
  const seen = new Set();
  const lines = [];
  for (let i = 0; i < r.notes.length; i++) {
    const { id, n } = r.notes[i];
    if (seen.has(id) || !Object.hasOwn(footnotes, id)) continue;
    seen.add(id);
    const note = renderContent(footnotes[id].content, r).map((b) => b.text).join(' ').trim();
    lines.push(`[^${n}]: ${note}`);
  }
  if (lines.length) text += `\n\n${lines.join('\n')}`;
  return text;
}

/** The plain text of a paragraph (for headings in the outline), suggestions marked as in docs_get_document. */
function plainText(paragraph) {
  let s = '';
  for (const el of Array.isArray(paragraph.elements) ? paragraph.elements : []) {
    if (el.textRun) s += suggested(el.textRun, String(el.textRun.content || ''));
    else if (el.person) s += suggested(el.person, (el.person.personProperties || {}).name || (el.person.personProperties || {}).email || '');
    else if (el.richLink) s += suggested(el.richLink, (el.richLink.richLinkProperties || {}).title || '');
    else if (el.dateElement) s += suggested(el.dateElement, dateText(el.dateElement));
  }
  return s.replace(/\uE907/g, '').replace(/[\n\u000b]+/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * The text as Google will store it: CR LF and CR become LF, and the characters Google strips
 * from inserted text (U+0000–U+0008, U+000C–U+001F, the private use area U+E000–U+F8FF) are
 * removed here, so that the index range computed from its length is the range written.
 */
function cleanText(value, name) {
  const s = String(value).toWellFormed().replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000c-\u001f\ue000-\uf8ff]/g, '');
  if (!s) throw new Error(`${name} holds nothing Google Docs keeps (only control characters).`);
  return s;
}

/** The paragraph (in the body or a table cell) that holds `index`, a description of what is there instead, or null. */
function locate(content, index) {
  for (const el of content) {
    if (!(startOf(el) <= index && index < el.endIndex)) continue;
    if (el.paragraph) return { paragraph: el };
    if (el.sectionBreak) return { what: 'a section break' };
    if (el.tableOfContents) return { what: 'a table of contents (Google Docs regenerates it)' };
    if (el.table) {
      if (index === startOf(el)) return { what: 'the start of a table' };
      for (const row of Array.isArray(el.table.tableRows) ? el.table.tableRows : []) {
        for (const cell of Array.isArray(row.tableCells) ? row.tableCells : []) {
          if (startOf(cell) <= index && index < cell.endIndex) {
            return locate(Array.isArray(cell.content) ? cell.content : [], index) || { what: 'the boundary of a table cell' };
          }
        }
      }
      return { what: 'the boundary of a table row or cell' };
    }
    return { what: 'an element that holds no text' };
  }
  return null;
}

/**
 * The last index before `index` where text can go: the end of the nearest paragraph (in the body
 * or a table cell) that ends at or before it, minus 1 (its newline). null when there is none.
 */
function lastIndexBefore(content, index) {
  let best = null;
  const walk = (els) => {
    for (const el of els) {
      if (startOf(el) >= index) return;
      if (el.paragraph && Number.isInteger(el.endIndex) && el.endIndex <= index) best = el.endIndex - 1;
      else if (el.table) {
        for (const row of Array.isArray(el.table.tableRows) ? el.table.tableRows : []) {
          for (const cell of Array.isArray(row.tableCells) ? row.tableCells : []) walk(Array.isArray(cell.content) ? cell.content : []);
        }
      }
    }
  };
  walk(content);
  return best;
}

const batchUpdate = (ctx, id, requests, lock, action) =>
  docs(ctx, 'POST', `/${enc(id)}:batchUpdate`, {
    body: lock ? { requests, writeControl: { requiredRevisionId: lock } } : { requests },
    action,
    lock,
  });

const newRevision = (data) => (data && data.writeControl && data.writeControl.requiredRevisionId) || null;

/** The updateParagraphStyle request that gives the paragraphs overlapping [start, end) a named style. */
const styleRequest = (start, end, style, tabId) => ({
  updateParagraphStyle: {
    range: { startIndex: start, endIndex: end, ...(tabId ? { tabId } : {}) },
    paragraphStyle: { namedStyleType: style },
    fields: 'namedStyleType',
  },
});

/**
 * A new paragraph copies the bullet of the one it is inserted after, so text added after a list
 * item would become list items (headings included): the deleteParagraphBullets request that keeps
 * the new paragraphs [start, end) out of the list, or null when `prev` is not a list item or the
 * caller asked to continue the list.
 */
function unbulletRequest(prev, start, end, continueList, tabId) {
  if (continueList || !prev || !prev.paragraph || !prev.paragraph.bullet || end <= start) return null;
  return { deleteParagraphBullets: { range: { startIndex: start, endIndex: end, ...(tabId ? { tabId } : {}) } } };
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function getDocument(ctx, a) {
  const ref = docRef(a.documentId);
  const doc = await readDocument(ctx, ref.id, `read document ${ref.id}`, { suggestionsViewMode: a.suggestionsViewMode });
  const tab = pickTab(doc, a.tabId ?? ref.tabId);
  const text = renderTab(tab.content);
  const max = a.maxChars ?? MAX_CHARS;
  const start = Math.min(a.offset ?? 0, text.length);
  let end = Math.min(start + max, text.length);
  // never cut between the two halves of a surrogate pair
  if (end < text.length && end > start && /[\ud800-\udbff]/.test(text[end - 1])) end -= 1;
  const out = {
    documentId: doc.documentId || ref.id,
    title: doc.title ?? null,
    revisionId: doc.revisionId ?? null,
    url: docUrl(doc.documentId || ref.id, tab.tabs.length > 1 ? tab.tabId : null),
    tab: tab.tabId ? { tabId: tab.tabId, title: tab.title } : null,
    tabs: tab.tabs,
    totalChars: text.length,
    offset: start,
    content: text.slice(start, end),
    nextOffset: end < text.length ? end : null,
  };
  const notes = [];
  if (end < text.length) notes.push(`Cut at ${end} of ${text.length} characters: call again with offset ${end} for the rest.`);
  if (tab.tabs.length > 1) notes.push(`The document has ${tab.tabs.length} tabs and this is "${tab.title ?? ''}" (${tab.tabId}): pass tabId to read another.`);
  if (notes.length) out.note = notes.join(' ');
  return out;
}

async function getOutline(ctx, a) {
  const ref = docRef(a.documentId);
  const doc = await readDocument(ctx, ref.id, `read the outline of document ${ref.id}`);
  const tab = pickTab(doc, a.tabId ?? ref.tabId);
  const content = bodyContent(tab.content);
  const end = bodyEnd(content);
  const headings = [];
  for (const el of content) {
    const p = el.paragraph;
    const style = p && p.paragraphStyle && p.paragraphStyle.namedStyleType;
    if (!p || !Object.hasOwn(HEADING_LEVEL, style)) continue;
    headings.push({
      style,
      level: HEADING_LEVEL[style],
      text: plainText(p),
      startIndex: startOf(el),
      endIndex: el.endIndex ?? null,
      sectionEndIndex: end,
      ...(p.paragraphStyle.headingId ? { headingId: p.paragraphStyle.headingId } : {}),
    });
  }
  // a section ends where the next heading of the same or a higher level (a smaller number)
  // starts: one pass, the headings whose sections are still open on a stack (levels increasing)
  const open = [];
  for (const h of headings) {
    while (open.length && open[open.length - 1].level >= h.level) open.pop().sectionEndIndex = h.startIndex;
    open.push(h);
  }
  return {
    documentId: doc.documentId || ref.id,
    title: doc.title ?? null,
    revisionId: doc.revisionId ?? null,
    url: docUrl(doc.documentId || ref.id, tab.tabs.length > 1 ? tab.tabId : null),
    tab: tab.tabId ? { tabId: tab.tabId, title: tab.title } : null,
    tabs: tab.tabs,
    endIndex: end,
    headings,
    count: headings.length,
  };
}

async function createDocument(ctx, a) {
  const text = a.text === undefined ? null : cleanText(a.text, 'text');
  const doc = await docs(ctx, 'POST', '', { body: { title: a.title }, action: `create the document "${a.title}"` });
  const id = doc.documentId;
  if (!id) throw new Error(`Google Docs answered without a documentId while trying to create the document "${a.title}".`);
  const out = { documentId: id, title: doc.title ?? a.title, url: docUrl(id), revisionId: doc.revisionId ?? null, insertedChars: 0 };
  if (text) {
    let data;
    try {
      // a new document's body is a section break (0–1) and one empty paragraph (1–2)
      data = await batchUpdate(ctx, id, [{ insertText: { text, location: { index: 1 } } }], null, `insert the text of the new document ${id}`);
    } catch (err) {
      throw new Error(`The document "${out.title}" was created (${id}, ${out.url}) but its text was not inserted: ${err.message} Add it with docs_append_text.`);
    }
    out.revisionId = newRevision(data);
    out.insertedChars = text.length;
  }
  return out;
}

async function appendText(ctx, a) {
  const ref = docRef(a.documentId);
  const text = cleanText(a.text, 'text');
  const doc = await readDocument(ctx, ref.id, `read document ${ref.id} before appending to it`);
  const tab = pickTab(doc, a.tabId ?? ref.tabId);
  checkRevision(doc, a.revisionId, ref.id);
  const content = bodyContent(tab.content);
  const last = content[content.length - 1];
  const end = bodyEnd(content);
  const lastParagraph = last && last.paragraph ? last : null;
  const lastEmpty = !!lastParagraph && end - startOf(lastParagraph) <= 1;
  const lastStyle = lastParagraph && lastParagraph.paragraph.paragraphStyle && lastParagraph.paragraph.paragraphStyle.namedStyleType;
  const continueLast = a.newParagraph === false;
  // text inserted at the end goes just before the body's final newline (end - 1)
  const at = end - 1;
  const opening = !continueLast && !lastEmpty;
  const inserted = opening ? `\n${text}` : text;
  const start = opening ? at + 1 : at;
  const stop = at + inserted.length;
  // a new paragraph copies the style of the one before it: after a heading, body text stays body text
  const style = a.style || (!continueLast && Object.hasOwn(HEADING_LEVEL, lastStyle || '') ? 'NORMAL_TEXT' : null);
  const requests = [{ insertText: { text: inserted, endOfSegmentLocation: tab.tabId ? { tabId: tab.tabId } : {} } }];
  const unbullet = opening ? unbulletRequest(lastParagraph, start, stop, a.continueList === true, tab.tabId) : null;
  if (unbullet) requests.push(unbullet);
  if (style) requests.push(styleRequest(start, stop, style, tab.tabId));
  const lock = doc.revisionId || null;
  const data = await batchUpdate(ctx, ref.id, requests, lock, `append text to document ${ref.id}`);
  return {
    documentId: ref.id,
    tabId: tab.tabId,
    insertedAt: { startIndex: start, endIndex: stop },
    style,
    revisionId: newRevision(data),
    url: docUrl(ref.id, tab.tabs.length > 1 ? tab.tabId : null),
  };
}

async function insertText(ctx, a) {
  const ref = docRef(a.documentId);
  const text = cleanText(a.text, 'text');
  const doc = await readDocument(ctx, ref.id, `read document ${ref.id} before inserting into it`);
  const tab = pickTab(doc, a.tabId ?? ref.tabId);
  checkRevision(doc, a.revisionId, ref.id);
  const content = bodyContent(tab.content);
  const end = bodyEnd(content);
  const index = a.index;
  if (index > end) {
    throw new Error(`index ${index} is past the end of the body (it ends at ${end}; ${end}, the last section's sectionEndIndex, adds text after the last paragraph): use docs_append_text to add at the end.`);
  }
  let inserted = text;
  let at = index;
  let start = index;
  let after = null;
  if (index === end) {
    // the end of the body (the last section's sectionEndIndex): nothing can be written after the
    // body's final newline, so, as an append does, the text goes just before it (end - 1) as a
    // paragraph of its own: "\n" + the text without its trailing newline
    const last = content[content.length - 1];
    if (!last || !last.paragraph) throw new Error(`index ${index} is the end of the body, which does not end with a paragraph: use docs_append_text to add at the end.`);
    inserted = `\n${text.replace(/\n$/, '')}`;
    at = end - 1;
    start = end;
    after = last;
  } else {
    const where = locate(content, index) || { what: 'outside every element of the body' };
    if (!where.paragraph) {
      const before = lastIndexBefore(content, index);
      const hint = before !== null ? `, e.g. at ${before}, the end of the paragraph before it` : '';
      throw new Error(`index ${index} is not inside a paragraph (it is ${where.what}); text can only go inside a paragraph${hint}. docs_get_outline gives the indexes of headings.`);
    }
  }
  const stop = at + inserted.length;
  const requests = [{ insertText: { text: inserted, location: { index: at, ...(tab.tabId ? { tabId: tab.tabId } : {}) } } }];
  const unbullet = unbulletRequest(after, start, stop, a.continueList === true, tab.tabId);
  if (unbullet) requests.push(unbullet);
  if (a.style && stop > start) requests.push(styleRequest(start, stop, a.style, tab.tabId));
  // the revision the index was read at guards the write: if anything (this agent's own earlier
  // write included) changed the document since, Google refuses instead of writing at a moved index
  const lock = a.revisionId;
  const data = await batchUpdate(ctx, ref.id, requests, lock, `insert text at index ${index} of document ${ref.id}`);
  return {
    documentId: ref.id,
    tabId: tab.tabId,
    insertedAt: { startIndex: start, endIndex: stop },
    style: a.style && stop > start ? a.style : null,
    revisionId: newRevision(data),
    url: docUrl(ref.id, tab.tabs.length > 1 ? tab.tabId : null),
  };
}

async function replaceText(ctx, a) {
  const ref = docRef(a.documentId);
  const find = String(a.find).toWellFormed();
  const matchCase = a.matchCase !== false;
  const request = { replaceAllText: { containsText: { text: find, matchCase }, replaceText: String(a.replaceWith).toWellFormed() } };
  // a pasted link's ?tab= does not narrow a replacement (Docs adds ?tab=t.0 to most links): only tabIds does
  const tabIds = a.tabIds ? [...new Set(a.tabIds)] : null;
  if (tabIds) request.replaceAllText.tabsCriteria = { tabIds };
  const shown = find.length > 60 ? `${find.slice(0, 60)}…` : find;
  const data = await batchUpdate(ctx, ref.id, [request], a.revisionId || null, `replace "${shown}" in document ${ref.id}`);
  const reply = Array.isArray(data.replies) && data.replies[0] && data.replies[0].replaceAllText;
  const changed = (reply && reply.occurrencesChanged) || 0;
  const out = { documentId: ref.id, occurrencesChanged: changed, revisionId: newRevision(data) };
  if (changed === 0) {
    out.note = `No occurrence of "${shown}" was found${matchCase ? ' (case-sensitive; matchCase false ignores case)' : ''}${tabIds ? ` in tab${tabIds.length > 1 ? 's' : ''} ${tabIds.join(', ')}` : ''}: nothing changed.`;
  }
  return out;
}

export default {
  docs_get_document: getDocument,
  docs_get_outline: getOutline,
  docs_create_document: createDocument,
  docs_append_text: appendText,
  docs_insert_text: insertText,
  docs_replace_text: replaceText,
};
