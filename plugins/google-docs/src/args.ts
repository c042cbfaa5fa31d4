/**
 * @module plugins/google-docs/src/args
 * The arguments several tools share (the document, its tab, the revision an edit is planned on,
 * paragraph styles, lists).
 */
import { z } from 'workbench/plugin-sdk';

const TAB_ID = /^[A-Za-z0-9._-]{1,100}$/;

export const documentId = z
  .string()
  .min(1)
  .max(500)
  .describe(
    "The document's id, or its Google Docs link (https://docs.google.com/document/d/<id>/edit…; a ?tab=… in the link selects that tab).",
  );
export const tabId = z
  .string()
  .regex(TAB_ID)
  .optional()
  .describe('The tab to use (a tabId such as t.0 from `tabs`); default the first tab, or the tab of a pasted link.');
export const tabIds = z
  .array(z.string().regex(TAB_ID))
  .min(1)
  .max(50)
  .optional()
  .describe('Replace only in these tabs; omit for every tab.');

const revision = z
  .string()
  .min(1)
  .max(500)
  .regex(/^[^\s]+$/);
/** The revision an edit was planned on; `required` by an edit at an index. */
export const revisionId = revision
  .optional()
  .describe(
    'The revisionId of your last read (docs_get_outline or docs_get_document): the edit is refused, not applied, if the document changed since.',
  );
export const requiredRevisionId = revision.describe(
  "Required: the revisionId of the read the index comes from (docs_get_outline or docs_get_document), or the revisionId the previous write returned. It is sent as Google's required revision, so the edit is refused, not applied at a moved position, if the document changed since.",
);

export const STYLES = [
  'NORMAL_TEXT',
  'TITLE',
  'SUBTITLE',
  'HEADING_1',
  'HEADING_2',
  'HEADING_3',
  'HEADING_4',
  'HEADING_5',
  'HEADING_6',
] as const;
export const style = (description: string) => z.enum(STYLES).optional().describe(description);

export const continueList = z
  .boolean()
  .default(false)
  .describe(
    'After a list item, keep the new paragraphs in the list (true); by default they are made ordinary paragraphs, since a new paragraph would otherwise copy the bullet of the list item before it.',
  );
