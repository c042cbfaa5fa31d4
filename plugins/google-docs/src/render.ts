/**
 * @module plugins/google-docs/src/render
 * A tab's structural elements as readable text that keeps the structure: headings as Markdown #,
 * lists as - and 1. (counted per list and level), tables as | rows |, links as [text](url),
 * people, smart chips and images in words, footnotes after the body, and suggested edits not yet
 * accepted marked {+inserted+} and {-deleted-}.
 */
import {
  bodyContent,
  type DocumentTab,
  type Link,
  type Paragraph,
  type ParagraphElement,
  type StructuralElement,
  type Table,
} from './document.js';

export const HEADING_LEVEL: Record<string, number> = {
  TITLE: 0,
  SUBTITLE: 0,
  HEADING_1: 1,
  HEADING_2: 2,
  HEADING_3: 3,
  HEADING_4: 4,
  HEADING_5: 5,
  HEADING_6: 6,
};
const HEADING_MARK: Record<string, string> = {
  TITLE: '#',
  SUBTITLE: '##',
  HEADING_1: '#',
  HEADING_2: '##',
  HEADING_3: '###',
  HEADING_4: '####',
  HEADING_5: '#####',
  HEADING_6: '######',
};
const ORDERED_GLYPHS = new Set(['DECIMAL', 'ZERO_DECIMAL', 'UPPER_ALPHA', 'ALPHA', 'UPPER_ROMAN', 'ROMAN']);
/** Tables nested deeper than this read as [nested table]: each level escapes the | of the levels inside it again. */
const MAX_TABLE_DEPTH = 20;

/** What rendering one tab keeps track of: its lists and images, list counters, footnotes met, table depth. */
interface Render {
  lists: NonNullable<DocumentTab['lists']>;
  inlineObjects: NonNullable<DocumentTab['inlineObjects']>;
  counters: Map<string, number[]>;
  notes: Array<{ id: string; n: string }>;
  tableDepth: number;
}

type Block = { text: string; list: boolean };

/** The link of a text style as a Markdown target: an external URL, or a heading / bookmark / tab in the document. */
function linkOf(l: Link | undefined): string | null {
  if (!l || typeof l !== 'object') return null;
  if (typeof l.url === 'string' && l.url) return l.url;
  const heading = l.headingId || l.heading?.id;
  if (heading) return `#heading=${heading}`;
  const bookmark = l.bookmarkId || l.bookmark?.id;
  if (bookmark) return `#bookmark=${bookmark}`;
  return l.tabId ? `#tab=${l.tabId}` : null;
}

/**
 * An element's text, marked when it is a suggestion not yet accepted: {+…+} for a suggested
 * insertion, {-…-} for a suggested deletion (in the default, inline view both are in the text,
 * so "May" deleted and "June" suggested would otherwise read "MayJune"). A trailing paragraph
 * end stays outside the mark.
 */
function suggested(el: { suggestedInsertionIds?: unknown; suggestedDeletionIds?: unknown }, text: string): string {
  const del = Array.isArray(el.suggestedDeletionIds) && el.suggestedDeletionIds.length > 0;
  const ins = Array.isArray(el.suggestedInsertionIds) && el.suggestedInsertionIds.length > 0;
  if (!del && !ins) return text;
  const [, core, tail] = /^([\s\S]*?)(\n*)$/.exec(text)!;
  if (!core) return text;
  return del ? `{-${core}-}${tail}` : `{+${core}+}${tail}`;
}

/** A date chip as the document shows it (dateElementProperties.displayText, output only). */
function dateText(date: ParagraphElement['dateElement']): string {
  const shown = date?.dateElementProperties?.displayText;
  return typeof shown === 'string' ? shown : '';
}

/** One paragraph's inline text: runs (links as [text](url)), people, smart chips (dates as shown), images, footnote marks. */
function inlineText(paragraph: Paragraph, r: Render): string {
  const segs: Array<{ text: string; link: string | null }> = [];
  const push = (text: string, link: string | null = null) => {
    const prev = segs[segs.length - 1];
    if (prev && prev.link === link) prev.text += text;
    else segs.push({ text, link });
  };
  for (const el of Array.isArray(paragraph.elements) ? paragraph.elements : []) {
    if (el.textRun)
      push(
        suggested(el.textRun, String(el.textRun.content || '').replace(/\uE907/g, '')),
        linkOf(el.textRun.textStyle?.link),
      );
    else if (el.person) {
      const p = el.person.personProperties || {};
      push(suggested(el.person, p.name && p.email ? `${p.name} (${p.email})` : p.name || p.email || ''));
    } else if (el.richLink) {
      const p = el.richLink.richLinkProperties || {};
      push(suggested(el.richLink, p.title || p.uri || ''), p.uri || null);
    } else if (el.dateElement) push(suggested(el.dateElement, dateText(el.dateElement)));
    else if (el.inlineObjectElement) {
      const emb = r.inlineObjects[el.inlineObjectElement.inlineObjectId]?.inlineObjectProperties?.embeddedObject;
      const alt = emb && (emb.description || emb.title);
      push(alt ? `[image: ${alt}]` : '[image]');
    } else if (el.footnoteReference) {
      const n = el.footnoteReference.footnoteNumber || String(r.notes.length + 1);
      r.notes.push({ id: el.footnoteReference.footnoteId, n });
      push(`[^${n}]`);
    } else if (el.horizontalRule) push('---');
    else if (el.equation) push('[equation]');
  }
  const last = segs[segs.length - 1];
  if (last) last.text = last.text.replace(/\n$/, '');
  // a vertical tab is a line break inside the paragraph (Shift+Enter)
  return segs
    .map((s) => (s.link && s.text.trim() ? `[${s.text}](${s.link})` : s.text))
    .join('')
    .replace(/\u000b/g, '\n');
}

/** A list item's marker: "-" for bullets, "1." (counted per list and level) for numbered lists. */
function listMarker(bullet: NonNullable<Paragraph['bullet']>, r: Render): string {
  const level = Number.isInteger(bullet.nestingLevel) ? bullet.nestingLevel! : 0;
  const levels = r.lists[bullet.listId]?.listProperties?.nestingLevels;
  const spec = (Array.isArray(levels) ? levels[level] : undefined) || {};
  const indent = '  '.repeat(level);
  if (!ORDERED_GLYPHS.has(spec.glyphType ?? '')) return `${indent}- `;
  const counts = r.counters.get(bullet.listId) || [];
  counts[level] = counts[level]
    ? counts[level] + 1
    : Number.isInteger(spec.startNumber) && spec.startNumber! > 0
      ? spec.startNumber!
      : 1;
  counts.length = level + 1; // deeper levels start again
  r.counters.set(bullet.listId, counts);
  return `${indent}${counts[level]}. `;
}

/** Structural elements as blocks; empty paragraphs are dropped. */
function renderContent(content: StructuralElement[] | undefined, r: Render): Block[] {
  const blocks: Block[] = [];
  for (const el of Array.isArray(content) ? content : []) {
    if (el.paragraph) {
      const p = el.paragraph;
      const text = inlineText(p, r);
      if (!text.trim()) continue;
      const mark = HEADING_MARK[p.paragraphStyle?.namedStyleType ?? ''];
      if (p.bullet) blocks.push({ text: listMarker(p.bullet, r) + text, list: true });
      else blocks.push({ text: mark ? `${mark} ${text.replace(/\n/g, ' ')}` : text, list: false });
    } else if (el.table) {
      const text = renderTable(el.table, r);
      if (text) blocks.push({ text, list: false });
    } else if (el.tableOfContents) blocks.push({ text: '[Table of contents]', list: false });
    // a section break holds no text
  }
  return blocks;
}

const joinBlocks = (blocks: Block[]): string =>
  blocks.map((b, i) => (i === 0 ? '' : b.list && blocks[i - 1].list ? '\n' : '\n\n') + b.text).join('');

/** A table as Markdown rows: | a | b |, the first row followed by | --- |; a cell's paragraphs joined by <br>. */
function renderTable(table: Table, r: Render): string {
  if (r.tableDepth >= MAX_TABLE_DEPTH) return '[nested table]';
  r.tableDepth += 1;
  let rows: string[][];
  try {
    rows = (Array.isArray(table.tableRows) ? table.tableRows : []).map((row) =>
      (Array.isArray(row.tableCells) ? row.tableCells : []).map((cell) =>
        renderContent(cell.content, r)
          .map((b) => b.text)
          .join('<br>')
          .replace(/\n/g, '<br>')
          .replace(/\|/g, '\\|'),
      ),
    );
  } finally {
    r.tableDepth -= 1;
  }
  const width = Math.max(0, ...rows.map((row) => row.length));
  if (width === 0) return '';
  const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
  return [line(rows[0]), line(Array<string>(width).fill('---')), ...rows.slice(1).map(line)].join('\n');
}

/** The text of a tab's body, with its footnotes after it. */
export function renderTab(dt: DocumentTab): string {
  const r: Render = {
    lists: dt.lists || {},
    inlineObjects: dt.inlineObjects || {},
    counters: new Map(),
    notes: [],
    tableDepth: 0,
  };
  const text = joinBlocks(renderContent(bodyContent(dt), r));
  const footnotes = dt.footnotes || {};
  const seen = new Set<string>();
  const lines: string[] = [];
  // footnotes met inside footnotes are added to r.notes while this runs, and read too
  for (let i = 0; i < r.notes.length; i++) {
    const { id, n } = r.notes[i];
    if (seen.has(id) || !Object.hasOwn(footnotes, id)) continue;
    seen.add(id);
    lines.push(
      `[^${n}]: ${renderContent(footnotes[id].content, r)
        .map((b) => b.text)
        .join(' ')
        .trim()}`,
    );
  }
  return lines.length ? `${text}\n\n${lines.join('\n')}` : text;
}

/** The plain text of a paragraph (for headings in the outline), suggestions marked as in docs_get_document. */
export function plainText(paragraph: Paragraph): string {
  let s = '';
  for (const el of Array.isArray(paragraph.elements) ? paragraph.elements : []) {
    if (el.textRun) s += suggested(el.textRun, String(el.textRun.content || ''));
    else if (el.person)
      s += suggested(el.person, el.person.personProperties?.name || el.person.personProperties?.email || '');
    else if (el.richLink) s += suggested(el.richLink, el.richLink.richLinkProperties?.title || '');
    else if (el.dateElement) s += suggested(el.dateElement, dateText(el.dateElement));
  }
  return s
    .replace(/\uE907/g, '')
    .replace(/[\n\u000b]+/g, ' ')
    .trim();
}
