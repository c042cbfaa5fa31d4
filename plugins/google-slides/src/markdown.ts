/**
 * @module plugins/google-slides/src/markdown
 * Markdown → the Slides API requests that build a deck: a line of `---` separates slides; a
 * slide's first `#` heading is its title; other lines are its body, `-`/`*`/`+` and `1.` items
 * becoming bulleted and numbered paragraphs nested by their indent; `**bold**` and `[text](url)`
 * keep their style; lines after `Notes:` are the speaker notes. Each slide is created with a
 * predefined layout whose placeholders get ids of our own, so the text goes in within one batch.
 */

/** One paragraph of a slide's body. */
interface Paragraph {
  text: string;
  /** nesting of a list item (0 = top) */
  level: number;
  list: 'bullet' | 'number' | null;
  bold: Array<[number, number]>;
  links: Array<[number, number, string]>;
}

export interface MarkdownSlide {
  title: string | null;
  body: Paragraph[];
  notes: string | null;
}

const ITEM = /^(\s*)([-*+]|\d{1,3}[.)])\s+(.*)$/;
const HEADING = /^#{1,6}\s+(.*?)\s*#*\s*$/;

/** Inline markup out of a line: `**bold**`/`__bold__` and `[text](url)` kept as ranges, `` `code` `` unwrapped. */
export function inline(line: string): Pick<Paragraph, 'text' | 'bold' | 'links'> {
  let text = '';
  const bold: Array<[number, number]> = [];
  const links: Array<[number, number, string]> = [];
  const token = /\*\*(.+?)\*\*|__(.+?)__|\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)|`([^`]+)`/g;
  let at = 0;
  for (const m of line.matchAll(token)) {
    text += line.slice(at, m.index);
    const start = text.length;
    if (m[1] !== undefined || m[2] !== undefined) {
      text += m[1] ?? m[2];
      bold.push([start, text.length]);
    } else if (m[3] !== undefined) {
      text += m[3];
      links.push([start, text.length, m[4]]);
    } else text += m[5];
    at = (m.index ?? 0) + m[0].length;
  }
  return { text: text + line.slice(at), bold, links };
}

/** One slide's Markdown as its title, body paragraphs and notes. */
function parseSlide(chunk: string): MarkdownSlide {
  let title: string | null = null;
  const body: Paragraph[] = [];
  const notes: string[] = [];
  let inNotes = false;
  for (const raw of chunk.split('\n')) {
    const line = raw.replace(/\s+$/, '');
    if (inNotes) {
      notes.push(line);
      continue;
    }
    if (/^notes?:\s*/i.test(line.trim())) {
      inNotes = true;
      const rest = line.trim().replace(/^notes?:\s*/i, '');
      if (rest) notes.push(rest);
      continue;
    }
    if (!line.trim()) continue;
    const heading = HEADING.exec(line);
    if (heading && title === null && body.length === 0) {
      title = inline(heading[1]).text;
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      const indent = item[1].replace(/\t/g, '  ').length;
      const list = /\d/.test(item[2]) ? 'number' : 'bullet';
      body.push({ ...inline(item[3]), level: Math.min(Math.floor(indent / 2), 8), list });
    } else body.push({ ...inline(heading ? heading[1] : line.trim()), level: 0, list: null });
  }
  const noteText = notes.join('\n').trim();
  return { title, body, notes: noteText || null };
}

/** The slides of a deck: `---` lines separate them; empty ones are dropped. */
export function parseMarkdown(markdown: string): MarkdownSlide[] {
  return markdown
    .replace(/\r\n?/g, '\n')
    .split(/^\s*---+\s*$/m)
    .map(parseSlide)
    .filter((s) => s.title !== null || s.body.length > 0 || s.notes !== null);
}

type Request = Record<string, unknown>;
const range = (startIndex: number, endIndex: number) => ({ type: 'FIXED_RANGE', startIndex, endIndex });

/** The body's text (list items indented with tabs, which createParagraphBullets turns into nesting) and its style requests. */
function bodyRequests(objectId: string, body: Paragraph[]): Request[] {
  let text = '';
  const styles: Request[] = [];
  const lists: Array<{ start: number; end: number; list: 'bullet' | 'number'; last: number }> = [];
  body.forEach((p, i) => {
    const prefix = p.list ? '\t'.repeat(p.level) : '';
    const start = text.length;
    const at = start + prefix.length;
    text += prefix + p.text;
    const end = text.length;
    if (i < body.length - 1) text += '\n';
    for (const [a, b] of p.bold)
      styles.push({
        updateTextStyle: { objectId, textRange: range(at + a, at + b), style: { bold: true }, fields: 'bold' },
      });
    for (const [a, b, url] of p.links)
      styles.push({
        updateTextStyle: { objectId, textRange: range(at + a, at + b), style: { link: { url } }, fields: 'link' },
      });
    if (!p.list) return;
    // consecutive items of one kind are one list: one request, so numbering runs on
    const open = lists.at(-1);
    if (open && open.list === p.list && open.last === i - 1) Object.assign(open, { end, last: i });
    else lists.push({ start, end, list: p.list, last: i });
  });
  // bullets last and from the end: each removes the tabs it reads, which moves every index after it
  const bullets = lists.reverse().map((l) => ({
    createParagraphBullets: {
      objectId,
      textRange: range(l.start, l.end),
      bulletPreset: l.list === 'number' ? 'NUMBERED_DIGIT_ALPHA_ROMAN' : 'BULLET_DISC_CIRCLE_SQUARE',
    },
  }));
  return text ? [{ insertText: { objectId, insertionIndex: 0, text } }, ...styles, ...bullets] : [];
}

/** The layout a slide gets, and the placeholders its title and body go in. */
function layoutOf(s: MarkdownSlide, index: number): { layout: string; title: string; body: string | null } {
  const plain = s.body.every((p) => p.list === null) && s.body.length <= 2;
  if (index === 0 && s.title !== null && plain) return { layout: 'TITLE', title: 'CENTERED_TITLE', body: 'SUBTITLE' };
  if (s.body.length === 0) return { layout: 'SECTION_HEADER', title: 'TITLE', body: null };
  return { layout: 'TITLE_AND_BODY', title: 'TITLE', body: 'BODY' };
}

/** The object id of slide `i` (1-based, zero-padded: ids must be 5 to 50 characters). */
export const slideId = (i: number): string => `md_slide_${String(i + 1).padStart(3, '0')}`;

/** The requests that create every slide (after the deck's existing ones) with its text. */
export function deckRequests(slides: MarkdownSlide[]): Request[] {
  const requests: Request[] = [];
  const texts: Request[] = [];
  slides.forEach((s, i) => {
    const id = slideId(i);
    const { layout, title, body } = layoutOf(s, i);
    const mappings = [
      { layoutPlaceholder: { type: title, index: 0 }, objectId: `${id}_title` },
      ...(body ? [{ layoutPlaceholder: { type: body, index: 0 }, objectId: `${id}_body` }] : []),
    ];
    requests.push({
      createSlide: {
        objectId: id,
        insertionIndex: i,
        slideLayoutReference: { predefinedLayout: layout },
        placeholderIdMappings: mappings,
      },
    });
    if (s.title) texts.push({ insertText: { objectId: `${id}_title`, insertionIndex: 0, text: s.title } });
    if (body) texts.push(...bodyRequests(`${id}_body`, s.body));
  });
  return [...requests, ...texts];
}
