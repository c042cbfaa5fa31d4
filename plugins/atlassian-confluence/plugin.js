/**
 * @module plugins/atlassian-confluence/plugin
 * Confluence Cloud tools acting as the connected Atlassian user (OAuth 2.0 3LO). Each call first
 * resolves the site's cloud id from the token's accessible resources, then calls
 * https://api.atlassian.com/ex/confluence/{cloudId}/wiki/api/v2/… (REST v2), or …/wiki/rest/api/…
 * (v1) for the two things v2 lacks: CQL search and adding labels. Self-contained (the plugin format
 * allows no imports), so the request helper, the one error mapping, the storage-format converters
 * (XHTML → readable text, markdown-ish → XHTML) and the result shapers live here beside the
 * handlers; the file is longer than 400 lines for that reason.
 */

const API = 'https://api.atlassian.com';
const SCOPES = {
  space: 'read:space:confluence',
  readPage: 'read:page:confluence',
  writePage: 'write:page:confluence',
  readComment: 'read:comment:confluence',
  writeComment: 'write:comment:confluence',
  attachment: 'read:attachment:confluence',
  search: 'search:confluence (or read:content-details:confluence)',
  label: 'write:label:confluence and read:label:confluence',
};
const MAX_TEXT = 20000;
const MAX_COMMENT_TEXT = 4000;
// storage bodies beyond this are not parsed: the text is cut at MAX_TEXT long before
const MAX_PARSE = 600000;
// no intermediate text grows past this: the result is cut at MAX_TEXT, and indentation only adds
// characters, so the first MAX_TEXT characters never depend on what lies beyond it
const CAP = MAX_TEXT + 5000;

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Confluence answer becomes a message an agent can act on.

/** Confluence's error bodies: v2 `{errors: [{title, detail}]}`, v1 `{message, data: {errors}}`, the gateway's `{message}`. */
function errorDetail(data) {
  if (data == null) return '';
  if (typeof data === 'string') return /^\s*</.test(data) ? '' : data.trim().slice(0, 500);
  const parts = [];
  if (Array.isArray(data.errors)) {
    for (const e of data.errors) {
      if (!e || typeof e !== 'object') continue;
      const text = [e.title, e.detail].filter((x) => typeof x === 'string' && x).join(': ');
      if (text) parts.push(text);
    }
  }
  const nested = data.data && Array.isArray(data.data.errors) ? data.data.errors : [];
  for (const e of nested) {
    const m = e && e.message;
    const text = typeof m === 'string' ? m : m && (m.translation || m.key);
    if (typeof text === 'string' && text) parts.push(text);
  }
  if (!parts.length && typeof data.message === 'string' && data.message) parts.push(data.message);
  if (!parts.length && typeof data.error === 'string') parts.push(data.error);
  return parts.join('; ').slice(0, 1000);
}

function confluenceError(action, status, retryAfter, data, scope) {
  const detail = errorDetail(data).replace(/[.\s]+$/, '');
  if (status === 429) {
    const wait = retryAfter ? `retry after ${retryAfter} seconds` : 'wait a minute and retry';
    return new Error(`Confluence rate limited the request to ${action} (429): ${wait}.`);
  }
  if ((status === 401 || status === 403) && /scope/i.test(detail)) {
    return new Error(
      `The Confluence connection lacks the OAuth scope needed to ${action} (${status}; needs ${scope}): reconnect atlassian-confluence and approve that scope.`,
    );
  }
  if (status === 401) {
    return new Error(`Confluence rejected the access token (401) while trying to ${action}: reconnect atlassian-confluence.${detail ? ` Confluence said: ${detail}` : ''}`);
  }
  if (status === 403) {
    return new Error(
      `Confluence refused permission to ${action} (403): ${detail || 'your Confluence user lacks the space or page permission for this'}. This needs the ${scope} scope and the matching space permission.`,
    );
  }
  if (status === 404) {
    return new Error(`Confluence found nothing while trying to ${action} (404): ${detail || 'it does not exist, or you cannot see it'}.`);
  }
  if (status === 409) {
    return new Error(`Confluence reported a conflict while trying to ${action} (409): ${detail || 'the content changed meanwhile'}. Read it again and retry.`);
  }
  if (status === 400 || status === 413 || status === 422) {
    return new Error(`Confluence refused to ${action} (${status}): ${detail || 'the request was not valid'}.`);
  }
  if (status >= 500) {
    return new Error(`Confluence had a server error (${status}) while trying to ${action}: retry later.${detail ? ` Confluence said: ${detail}` : ''}`);
  }
  return new Error(`Confluence answered HTTP ${status} while trying to ${action}${detail ? `: ${detail}` : ''}.`);
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

/**
 * The gateway's own refusals of a request, in words: an answer over its size cap (`tooLarge` says
 * what to do instead where asking for less cannot help), or none in time. Else the error as it is.
 */
function bridgeError(err, method, action, tooLarge) {
  const code = err && err.code;
  let out;
  if (code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
    out = new Error(`Confluence's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ${tooLarge || 'ask for less (a smaller limit)'}.`);
  } else if (code === 'GW_ERR_BRIDGE_TIMEOUT') {
    const write = method !== 'GET' ? ' It may still have been done: check before trying again.' : ' Try again in a moment.';
    out = new Error(`Confluence did not answer in time (GW_ERR_BRIDGE_TIMEOUT) while trying to ${action}.${write}`);
  } else {
    return err;
  }
  out.code = code;
  return out;
}

async function send(ctx, method, url, body, action, scope, tooLarge) {
  const headers = { accept: 'application/json' };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await ctx.http(url, init);
  } catch (err) {
    throw bridgeError(err, method, action, tooLarge);
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) throw confluenceError(action, res.status, res.headers.get('retry-after'), data, scope);
  return data;
}

function normSite(s) {
  return String(s || '').trim().toLowerCase().replace(/^https?:\/\//, '').replace(/\/+$/, '');
}

/** The Confluence site this call acts on: `ctx.config.site` (URL, host, name or cloud id), else the first. */
async function resolveSite(ctx) {
  const data = await send(ctx, 'GET', `${API}/oauth/token/accessible-resources`, undefined, 'list the Confluence sites this connection can reach', SCOPES.readPage);
  const all = Array.isArray(data) ? data.filter((s) => s && typeof s.id === 'string') : [];
  const wiki = all.filter((s) => Array.isArray(s.scopes) && s.scopes.some((x) => String(x).includes('confluence')));
  const pool = wiki.length ? wiki : all;
  if (!pool.length) {
    throw new Error('This Atlassian connection can reach no Confluence site: reconnect atlassian-confluence and choose a Confluence site on the consent screen.');
  }
  const wanted = ctx.config && typeof ctx.config.site === 'string' ? ctx.config.site.trim() : '';
  let site = pool[0];
  if (wanted) {
    const w = normSite(wanted);
    site = pool.find((s) => {
      const host = normSite(s.url);
      return s.id === wanted || host === w || host.split('.')[0] === w || String(s.name || '').toLowerCase() === w;
    });
    if (!site) {
      throw new Error(`No Confluence site matching "${wanted}" is reachable with this connection; reachable: ${pool.map((s) => s.url || s.name).join(', ')}.`);
    }
  }
  const url = String(site.url || '').replace(/\/+$/, '');
  return { id: site.id, name: site.name || null, url, wiki: `${url}/wiki` };
}

/** One Confluence REST call on the resolved site; `path` starts with /api/v2/ or /rest/api/. */
function wiki(ctx, site, method, path, { query, body, action, scope, tooLarge }) {
  const url = `${API}/ex/confluence/${enc(site.id)}/wiki${path}${qs(query)}`;
  return send(ctx, method, url, body, action, scope, tooLarge);
}

/** The opaque cursor of a `_links.next` URL (v2 and v1 search both carry it as `cursor=`). */
function nextCursor(data) {
  const next = data && data._links && typeof data._links.next === 'string' ? data._links.next : '';
  const m = /[?&]cursor=([^&#]*)/.exec(next);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

const results = (data) => (data && Array.isArray(data.results) ? data.results : []);

/** A space key (ENG, ~accountid) or a numeric space id → the numeric id v2 wants. */
async function spaceId(ctx, site, space) {
  if (/^[0-9]+$/.test(space)) return space;
  const s = await findSpaceByKey(ctx, site, space);
  return s.id;
}

async function findSpaceByKey(ctx, site, key, extra) {
  const data = await wiki(ctx, site, 'GET', '/api/v2/spaces', {
    query: { keys: key, ...extra },
    action: `look up the space with key ${key}`,
    scope: SCOPES.space,
  });
  const s = results(data).find((x) => String(x.key).toLowerCase() === key.toLowerCase()) || results(data)[0];
  if (!s) throw new Error(`No Confluence space has the key "${key}" (or you cannot see it): use confluence_list_spaces to find the key.`);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Storage format (XHTML) → readable text. No DOM in the isolate: a tolerant tokenizer builds a
// small tree (unclosed and stray tags are forgiven), then a renderer writes markdown-ish text.

const NAMED_ENTITIES = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', ndash: '–', mdash: '—', hellip: '…',
  lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', sbquo: '‚', bdquo: '„', laquo: '«', raquo: '»', lsaquo: '‹', rsaquo: '›',
  bull: '•', middot: '·', copy: '©', reg: '®', trade: '™', deg: '°', plusmn: '±', times: '×', divide: '÷', micro: 'µ',
  para: '¶', sect: '§', euro: '€', pound: '£', yen: '¥', cent: '¢', frac12: '½', frac14: '¼', frac34: '¾', sup2: '²', sup3: '³',
  larr: '←', rarr: '→', uarr: '↑', darr: '↓', harr: '↔', rArr: '⇒', lArr: '⇐', hArr: '⇔', le: '≤', ge: '≥', ne: '≠', asymp: '≈',
  infin: '∞', minus: '−', prime: '′', Prime: '″', dagger: '†', Dagger: '‡', permil: '‰', iexcl: '¡', iquest: '¿', shy: '',
  zwj: '\u200d', zwnj: '\u200c', ensp: '\u2002', emsp: '\u2003', thinsp: '\u2009', check: '✓', cross: '✗',
};

function decodeEntities(s) {
  if (s.indexOf('&') < 0) return s;
  return s.replace(/&(#[xX][0-9a-fA-F]{1,8}|#[0-9]{1,10}|[A-Za-z][A-Za-z0-9]{1,31});/g, (all, ref) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    return Object.prototype.hasOwnProperty.call(NAMED_ENTITIES, ref) ? NAMED_ENTITIES[ref] : all;
  });
}

const VOID = new Set(['br', 'hr', 'img', 'col', 'wbr', 'input', 'meta', 'link', 'area', 'source', 'ac:emoticon']);
const SKIP = new Set(['script', 'style', 'head', 'ac:placeholder', 'ac:task-id', 'ac:task-uuid', 'colgroup', 'ac:adf-attribute']);
const MAX_DEPTH = 200;

function parseAttrs(src) {
  const attrs = {};
  const re = /([^\s=/"'<>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;
  let m;
  while ((m = re.exec(src))) {
    const value = m[2] ?? m[3] ?? m[4] ?? '';
    attrs[m[1].toLowerCase()] = decodeEntities(value);
  }
  return attrs;
}

/** Tokenize and build the tree: {name, attrs, children} elements and {text, raw?} text nodes. */
function parseStorage(src) {
  const root = { name: '#root', attrs: {}, children: [] };
  const stack = [root];
  const top = () => stack[stack.length - 1];
  // a quoted attribute value never holds "<" (XML forbids it), so no attempt scans past the next "<"
  const re = /<!--[\s\S]*?(?:-->|$)|<!\[CDATA\[([\s\S]*?)(?:\]\]>|$)|<\/\s*([A-Za-z][\w:.-]*)\s*>|<([A-Za-z][\w:.-]*)((?:[^<>"']|"[^"<]*"|'[^'<]*')*?)(\/?)>|<![^>]*>|<\?[\s\S]*?\?>/g;
  let last = 0;
  let m;
  const text = (t) => {
    if (t) top().children.push({ text: decodeEntities(t) });
  };
  while ((m = re.exec(src))) {
    text(src.slice(last, m.index));
    last = re.lastIndex;
    if (m[1] !== undefined) {
      top().children.push({ text: m[1], raw: true });
    } else if (m[2] !== undefined) {
      const name = m[2].toLowerCase();
      let i = stack.length - 1;
      while (i > 0 && stack[i].name !== name) i--;
      if (i > 0) stack.length = i; // close it and whatever was left open inside it
    } else if (m[3] !== undefined) {
      const name = m[3].toLowerCase();
      const el = { name, attrs: parseAttrs(m[4] || ''), children: [] };
      top().children.push(el);
      if (!m[5] && !VOID.has(name) && stack.length < MAX_DEPTH) stack.push(el);
    }
  }
  text(src.slice(last));
  return root;
}

/** The text under a node, decoded, whitespace kept (for code, parameters and link bodies). */
function textOf(node) {
  if (!node) return '';
  if (node.text !== undefined) return node.text;
  if (SKIP.has(node.name)) return '';
  if (node.name === 'br') return '\n';
  return node.children.map(textOf).join('');
}

const child = (node, name) => node.children.find((c) => c.name === name);
const children = (node, name) => node.children.filter((c) => c.name === name);

function macroParams(node) {
  const params = {};
  for (const p of children(node, 'ac:parameter')) params[String(p.attrs['ac:name'] || '').toLowerCase()] = textOf(p).trim();
  return params;
}

const CALLOUTS = new Set(['info', 'note', 'warning', 'tip', 'panel', 'success', 'error']);
const BLOCK_MACROS = new Set(['code', 'noformat', 'expand', 'toc', 'children', 'attachments', 'excerpt', 'details', 'section', 'column', 'recently-updated', 'contentbylabel', 'pagetree', 'livesearch', 'tasks-report-macro', 'jiraissues', ...CALLOUTS]);
const BLOCK = new Set([
  'p', 'div', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th', 'pre',
  'blockquote', 'hr', 'section', 'article', 'header', 'footer', 'dl', 'dt', 'dd', 'figure', 'ac:layout', 'ac:layout-section',
  'ac:layout-cell', 'ac:rich-text-body', 'ac:task-list', 'ac:task', 'ac:adf-extension', 'ac:adf-content',
]);
const INLINE = new Set(['a', 'span', 'strong', 'b', 'em', 'i', 'u', 'code', 's', 'del', 'sub', 'sup', 'small', 'ac:link', 'ac:image', 'ac:emoticon', 'time', 'br', 'img']);

function isBlock(node) {
  if (node.text !== undefined) return false;
  if (node.isBlock !== undefined) return node.isBlock;
  let b;
  if (node.name === 'ac:structured-macro' || node.name === 'ac:macro') b = BLOCK_MACROS.has(String(node.attrs['ac:name'] || '').toLowerCase());
  else if (BLOCK.has(node.name)) b = true;
  else if (INLINE.has(node.name) || SKIP.has(node.name)) b = false;
  else b = node.children.some(isBlock);
  node.isBlock = b;
  return b;
}

/** Children as text: runs of inline content are cleaned and trimmed, blocks keep their own layout. */
function blocks(nodes, sep = '\n\n') {
  const out = [];
  let size = 0;
  let run = '';
  const flush = () => {
    const t = run.replace(/[ \t\u00a0]*\n[ \t\u00a0]*/g, '\n').trim();
    if (t) out.push(t);
    size += t.length;
    run = '';
  };
  for (const n of nodes) {
    if (size + run.length > CAP) break;
    if (isBlock(n)) {
      flush();
      const t = render(n);
      if (t.trim()) out.push(t.replace(/^\n+|\s+$/g, ''));
      size += t.length;
    } else {
      run += render(n);
    }
  }
  flush();
  return clip(out.join(sep));
}

const clip = (s) => (s.length > CAP ? s.slice(0, CAP) : s);

/** The pieces, joined, stopping once the text is past CAP. */
function joinCapped(items, fn, sep = '') {
  let out = '';
  for (let i = 0; i < items.length && out.length <= CAP; i++) out += (i ? sep : '') + fn(items[i]);
  return clip(out);
}

const inline = (node) => joinCapped(node.children, render);
const indentRest = (s, pad) => s.split('\n').map((line, i) => (i === 0 || line === '' ? line : pad + line)).join('\n');
const wrap = (mark, s) => (s.trim() ? `${mark}${s.trim()}${mark}` : s);
const fence = (lang, code) => `\`\`\`${lang || ''}\n${code.replace(/^\n+|\s+$/g, '')}\n\`\`\``;

function renderList(node, ordered) {
  let n = Number.parseInt(node.attrs.start, 10) || 1;
  const items = node.children.filter((c) => c.name === 'li' || (c.text === undefined && c.name !== 'li' && isBlock(c)) || (c.text !== undefined && c.text.trim()));
  const one = (item) => {
    const marker = ordered ? `${n++}. ` : '- ';
    const body = item.name === 'li' ? blocks(item.children, '\n') : render(item).trim();
    return marker + indentRest(body, ' '.repeat(marker.length));
  };
  return joinCapped(items, one, '\n');
}

function tableRows(node, rows = []) {
  for (const c of node.children) {
    if (c.name === 'tr') rows.push(c);
    else if (c.name === 'thead' || c.name === 'tbody' || c.name === 'tfoot') tableRows(c, rows);
  }
  return rows;
}

function renderTable(node) {
  const rows = tableRows(node);
  const line = (row, i) => {
    const cells = row.children.filter((c) => c.name === 'td' || c.name === 'th');
    if (!cells.length) return '';
    const text = joinCapped(cells, (c) => blocks(c.children, ' ').replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim(), ' | ');
    const head = i === 0 && cells.every((c) => c.name === 'th') ? `\n| ${cells.map(() => '---').join(' | ')} |` : '';
    return `| ${text} |${head}`;
  };
  let i = 0;
  return joinCapped(rows, (row) => line(row, i++), '\n').replace(/\n{2,}/g, '\n').replace(/^\n+/, '');
}

function linkTarget(node) {
  const page = child(node, 'ri:page') || child(node, 'ri:blog-post');
  if (page) return page.attrs['ri:content-title'] || '';
  const user = child(node, 'ri:user');
  if (user) return `@${user.attrs['ri:account-id'] || user.attrs['ri:userkey'] || user.attrs['ri:username'] || 'user'}`;
  const att = child(node, 'ri:attachment');
  if (att) return att.attrs['ri:filename'] || '';
  const url = child(node, 'ri:url');
  if (url) return url.attrs['ri:value'] || '';
  const space = child(node, 'ri:space');
  if (space) return space.attrs['ri:space-key'] || '';
  return node.attrs['ac:anchor'] ? `#${node.attrs['ac:anchor']}` : '';
}

function renderMacro(node) {
  const name = String(node.attrs['ac:name'] || '').toLowerCase();
  const p = macroParams(node);
  const plain = child(node, 'ac:plain-text-body');
  const rich = child(node, 'ac:rich-text-body');
  const body = () => (rich ? blocks(rich.children) : plain ? textOf(plain).trim() : '');
  if (name === 'code' || name === 'noformat') return fence(p.language || '', plain ? textOf(plain) : rich ? textOf(rich) : '');
  if (CALLOUTS.has(name)) {
    const head = `[${name}]${p.title ? ` ${p.title}` : ''}`;
    const text = body();
    return [head, ...(text ? text.split('\n') : [])].map((l) => (l ? `> ${l}` : '>')).join('\n');
  }
  if (name === 'expand') return [`${p.title || 'Details'}:`, body()].filter(Boolean).join('\n\n');
  if (name === 'status') return `[${p.title || p.colour || 'status'}]`;
  if (name === 'jira' || name === 'jiraissues') return p.key ? `[Jira ${p.key}]` : `[Jira issues${p.jqlquery ? `: ${p.jqlquery}` : ''}]`;
  if (name === 'anchor') return '';
  if (name === 'toc') return '[table of contents]';
  if (name === 'children') return '[list of child pages]';
  if (name === 'attachments') return '[list of attachments]';
  const text = body();
  return text || `[${name || 'macro'} macro]`;
}

function render(node) {
  if (node.text !== undefined) return clip(node.raw ? node.text : node.text.replace(/[ \t\r\n\f]+/g, ' '));
  const { name, attrs } = node;
  if (SKIP.has(name)) return '';
  switch (name) {
    case '#root': case 'div': case 'p': case 'section': case 'article': case 'header': case 'footer': case 'figure':
    case 'ac:layout': case 'ac:layout-section': case 'ac:layout-cell': case 'ac:rich-text-body': case 'ac:adf-content':
    case 'thead': case 'tbody': case 'tfoot': case 'dl': case 'dd':
      return blocks(node.children);
    case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6':
      return `${'#'.repeat(Number(name[1]))} ${blocks(node.children, ' ').replace(/\s*\n\s*/g, ' ')}`;
    case 'dt': return wrap('**', blocks(node.children, ' '));
    case 'br': return '\n';
    case 'hr': return '---';
    case 'ul': return renderList(node, false);
    case 'ol': return renderList(node, true);
    case 'li': return `- ${indentRest(blocks(node.children, '\n'), '  ')}`;
    case 'table': return renderTable(node);
    case 'tr': return renderTable({ children: [node] });
    case 'td': case 'th': return blocks(node.children, ' ');
    case 'pre': return fence('', textOf(node));
    case 'blockquote': return blocks(node.children).split('\n').map((l) => (l ? `> ${l}` : '>')).join('\n');
    case 'strong': case 'b': return wrap('**', inline(node));
    case 'em': case 'i': return wrap('_', inline(node));
    case 's': case 'del': return wrap('~~', inline(node));
    case 'code': return wrap('`', inline(node));
    case 'a': {
      const text = inline(node).trim();
      const href = attrs.href || '';
      if (!href || href.startsWith('#') || href === text) return text || href;
      return text ? `${text} (${href})` : href;
    }
    case 'img': return attrs.alt ? `[image: ${attrs.alt}]` : attrs.src ? `[image: ${attrs.src}]` : '';
    case 'time': return attrs.datetime || inline(node);
    case 'ac:link': {
      const bodyNode = child(node, 'ac:link-body') || child(node, 'ac:plain-text-link-body');
      const text = bodyNode ? (bodyNode.name === 'ac:link-body' ? inline(bodyNode) : textOf(bodyNode)).trim() : '';
      return text || linkTarget(node);
    }
    case 'ac:link-body': case 'ac:plain-text-link-body': return '';
    case 'ac:image': {
      const att = child(node, 'ri:attachment');
      const url = child(node, 'ri:url');
      const label = attrs['ac:alt'] || (att && att.attrs['ri:filename']) || (url && url.attrs['ri:value']) || '';
      return `[image${label ? `: ${label}` : ''}]`;
    }
    case 'ac:emoticon': return attrs['ac:emoji-fallback'] || (attrs['ac:name'] ? `:${attrs['ac:name']}:` : '');
    case 'ac:structured-macro': case 'ac:macro': return renderMacro(node);
    case 'ac:parameter': case 'ac:plain-text-body': return '';
    case 'ac:task-list':
      return joinCapped(children(node, 'ac:task'), render, '\n');
    case 'ac:task': {
      const done = textOf(child(node, 'ac:task-status')).trim() === 'complete';
      const body = child(node, 'ac:task-body');
      return `- [${done ? 'x' : ' '}] ${body ? blocks(body.children, ' ').replace(/\s*\n\s*/g, ' ') : ''}`;
    }
    case 'ac:adf-extension': {
      const fallback = child(node, 'ac:adf-fallback');
      return fallback ? blocks(fallback.children) : blocks(node.children);
    }
    case 'ac:adf-node': case 'ac:adf-fallback': return blocks(node.children);
    default:
      if (name.startsWith('ri:')) return '';
      return isBlock(node) ? blocks(node.children) : inline(node);
  }
}

/** Storage-format XHTML → markdown-ish plain text, cut at `max` characters. */
function storageToText(storage, max = MAX_TEXT) {
  const src = String(storage || '');
  if (!src) return { text: '', truncated: false };
  const text = blocks(parseStorage(src.slice(0, MAX_PARSE)).children)
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const truncated = text.length > max || src.length > MAX_PARSE;
  return { text: text.length > max ? `${text.slice(0, max)}… (truncated)` : text, truncated };
}

// ---------------------------------------------------------------------------------------------
// Markdown-ish or plain text → storage format. Everything the user wrote is escaped; only the
// markup recognised below becomes elements.

/** Text safe inside XHTML: no control characters XML forbids, no lone surrogates, & < > " escaped. */
function esc(s) {
  return String(s)
    .toWellFormed()
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

const cdata = (s) => `<![CDATA[${String(s).toWellFormed().replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/\]\]>/g, ']]]]><![CDATA[>')}]]>`;

/** Inline markdown: `code`, [text](url), **bold**, *em* / _em_, bare http(s) links. Escapes first. */
function mdInline(line) {
  const slots = [];
  // placeholders from the private-use area (removed from the input first) survive esc()
  const keep = (html) => `\ue000${slots.push(html) - 1}\ue001`;
  let s = String(line).replace(/[\ue000\ue001]/g, '');
  s = s.replace(/`([^`]+)`/g, (_, code) => keep(`<code>${esc(code)}</code>`));
  s = s.replace(/\[([^\]\n]+)\]\(((?:https?:\/\/|mailto:)[^\s)]+)\)/g, (_, text, url) => keep(`<a href="${esc(url)}">${esc(text)}</a>`));
  s = s.replace(/\bhttps?:\/\/[^\s<>"')\]]+[^\s<>"')\].,;:!?]/g, (url) => keep(`<a href="${esc(url)}">${esc(url)}</a>`));
  s = esc(s);
  s = s.replace(/\*\*(?=\S)([^*]*?\S)\*\*/g, '<strong>$1</strong>');
  s = s.replace(/(^|[^*\w])\*(?=\S)([^*]*?\S)\*(?![*\w])/g, '$1<em>$2</em>');
  s = s.replace(/(^|[^_\w])_(?=\S)([^_]*?\S)_(?![_\w])/g, '$1<em>$2</em>');
  return s.replace(/\ue000(\d+)\ue001/g, (_, i) => slots[Number(i)]);
}

const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

function mdList(items) {
  // items: [{indent, ordered, text}] → nested <ul>/<ol>
  let html = '';
  const open = [];
  for (const it of items) {
    while (open.length && it.indent < open[open.length - 1].indent) html += `</li></${open.pop().tag}>`;
    const cur = open[open.length - 1];
    if (!cur || it.indent > cur.indent) {
      const tag = it.ordered ? 'ol' : 'ul';
      html += `<${tag}>`;
      open.push({ indent: it.indent, tag });
    } else {
      html += '</li>';
      if ((cur.tag === 'ol') !== it.ordered) {
        html += `</${open.pop().tag}>`;
        const tag = it.ordered ? 'ol' : 'ul';
        html += `<${tag}>`;
        open.push({ indent: it.indent, tag });
      }
    }
    html += `<li>${mdInline(it.text)}`;
  }
  while (open.length) html += `</li></${open.pop().tag}>`;
  return html;
}

function splitRow(line) {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function markdownToStorage(md) {
  const lines = String(md).replace(/\r\n?/g, '\n').split('\n');
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    const fenceOpen = /^\s*(```|~~~)\s*([\w+#.-]*)\s*$/.exec(line);
    if (fenceOpen) {
      const body = [];
      i++;
      while (i < lines.length && !new RegExp(`^\\s*${fenceOpen[1]}\\s*$`).test(lines[i])) body.push(lines[i++]);
      i++;
      const lang = fenceOpen[2] ? `<ac:parameter ac:name="language">${esc(fenceOpen[2].toLowerCase())}</ac:parameter>` : '';
      out.push(`<ac:structured-macro ac:name="code">${lang}<ac:plain-text-body>${cdata(body.join('\n'))}</ac:plain-text-body></ac:structured-macro>`);
      continue;
    }
    const heading = /^\s*(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      out.push(`<h${heading[1].length}>${mdInline(heading[2])}</h${heading[1].length}>`);
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push('<hr />');
      i++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*> ?/, ''));
      out.push(`<blockquote>${markdownToStorage(quoted.join('\n'))}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items = [];
      while (i < lines.length && lines[i].trim()) {
        const m = LIST_ITEM.exec(lines[i]);
        if (m) items.push({ indent: m[1].replace(/\t/g, '    ').length, ordered: /\d/.test(m[2]), text: m[3] });
        else items[items.length - 1].text += ` ${lines[i].trim()}`;
        i++;
      }
      out.push(mdList(items));
      continue;
    }
    if (/^\s*\|/.test(line) && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      const head = splitRow(line);
      i += 2;
      const rows = [];
      while (i < lines.length && /^\s*\|/.test(lines[i])) rows.push(splitRow(lines[i++]));
      const tr = (cells, tag) => `<tr>${cells.map((c) => `<${tag}>${mdInline(c)}</${tag}>`).join('')}</tr>`;
      out.push(`<table><tbody>${tr(head, 'th')}${rows.map((r) => tr(r, 'td')).join('')}</tbody></table>`);
      continue;
    }
    // the first line always belongs to the paragraph, so every pass consumes at least one line
    const para = [lines[i++].trim()];
    while (i < lines.length && lines[i].trim() && !/^\s*(```|~~~|#{1,6}\s|>|\|)/.test(lines[i]) && !LIST_ITEM.test(lines[i])) para.push(lines[i++].trim());
    out.push(`<p>${para.map(mdInline).join('<br />')}</p>`);
  }
  return out.join('');
}

/** Plain text: blank lines separate paragraphs, single newlines become line breaks, nothing else. */
function textToStorage(text) {
  return String(text)
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .filter((p) => p.trim())
    .map((p) => `<p>${p.trim().split('\n').map(esc).join('<br />')}</p>`)
    .join('');
}

function toStorage(body, format) {
  if (format === 'storage') return String(body);
  if (format === 'text') return textToStorage(body);
  return markdownToStorage(body);
}

// ---------------------------------------------------------------------------------------------
// Result shapers

const webUrl = (site, links) => (links && typeof links.webui === 'string' ? `${site.wiki}${links.webui}` : null);
const pageUrl = (site, id) => `${site.wiki}/pages/viewpage.action?pageId=${enc(id)}`;
const versionOf = (v) => (v && typeof v === 'object' ? { number: v.number ?? null, createdAt: v.createdAt ?? null, authorId: v.authorId ?? null, message: v.message || '' } : null);
const stripHighlight = (s) => String(s || '').replace(/@@@(?:end)?hl@@@/g, '');

function slimSpace(s, site) {
  return {
    id: s.id,
    key: s.key,
    name: s.name,
    type: s.type ?? null,
    status: s.status ?? null,
    description: s.description && s.description.plain ? String(s.description.plain.value || '').trim() : '',
    homepageId: s.homepageId ?? null,
    url: webUrl(site, s._links) || `${site.wiki}/spaces/${enc(s.key)}`,
  };
}

function slimPage(p, site) {
  return {
    id: p.id,
    title: p.title,
    status: p.status ?? null,
    spaceId: p.spaceId ?? null,
    parentId: p.parentId ?? null,
    version: p.version ? p.version.number ?? null : null,
    updated: p.version ? p.version.createdAt ?? null : null,
    url: webUrl(site, p._links) || pageUrl(site, p.id),
  };
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function search(ctx, args) {
  const site = await resolveSite(ctx);
  const data = await wiki(ctx, site, 'GET', '/rest/api/search', {
    query: { cql: args.cql, limit: args.limit ?? 25, cursor: args.cursor },
    action: 'search Confluence with CQL',
    scope: SCOPES.search,
  });
  const rows = results(data).map((r) => {
    const c = r.content || {};
    const excerpt = stripHighlight(decodeEntities(String(r.excerpt || ''))).replace(/\s+/g, ' ').trim();
    return {
      id: c.id ?? null,
      type: c.type || r.entityType || null,
      title: stripHighlight(r.title || c.title || ''),
      space: r.resultGlobalContainer ? r.resultGlobalContainer.title ?? null : null,
      excerpt: excerpt.length > 300 ? `${excerpt.slice(0, 300)}…` : excerpt,
      lastModified: r.lastModified ?? null,
      url: typeof r.url === 'string' && r.url ? `${site.wiki}${r.url}` : webUrl(site, c._links),
    };
  });
  return { results: rows, count: rows.length, totalSize: typeof data?.totalSize === 'number' ? data.totalSize : null, next: nextCursor(data) };
}

async function listSpaces(ctx, args) {
  const site = await resolveSite(ctx);
  const data = await wiki(ctx, site, 'GET', '/api/v2/spaces', {
    query: { type: args.type, status: args.status, sort: args.sort, 'description-format': 'plain', limit: args.limit ?? 25, cursor: args.cursor },
    action: 'list spaces',
    scope: SCOPES.space,
  });
  return { spaces: results(data).map((s) => slimSpace(s, site)), next: nextCursor(data) };
}

async function getSpace(ctx, args) {
  const site = await resolveSite(ctx);
  const space = /^[0-9]+$/.test(args.space)
    ? await wiki(ctx, site, 'GET', `/api/v2/spaces/${enc(args.space)}`, {
        query: { 'description-format': 'plain' },
        action: `read space ${args.space}`,
        scope: SCOPES.space,
      })
    : await findSpaceByKey(ctx, site, args.space, { 'description-format': 'plain' });
  return { ...slimSpace(space, site), createdAt: space.createdAt ?? null, authorId: space.authorId ?? null };
}

async function listPages(ctx, args) {
  const site = await resolveSite(ctx);
  const id = await spaceId(ctx, site, args.space);
  const data = await wiki(ctx, site, 'GET', `/api/v2/spaces/${enc(id)}/pages`, {
    query: { depth: args.depth, title: args.title, sort: args.sort, limit: args.limit ?? 25, cursor: args.cursor },
    action: `list the pages of space ${args.space}`,
    scope: SCOPES.readPage,
  });
  return { spaceId: id, pages: results(data).map((p) => slimPage(p, site)), next: nextCursor(data) };
}

async function fetchPage(ctx, site, pageId, action) {
  // Confluence sends the whole body: nothing smaller can be asked for
  const tooLarge = `the page's body is too large to read here (and so to update here). Open it in Confluence: ${pageUrl(site, pageId)}`;
  return wiki(ctx, site, 'GET', `/api/v2/pages/${enc(pageId)}`, { query: { 'body-format': 'storage' }, action, scope: SCOPES.readPage, tooLarge });
}

async function getPage(ctx, args) {
  const site = await resolveSite(ctx);
  const p = await fetchPage(ctx, site, args.pageId, `read page ${args.pageId}`);
  const storage = p.body && p.body.storage ? String(p.body.storage.value || '') : '';
  let body;
  let truncated;
  if (args.format === 'storage') {
    truncated = storage.length > MAX_TEXT * 5;
    body = truncated ? storage.slice(0, MAX_TEXT * 5) : storage;
  } else {
    ({ text: body, truncated } = storageToText(storage));
  }
  return {
    id: p.id,
    title: p.title,
    status: p.status ?? null,
    spaceId: p.spaceId ?? null,
    parentId: p.parentId ?? null,
    authorId: p.authorId ?? null,
    createdAt: p.createdAt ?? null,
    version: versionOf(p.version),
    format: args.format === 'storage' ? 'storage' : 'text',
    body,
    truncated,
    url: webUrl(site, p._links) || pageUrl(site, p.id),
  };
}

async function getChildren(ctx, args) {
  const site = await resolveSite(ctx);
  const data = await wiki(ctx, site, 'GET', `/api/v2/pages/${enc(args.pageId)}/children`, {
    query: { sort: args.sort, limit: args.limit ?? 25, cursor: args.cursor },
    action: `list the child pages of page ${args.pageId}`,
    scope: SCOPES.readPage,
  });
  const pages = results(data).map((c) => ({ id: c.id, title: c.title, status: c.status ?? null, position: c.childPosition ?? null, url: pageUrl(site, c.id) }));
  return { parentId: args.pageId, pages, next: nextCursor(data) };
}

async function createPage(ctx, args) {
  const site = await resolveSite(ctx);
  const id = await spaceId(ctx, site, args.space);
  const body = { spaceId: id, status: 'current', title: args.title, body: { representation: 'storage', value: toStorage(args.body ?? '', args.bodyFormat) } };
  if (args.parentId) body.parentId = args.parentId;
  const p = await wiki(ctx, site, 'POST', '/api/v2/pages', { body, action: `create the page "${args.title}" in space ${args.space}`, scope: SCOPES.writePage });
  return { id: p.id, title: p.title, spaceId: p.spaceId ?? id, parentId: p.parentId ?? null, version: p.version ? p.version.number ?? 1 : 1, url: webUrl(site, p._links) || pageUrl(site, p.id) };
}

async function updatePage(ctx, args) {
  if (args.body === undefined && args.title === undefined) throw new Error('Nothing to update: give a new body, a new title, or both.');
  if (args.mode === 'append' && args.body === undefined) throw new Error('mode "append" needs a body to append.');
  const site = await resolveSite(ctx);
  const cur = await fetchPage(ctx, site, args.pageId, `read page ${args.pageId} before updating it`);
  const current = cur.body && cur.body.storage ? String(cur.body.storage.value || '') : '';
  const number = cur.version && Number.isInteger(cur.version.number) ? cur.version.number : null;
  if (number === null) throw new Error(`Confluence did not say which version page ${args.pageId} is at, so it cannot be updated safely; retry.`);
  let value = current;
  if (args.body !== undefined) value = args.mode === 'append' ? current + toStorage(args.body, args.bodyFormat) : toStorage(args.body, args.bodyFormat);
  const version = { number: number + 1 };
  if (args.versionMessage) version.message = args.versionMessage;
  const body = { id: String(cur.id ?? args.pageId), status: 'current', title: args.title ?? cur.title, body: { representation: 'storage', value }, version };
  const p = await wiki(ctx, site, 'PUT', `/api/v2/pages/${enc(args.pageId)}`, { body, action: `update page ${args.pageId}`, scope: SCOPES.writePage });
  const changed = [...(args.title !== undefined ? ['title'] : []), ...(args.body !== undefined ? ['body'] : [])];
  return { id: p.id ?? args.pageId, title: p.title ?? body.title, version: p.version ? p.version.number ?? number + 1 : number + 1, updated: changed, url: webUrl(site, p._links) || pageUrl(site, args.pageId) };
}

async function addComment(ctx, args) {
  const site = await resolveSite(ctx);
  const body = { body: { representation: 'storage', value: toStorage(args.body, args.bodyFormat) } };
  if (args.parentCommentId) body.parentCommentId = args.parentCommentId;
  else body.pageId = args.pageId;
  const c = await wiki(ctx, site, 'POST', '/api/v2/footer-comments', {
    body,
    action: args.parentCommentId ? `reply to comment ${args.parentCommentId}` : `comment on page ${args.pageId}`,
    scope: SCOPES.writeComment,
  });
  return { id: c.id, pageId: c.pageId ?? args.pageId, parentCommentId: c.parentCommentId ?? args.parentCommentId ?? null, created: c.version ? c.version.createdAt ?? null : null, url: webUrl(site, c._links) };
}

async function listComments(ctx, args) {
  const site = await resolveSite(ctx);
  const data = await wiki(ctx, site, 'GET', `/api/v2/pages/${enc(args.pageId)}/footer-comments`, {
    query: { 'body-format': 'storage', sort: args.order === 'oldest' ? 'created-date' : '-created-date', limit: args.limit ?? 25, cursor: args.cursor },
    action: `read the comments of page ${args.pageId}`,
    scope: SCOPES.readComment,
  });
  const comments = results(data).map((c) => ({
    id: c.id,
    authorId: c.version ? c.version.authorId ?? null : null,
    created: c.version ? c.version.createdAt ?? null : null,
    body: storageToText(c.body && c.body.storage ? c.body.storage.value : '', MAX_COMMENT_TEXT).text,
    url: webUrl(site, c._links),
  }));
  return { pageId: args.pageId, comments, next: nextCursor(data) };
}

async function listAttachments(ctx, args) {
  const site = await resolveSite(ctx);
  const data = await wiki(ctx, site, 'GET', `/api/v2/pages/${enc(args.pageId)}/attachments`, {
    query: { filename: args.filename, mediaType: args.mediaType, limit: args.limit ?? 50, cursor: args.cursor },
    action: `list the attachments of page ${args.pageId}`,
    scope: SCOPES.attachment,
  });
  const attachments = results(data).map((a) => ({
    id: a.id,
    title: a.title,
    mediaType: a.mediaType ?? null,
    fileSize: a.fileSize ?? null,
    comment: a.comment || '',
    createdAt: a.createdAt ?? null,
    version: a.version ? a.version.number ?? null : null,
    downloadUrl: typeof a.downloadLink === 'string' ? `${site.wiki}${a.downloadLink}` : null,
    url: typeof a.webuiLink === 'string' ? `${site.wiki}${a.webuiLink}` : webUrl(site, a._links),
  }));
  return { pageId: args.pageId, attachments, next: nextCursor(data) };
}

async function addLabels(ctx, args) {
  const site = await resolveSite(ctx);
  const data = await wiki(ctx, site, 'POST', `/rest/api/content/${enc(args.pageId)}/label`, {
    body: args.labels.map((name) => ({ prefix: 'global', name: name.toLowerCase() })),
    action: `add labels to page ${args.pageId}`,
    scope: SCOPES.label,
  });
  const labels = results(data).map((l) => l.name || l.label).filter(Boolean);
  return { pageId: args.pageId, added: args.labels.map((l) => l.toLowerCase()), labels, url: pageUrl(site, args.pageId) };
}

export default {
  confluence_search: search,
  confluence_list_spaces: listSpaces,
  confluence_get_space: getSpace,
  confluence_list_pages: listPages,
  confluence_get_page: getPage,
  confluence_get_page_children: getChildren,
  confluence_create_page: createPage,
  confluence_update_page: updatePage,
  confluence_add_comment: addComment,
  confluence_list_comments: listComments,
  confluence_list_attachments: listAttachments,
  confluence_add_labels: addLabels,
};
