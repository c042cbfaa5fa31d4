/**
 * @module plugins/google-drive/src/search
 * drive_search_files and the search expression it sends (files.list `q`): each filter one clause,
 * every value a string literal of Drive's query language, so no value can add a clause of its own.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { ALL_DRIVES, api, fileIdOf, FOLDER, GDOC, GSHEET, GSLIDES } from './api.js';
import { slimFile, type DriveFile } from './shape.js';

const LIST_FIELDS =
  'nextPageToken,incompleteSearch,files(id,name,mimeType,modifiedTime,size,parents,driveId,webViewLink,trashed,owners(displayName,emailAddress))';

/** A string literal of Drive's query language: single quotes, with \ and ' escaped by a backslash. */
const literal = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const KIND_MIME = new Map([
  ['folder', FOLDER],
  ['document', GDOC],
  ['spreadsheet', GSHEET],
  ['presentation', GSLIDES],
  ['form', 'application/vnd.google-apps.form'],
  ['pdf', 'application/pdf'],
]);
const KIND_PREFIX = new Map([
  ['image', 'image/'],
  ['video', 'video/'],
  ['audio', 'audio/'],
]);

function mimeClause(mime: string): string {
  const m = mime.trim();
  const key = m.toLowerCase();
  const exact = KIND_MIME.get(key);
  if (exact) return `mimeType = ${literal(exact)}`;
  const prefix = KIND_PREFIX.get(key);
  if (prefix) return `mimeType contains ${literal(prefix)}`;
  if (m.includes('/')) return `mimeType = ${literal(m)}`;
  throw new Error(
    `mimeType "${m}" is neither a MIME type (type/subtype) nor one of ${[...KIND_MIME.keys(), ...KIND_PREFIX.keys()].join(', ')}.`,
  );
}

/** RFC 3339 as Drive compares it: a bare date means its midnight (UTC), a time without seconds gets :00. */
function timeValue(s: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return `${s}T00:00:00`;
  return s.replace(/^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(?=Z|[+-]\d{2}:\d{2}|$)/, '$1:00');
}

const input = z.object({
  nameContains: z.string().min(1).max(500).optional().describe('Words the file name contains (prefix match per word).'),
  fullText: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe("Words in the file's content, name or description; wrap a phrase in double quotes for an exact match."),
  mimeType: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      'A MIME type such as application/pdf, or one of folder, document, spreadsheet, presentation, form, pdf, image, video, audio.',
    ),
  folderId: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('Only files directly in this folder (its id or link; "root" is My Drive\'s top level).'),
  modifiedAfter: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/)
    .optional()
    .describe(
      'Only files modified after this date or time, e.g. 2025-01-31 or 2025-01-31T09:00:00Z (UTC when no zone is given).',
    ),
  includeTrashed: z.boolean().default(false).describe('Also return files in the trash.'),
  q: z
    .string()
    .min(1)
    .max(2000)
    .optional()
    .describe(
      'A raw Drive query expression (Drive query language), ANDed with the other filters, e.g. "starred = true" or "\'me\' in owners".',
    ),
  driveId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,200}$/)
    .optional()
    .describe('Search only this shared drive.'),
  orderBy: z
    .enum([
      'modifiedTime desc',
      'modifiedTime',
      'name',
      'name desc',
      'createdTime desc',
      'viewedByMeTime desc',
      'folder,name',
    ])
    .optional()
    .describe('Sort order (default newest modified first; not allowed with fullText).'),
  pageSize: z.int().min(1).max(100).default(25).describe('Files per page.'),
  cursor: z.string().min(1).max(2000).optional().describe('The `next` value of the previous page.'),
});

/** The files.list `q` for the filters given. */
function buildQuery(a: z.output<typeof input>): string {
  const clauses: string[] = [];
  if (a.q) clauses.push(`(${a.q})`);
  if (a.nameContains) clauses.push(`name contains ${literal(a.nameContains)}`);
  if (a.fullText) clauses.push(`fullText contains ${literal(a.fullText)}`);
  if (a.mimeType) clauses.push(mimeClause(a.mimeType));
  if (a.folderId) clauses.push(`${literal(fileIdOf(a.folderId, 'folderId'))} in parents`);
  if (a.modifiedAfter) clauses.push(`modifiedTime > ${literal(timeValue(a.modifiedAfter))}`);
  if (!a.includeTrashed && !(a.q && /\btrashed\b/.test(a.q))) clauses.push('trashed = false');
  return clauses.join(' and ');
}

export const searchFiles = defineTool({
  description:
    'Search (find, list, look up) files and folders in the user\'s Google Drive and shared drives, and get one page of slim rows (id, name, MIME type, modified time, size, parents, owners, link). Combine any of: nameContains (words at the start of words in the name), fullText (words in the content or metadata), mimeType (a MIME type, or folder / document / spreadsheet / presentation / form / pdf / image / video / audio), folderId (only the direct children of that folder: list the files in a folder), modifiedAfter; trashed files are left out unless includeTrashed. An expert may pass a raw Drive query `q` (e.g. "starred = true"), combined with the rest by AND. Newest first unless fullText is used (relevance order). When `next` is not null, pass it as `cursor` for the following page. Use drive_read_file to read a file\'s text and drive_get_file for its full metadata.',
  input,
  annotations: reads('Search Drive files'),
  handler: async (ctx, a) => {
    if (a.orderBy && a.fullText)
      throw new Error('Drive cannot sort a fullText search (results come in relevance order): leave out orderBy.');
    const q = buildQuery(a);
    const fullText = !!a.fullText || (a.q && /\bfullText\b/.test(a.q));
    const query = {
      q,
      pageSize: a.pageSize,
      pageToken: a.cursor,
      orderBy: a.orderBy || (fullText ? undefined : 'modifiedTime desc'),
      fields: LIST_FIELDS,
      ...ALL_DRIVES,
      includeItemsFromAllDrives: 'true',
      corpora: a.driveId ? 'drive' : undefined,
      driveId: a.driveId,
    };
    const data = await api.json<{ files?: DriveFile[]; nextPageToken?: string; incompleteSearch?: boolean }>(
      ctx,
      'GET',
      '/files',
      { query, action: 'search files' },
    );
    const files = Array.isArray(data.files) ? data.files.map(slimFile) : [];
    return {
      query: q,
      files,
      count: files.length,
      next: data.nextPageToken || null,
      ...(data.incompleteSearch ? { incompleteSearch: true } : {}),
    };
  },
});
