/**
 * @module plugins/google-slides/src/text
 * A presentation as slim text: per slide, its title (the title placeholder's text), the text of its
 * other shapes, tables as rows of cells, a mark for each image or video, and its speaker notes.
 */

type TextContent = { textElements?: Array<{ textRun?: { content?: string }; autoText?: { content?: string } }> };
type Shape = { placeholder?: { type?: string }; text?: TextContent };
type TableCell = { text?: TextContent };
export type PageElement = {
  objectId?: string;
  shape?: Shape;
  table?: { tableRows?: Array<{ tableCells?: TableCell[] }> };
  image?: unknown;
  video?: unknown;
  sheetsChart?: unknown;
  elementGroup?: { children?: PageElement[] };
};
export type Slide = {
  objectId?: string;
  pageElements?: PageElement[];
  slideProperties?: {
    notesPage?: { notesProperties?: { speakerNotesObjectId?: string }; pageElements?: PageElement[] };
  };
};
export type Presentation = {
  presentationId?: string;
  title?: string;
  revisionId?: string;
  locale?: string;
  slides?: Slide[];
};

/** The fields a read asks for: the text-bearing parts only (masters and layouts are left out). */
export const READ_FIELDS =
  'presentationId,title,revisionId,locale,slides(objectId,pageElements(objectId,shape(placeholder(type),text(textElements(textRun(content),autoText(content)))),' +
  'table(tableRows(tableCells(text(textElements(textRun(content)))))),image(contentUrl),video(id),sheetsChart(chartId),elementGroup),' +
  'slideProperties(notesPage(notesProperties(speakerNotesObjectId),pageElements(objectId,shape(text(textElements(textRun(content))))))))';

const TITLES = new Set(['TITLE', 'CENTERED_TITLE']);

export function textOf(t: TextContent | undefined): string {
  return (t?.textElements ?? [])
    .map((e) => e.textRun?.content ?? e.autoText?.content ?? '')
    .join('')
    .replace(/\u000b/g, '\n')
    .replace(/\n+$/, '');
}

/** The lines of one page element (groups flattened, nesting bounded). */
function linesOf(el: PageElement, depth = 0): string[] {
  if (el.shape) {
    const t = textOf(el.shape.text);
    return t ? [t] : [];
  }
  if (el.table)
    return (el.table.tableRows ?? []).map(
      (row) =>
        `| ${(row.tableCells ?? []).map((c) => textOf(c.text).replace(/\n/g, ' ').replace(/\|/g, '\\|')).join(' | ')} |`,
    );
  if (el.image) return ['[image]'];
  if (el.video) return ['[video]'];
  if (el.sheetsChart) return ['[chart]'];
  if (el.elementGroup && depth < 10) return (el.elementGroup.children ?? []).flatMap((c) => linesOf(c, depth + 1));
  return [];
}

/** One slide as `{index, objectId, title, text, notes}`. */
export function slideText(slide: Slide, index: number) {
  const elements = slide.pageElements ?? [];
  const titleEl = elements.find((e) => TITLES.has(e.shape?.placeholder?.type ?? ''));
  const body = elements.filter((e) => e !== titleEl).flatMap((e) => linesOf(e));
  const notesPage = slide.slideProperties?.notesPage;
  const notesId = notesPage?.notesProperties?.speakerNotesObjectId;
  const notesEl = (notesPage?.pageElements ?? []).find((e) => e.objectId === notesId);
  return {
    index,
    objectId: slide.objectId ?? null,
    title: titleEl ? textOf(titleEl.shape?.text) || null : null,
    text: body.join('\n'),
    notes: notesEl ? textOf(notesEl.shape?.text) || null : null,
  };
}
