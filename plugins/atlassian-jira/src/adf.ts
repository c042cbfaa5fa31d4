/**
 * @module plugins/atlassian-jira/src/adf
 * Atlassian Document Format ⇄ plain text: what the agent writes becomes paragraphs and hard breaks;
 * what Jira stores is read back with headings, lists, code blocks, mentions and links kept readable.
 */

/** One ADF node, as far as the text conversion reads it. */
export interface AdfNode {
  type?: string;
  text?: string;
  attrs?: {
    text?: string;
    id?: string;
    shortName?: string;
    url?: string;
    timestamp?: string | number;
    level?: number;
    language?: string;
    order?: number;
    state?: string;
    alt?: string;
  };
  marks?: Array<{ type?: string; attrs?: { href?: unknown } } | null>;
  content?: AdfNode[];
}

const MAX_TEXT = 20000;

/** Plain text (blank lines between paragraphs) as an ADF document. */
export function textToAdf(text: string): AdfNode & { version: number } {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .filter((p) => p.trim() !== '');
  return {
    type: 'doc',
    version: 1,
    content: paragraphs.map((p) => {
      const content: AdfNode[] = [];
      p.split('\n').forEach((line, i) => {
        if (i > 0) content.push({ type: 'hardBreak' });
        if (line) content.push({ type: 'text', text: line });
      });
      return { type: 'paragraph', content };
    }),
  };
}

const list = (nodes: unknown): AdfNode[] => (Array.isArray(nodes) ? (nodes as AdfNode[]) : []);
const inline = (nodes: unknown): string => list(nodes).map(adfNode).join('');
const blocks = (nodes: unknown, sep = '\n\n'): string =>
  list(nodes)
    .map(adfNode)
    .filter((s) => s !== '')
    .join(sep);
const indentRest = (s: string, pad: string): string =>
  s
    .split('\n')
    .map((line, i) => (i === 0 || line === '' ? line : pad + line))
    .join('\n');
const INLINE = new Set(['text', 'hardBreak', 'mention', 'emoji']);

function adfNode(n: AdfNode | null | undefined): string {
  if (!n || typeof n !== 'object') return '';
  const a = n.attrs || {};
  switch (n.type) {
    case 'text': {
      const text = typeof n.text === 'string' ? n.text : '';
      // a hyperlink is a text node with a link mark: keep its address beside the words
      const href = (n.marks || []).find((m) => m && m.type === 'link' && m.attrs && typeof m.attrs.href === 'string')
        ?.attrs?.href;
      return typeof href === 'string' && href !== text ? `${text} (${href})` : text;
    }
    case 'hardBreak':
      return '\n';
    case 'mention':
      return a.text || (a.id ? `@${a.id}` : '@someone');
    case 'emoji':
      return a.text || a.shortName || '';
    case 'inlineCard':
    case 'blockCard':
    case 'embedCard':
      return a.url || '';
    case 'status':
      return a.text ? `[${a.text}]` : '';
    case 'date':
      return a.timestamp ? new Date(Number(a.timestamp)).toISOString().slice(0, 10) : '';
    case 'paragraph':
      return inline(n.content);
    case 'heading':
      return `${'#'.repeat(Math.min(Math.max(Number(a.level) || 1, 1), 6))} ${inline(n.content)}`;
    case 'codeBlock':
      return `\`\`\`${a.language || ''}\n${inline(n.content)}\n\`\`\``;
    case 'blockquote':
      return blocks(n.content)
        .split('\n')
        .map((l) => `> ${l}`)
        .join('\n');
    case 'rule':
      return '---';
    case 'bulletList':
      return list(n.content)
        .map((item) => `- ${indentRest(blocks(item.content, '\n'), '  ')}`)
        .join('\n');
    case 'orderedList': {
      const start = Number(a.order) || 1;
      return list(n.content)
        .map((item, i) => `${start + i}. ${indentRest(blocks(item.content, '\n'), '   ')}`)
        .join('\n');
    }
    case 'taskList':
      return blocks(n.content, '\n');
    case 'taskItem':
      return `[${a.state === 'DONE' ? 'x' : ' '}] ${inline(n.content)}`;
    case 'table':
      return blocks(n.content, '\n');
    case 'tableRow':
      return list(n.content)
        .map((cell) => blocks(cell.content, ' ').replace(/\n/g, ' '))
        .join(' | ');
    case 'media':
    case 'mediaInline':
      return `[attachment${a.alt ? `: ${a.alt}` : ''}]`;
    default:
      if (Array.isArray(n.content))
        return n.content.every((c) => c && INLINE.has(c.type ?? '')) ? inline(n.content) : blocks(n.content);
      return typeof n.text === 'string' ? n.text : '';
  }
}

/** An ADF document (or a string) as plain text, cut at 20,000 characters. */
export function adfToText(doc: AdfNode | string | null | undefined): string {
  if (doc == null) return '';
  if (typeof doc === 'string') return doc;
  const text = adfNode(doc)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (truncated)` : text;
}
