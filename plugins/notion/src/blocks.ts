/**
 * @module plugins/notion/src/blocks
 * Blocks both ways: one Notion block as a line of markdown-ish text, and markdown-ish text as
 * Notion blocks, sent in request-sized parts.
 */
import type { Json } from './api.js';
import { plain, richText } from './text.js';

const MAX_BLOCKS_PER_REQUEST = 100;
const MAX_REQUEST_BYTES = 450000; // Notion refuses a request body over 500 KB: blocks are sent in parts below this

/** A block as Notion answers it: `type`, and the value under that type's name. */
export type Block = Json & { id?: unknown; type?: unknown; has_children?: unknown };

/** One block as lines of markdown-ish text (children are rendered by the caller, indented). */
export function blockLine(b: Block, numbered: number): string {
  const t = String(b.type);
  const v = (b[t] || {}) as Json;
  const text = plain(v['rich_text']);
  const str = (x: unknown) => String(x ?? '');
  switch (t) {
    case 'paragraph':
      return text;
    case 'heading_1':
      return `# ${text}`;
    case 'heading_2':
      return `## ${text}`;
    case 'heading_3':
      return `### ${text}`;
    case 'bulleted_list_item':
      return `- ${text}`;
    case 'numbered_list_item':
      return `${numbered}. ${text}`;
    case 'to_do':
      return `- [${v['checked'] ? 'x' : ' '}] ${text}`;
    case 'toggle':
      return `▸ ${text}`;
    case 'quote':
      return `> ${text}`;
    case 'callout': {
      const icon = (v['icon'] || {}) as Json;
      return `> ${icon['type'] === 'emoji' ? `${String(icon['emoji'])} ` : ''}${text}`;
    }
    case 'code':
      return `\`\`\`${v['language'] && v['language'] !== 'plain text' ? str(v['language']) : ''}\n${text}\n\`\`\``;
    case 'divider':
      return '---';
    case 'equation':
      return `$$ ${str(v['expression'])} $$`;
    case 'child_page':
      return `[child page: ${str(v['title'])}] (${String(b.id)})`;
    case 'child_database':
      return `[child database: ${str(v['title'])}] (${String(b.id)})`;
    case 'table_row':
      return `| ${(Array.isArray(v['cells']) ? v['cells'] : []).map(plain).join(' | ')} |`;
    case 'table':
    case 'column_list':
    case 'column':
    case 'synced_block':
    case 'table_of_contents':
    case 'breadcrumb':
      return '';
    case 'bookmark':
    case 'embed':
    case 'link_preview':
      return `[${t}: ${str(v['url'])}]`;
    case 'image':
    case 'video':
    case 'file':
    case 'pdf':
    case 'audio': {
      const external = (v['external'] || {}) as Json;
      const file = (v['file'] || {}) as Json;
      const url = str(external['url'] || file['url'] || '');
      const cap = plain(v['caption']);
      return `[${t}${cap ? `: ${cap}` : ''}${url ? ` ${url}` : ''}]`;
    }
    case 'link_to_page':
      return `[link to ${v['type'] === 'database_id' ? 'database' : 'page'}: ${str(v['page_id'] || v['database_id'] || '')}]`;
    default:
      return `[unsupported block: ${t}]`;
  }
}

/** The code languages Notion accepts (`code.language`); anything else is refused by Notion with a 400. */
const CODE_LANGUAGES = new Set([
  'abap',
  'abc',
  'agda',
  'arduino',
  'ascii art',
  'assembly',
  'bash',
  'basic',
  'bnf',
  'c',
  'c#',
  'c++',
  'clojure',
  'coffeescript',
  'coq',
  'css',
  'dart',
  'dhall',
  'diff',
  'docker',
  'ebnf',
  'elixir',
  'elm',
  'erlang',
  'f#',
  'flow',
  'fortran',
  'gherkin',
  'glsl',
  'go',
  'graphql',
  'groovy',
  'haskell',
  'hcl',
  'html',
  'idris',
  'java',
  'javascript',
  'json',
  'julia',
  'kotlin',
  'latex',
  'less',
  'lisp',
  'livescript',
  'llvm ir',
  'lua',
  'makefile',
  'markdown',
  'markup',
  'matlab',
  'mathematica',
  'mermaid',
  'nix',
  'notion formula',
  'objective-c',
  'ocaml',
  'pascal',
  'perl',
  'php',
  'plain text',
  'powershell',
  'prolog',
  'protobuf',
  'purescript',
  'python',
  'r',
  'racket',
  'reason',
  'ruby',
  'rust',
  'sass',
  'scala',
  'scheme',
  'scss',
  'shell',
  'smalltalk',
  'solidity',
  'sql',
  'swift',
  'toml',
  'typescript',
  'vb.net',
  'verilog',
  'vhdl',
  'visual basic',
  'webassembly',
  'xml',
  'yaml',
  'java/c/c++/c#',
]);
/** Fence names as people type them → Notion's language names. */
const CODE_ALIASES = new Map([
  ['js', 'javascript'],
  ['jsx', 'javascript'],
  ['mjs', 'javascript'],
  ['cjs', 'javascript'],
  ['node', 'javascript'],
  ['ts', 'typescript'],
  ['tsx', 'typescript'],
  ['sh', 'shell'],
  ['zsh', 'shell'],
  ['console', 'shell'],
  ['shell-session', 'shell'],
  ['py', 'python'],
  ['python3', 'python'],
  ['yml', 'yaml'],
  ['md', 'markdown'],
  ['text', 'plain text'],
  ['txt', 'plain text'],
  ['plaintext', 'plain text'],
  ['plain', 'plain text'],
  ['rb', 'ruby'],
  ['rs', 'rust'],
  ['golang', 'go'],
  ['kt', 'kotlin'],
  ['cs', 'c#'],
  ['csharp', 'c#'],
  ['cpp', 'c++'],
  ['cxx', 'c++'],
  ['h', 'c'],
  ['hpp', 'c++'],
  ['objc', 'objective-c'],
  ['ps1', 'powershell'],
  ['pwsh', 'powershell'],
  ['dockerfile', 'docker'],
  ['tf', 'hcl'],
  ['terraform', 'hcl'],
  ['htm', 'html'],
  ['svg', 'xml'],
  ['tex', 'latex'],
  ['ex', 'elixir'],
  ['exs', 'elixir'],
  ['erl', 'erlang'],
  ['hs', 'haskell'],
  ['ml', 'ocaml'],
  ['pl', 'perl'],
  ['make', 'makefile'],
  ['proto', 'protobuf'],
  ['patch', 'diff'],
  ['gql', 'graphql'],
  ['jsonc', 'json'],
  ['json5', 'json'],
  ['wasm', 'webassembly'],
  ['vb', 'visual basic'],
  ['fs', 'f#'],
  ['fsharp', 'f#'],
  ['scm', 'scheme'],
  ['clj', 'clojure'],
  ['coffee', 'coffeescript'],
  ['sol', 'solidity'],
  ['postgresql', 'sql'],
  ['mysql', 'sql'],
]);
/** The language of a ``` fence as Notion names it; an unknown one is "plain text". */
function codeLanguage(fence: string): string {
  const lang = fence.trim().toLowerCase();
  if (CODE_LANGUAGES.has(lang)) return lang;
  return CODE_ALIASES.get(lang) ?? 'plain text';
}

const textBlock = (type: string, text: string, extra?: Json): Json => ({
  object: 'block',
  type,
  [type]: { rich_text: richText(text), ...extra },
});

/**
 * Markdown-ish text as Notion blocks, one line at a time: `#`/`##`/`###` headings, `- `/`* ` bullets,
 * `1. ` numbered items, `- [ ] `/`- [x] ` to-dos, `> ` quotes, ``` fenced code, `---` dividers; other
 * lines are paragraphs (consecutive ones joined). Inline formatting is kept as typed.
 */
export function toBlocks(text: string): Json[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Json[] = [];
  let para: string | null = null;
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
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith('```')) body.push(lines[i++]);
      blocks.push(textBlock('code', body.join('\n'), { language: lang }));
      continue;
    }
    if (!trimmed) {
      flush();
      continue;
    }
    const s = line.trimStart();
    const numbered = /^\d{1,9}[.)] /.exec(s);
    let block: Json | null = null;
    if (s.startsWith('### ')) block = textBlock('heading_3', s.slice(4));
    else if (s.startsWith('## ')) block = textBlock('heading_2', s.slice(3));
    else if (s.startsWith('# ')) block = textBlock('heading_1', s.slice(2));
    else if (s.startsWith('- [ ] ') || s.startsWith('- [x] ') || s.startsWith('- [X] '))
      block = textBlock('to_do', s.slice(6), { checked: s[3] !== ' ' });
    else if (s.startsWith('- ') || s.startsWith('* ')) block = textBlock('bulleted_list_item', s.slice(2));
    else if (s.startsWith('> ')) block = textBlock('quote', s.slice(2));
    else if (trimmed === '---' || trimmed === '***') block = { object: 'block', type: 'divider', divider: {} };
    else if (numbered) block = textBlock('numbered_list_item', s.slice(numbered[0].length));
    if (block) {
      flush();
      blocks.push(block);
      continue;
    }
    para = para === null ? line : `${para}\n${line}`;
  }
  flush();
  return blocks;
}

/** The blocks of `text` for one call: at most 1000. */
export function contentBlocks(text: string): Json[] {
  const blocks = toBlocks(text);
  if (blocks.length > 1000)
    throw new Error(`The content makes ${blocks.length} blocks; at most 1000 can be written in one call: split it.`);
  return blocks;
}

const utf8 = new TextEncoder();

/** The blocks in request-sized parts: at most 100 blocks and about MAX_REQUEST_BYTES of JSON each (a bigger block goes alone). */
export function batches(blocks: Json[]): Json[][] {
  const out: Json[][] = [];
  let part: Json[] = [];
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
