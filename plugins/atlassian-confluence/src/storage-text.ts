/**
 * @module plugins/atlassian-confluence/src/storage-text
 * Confluence storage format (XHTML) → readable markdown-ish text. There is no DOM in the isolate:
 * a tolerant tokenizer builds a small tree (unclosed and stray tags are forgiven), then a renderer
 * writes text. Every step is bounded (parse size, nesting depth, text length), so a pathological
 * body cannot run out the sandbox's CPU.
 * One module on purpose (over 400 lines): the tokenizer, the tree and the renderer share the bounds
 * and the node types, and each is short; split, the bounds would have to be passed between files.
 */

export const MAX_TEXT = 20000;
// storage bodies beyond this are not parsed: the text is cut at MAX_TEXT long before
const MAX_PARSE = 600000;
// no intermediate text grows past this: the result is cut at MAX_TEXT, and indentation only adds
// characters, so the first MAX_TEXT characters never depend on what lies beyond it
const CAP = MAX_TEXT + 5000;
const MAX_DEPTH = 200;

/** An element (isBlock() keeps its answer on it), or text (`raw`: CDATA, kept as it is). */
type Element = { name: string; attrs: Record<string, string>; children: Node[]; isBlock?: boolean; text?: undefined };
type Node = Element | { text: string; raw?: boolean; name?: undefined };

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  sbquo: '‚',
  bdquo: '„',
  laquo: '«',
  raquo: '»',
  lsaquo: '‹',
  rsaquo: '›',
  bull: '•',
  middot: '·',
  copy: '©',
  reg: '®',
  trade: '™',
  deg: '°',
  plusmn: '±',
  times: '×',
  divide: '÷',
  micro: 'µ',
  para: '¶',
  sect: '§',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  frac12: '½',
  frac14: '¼',
  frac34: '¾',
  sup2: '²',
  sup3: '³',
  larr: '←',
  rarr: '→',
  uarr: '↑',
  darr: '↓',
  harr: '↔',
  rArr: '⇒',
  lArr: '⇐',
  hArr: '⇔',
  le: '≤',
  ge: '≥',
  ne: '≠',
  asymp: '≈',
  infin: '∞',
  minus: '−',
  prime: '′',
  Prime: '″',
  dagger: '†',
  Dagger: '‡',
  permil: '‰',
  iexcl: '¡',
  iquest: '¿',
  shy: '',
  zwj: '\u200d',
  zwnj: '\u200c',
  ensp: '\u2002',
  emsp: '\u2003',
  thinsp: '\u2009',
  check: '✓',
  cross: '✗',
};

export function decodeEntities(s: string): string {
  if (s.indexOf('&') < 0) return s;
  return s.replace(/&(#[xX][0-9a-fA-F]{1,8}|#[0-9]{1,10}|[A-Za-z][A-Za-z0-9]{1,31});/g, (all, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    return Object.prototype.hasOwnProperty.call(NAMED_ENTITIES, ref) ? NAMED_ENTITIES[ref] : all;
  });
}

const VOID = new Set(['br', 'hr', 'img', 'col', 'wbr', 'input', 'meta', 'link', 'area', 'source', 'ac:emoticon']);
const SKIP = new Set([
  'script',
  'style',
  'head',
  'ac:placeholder',
  'ac:task-id',
  'ac:task-uuid',
  'colgroup',
  'ac:adf-attribute',
]);

function parseAttrs(src: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  const re = /([^\s=/"'<>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(src))) attrs[m[1].toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  return attrs;
}

/** Tokenize and build the tree of elements and text nodes. */
function parseStorage(src: string): Element {
  const root: Element = { name: '#root', attrs: {}, children: [] };
  const stack = [root];
  const top = () => stack[stack.length - 1];
  // a quoted attribute value never holds "<" (XML forbids it), so no attempt scans past the next "<"
  const re =
    /<!--[\s\S]*?(?:-->|$)|<!\[CDATA\[([\s\S]*?)(?:\]\]>|$)|<\/\s*([A-Za-z][\w:.-]*)\s*>|<([A-Za-z][\w:.-]*)((?:[^<>"']|"[^"<]*"|'[^'<]*')*?)(\/?)>|<![^>]*>|<\?[\s\S]*?\?>/g;
  let last = 0;
  let m: RegExpExecArray | null;
  const text = (t: string) => {
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
      const el: Element = { name, attrs: parseAttrs(m[4] || ''), children: [] };
      top().children.push(el);
      if (!m[5] && !VOID.has(name) && stack.length < MAX_DEPTH) stack.push(el);
    }
  }
  text(src.slice(last));
  return root;
}

/** The text under a node, decoded, whitespace kept (for code, parameters and link bodies). */
function textOf(node: Node | undefined): string {
  if (!node) return '';
  if (node.text !== undefined) return node.text;
  if (SKIP.has(node.name)) return '';
  if (node.name === 'br') return '\n';
  return node.children.map(textOf).join('');
}

const child = (node: Element, name: string): Element | undefined =>
  node.children.find((c): c is Element => c.name === name);
const children = (node: Element, name: string): Element[] => node.children.filter((c): c is Element => c.name === name);

function macroParams(node: Element): Record<string, string> {
  const params: Record<string, string> = {};
  for (const p of children(node, 'ac:parameter'))
    params[String(p.attrs['ac:name'] || '').toLowerCase()] = textOf(p).trim();
  return params;
}

const CALLOUTS = new Set(['info', 'note', 'warning', 'tip', 'panel', 'success', 'error']);
const BLOCK_MACROS = new Set([
  'code',
  'noformat',
  'expand',
  'toc',
  'children',
  'attachments',
  'excerpt',
  'details',
  'section',
  'column',
  'recently-updated',
  'contentbylabel',
  'pagetree',
  'livesearch',
  'tasks-report-macro',
  'jiraissues',
  ...CALLOUTS,
]);
const BLOCK = new Set([
  'p',
  'div',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'td',
  'th',
  'pre',
  'blockquote',
  'hr',
  'section',
  'article',
  'header',
  'footer',
  'dl',
  'dt',
  'dd',
  'figure',
  'ac:layout',
  'ac:layout-section',
  'ac:layout-cell',
  'ac:rich-text-body',
  'ac:task-list',
  'ac:task',
  'ac:adf-extension',
  'ac:adf-content',
]);
const INLINE = new Set([
  'a',
  'span',
  'strong',
  'b',
  'em',
  'i',
  'u',
  'code',
  's',
  'del',
  'sub',
  'sup',
  'small',
  'ac:link',
  'ac:image',
  'ac:emoticon',
  'time',
  'br',
  'img',
]);

function isBlock(node: Node): boolean {
  if (node.text !== undefined) return false;
  if (node.isBlock !== undefined) return node.isBlock;
  let b: boolean;
  if (node.name === 'ac:structured-macro' || node.name === 'ac:macro')
    b = BLOCK_MACROS.has(String(node.attrs['ac:name'] || '').toLowerCase());
  else if (BLOCK.has(node.name)) b = true;
  else if (INLINE.has(node.name) || SKIP.has(node.name)) b = false;
  else b = node.children.some(isBlock);
  node.isBlock = b;
  return b;
}

const clip = (s: string): string => (s.length > CAP ? s.slice(0, CAP) : s);

/** Children as text: runs of inline content are cleaned and trimmed, blocks keep their own layout. */
function blocks(nodes: Node[], sep = '\n\n'): string {
  const out: string[] = [];
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

/** The pieces, joined, stopping once the text is past CAP. */
function joinCapped<T>(items: T[], fn: (item: T) => string, sep = ''): string {
  let out = '';
  for (let i = 0; i < items.length && out.length <= CAP; i++) out += (i ? sep : '') + fn(items[i]);
  return clip(out);
}

const inline = (node: Element): string => joinCapped(node.children, render);
const indentRest = (s: string, pad: string): string =>
  s
    .split('\n')
    .map((line, i) => (i === 0 || line === '' ? line : pad + line))
    .join('\n');
const wrap = (mark: string, s: string): string => (s.trim() ? `${mark}${s.trim()}${mark}` : s);
const fence = (lang: string, code: string): string => `\`\`\`${lang || ''}\n${code.replace(/^\n+|\s+$/g, '')}\n\`\`\``;

function renderList(node: Element, ordered: boolean): string {
  let n = Number.parseInt(node.attrs['start'], 10) || 1;
  const items = node.children.filter(
    (c) =>
      c.name === 'li' ||
      (c.text === undefined && c.name !== 'li' && isBlock(c)) ||
      (c.text !== undefined && c.text.trim()),
  );
  const one = (item: Node) => {
    const marker = ordered ? `${n++}. ` : '- ';
    const body = item.name === 'li' ? blocks(item.children, '\n') : render(item).trim();
    return marker + indentRest(body, ' '.repeat(marker.length));
  };
  return joinCapped(items, one, '\n');
}

function tableRows(node: { children: Node[] }, rows: Element[] = []): Element[] {
  for (const c of node.children) {
    if (c.name === 'tr') rows.push(c);
    else if (c.name === 'thead' || c.name === 'tbody' || c.name === 'tfoot') tableRows(c, rows);
  }
  return rows;
}

function renderTable(node: { children: Node[] }): string {
  const rows = tableRows(node);
  const line = (row: Element, i: number) => {
    const cells = row.children.filter((c): c is Element => c.name === 'td' || c.name === 'th');
    if (!cells.length) return '';
    const text = joinCapped(
      cells,
      (c) =>
        blocks(c.children, ' ')
          .replace(/\s*\n\s*/g, ' ')
          .replace(/\|/g, '\\|')
          .trim(),
      ' | ',
    );
    const head = i === 0 && cells.every((c) => c.name === 'th') ? `\n| ${cells.map(() => '---').join(' | ')} |` : '';
    return `| ${text} |${head}`;
  };
  let i = 0;
  return joinCapped(rows, (row) => line(row, i++), '\n')
    .replace(/\n{2,}/g, '\n')
    .replace(/^\n+/, '');
}

function linkTarget(node: Element): string {
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

function renderMacro(node: Element): string {
  const name = String(node.attrs['ac:name'] || '').toLowerCase();
  const p = macroParams(node);
  const plain = child(node, 'ac:plain-text-body');
  const rich = child(node, 'ac:rich-text-body');
  const body = () => (rich ? blocks(rich.children) : plain ? textOf(plain).trim() : '');
  if (name === 'code' || name === 'noformat')
    return fence(p['language'] || '', plain ? textOf(plain) : rich ? textOf(rich) : '');
  if (CALLOUTS.has(name)) {
    const head = `[${name}]${p['title'] ? ` ${p['title']}` : ''}`;
    const text = body();
    return [head, ...(text ? text.split('\n') : [])].map((l) => (l ? `> ${l}` : '>')).join('\n');
  }
  if (name === 'expand') return [`${p['title'] || 'Details'}:`, body()].filter(Boolean).join('\n\n');
  if (name === 'status') return `[${p['title'] || p['colour'] || 'status'}]`;
  if (name === 'jira' || name === 'jiraissues')
    return p['key'] ? `[Jira ${p['key']}]` : `[Jira issues${p['jqlquery'] ? `: ${p['jqlquery']}` : ''}]`;
  if (name === 'anchor') return '';
  if (name === 'toc') return '[table of contents]';
  if (name === 'children') return '[list of child pages]';
  if (name === 'attachments') return '[list of attachments]';
  return body() || `[${name || 'macro'} macro]`;
}

function render(node: Node): string {
  if (node.text !== undefined) return clip(node.raw ? node.text : node.text.replace(/[ \t\r\n\f]+/g, ' '));
  const { name, attrs } = node;
  if (SKIP.has(name)) return '';
  switch (name) {
    case '#root':
    case 'div':
    case 'p':
    case 'section':
    case 'article':
    case 'header':
    case 'footer':
    case 'figure':
    case 'ac:layout':
    case 'ac:layout-section':
    case 'ac:layout-cell':
    case 'ac:rich-text-body':
    case 'ac:adf-content':
    case 'thead':
    case 'tbody':
    case 'tfoot':
    case 'dl':
    case 'dd':
      return blocks(node.children);
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6':
      return `${'#'.repeat(Number(name[1]))} ${blocks(node.children, ' ').replace(/\s*\n\s*/g, ' ')}`;
    case 'dt':
      return wrap('**', blocks(node.children, ' '));
    case 'br':
      return '\n';
    case 'hr':
      return '---';
    case 'ul':
      return renderList(node, false);
    case 'ol':
      return renderList(node, true);
    case 'li':
      return `- ${indentRest(blocks(node.children, '\n'), '  ')}`;
    case 'table':
      return renderTable(node);
    case 'tr':
      return renderTable({ children: [node] });
    case 'td':
    case 'th':
      return blocks(node.children, ' ');
    case 'pre':
      return fence('', textOf(node));
    case 'blockquote':
      return blocks(node.children)
        .split('\n')
        .map((l) => (l ? `> ${l}` : '>'))
        .join('\n');
    case 'strong':
    case 'b':
      return wrap('**', inline(node));
    case 'em':
    case 'i':
      return wrap('_', inline(node));
    case 's':
    case 'del':
      return wrap('~~', inline(node));
    case 'code':
      return wrap('`', inline(node));
    case 'a': {
      const text = inline(node).trim();
      const href = attrs['href'] || '';
      if (!href || href.startsWith('#') || href === text) return text || href;
      return text ? `${text} (${href})` : href;
    }
    case 'img':
      return attrs['alt'] ? `[image: ${attrs['alt']}]` : attrs['src'] ? `[image: ${attrs['src']}]` : '';
    case 'time':
      return attrs['datetime'] || inline(node);
    case 'ac:link': {
      const bodyNode = child(node, 'ac:link-body') || child(node, 'ac:plain-text-link-body');
      const text = bodyNode ? (bodyNode.name === 'ac:link-body' ? inline(bodyNode) : textOf(bodyNode)).trim() : '';
      return text || linkTarget(node);
    }
    case 'ac:link-body':
    case 'ac:plain-text-link-body':
      return '';
    case 'ac:image': {
      const att = child(node, 'ri:attachment');
      const url = child(node, 'ri:url');
      const label = attrs['ac:alt'] || att?.attrs['ri:filename'] || url?.attrs['ri:value'] || '';
      return `[image${label ? `: ${label}` : ''}]`;
    }
    case 'ac:emoticon':
      return attrs['ac:emoji-fallback'] || (attrs['ac:name'] ? `:${attrs['ac:name']}:` : '');
    case 'ac:structured-macro':
    case 'ac:macro':
      return renderMacro(node);
    case 'ac:parameter':
    case 'ac:plain-text-body':
      return '';
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
    case 'ac:adf-node':
    case 'ac:adf-fallback':
      return blocks(node.children);
    default:
      if (name.startsWith('ri:')) return '';
      return isBlock(node) ? blocks(node.children) : inline(node);
  }
}

/** Storage-format XHTML → markdown-ish plain text, cut at `max` characters. */
export function storageToText(storage: unknown, max = MAX_TEXT): { text: string; truncated: boolean } {
  const src = String(storage || '');
  if (!src) return { text: '', truncated: false };
  const text = blocks(parseStorage(src.slice(0, MAX_PARSE)).children)
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const truncated = text.length > max || src.length > MAX_PARSE;
  return { text: text.length > max ? `${text.slice(0, max)}… (truncated)` : text, truncated };
}
