/**
 * @module plugins/notion/plugin
 * Notion REST API tools acting through the connected Notion public integration (OAuth 2.0). Every
 * request goes to https://api.notion.com/v1 with the `Notion-Version` header; lists page with
 * `start_cursor` / `next_cursor`, handed back as `next`. Page content is read from the block tree
 * and shown as markdown-ish text; text given to the write tools is turned into blocks. Only pages
 * and databases shared with the integration can be reached. Self-contained (the plugin format
 * allows no imports): the request helper, the one error mapping, the id parser, the property and
 * block converters live here beside the handlers, which is why the file is longer than 400 lines.
 */

const API = 'https://api.notion.com/v1';
const NOTION_VERSION = '2022-06-28';
const MAX_CONTENT = 50000;
const MAX_TEXT = 2000; // Notion's limit for one rich text object's content
const MAX_BLOCKS_PER_REQUEST = 100;
const MAX_REQUEST_BYTES = 450000; // Notion refuses a request body over 500 KB: blocks are sent in parts below this
const MAX_LINE = 4000; // one block's text in the content read is cut here
/** requests kept free after the block reads (ctx.limits.requestsLeft() counts the rest) */
const REQUEST_MARGIN = 2;
const MAX_DEPTH = 3;

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Notion answer becomes a message an agent can act on.

/** Notion's error body: `{object: "error", status, code, message}`. */
function notionDetail(data) {
  if (data == null) return '';
  if (typeof data === 'string') return data.trim().slice(0, 500);
  if (typeof data.message === 'string') return data.message.slice(0, 1000);
  return '';
}

function notionError(action, status, retryAfter, data) {
  const detail = notionDetail(data).replace(/[.\s]+$/, '');
  const code = data && typeof data === 'object' && typeof data.code === 'string' ? data.code : '';
  const said = detail ? ` Notion said: ${detail}.` : '';
  if (status === 429) {
    const wait = retryAfter ? `retry after ${retryAfter} seconds` : 'wait a minute and retry';
    return new Error(`Notion rate limited the request to ${action} (429): ${wait}.`);
  }
  if (status === 401) return new Error(`Notion rejected the access token (401) while trying to ${action}: reconnect notion.${said}`);
  if (status === 403) {
    return new Error(
      `Notion refused to ${action} (403${code ? ` ${code}` : ''}): the integration lacks the capability this needs (read content, update content, insert content, read or insert comments: set in the integration's settings, then reconnect notion) or the user cannot do this.${said}`,
    );
  }
  if (status === 404) {
    return new Error(
      `Notion found nothing while trying to ${action} (404): it does not exist, or it is not shared with the integration (in Notion, open the page's ••• menu → Connections and add it, or reconnect notion and pick the page).${said}`,
    );
  }
  if (status === 409) return new Error(`Notion could not ${action} because of a conflicting change (409): read it again and retry.${said}`);
  if (status === 400 || status === 422) return new Error(`Notion refused to ${action} (${status}${code ? ` ${code}` : ''}): ${detail || 'the request was not valid'}.`);
  if (status >= 500) return new Error(`Notion had a server error (${status}) while trying to ${action}: retry later.${said}`);
  return new Error(`Notion answered HTTP ${status} while trying to ${action}${detail ? `: ${detail}` : ''}.`);
}

/** The gateway's own refusals of a request (an answer over its size cap, none in time) in words; else the error as it is. */
function bridgeError(err, method, action) {
  const code = err && err.code;
  let out;
  if (code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
    out = new Error(`Notion's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ask for less (a smaller limit).`);
  } else if (code === 'GW_ERR_BRIDGE_TIMEOUT') {
    const write = method !== 'GET' && !/^(search|query|read|list)/.test(action) ? ' It may still have been done: check before trying again.' : ' Try again in a moment.';
    out = new Error(`Notion did not answer in time (GW_ERR_BRIDGE_TIMEOUT) while trying to ${action}.${write}`);
  } else if (code === 'GW_ERR_BRIDGE_TOO_MANY_REQUESTS') {
    out = new Error(`Too many requests in one call while trying to ${action} (GW_ERR_BRIDGE_TOO_MANY_REQUESTS): do it in smaller parts.`);
  } else {
    return err;
  }
  out.code = code;
  return out;
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

async function notion(ctx, method, path, { query, body, action } = {}) {
  const headers = { accept: 'application/json', 'notion-version': NOTION_VERSION };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await ctx.http(`${API}${path}${qs(query)}`, init);
  } catch (err) {
    throw bridgeError(err, method, action);
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) {
    const err = notionError(action, res.status, res.headers.get('retry-after'), data);
    err.status = res.status;
    throw err;
  }
  return data && typeof data === 'object' ? data : {};
}

const nextOf = (list) => (list.has_more && typeof list.next_cursor === 'string' && list.next_cursor ? list.next_cursor : null);
const results = (list) => (Array.isArray(list.results) ? list.results : []);

// ---------------------------------------------------------------------------------------------
// Ids: a Notion URL, or 32 hex digits with or without dashes; always sent in the dashed form.

const isHex = (c) => (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');

/** 32 hex digits (lower case, no dashes) from `s` when `s` is exactly an id, dashed or not; else null. */
function bareId(s) {
  const lower = s.toLowerCase();
  let hex = '';
  if (lower.length === 32) hex = lower;
  else if (lower.length === 36 && lower[8] === '-' && lower[13] === '-' && lower[18] === '-' && lower[23] === '-') hex = lower.split('-').join('');
  else return null;
  if (hex.length !== 32) return null;
  for (const c of hex) if (!isHex(c)) return null;
  return hex;
}

const dashed = (hex) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** An id taken from a Notion answer, dashed, when it is one; else null (never put into a path). */
function answerId(value) {
  const hex = typeof value === 'string' ? bareId(value) : null;
  return hex ? dashed(hex) : null;
}

/** Where to cut `s` at most `n` characters past `start`, moved back by one so a surrogate pair is never split. */
function cutIndex(s, n, start = 0) {
  const end = start + n;
  if (end >= s.length) return s.length;
  const c = s.charCodeAt(end - 1);
  return c >= 0xd800 && c <= 0xdbff ? end - 1 : end;
}

/**
 * The id a caller gave, as `xxxxxxxx-xxxx-…`: an id, or a notion.so / notion.site link whose last
 * path segment ends with the id (`…/Roadmap-0123…`). Anything else is refused before any request.
 */
function parseId(value, what) {
  const s = typeof value === 'string' ? value.trim() : '';
  const direct = bareId(s);
  if (direct) return dashed(direct);
  const m = /^https:\/\/([a-z0-9-]+\.)?(notion\.so|notion\.site)\/(.*)$/i.exec(s);
  if (m) {
    let path = m[3];
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
  throw new Error(`\`${what}\` is not a Notion id or link: give the page's link (https://www.notion.so/…-<32 hex digits>) or its id (32 hex digits, with or without dashes).`);
}

// ---------------------------------------------------------------------------------------------
// Reading: rich text, properties and blocks in readable form

function plain(rich) {
  if (!Array.isArray(rich)) return '';
  let out = '';
  for (const r of rich) {
    if (!r || typeof r !== 'object') continue;
    const t = typeof r.plain_text === 'string' ? r.plain_text : r.text && typeof r.text.content === 'string' ? r.text.content : '';
    out += r.href && typeof r.href === 'string' && r.href !== t ? `[${t}](${r.href})` : t;
  }
  return out;
}

const nameOf = (x) => (x && typeof x === 'object' && typeof x.name === 'string' ? x.name : null);
const userOf = (u) => (u && typeof u === 'object' ? (typeof u.name === 'string' ? u.name : u.id ?? null) : null);

function dateText(d) {
  if (!d || typeof d !== 'object' || !d.start) return null;
  return d.end ? `${d.start} → ${d.end}` : d.start;
}

/** One property value in readable form (a string, number, boolean, array or null). */
function readProperty(p) {
  if (!p || typeof p !== 'object') return null;
  switch (p.type) {
    case 'title':
    case 'rich_text':
      return plain(p[p.type]);
    case 'number':
      return typeof p.number === 'number' ? p.number : null;
    case 'select':
    case 'status':
      return nameOf(p[p.type]);
    case 'multi_select':
      return (Array.isArray(p.multi_select) ? p.multi_select : []).map(nameOf).filter((n) => n !== null);
    case 'date':
      return dateText(p.date);
    case 'people':
      return (Array.isArray(p.people) ? p.people : []).map(userOf).filter((n) => n !== null);
    case 'checkbox':
      return !!p.checkbox;
    case 'url':
    case 'email':
    case 'phone_number':
    case 'created_time':
    case 'last_edited_time':
      return typeof p[p.type] === 'string' ? p[p.type] : null;
    case 'created_by':
    case 'last_edited_by':
      return userOf(p[p.type]);
    case 'relation':
      return (Array.isArray(p.relation) ? p.relation : []).map((r) => (r && r.id) || null).filter(Boolean);
    case 'files':
      return (Array.isArray(p.files) ? p.files : []).map(nameOf).filter((n) => n !== null);
    case 'unique_id':
      return p.unique_id && typeof p.unique_id.number === 'number' ? `${p.unique_id.prefix ? `${p.unique_id.prefix}-` : ''}${p.unique_id.number}` : null;
    case 'formula': {
      const f = p.formula || {};
      if (f.type === 'date') return dateText(f.date);
      return f[f.type] ?? null;
    }
    case 'rollup': {
      const r = p.rollup || {};
      if (r.type === 'array') return (Array.isArray(r.array) ? r.array : []).map(readProperty);
      if (r.type === 'date') return dateText(r.date);
      return r[r.type] ?? null;
    }
    default:
      return null;
  }
}

/** `{ "Status": "Done", … }` from a page's properties; a Map first, so a property named "__proto__" is a key like any other. */
function readProperties(props) {
  const out = new Map();
  if (props && typeof props === 'object') for (const name of Object.keys(props)) out.set(name, readProperty(props[name]));
  return Object.fromEntries(out);
}

function titleOfPage(page) {
  const props = page && page.properties && typeof page.properties === 'object' ? page.properties : {};
  for (const name of Object.keys(props)) if (props[name] && props[name].type === 'title') return plain(props[name].title);
  return '';
}

function parentOf(p) {
  if (!p || typeof p !== 'object') return null;
  if (p.type === 'workspace') return { type: 'workspace' };
  const id = p[p.type];
  return { type: p.type, id: typeof id === 'string' ? id : null };
}

function slimItem(x) {
  const isDb = x.object === 'database';
  return {
    id: x.id,
    object: x.object,
    title: isDb ? plain(x.title) : titleOfPage(x),
    url: x.url ?? null,
    parent: parentOf(x.parent),
    lastEdited: x.last_edited_time ?? null,
    archived: !!(x.archived || x.in_trash),
  };
}

function slimRow(x) {
  return { id: x.id, url: x.url ?? null, lastEdited: x.last_edited_time ?? null, properties: readProperties(x.properties) };
}

/** One block as lines of markdown-ish text (children are rendered by the caller, indented). */
function blockLine(b, numbered) {
  const t = b.type;
  const v = (b && b[t]) || {};
  const text = plain(v.rich_text);
  switch (t) {
    case 'paragraph': return text;
    case 'heading_1': return `# ${text}`;
    case 'heading_2': return `## ${text}`;
    case 'heading_3': return `### ${text}`;
    case 'bulleted_list_item': return `- ${text}`;
    case 'numbered_list_item': return `${numbered}. ${text}`;
    case 'to_do': return `- [${v.checked ? 'x' : ' '}] ${text}`;
    case 'toggle': return `▸ ${text}`;
    case 'quote': return `> ${text}`;
    case 'callout': return `> ${v.icon && v.icon.type === 'emoji' ? `${v.icon.emoji} ` : ''}${text}`;
    case 'code': return `\`\`\`${v.language && v.language !== 'plain text' ? v.language : ''}\n${text}\n\`\`\``;
    case 'divider': return '---';
    case 'equation': return `$$ ${v.expression ?? ''} $$`;
    case 'child_page': return `[child page: ${v.title ?? ''}] (${b.id})`;
    case 'child_database': return `[child database: ${v.title ?? ''}] (${b.id})`;
    case 'table_row': return `| ${(Array.isArray(v.cells) ? v.cells : []).map(plain).join(' | ')} |`;
    case 'table': return '';
    case 'column_list':
    case 'column':
    case 'synced_block': return '';
    case 'bookmark':
    case 'embed':
    case 'link_preview': return `[${t}: ${v.url ?? ''}]`;
    case 'image':
    case 'video':
    case 'file':
    case 'pdf':
    case 'audio': {
      const url = (v.external && v.external.url) || (v.file && v.file.url) || '';
      const cap = plain(v.caption);
      return `[${t}${cap ? `: ${cap}` : ''}${url ? ` ${url}` : ''}]`;
    }
    case 'link_to_page': return `[link to ${v.type === 'database_id' ? 'database' : 'page'}: ${v.page_id || v.database_id || ''}]`;
    case 'table_of_contents':
    case 'breadcrumb': return '';
    default: return `[unsupported block: ${t}]`;
  }
}

const LEAF_TYPES = new Set(['child_page', 'child_database']);

/** A short reason for a failed nested read, for the marker and the note. */
function readFailure(err) {
  const status = err && err.status;
  if (status === 429) return 'Notion said 429 (rate limited), retry later';
  if (status) return `Notion said ${status}`;
  const code = err && err.code;
  return code ? `the gateway said ${code}` : String((err && err.message) || err).slice(0, 200);
}

/**
 * The blocks under `rootId` as text: children read breadth-first, to MAX_DEPTH levels and with the
 * requests the call has left (ctx.limits.requestsLeft()) but REQUEST_MARGIN. Each answer becomes
 * lines at once (the block objects are not
 * kept); no more reads are queued once the text passes MAX_CONTENT. What was not read is named in
 * `notes` and, where it sits, by a marker with the block's id. Only the first read of the root may
 * fail the call; a later failed read is a note.
 */
async function readContent(ctx, rootId) {
  const root = { id: rootId, items: [], depth: 0, n: 0, state: null };
  const queue = [{ node: root, cursor: undefined }];
  let requests = 0;
  const budget = Math.max(1, ctx.limits.requestsLeft() - REQUEST_MARGIN);
  let size = 0;
  let unread = 0;
  let deep = 0;
  let longLines = 0;
  let badIds = 0;
  let sizeStop = false;
  let rootIncomplete = false;
  const failures = [];
  const over = () => size > MAX_CONTENT;
  while (queue.length) {
    const item = queue.shift();
    const { node } = item;
    if (requests >= budget || over()) {
      if (over()) sizeStop = true;
      if (node === root) rootIncomplete = true;
      else { unread++; node.state = 'unread'; }
      continue;
    }
    requests++;
    let list;
    try {
      list = await notion(ctx, 'GET', `/blocks/${enc(node.id)}/children`, {
        query: { page_size: 100, start_cursor: item.cursor },
        action: `read the content of ${node === root ? 'page' : 'block'} ${node.id}`,
      });
    } catch (err) {
      if (node === root && item.cursor === undefined) throw err;
      const why = readFailure(err);
      failures.push(`block ${node.id}: ${why}`);
      if (node === root) rootIncomplete = true;
      else node.state = `could not be read: ${why}`;
      continue;
    }
    for (const b of results(list)) {
      if (!b || typeof b !== 'object') continue;
      if (over()) { node.more = true; sizeStop = true; break; }
      node.n = b.type === 'numbered_list_item' ? node.n + 1 : 0;
      let line = blockLine(b, node.n);
      if (line.length > MAX_LINE) { line = `${line.slice(0, cutIndex(line, MAX_LINE))}…`; longLines++; }
      const id = answerId(b.id);
      const child = { line, id, items: null, depth: node.depth + 1, n: 0, state: null };
      if (b.has_children && !LEAF_TYPES.has(b.type)) {
        if (!id) { child.state = 'not read: its id in the answer is not a Notion id'; badIds++; }
        else if (child.depth < MAX_DEPTH) { child.items = []; queue.push({ node: child, cursor: undefined }); }
        else { child.state = 'deep'; deep++; }
      }
      node.items.push(child);
      size += line.length + 1 + 2 * node.depth;
    }
    const next = nextOf(list);
    if (next && !node.more) queue.unshift({ node, cursor: next });
  }
  if (root.more) rootIncomplete = true;
  const lines = [];
  const render = (node, indent) => {
    for (const child of node.items || []) {
      if (child.line) lines.push(child.line.split('\n').map((l) => indent + l).join('\n'));
      const inner = `${indent}  `;
      if (child.state === 'deep' || child.state === 'unread') lines.push(`${inner}(nested content not read: block ${child.id})`);
      else if (child.state) lines.push(`${inner}(nested content ${child.state}${child.id ? `: block ${child.id}` : ''})`);
      else if (child.items) render(child, inner);
      if (child.more) lines.push(`${inner}(more nested content not read: block ${child.id})`);
    }
  };
  render(root, '');
  const notes = [];
  if (rootIncomplete) notes.push('The page has more blocks than one call reads: the content stops early.');
  if (unread) notes.push(`${unread} nested block(s) were not read (${sizeStop ? 'the content was already long enough' : 'request budget'}): open them with notion_get_page and the block id in their "(nested content not read …)" line.`);
  if (deep) notes.push(`Content nested deeper than ${MAX_DEPTH} levels was not read: pass the nested block's id (in its "(nested content not read …)" line) to notion_get_page.`);
  for (const f of failures.slice(0, 10)) notes.push(`Nested content of ${f}; the rest was read.`);
  if (failures.length > 10) notes.push(`${failures.length - 10} more nested read(s) failed.`);
  if (badIds) notes.push(`${badIds} block(s) had an id in Notion's answer that is not a Notion id: their nested content was not read.`);
  if (longLines) notes.push(`${longLines} block(s) longer than ${MAX_LINE} characters were shortened (…).`);
  let content = lines.join('\n');
  if (sizeStop || content.length > MAX_CONTENT) {
    content = content.slice(0, cutIndex(content, MAX_CONTENT));
    notes.push(`The content was cut at ${MAX_CONTENT} characters${sizeStop ? ' (no more blocks were read past that)' : ''}.`);
  }
  return { content, notes };
}

// ---------------------------------------------------------------------------------------------
// Writing: markdown-ish text to blocks, simple values to property shapes

/** Rich text for `s`, in pieces of at most 2000 characters (Notion's limit per text object). */
function richText(s) {
  const str = String(s ?? '');
  const out = [];
  for (let i = 0; i < str.length; ) {
    const end = cutIndex(str, MAX_TEXT, i);
    out.push({ type: 'text', text: { content: str.slice(i, end) } });
    i = end;
  }
  if (out.length > 100) throw new Error('A block of text is too long for Notion (more than 200,000 characters): split it.');
  return out;
}

/** The code languages Notion accepts (`code.language`); anything else is refused by Notion with a 400. */
const CODE_LANGUAGES = new Set([
  'abap', 'abc', 'agda', 'arduino', 'ascii art', 'assembly', 'bash', 'basic', 'bnf', 'c', 'c#', 'c++', 'clojure', 'coffeescript', 'coq', 'css',
  'dart', 'dhall', 'diff', 'docker', 'ebnf', 'elixir', 'elm', 'erlang', 'f#', 'flow', 'fortran', 'gherkin', 'glsl', 'go', 'graphql', 'groovy',
  'haskell', 'hcl', 'html', 'idris', 'java', 'javascript', 'json', 'julia', 'kotlin', 'latex', 'less', 'lisp', 'livescript', 'llvm ir', 'lua',
  'makefile', 'markdown', 'markup', 'matlab', 'mathematica', 'mermaid', 'nix', 'notion formula', 'objective-c', 'ocaml', 'pascal', 'perl',
  'php', 'plain text', 'powershell', 'prolog', 'protobuf', 'purescript', 'python', 'r', 'racket', 'reason', 'ruby', 'rust', 'sass', 'scala',
  'scheme', 'scss', 'shell', 'smalltalk', 'solidity', 'sql', 'swift', 'toml', 'typescript', 'vb.net', 'verilog', 'vhdl', 'visual basic',
  'webassembly', 'xml', 'yaml', 'java/c/c++/c#',
]);
/** Fence names as people type them → Notion's language names. */
const CODE_ALIASES = new Map([
  ['js', 'javascript'], ['jsx', 'javascript'], ['mjs', 'javascript'], ['cjs', 'javascript'], ['node', 'javascript'],
  ['ts', 'typescript'], ['tsx', 'typescript'], ['sh', 'shell'], ['zsh', 'shell'], ['console', 'shell'], ['shell-session', 'shell'],
  ['py', 'python'], ['python3', 'python'], ['yml', 'yaml'], ['md', 'markdown'], ['text', 'plain text'], ['txt', 'plain text'],
  ['plaintext', 'plain text'], ['plain', 'plain text'], ['rb', 'ruby'], ['rs', 'rust'], ['golang', 'go'], ['kt', 'kotlin'], ['cs', 'c#'],
  ['csharp', 'c#'], ['cpp', 'c++'], ['cxx', 'c++'], ['h', 'c'], ['hpp', 'c++'], ['objc', 'objective-c'], ['ps1', 'powershell'], ['pwsh', 'powershell'],
  ['dockerfile', 'docker'], ['tf', 'hcl'], ['terraform', 'hcl'], ['htm', 'html'], ['svg', 'xml'], ['tex', 'latex'], ['ex', 'elixir'],
  ['exs', 'elixir'], ['erl', 'erlang'], ['hs', 'haskell'], ['ml', 'ocaml'], ['pl', 'perl'], ['make', 'makefile'], ['proto', 'protobuf'],
  ['patch', 'diff'], ['gql', 'graphql'], ['jsonc', 'json'], ['json5', 'json'], ['wasm', 'webassembly'], ['vb', 'visual basic'], ['fs', 'f#'],
  ['fsharp', 'f#'], ['scm', 'scheme'], ['clj', 'clojure'], ['coffee', 'coffeescript'], ['sol', 'solidity'], ['postgresql', 'sql'], ['mysql', 'sql'],
]);
/** The language of a ``` fence as Notion names it; an unknown one is "plain text". */
function codeLanguage(fence) {
  const lang = fence.trim().toLowerCase();
  if (CODE_LANGUAGES.has(lang)) return lang;
  return CODE_ALIASES.get(lang) ?? 'plain text';
}

const textBlock = (type, text, extra) => ({ object: 'block', type, [type]: { rich_text: richText(text), ...(extra || {}) } });

/**
 * Markdown-ish text as Notion blocks, one line at a time: `#`/`##`/`###` headings, `- `/`* ` bullets,
 * `1. ` numbered items, `- [ ] `/`- [x] ` to-dos, `> ` quotes, ``` fenced code, `---` dividers; other
 * lines are paragraphs (consecutive ones joined). Inline formatting is kept as typed.
 */
function toBlocks(text) {
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  const blocks = [];
  let para = null;
  const flush = () => {
    if (para !== null) blocks.push(textBlock('paragraph', para));
    para = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    if (trimmed.startsWith('```')) {
      flush();
      const lang = codeLanguage(trimmed.slice(3));
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith('```')) body.push(lines[i++]);
      blocks.push(textBlock('code', body.join('\n'), { language: lang }));
      continue;
    }
    if (!trimmed) { flush(); continue; }
    const s = line.trimStart();
    let block = null;
    if (s.startsWith('### ')) block = textBlock('heading_3', s.slice(4));
    else if (s.startsWith('## ')) block = textBlock('heading_2', s.slice(3));
    else if (s.startsWith('# ')) block = textBlock('heading_1', s.slice(2));
    else if (s.startsWith('- [ ] ') || s.startsWith('- [x] ') || s.startsWith('- [X] ')) block = textBlock('to_do', s.slice(6), { checked: s[3] !== ' ' });
    else if (s.startsWith('- ') || s.startsWith('* ')) block = textBlock('bulleted_list_item', s.slice(2));
    else if (s.startsWith('> ')) block = textBlock('quote', s.slice(2));
    else if (trimmed === '---' || trimmed === '***') block = { object: 'block', type: 'divider', divider: {} };
    else {
      const m = /^\d{1,9}[.)] /.exec(s);
      if (m) block = textBlock('numbered_list_item', s.slice(m[0].length));
    }
    if (block) { flush(); blocks.push(block); continue; }
    para = para === null ? line : `${para}\n${line}`;
  }
  flush();
  return blocks;
}

const WRITABLE = 'title, rich_text, number, select, status, multi_select, date, checkbox, url, email, phone_number, people, relation';

/** A simple value as the property shape its type wants; `type` comes from the database's or page's schema. */
function toProperty(name, type, value) {
  const bad = (want) => new Error(`Property "${name}" is a ${type} property: give ${want}.`);
  const str = (v) => (typeof v === 'number' ? String(v) : v);
  switch (type) {
    case 'title':
    case 'rich_text':
      if (value === null) return { [type]: [] };
      if (typeof str(value) !== 'string') throw bad('text');
      return { [type]: richText(str(value)) };
    case 'number': {
      if (value === null) return { number: null };
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw bad('a number');
      return { number: n };
    }
    case 'select':
    case 'status':
      if (value === null) return { [type]: null };
      if (typeof value !== 'string' || !value) throw bad('the option name as text');
      return { [type]: { name: value } };
    case 'multi_select': {
      const arr = typeof value === 'string' ? value.split(',').map((x) => x.trim()).filter(Boolean) : value === null ? [] : value;
      if (!Array.isArray(arr) || !arr.every((x) => typeof x === 'string' && x)) throw bad('a list of option names');
      return { multi_select: arr.map((x) => ({ name: x })) };
    }
    case 'date':
      if (value === null) return { date: null };
      if (typeof value === 'string' && value) return { date: { start: value } };
      if (value && typeof value === 'object' && !Array.isArray(value) && typeof value.start === 'string') {
        return { date: { start: value.start, ...(typeof value.end === 'string' ? { end: value.end } : {}) } };
      }
      throw bad('an ISO 8601 date ("2025-03-01" or "2025-03-01T09:00:00Z") or {"start", "end"}');
    case 'checkbox':
      if (typeof value !== 'boolean') throw bad('true or false');
      return { checkbox: value };
    case 'url':
    case 'email':
    case 'phone_number':
      if (value !== null && typeof value !== 'string') throw bad('text, or null to clear it');
      return { [type]: value === '' ? null : value };
    case 'people':
    case 'relation': {
      const arr = value === null ? [] : typeof value === 'string' ? [value] : value;
      if (!Array.isArray(arr) || !arr.every((x) => typeof x === 'string')) throw bad(type === 'people' ? 'a list of Notion user ids' : 'a list of page ids or links');
      return { [type]: arr.map((x) => ({ id: parseId(x, `${name}`) })) };
    }
    default:
      throw new Error(`Property "${name}" is a ${type} property, which cannot be set through the API here (settable types: ${WRITABLE}).`);
  }
}

/**
 * `values` (name → simple value) converted by `schema` (name → {type}); an unknown name is refused
 * with the known ones. A Map, so a property named "__proto__" stays a key (Object.fromEntries to send).
 */
function toProperties(values, schema) {
  const out = new Map();
  for (const name of Object.keys(values)) {
    if (!Object.hasOwn(schema, name) || !schema[name] || typeof schema[name].type !== 'string') {
      const known = Object.keys(schema).slice(0, 40).join(', ');
      throw new Error(`There is no property "${name}" here. Its properties are: ${known || '(none)'}.`);
    }
    out.set(name, toProperty(name, schema[name].type, values[name]));
  }
  return out;
}

function titleName(schema) {
  for (const name of Object.keys(schema)) if (schema[name] && schema[name].type === 'title') return name;
  return null;
}

const utf8 = new TextEncoder();

/** The blocks in request-sized parts: at most 100 blocks and about MAX_REQUEST_BYTES of JSON each (a bigger block goes alone). */
function batches(blocks) {
  const out = [];
  let part = [];
  let bytes = 0;
  for (const b of blocks) {
    const size = utf8.encode(JSON.stringify(b)).length + 1;
    if (part.length && (part.length >= MAX_BLOCKS_PER_REQUEST || bytes + size > MAX_REQUEST_BYTES)) {
      out.push(part);
      part = [];
      bytes = 0;
    }
    part.push(b);
    bytes += size;
  }
  if (part.length) out.push(part);
  return out;
}

/**
 * Appends the parts to a block or page, one request each; returns how many blocks were appended.
 * A failure carries `done`, the blocks appended before it.
 */
async function appendAll(ctx, id, parts, already, total) {
  let done = already;
  for (const part of parts) {
    try {
      await notion(ctx, 'PATCH', `/blocks/${enc(id)}/children`, {
        body: { children: part },
        action: `append blocks ${done + 1}–${done + part.length} of ${total} to ${id}${done > 0 ? ` (blocks 1–${done} were added)` : ''}`,
      });
    } catch (err) {
      err.done = done;
      throw err;
    }
    done += part.length;
  }
  return done;
}

function contentBlocks(text) {
  const blocks = toBlocks(text);
  if (blocks.length > 1000) throw new Error(`The content makes ${blocks.length} blocks; at most 1000 can be written in one call: split it.`);
  return blocks;
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function search(ctx, args) {
  const body = { page_size: args.limit ?? 20 };
  if (args.query) body.query = args.query;
  if (args.type) body.filter = { property: 'object', value: args.type };
  if (args.cursor) body.start_cursor = args.cursor;
  body.sort = { timestamp: 'last_edited_time', direction: 'descending' };
  const list = await notion(ctx, 'POST', '/search', { body, action: args.query ? `search for "${args.query}"` : 'search' });
  return { results: results(list).map(slimItem), next: nextOf(list) };
}

/** A block id given as `page` (a toggle, column or callout with nested content): the block and what is below it. */
async function getBlock(ctx, id, args, pageError) {
  let b;
  try {
    b = await notion(ctx, 'GET', `/blocks/${enc(id)}`, { action: `read block ${id}` });
  } catch (err) {
    if (err && err.status === 404) throw pageError;
    throw err;
  }
  let text = blockLine(b, 1);
  if (text.length > MAX_LINE) text = `${text.slice(0, cutIndex(text, MAX_LINE))}…`;
  const out = {
    id, object: 'block', type: typeof b.type === 'string' ? b.type : null, text, parent: parentOf(b.parent),
    lastEdited: b.last_edited_time ?? null, archived: !!(b.archived || b.in_trash),
  };
  if (args.content === false) return out;
  const { content, notes } = await readContent(ctx, id);
  return { ...out, content, ...(notes.length ? { notes } : {}) };
}

async function getPage(ctx, args) {
  const id = parseId(args.page, 'page');
  let page;
  try {
    page = await notion(ctx, 'GET', `/pages/${enc(id)}`, { action: `read page ${id}` });
  } catch (err) {
    // not a page: perhaps a block with nested content (its id is in a "(nested content not read: block …)" line)
    if (err && err.status === 404) return getBlock(ctx, id, args, err);
    throw err;
  }
  const out = {
    ...slimItem(page),
    createdTime: page.created_time ?? null,
    properties: readProperties(page.properties),
  };
  if (args.content === false) return out;
  const { content, notes } = await readContent(ctx, id);
  return { ...out, content, ...(notes.length ? { notes } : {}) };
}

async function createPage(ctx, args) {
  const given = ['parentPage', 'database'].filter((k) => args[k]);
  if (given.length !== 1) throw new Error('Give exactly one of parentPage (create a sub-page) or database (add a row to a database).');
  const blocks = args.content ? contentBlocks(args.content) : [];
  let body;
  if (args.parentPage) {
    if (args.properties) throw new Error('`properties` only apply to a page in a database; a sub-page of a page has only a title.');
    if (!args.title) throw new Error('Give the `title` of the new page.');
    const parent = parseId(args.parentPage, 'parentPage');
    body = { parent: { page_id: parent }, properties: { title: { title: richText(args.title) } } };
  } else {
    const db = parseId(args.database, 'database');
    const schemaOwner = await notion(ctx, 'GET', `/databases/${enc(db)}`, { action: `read the properties of database ${db}` });
    const schema = schemaOwner.properties && typeof schemaOwner.properties === 'object' ? schemaOwner.properties : {};
    const properties = toProperties(args.properties || {}, schema);
    const tname = titleName(schema);
    if (args.title !== undefined) {
      if (!tname) throw new Error('This database has no title property.');
      if (properties.has(tname)) throw new Error(`Give the title once: as \`title\` or as the "${tname}" property, not both.`);
      properties.set(tname, { title: richText(args.title) });
    }
    body = { parent: { database_id: db }, properties: Object.fromEntries(properties) };
  }
  const parts = batches(blocks);
  if (parts.length) body.children = parts[0];
  const page = await notion(ctx, 'POST', '/pages', { body, action: 'create the page' });
  const first = parts.length ? parts[0].length : 0;
  if (parts.length < 2) return { ...slimItem(page), blocks: first };
  // the id of the page just made goes into the next paths: only when it is a Notion id
  const pageId = answerId(page.id);
  const where = `The page ${pageId || '(id not given)'}${typeof page.url === 'string' ? ` (${page.url})` : ''} was created with blocks 1–${first} of ${blocks.length}`;
  if (!pageId) throw new Error(`${where}, but Notion's answer did not give a usable page id, so the rest was not added: find the page and add the rest with notion_append_content.`);
  let written;
  try {
    written = await appendAll(ctx, pageId, parts.slice(1), first, blocks.length);
  } catch (err) {
    const done = typeof err.done === 'number' ? err.done : first;
    throw new Error(`${where}${done > first ? ` and blocks ${first + 1}–${done} were added` : ''}, but adding the rest failed: ${err.message} Continue with notion_append_content on page ${pageId}, from block ${done + 1}.`);
  }
  return { ...slimItem(page), blocks: written };
}

async function appendContent(ctx, args) {
  const id = parseId(args.page, 'page');
  const blocks = contentBlocks(args.content);
  if (!blocks.length) throw new Error('`content` makes no blocks: give some text.');
  const written = await appendAll(ctx, id, batches(blocks), 0, blocks.length);
  return { page: id, blocks: written };
}

async function updatePage(ctx, args) {
  const id = parseId(args.page, 'page');
  const hasProps = args.properties && Object.keys(args.properties).length > 0;
  if (!hasProps && args.title === undefined && args.archived === undefined) {
    throw new Error('Nothing to update: give properties, title or archived.');
  }
  const body = {};
  if (hasProps || args.title !== undefined) {
    const current = await notion(ctx, 'GET', `/pages/${enc(id)}`, { action: `read page ${id}` });
    const schema = current.properties && typeof current.properties === 'object' ? current.properties : {};
    const properties = toProperties(args.properties || {}, schema);
    if (args.title !== undefined) {
      const tname = titleName(schema);
      if (!tname) throw new Error('This page has no title property.');
      if (properties.has(tname)) throw new Error(`Give the title once: as \`title\` or as the "${tname}" property, not both.`);
      properties.set(tname, { title: richText(args.title) });
    }
    body.properties = Object.fromEntries(properties);
  }
  // `in_trash` (accepted by every API version; `archived` is its deprecated alias, removed in 2026-03-11)
  if (args.archived !== undefined) body.in_trash = args.archived;
  const page = await notion(ctx, 'PATCH', `/pages/${enc(id)}`, { body, action: `update page ${id}` });
  return { ...slimItem(page), properties: readProperties(page.properties), updated: [...Object.keys(body.properties || {}), ...(args.archived !== undefined ? ['archived'] : [])] };
}

function checkFilter(f) {
  if (!f || typeof f !== 'object' || Array.isArray(f)) throw new Error('`filter` must be a Notion filter object, such as {"property": "Status", "status": {"equals": "Done"}} or {"and": [ … ]}.');
  const keys = Object.keys(f);
  const ok = Object.hasOwn(f, 'property') || Object.hasOwn(f, 'timestamp') || (keys.length === 1 && (keys[0] === 'and' || keys[0] === 'or') && Array.isArray(f[keys[0]]));
  if (!ok) throw new Error('`filter` must name a `property` (or `timestamp`) and a condition, or be {"and": [...]} / {"or": [...]} of such filters.');
}

function checkSorts(sorts) {
  for (const s of sorts) {
    if (!s || typeof s !== 'object' || Array.isArray(s) || !(typeof s.property === 'string' || typeof s.timestamp === 'string')) {
      throw new Error('Each sort must be {"property": "<name>", "direction": "ascending"|"descending"} or {"timestamp": "created_time"|"last_edited_time", "direction": …}.');
    }
    if (s.direction !== undefined && s.direction !== 'ascending' && s.direction !== 'descending') throw new Error('A sort\'s direction is "ascending" or "descending".');
  }
}

async function queryDatabase(ctx, args) {
  const id = parseId(args.database, 'database');
  const body = { page_size: args.limit ?? 25 };
  if (args.filter !== undefined) {
    checkFilter(args.filter);
    body.filter = args.filter;
  }
  if (args.sorts !== undefined) {
    checkSorts(args.sorts);
    body.sorts = args.sorts;
  }
  if (args.cursor) body.start_cursor = args.cursor;
  const list = await notion(ctx, 'POST', `/databases/${enc(id)}/query`, { body, action: `query database ${id}` });
  return { database: id, rows: results(list).map(slimRow), next: nextOf(list) };
}

function slimComment(c) {
  return {
    id: c.id,
    discussionId: c.discussion_id ?? null,
    author: c.created_by && c.created_by.id ? c.created_by.id : null,
    createdTime: c.created_time ?? null,
    text: plain(c.rich_text),
  };
}

async function addComment(ctx, args) {
  const given = ['page', 'discussionId'].filter((k) => args[k]);
  if (given.length !== 1) throw new Error('Give exactly one of page (a new comment on the page) or discussionId (a reply in that thread).');
  const body = { rich_text: richText(args.text) };
  let action;
  if (args.page) {
    const id = parseId(args.page, 'page');
    body.parent = { page_id: id };
    action = `comment on page ${id}`;
  } else {
    const d = parseId(args.discussionId, 'discussionId');
    body.discussion_id = d;
    action = `reply in discussion ${d}`;
  }
  const c = await notion(ctx, 'POST', '/comments', { body, action });
  return slimComment(c);
}

async function listComments(ctx, args) {
  const id = parseId(args.page, 'page');
  const list = await notion(ctx, 'GET', '/comments', {
    query: { block_id: id, page_size: args.limit ?? 50, start_cursor: args.cursor },
    action: `list the comments of ${id}`,
  });
  return { page: id, comments: results(list).map(slimComment), next: nextOf(list) };
}

export default {
  notion_search: search,
  notion_get_page: getPage,
  notion_create_page: createPage,
  notion_append_content: appendContent,
  notion_update_page: updatePage,
  notion_query_database: queryDatabase,
  notion_add_comment: addComment,
  notion_list_comments: listComments,
};
