/**
 * @module plugins/google-docs/src/write
 * Writing: create a document, append at the end, insert at an index, replace every occurrence.
 * Edits that depend on indexes read the document first and send its revisionId as
 * writeControl.requiredRevisionId, so Google refuses the write (400) instead of applying it at
 * shifted positions when someone edited meanwhile; an index is checked before anything is sent.
 */
import { changes, defineTool, z, type PluginContext } from 'workbench/plugin-sdk';
import { api, batchUpdate, checkRevision, docRef, docUrl, newRevision, readDocument, type DocRef } from './api.js';
import { continueList, documentId, requiredRevisionId, revisionId, style, tabId, tabIds } from './args.js';
import {
  bodyContent,
  bodyEnd,
  holds,
  pickTab,
  startOf,
  type Document,
  type PickedTab,
  type StructuralElement,
} from './document.js';
import { HEADING_LEVEL } from './render.js';

/**
 * The text as Google will store it: CR LF and CR become LF, and the characters Google strips
 * from inserted text (U+0000–U+0008, U+000C–U+001F, the private use area U+E000–U+F8FF) are
 * removed here, so that the index range computed from its length is the range written.
 */
function cleanText(value: string, name: string): string {
  const s = value
    .toWellFormed()
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000c-\u001f\ue000-\uf8ff]/g, '');
  if (!s) throw new Error(`${name} holds nothing Google Docs keeps (only control characters).`);
  return s;
}

const rows = (el: StructuralElement) => (Array.isArray(el.table?.tableRows) ? el.table.tableRows : []);
const cells = (row: ReturnType<typeof rows>[number]) => (Array.isArray(row.tableCells) ? row.tableCells : []);
const cellContent = (cell: ReturnType<typeof cells>[number]) => (Array.isArray(cell.content) ? cell.content : []);

/** The paragraph (in the body or a table cell) that holds `index`, a description of what is there instead, or null. */
function locate(
  content: StructuralElement[],
  index: number,
): { paragraph: StructuralElement } | { what: string } | null {
  const el = content.find((e) => holds(e, index));
  if (!el) return null;
  if (el.paragraph) return { paragraph: el };
  if (el.sectionBreak) return { what: 'a section break' };
  if (el.tableOfContents) return { what: 'a table of contents (Google Docs regenerates it)' };
  if (!el.table) return { what: 'an element that holds no text' };
  if (index === startOf(el)) return { what: 'the start of a table' };
  const cell = rows(el)
    .flatMap(cells)
    .find((c) => holds(c, index));
  if (!cell) return { what: 'the boundary of a table row or cell' };
  return locate(cellContent(cell), index) || { what: 'the boundary of a table cell' };
}

/**
 * The last index before `index` where text can go: the end of the nearest paragraph (in the body
 * or a table cell) that ends at or before it, minus 1 (its newline). null when there is none.
 */
function lastIndexBefore(content: StructuralElement[], index: number): number | null {
  let best: number | null = null;
  const walk = (els: StructuralElement[]) => {
    for (const el of els) {
      if (startOf(el) >= index) return;
      if (el.paragraph && Number.isInteger(el.endIndex) && el.endIndex! <= index) best = el.endIndex! - 1;
      else if (el.table) for (const cell of rows(el).flatMap(cells)) walk(cellContent(cell));
    }
  };
  walk(content);
  return best;
}

/** The range of a request, in the tab written to. */
const range = (start: number, end: number, tab: PickedTab) => ({
  startIndex: start,
  endIndex: end,
  ...(tab.tabId ? { tabId: tab.tabId } : {}),
});

/** The updateParagraphStyle request that gives the paragraphs overlapping [start, end) a named style. */
const styleRequest = (start: number, end: number, style: string, tab: PickedTab) => ({
  updateParagraphStyle: {
    range: range(start, end, tab),
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
function unbulletRequest(
  prev: StructuralElement | null,
  start: number,
  end: number,
  keepList: boolean,
  tab: PickedTab,
) {
  if (keepList || !prev?.paragraph?.bullet || end <= start) return null;
  return { deleteParagraphBullets: { range: range(start, end, tab) } };
}

/** Reads the document and the tab an edit goes to, refusing an edit planned on an older revision. */
async function readForEdit(
  ctx: PluginContext,
  ref: DocRef,
  a: { tabId?: string | undefined; revisionId?: string | undefined },
  action: string,
) {
  const doc = await readDocument(ctx, ref.id, `read document ${ref.id} before ${action} it`);
  const tab = pickTab(doc, a.tabId ?? ref.tabId);
  checkRevision(doc, a.revisionId, ref.id);
  return { id: ref.id, doc, tab, content: bodyContent(tab.content) };
}

/** What an append or an insert answers. */
const written = (
  id: string,
  tab: PickedTab,
  start: number,
  stop: number,
  style: string | null,
  revision: string | null,
) => ({
  documentId: id,
  tabId: tab.tabId,
  insertedAt: { startIndex: start, endIndex: stop },
  style,
  revisionId: revision,
  url: docUrl(id, tab.tabs.length > 1 ? tab.tabId : null),
});

export const createDocument = defineTool({
  description:
    "Create (make, start) a new, blank Google Doc (a Google Docs document) with a title and, optionally, initial plain text (newlines start new paragraphs). It is created at the top of the user's My Drive. Returns its id, link and revisionId; then add headings and more text with docs_append_text. To move it into a folder use google-drive's drive_move_or_rename_file.",
  input: z.object({
    title: z.string().min(1).max(255).describe('Document title.'),
    text: z
      .string()
      .min(1)
      .max(200000)
      .optional()
      .describe('Initial plain text of the body; newlines start new paragraphs.'),
  }),
  annotations: changes('Create document'),
  handler: async (ctx, a) => {
    const text = a.text === undefined ? null : cleanText(a.text, 'text');
    const doc = await api.json<Document>(ctx, 'POST', '', {
      body: { title: a.title },
      action: `create the document "${a.title}"`,
    });
    const id = doc.documentId;
    if (!id)
      throw new Error(`Google Docs answered without a documentId while trying to create the document "${a.title}".`);
    const out = {
      documentId: id,
      title: doc.title ?? a.title,
      url: docUrl(id),
      revisionId: doc.revisionId ?? null,
      insertedChars: 0,
    };
    if (!text) return out;
    try {
      // a new document's body is a section break (0–1) and one empty paragraph (1–2)
      const data = await batchUpdate(
        ctx,
        id,
        [{ insertText: { text, location: { index: 1 } } }],
        null,
        `insert the text of the new document ${id}`,
      );
      return { ...out, revisionId: newRevision(data), insertedChars: text.length };
    } catch (err) {
      throw new Error(
        `The document "${out.title}" was created (${id}, ${out.url}) but its text was not inserted: ${(err as Error).message} Add it with docs_append_text.`,
      );
    }
  },
});

export const appendText = defineTool({
  description:
    'Append (add, write) text or a heading at the end (bottom) of a Google Docs document, as a new paragraph by default, optionally styled as a heading (HEADING_1 … HEADING_6), title or normal text; newlines in the text start new paragraphs. After a heading, appended text is made normal text unless `style` says otherwise. After a list item, the new paragraphs are not list items (a new paragraph would copy the bullet) unless `continueList` is true. Reads the document first and refuses the write if it changed meanwhile (or since `revisionId`). Returns the index range written and the new revisionId. Use docs_insert_text to write elsewhere than the end and docs_replace_text to change existing text.',
  input: z.object({
    documentId,
    text: z.string().min(1).max(200000).describe('The text to add; newlines start new paragraphs.'),
    style: style('Paragraph style of the added paragraphs, e.g. HEADING_2 to add a section heading.'),
    newParagraph: z
      .boolean()
      .default(true)
      .describe('Start the text in a new paragraph (default); false continues the last paragraph.'),
    continueList,
    tabId,
    revisionId,
  }),
  annotations: changes('Append text'),
  handler: async (ctx, a) => {
    const ref = docRef(a.documentId);
    const text = cleanText(a.text, 'text');
    const { id, doc, tab, content } = await readForEdit(ctx, ref, a, 'appending to');
    const last = content[content.length - 1];
    const end = bodyEnd(content);
    const lastParagraph = last?.paragraph ? last : null;
    const lastEmpty = !!lastParagraph && end - startOf(lastParagraph) <= 1;
    const lastStyle = lastParagraph?.paragraph?.paragraphStyle?.namedStyleType;
    // text inserted at the end goes just before the body's final newline (end - 1)
    const at = end - 1;
    const opening = a.newParagraph && !lastEmpty;
    const inserted = opening ? `\n${text}` : text;
    const start = opening ? at + 1 : at;
    const stop = at + inserted.length;
    // a new paragraph copies the style of the one before it: after a heading, body text stays body text
    const style = a.style || (a.newParagraph && Object.hasOwn(HEADING_LEVEL, lastStyle || '') ? 'NORMAL_TEXT' : null);
    const requests: unknown[] = [
      { insertText: { text: inserted, endOfSegmentLocation: tab.tabId ? { tabId: tab.tabId } : {} } },
    ];
    const unbullet = opening ? unbulletRequest(lastParagraph, start, stop, a.continueList, tab) : null;
    if (unbullet) requests.push(unbullet);
    if (style) requests.push(styleRequest(start, stop, style, tab));
    const data = await batchUpdate(ctx, id, requests, doc.revisionId || null, `append text to document ${id}`);
    return written(id, tab, start, stop, style, newRevision(data));
  },
});

export const insertText = defineTool({
  description:
    "Insert text at a position (index) in a Google Docs document: at a heading's startIndex from docs_get_outline to put it before that heading, at a sectionEndIndex to add to the end of a section, or inside a paragraph. End the text with a newline to make it a paragraph of its own; new paragraphs copy the style of the paragraph they are inserted into, so give `style` (e.g. NORMAL_TEXT before a heading). The index is checked against the document before writing: inside a paragraph, or the body's end (the last section's sectionEndIndex, the outline's endIndex), where the text becomes a new last paragraph (not a list item after a list unless `continueList` is true), and the write is refused if the document changed since `revisionId` (required). Every write moves the indexes after the point it wrote: before another insert, read docs_get_outline again for fresh indexes and its revisionId (or, if you shift the index yourself by the text written, pass the revisionId the write returned). Use docs_append_text for the end of the document.",
  input: z.object({
    documentId,
    index: z
      .int()
      .min(1)
      .max(100000000)
      .describe(
        'Where the text goes: an index in UTF-16 code units from docs_get_outline (1 is the start of the body).',
      ),
    text: z.string().min(1).max(200000).describe('The text to insert; newlines start new paragraphs.'),
    style: style('Paragraph style for the paragraphs the inserted text ends up in.'),
    continueList,
    tabId,
    revisionId: requiredRevisionId,
  }),
  annotations: changes('Insert text at index'),
  handler: async (ctx, a) => {
    const ref = docRef(a.documentId);
    const text = cleanText(a.text, 'text');
    const { id, tab, content } = await readForEdit(ctx, ref, a, 'inserting into');
    const end = bodyEnd(content);
    const index = a.index;
    if (index > end) {
      throw new Error(
        `index ${index} is past the end of the body (it ends at ${end}; ${end}, the last section's sectionEndIndex, adds text after the last paragraph): use docs_append_text to add at the end.`,
      );
    }
    let inserted = text;
    let at = index;
    let start = index;
    let after: StructuralElement | null = null;
    if (index === end) {
      // the end of the body (the last section's sectionEndIndex): nothing can be written after the
      // body's final newline, so, as an append does, the text goes just before it (end - 1) as a
      // paragraph of its own: "\n" + the text without its trailing newline
      const last = content[content.length - 1];
      if (!last?.paragraph)
        throw new Error(
          `index ${index} is the end of the body, which does not end with a paragraph: use docs_append_text to add at the end.`,
        );
      inserted = `\n${text.replace(/\n$/, '')}`;
      at = end - 1;
      start = end;
      after = last;
    } else {
      const where = locate(content, index) || { what: 'outside every element of the body' };
      if ('what' in where) {
        const before = lastIndexBefore(content, index);
        const hint = before !== null ? `, e.g. at ${before}, the end of the paragraph before it` : '';
        throw new Error(
          `index ${index} is not inside a paragraph (it is ${where.what}); text can only go inside a paragraph${hint}. docs_get_outline gives the indexes of headings.`,
        );
      }
    }
    const stop = at + inserted.length;
    const styled = a.style && stop > start ? a.style : null;
    const requests: unknown[] = [
      { insertText: { text: inserted, location: { index: at, ...(tab.tabId ? { tabId: tab.tabId } : {}) } } },
    ];
    const unbullet = unbulletRequest(after, start, stop, a.continueList, tab);
    if (unbullet) requests.push(unbullet);
    if (styled) requests.push(styleRequest(start, stop, styled, tab));
    // the revision the index was read at guards the write: if anything (this agent's own earlier
    // write included) changed the document since, Google refuses instead of writing at a moved index
    const data = await batchUpdate(ctx, id, requests, a.revisionId, `insert text at index ${index} of document ${id}`);
    return written(id, tab, start, stop, styled, newRevision(data));
  },
});

export const replaceText = defineTool({
  description:
    'Replace (find and replace, change, substitute) every occurrence of a text in a Google Docs document with another text, e.g. fill a {{placeholder}} or rename a product everywhere; an empty replaceWith deletes the occurrences. Case-sensitive unless matchCase is false; all tabs unless tabIds are given. Returns occurrencesChanged (0 when nothing matched). Pass revisionId to refuse the change if the document changed since you read it.',
  input: z.object({
    documentId,
    find: z.string().min(1).max(10000).describe('The text to find (exact text, not a pattern).'),
    replaceWith: z.string().max(200000).describe('The replacement text ("" deletes the occurrences).'),
    matchCase: z.boolean().default(true).describe('Match upper and lower case exactly (default); false ignores case.'),
    tabIds,
    revisionId,
  }),
  annotations: changes('Replace all text', { destructive: true }),
  handler: async (ctx, a) => {
    const ref = docRef(a.documentId);
    const find = a.find.toWellFormed();
    // a pasted link's ?tab= does not narrow a replacement (Docs adds ?tab=t.0 to most links): only tabIds does
    const tabs = a.tabIds ? [...new Set(a.tabIds)] : null;
    const request = {
      replaceAllText: {
        containsText: { text: find, matchCase: a.matchCase },
        replaceText: a.replaceWith.toWellFormed(),
        ...(tabs ? { tabsCriteria: { tabIds: tabs } } : {}),
      },
    };
    const shown = find.length > 60 ? `${find.slice(0, 60)}…` : find;
    const data = await batchUpdate(
      ctx,
      ref.id,
      [request],
      a.revisionId || null,
      `replace "${shown}" in document ${ref.id}`,
    );
    const changed = data.replies?.[0]?.replaceAllText?.occurrencesChanged || 0;
    const out = { documentId: ref.id, occurrencesChanged: changed, revisionId: newRevision(data) };
    if (changed > 0) return out;
    const where = tabs ? ` in tab${tabs.length > 1 ? 's' : ''} ${tabs.join(', ')}` : '';
    return {
      ...out,
      note: `No occurrence of "${shown}" was found${a.matchCase ? ' (case-sensitive; matchCase false ignores case)' : ''}${where}: nothing changed.`,
    };
  },
});
