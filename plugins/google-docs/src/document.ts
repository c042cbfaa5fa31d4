/**
 * @module plugins/google-docs/src/document
 * A Google Docs document as the API answers it (the parts the tools read), its tabs, and where its
 * body's elements start and end. Indexes are UTF-16 code units, as in JavaScript strings.
 */

/** What a paragraph element and its text style carry of suggestions and links. */
type Suggestible = { suggestedInsertionIds?: string[]; suggestedDeletionIds?: string[] };
export type Link = {
  url?: string;
  headingId?: string;
  heading?: { id?: string };
  bookmarkId?: string;
  bookmark?: { id?: string };
  tabId?: string;
};

export interface ParagraphElement {
  textRun?: Suggestible & { content?: string; textStyle?: { link?: Link } };
  person?: Suggestible & { personProperties?: { name?: string; email?: string } };
  richLink?: Suggestible & { richLinkProperties?: { title?: string; uri?: string } };
  dateElement?: Suggestible & { dateElementProperties?: { displayText?: unknown } };
  inlineObjectElement?: { inlineObjectId: string };
  footnoteReference?: { footnoteId: string; footnoteNumber?: string };
  horizontalRule?: object;
  equation?: object;
}

export interface Paragraph {
  elements?: ParagraphElement[];
  paragraphStyle?: { namedStyleType?: string; headingId?: string };
  bullet?: { listId: string; nestingLevel?: number };
}

export type TableCell = { startIndex?: number; endIndex?: number; content?: StructuralElement[] };
export type Table = { tableRows?: Array<{ tableCells?: TableCell[] }> };

export interface StructuralElement {
  startIndex?: number;
  endIndex?: number;
  paragraph?: Paragraph;
  table?: Table;
  tableOfContents?: object;
  sectionBreak?: object;
}

type List = { listProperties?: { nestingLevels?: Array<{ glyphType?: string; startNumber?: number }> } };
type InlineObject = { inlineObjectProperties?: { embeddedObject?: { description?: string; title?: string } } };

/** A tab's content, or (the older shape, without tabs) the document's own. */
export interface DocumentTab {
  body?: { content?: StructuralElement[] };
  lists?: Record<string, List>;
  footnotes?: Record<string, { content?: StructuralElement[] }>;
  inlineObjects?: Record<string, InlineObject>;
}

type TabProperties = { tabId?: string; title?: string; nestingLevel?: number; parentTabId?: string };
type Tab = { tabProperties?: TabProperties; documentTab?: DocumentTab; childTabs?: Tab[] };

export interface Document extends DocumentTab {
  documentId?: string;
  title?: string;
  revisionId?: string;
  tabs?: Tab[];
}

/** Every tab of the document, depth first. */
function allTabs(doc: Document): Tab[] {
  const walk = (tabs: unknown): Tab[] =>
    (Array.isArray(tabs) ? (tabs as Array<Tab | null>) : []).flatMap((t) =>
      t && typeof t === 'object' ? [t, ...walk(t.childTabs)] : [],
    );
  return walk(doc.tabs);
}

const slimTab = (p: TabProperties) => ({
  tabId: p.tabId ?? null,
  title: p.title ?? null,
  level: p.nestingLevel ?? 0,
  ...(p.parentTabId ? { parentTabId: p.parentTabId } : {}),
});

/** The tab a tool works on: its content, id and title, and all the tabs of the document. */
export interface PickedTab {
  content: DocumentTab;
  tabId: string | null;
  title: string | null;
  tabs: Array<ReturnType<typeof slimTab>>;
}

/**
 * The tab to work on: `tabId`, or the first tab. A document answered without `tabs` (the older
 * shape) is one untitled tab whose content is the document's own.
 */
export function pickTab(doc: Document, tabId: string | undefined): PickedTab {
  const tabs = allTabs(doc);
  if (tabs.length === 0) {
    if (tabId) throw new Error(`The document has no tab "${tabId}": it has a single tab; leave tabId out.`);
    return { content: doc, tabId: null, title: null, tabs: [] };
  }
  const props = (t: Tab) => t.tabProperties || {};
  const found = tabId ? tabs.find((t) => props(t).tabId === tabId) : tabs[0];
  if (!found) {
    const names = tabs
      .slice(0, 20)
      .map((t) => `${props(t).tabId} "${props(t).title ?? ''}"`)
      .join(', ');
    throw new Error(`The document has no tab "${tabId}"; its tabs are: ${names}.`);
  }
  return {
    content: found.documentTab || {},
    tabId: props(found).tabId ?? null,
    title: props(found).title ?? null,
    tabs: tabs.map((t) => slimTab(props(t))),
  };
}

export const bodyContent = (dt: DocumentTab): StructuralElement[] =>
  Array.isArray(dt.body?.content) ? dt.body.content : [];
export const startOf = (el: { startIndex?: number }): number => (Number.isInteger(el.startIndex) ? el.startIndex! : 0);
/** Whether `index` is inside the element (an element without an end holds nothing). */
export const holds = (el: { startIndex?: number; endIndex?: number }, index: number): boolean =>
  startOf(el) <= index && index < (el.endIndex ?? -1);

/** The end (exclusive) of the body: its last element's endIndex. */
export function bodyEnd(content: StructuralElement[]): number {
  const last = content[content.length - 1];
  return last && Number.isInteger(last.endIndex) ? last.endIndex! : 1;
}
