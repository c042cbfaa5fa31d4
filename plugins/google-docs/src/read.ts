/**
 * @module plugins/google-docs/src/read
 * Reading a document: its text with the structure kept, a window of characters at a time, one tab
 * at a time; and its outline, the headings with the indexes an edit needs.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { docRef, docUrl, readDocument } from './api.js';
import { documentId, tabId } from './args.js';
import { bodyContent, bodyEnd, pickTab, startOf, type Document, type PickedTab } from './document.js';
import { HEADING_LEVEL, plainText, renderTab } from './render.js';

/** characters of text one docs_get_document call returns at most */
const MAX_CHARS = 50000;

/** What both reads start with: the document, its revision, its link and the tab read. */
function about(doc: Document, id: string, tab: PickedTab) {
  const documentId = doc.documentId || id;
  const url = docUrl(documentId, tab.tabs.length > 1 ? tab.tabId : null);
  return {
    documentId,
    title: doc.title ?? null,
    revisionId: doc.revisionId ?? null,
    url,
    tab: tab.tabId ? { tabId: tab.tabId, title: tab.title } : null,
    tabs: tab.tabs,
  };
}

export const getDocument = defineTool({
  description:
    "Read (open, view, get the text of) a Google Doc (a Google Docs document) as readable text that keeps its structure: headings as Markdown #, paragraphs, bulleted and numbered lists as - and 1., tables as | rows |, links as [text](url), footnotes; suggested edits not yet accepted show as {+inserted text+} and {-deleted text-} (suggestionsViewMode PREVIEW_SUGGESTIONS_ACCEPTED or PREVIEW_WITHOUT_SUGGESTIONS shows the text without them). Returns the title, revisionId (needed to guard edits; present when you may edit), the tab read and the document's tabs, and up to maxChars characters (50,000 at most); when `nextOffset` is not null, call again with `offset` set to it for the rest. A document with several tabs is read one tab at a time (tabId). Use docs_get_outline for the heading indexes an edit needs; to find a document by name use google-drive's drive_search_files.",
  input: z.object({
    documentId,
    tabId,
    offset: z
      .int()
      .min(0)
      .max(100000000)
      .default(0)
      .describe('Character at which to start (the `nextOffset` of the previous call).'),
    maxChars: z.int().min(100).max(MAX_CHARS).default(MAX_CHARS).describe('Characters to return at most.'),
    suggestionsViewMode: z
      .enum([
        'DEFAULT_FOR_CURRENT_ACCESS',
        'SUGGESTIONS_INLINE',
        'PREVIEW_SUGGESTIONS_ACCEPTED',
        'PREVIEW_WITHOUT_SUGGESTIONS',
      ])
      .optional()
      .describe(
        "How suggested edits show: Google's default (inline for editors), inline, as if all accepted, or as if all rejected.",
      ),
  }),
  annotations: reads('Read document'),
  handler: async (ctx, a) => {
    const ref = docRef(a.documentId);
    const doc = await readDocument(ctx, ref.id, `read document ${ref.id}`, a.suggestionsViewMode);
    const tab = pickTab(doc, a.tabId ?? ref.tabId);
    const text = renderTab(tab.content);
    const start = Math.min(a.offset, text.length);
    let end = Math.min(start + a.maxChars, text.length);
    // never cut between the two halves of a surrogate pair
    if (end < text.length && end > start && /[\ud800-\udbff]/.test(text[end - 1])) end -= 1;
    const more = end < text.length;
    const notes = [
      ...(more ? [`Cut at ${end} of ${text.length} characters: call again with offset ${end} for the rest.`] : []),
      ...(tab.tabs.length > 1
        ? [
            `The document has ${tab.tabs.length} tabs and this is "${tab.title ?? ''}" (${tab.tabId}): pass tabId to read another.`,
          ]
        : []),
    ];
    const out = {
      ...about(doc, ref.id, tab),
      totalChars: text.length,
      offset: start,
      content: text.slice(start, end),
      nextOffset: more ? end : null,
    };
    return notes.length ? { ...out, note: notes.join(' ') } : out;
  },
});

export const getOutline = defineTool({
  description:
    "Get the outline (structure, table of contents, section headings) of a Google Docs document: every title, subtitle and heading with its level, text, start and end index and the index where its section ends, plus the body's end index and the document's revisionId. Indexes count suggested edits, as writes do; suggested text in a heading is marked {+inserted+} or {-deleted-}. Use it before docs_insert_text to choose where text goes (e.g. at a heading's startIndex to insert before it, or at its sectionEndIndex to add to the end of its section), and pass its revisionId so the edit is refused if the document changes meanwhile.",
  input: z.object({ documentId, tabId }),
  annotations: reads('Get document outline (headings)'),
  handler: async (ctx, a) => {
    const ref = docRef(a.documentId);
    const doc = await readDocument(ctx, ref.id, `read the outline of document ${ref.id}`);
    const tab = pickTab(doc, a.tabId ?? ref.tabId);
    const content = bodyContent(tab.content);
    const end = bodyEnd(content);
    const headings = content.flatMap((el) => {
      const p = el.paragraph;
      const style = p?.paragraphStyle?.namedStyleType;
      if (!p || !style || !Object.hasOwn(HEADING_LEVEL, style)) return [];
      const headingId = p.paragraphStyle?.headingId;
      return [
        {
          style,
          level: HEADING_LEVEL[style],
          text: plainText(p),
          startIndex: startOf(el),
          endIndex: el.endIndex ?? null,
          sectionEndIndex: end,
          ...(headingId ? { headingId } : {}),
        },
      ];
    });
    // a section ends where the next heading of the same or a higher level (a smaller number)
    // starts: one pass, the headings whose sections are still open on a stack (levels increasing)
    const open: typeof headings = [];
    for (const h of headings) {
      while (open.length && open[open.length - 1].level >= h.level) open.pop()!.sectionEndIndex = h.startIndex;
      open.push(h);
    }
    return { ...about(doc, ref.id, tab), endIndex: end, headings, count: headings.length };
  },
});
