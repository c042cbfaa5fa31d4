/**
 * @module plugins/google-docs/plugin
 * Google Docs API v1 tools acting as the connected Google user: read a document as structured
 * text or as an outline of headings with their indexes, create one, append, insert at an index
 * (guarded by the revision the index was read at), replace every occurrence. The tool table only:
 * handlers are in src/.
 */
import { definePlugin, googleOAuth } from 'workbench/plugin-sdk';
import { getDocument, getOutline } from './src/read.js';
import { appendText, createDocument, insertText, replaceText } from './src/write.js';

export default definePlugin({
  name: 'google-docs',
  version: '1.0.0',
  displayName: 'Google Docs',
  description:
    "Read and write Google Docs documents: read a document as text with its structure (headings, lists, tables, links, tabs), get its outline with the index of each heading, create documents, append text or headings at the end, insert text at an index, and replace every occurrence of a text. Acts as the connected Google user; finding a document by name is google-drive's drive_search_files.",
  auth: googleOAuth(['https://www.googleapis.com/auth/documents'], ['docs.googleapis.com']),
  egress: ['docs.googleapis.com'],
  tools: {
    docs_get_document: getDocument,
    docs_get_outline: getOutline,
    docs_create_document: createDocument,
    docs_append_text: appendText,
    docs_insert_text: insertText,
    docs_replace_text: replaceText,
  },
});
