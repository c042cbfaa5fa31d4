/**
 * @module plugins/google-drive/src/read
 * One file's metadata, and its content as text: Google Docs, Sheets and Slides exported to a text
 * format, text files downloaded, anything else answered with a note instead of its bytes.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { ALL_DRIVES, api, fileId, fileIdOf, filePath, FOLDER, GDOC, GSHEET, GSLIDES } from './api.js';
import { num, person, slimFile, type DriveFile } from './shape.js';

/** a text file larger than this is not downloaded (the gateway's response cap is 8 MiB) */
const MAX_DOWNLOAD_BYTES = 5 * 1024 * 1024;

const DETAIL_FIELDS =
  'id,name,mimeType,description,size,createdTime,modifiedTime,parents,driveId,webViewLink,trashed,starred,shared,' +
  'owners(displayName,emailAddress),lastModifyingUser(displayName,emailAddress),shortcutDetails(targetId,targetMimeType),' +
  'capabilities(canEdit,canComment,canShare,canTrash,canDownload,canRename,canAddChildren)';
const READ_FIELDS = 'id,name,mimeType,size,modifiedTime,webViewLink,shortcutDetails(targetId,targetMimeType)';

const fileIdOrLink = { fileId: fileId.describe("The file's id, or its Drive / Docs / Sheets / Slides link.") };

const TEXT_TYPES = new Set([
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/x-yaml',
  'application/yaml',
  'application/x-sh',
  'application/x-httpd-php',
  'application/sql',
  'application/x-sql',
  'application/toml',
  'application/rtf',
  'application/x-tex',
  'application/csv',
  'application/x-ndjson',
  'application/graphql',
]);

function isTextMime(m: string | undefined): boolean {
  const s = String(m || '').toLowerCase();
  return s.startsWith('text/') || /[+/](json|xml|yaml)$/.test(s) || TEXT_TYPES.has(s);
}

type ReadPlan = { export?: string; note?: string; download?: true; folder?: true; binary?: true };

/** How drive_read_file reads a file of this type: export to a text format, download, or not at all. */
function readPlan(mimeType: string | undefined, format: 'text' | 'markdown'): ReadPlan {
  if (mimeType === GDOC) return { export: format === 'markdown' ? 'text/markdown' : 'text/plain' };
  if (mimeType === GSHEET)
    return {
      export: 'text/csv',
      note: 'Google Sheets export as CSV holds only the first sheet; the google-sheets tools read any sheet and range.',
    };
  if (mimeType === GSLIDES) return { export: 'text/plain' };
  if (mimeType === FOLDER) return { folder: true };
  if (String(mimeType).startsWith('application/vnd.google-apps.')) return { binary: true };
  if (isTextMime(mimeType)) return { download: true };
  return { binary: true };
}

export const getFile = defineTool({
  description:
    'Get the metadata of one Google Drive file or folder by id or link: name, type, size, created and modified times, who modified it last, owners, parent folders, description, link, starred/shared/trashed flags, shortcut target and what you may do with it (edit, comment, share, trash, download). Use drive_read_file for its content and drive_list_permissions for who it is shared with.',
  input: z.object(fileIdOrLink),
  annotations: reads('Get file metadata'),
  handler: async (ctx, a) => {
    const id = fileIdOf(a.fileId);
    const f = await api.json<DriveFile>(ctx, 'GET', filePath(id), {
      query: { fields: DETAIL_FIELDS, ...ALL_DRIVES },
      action: `read the metadata of file ${id}`,
    });
    const plan = readPlan(f.mimeType, 'text');
    return {
      ...slimFile(f),
      description: f.description ?? null,
      createdTime: f.createdTime ?? null,
      lastModifiedBy: person(f.lastModifyingUser),
      starred: !!f.starred,
      shared: !!f.shared,
      trashed: !!f.trashed,
      shortcutTarget: f.shortcutDetails
        ? { id: f.shortcutDetails.targetId ?? null, mimeType: f.shortcutDetails.targetMimeType ?? null }
        : null,
      capabilities: f.capabilities || {},
      readableAsText: !!(plan.export || plan.download),
    };
  },
});

export const readFile = defineTool({
  description:
    'Read the content of a Google Drive file as text: a Google Doc as plain text or Markdown, a Google Sheet as CSV (its first sheet only; use the google-sheets tools for other sheets and ranges), Google Slides as plain text, and text-like files (txt, csv, md, json, xml, yaml, code, …) as they are. Binary files (PDF, images, Office files, zips) are answered with a note instead of their bytes. Returns up to maxChars characters (50,000 at most); when `nextOffset` is not null, call again with `offset` set to it for the rest.',
  input: z.object({
    ...fileIdOrLink,
    format: z
      .enum(['text', 'markdown'])
      .default('text')
      .describe('For a Google Doc: plain text or Markdown (headings, lists, links kept).'),
    offset: z
      .int()
      .min(0)
      .max(100000000)
      .default(0)
      .describe('Character at which to start (the `nextOffset` of the previous call).'),
    maxChars: z.int().min(100).max(50000).default(50000).describe('Characters to return at most.'),
  }),
  annotations: reads('Read file content as text'),
  handler: async (ctx, a) => {
    const id = fileIdOf(a.fileId);
    const f = await api.json<DriveFile>(ctx, 'GET', filePath(id), {
      query: { fields: READ_FIELDS, ...ALL_DRIVES },
      action: `read the metadata of file ${id}`,
    });
    const base = {
      id: f.id || id,
      name: f.name ?? null,
      mimeType: f.mimeType ?? null,
      modifiedTime: f.modifiedTime ?? null,
      webViewLink: f.webViewLink ?? null,
    };
    if (f.mimeType === 'application/vnd.google-apps.shortcut' && f.shortcutDetails?.targetId) {
      return {
        ...base,
        content: null,
        note: `This is a shortcut: read its target with fileId "${f.shortcutDetails.targetId}".`,
      };
    }
    const plan = readPlan(f.mimeType, a.format);
    if (plan.folder)
      throw new Error(
        `"${f.name}" is a folder, not a file: list its contents with drive_search_files and folderId "${base.id}".`,
      );
    if (plan.binary) {
      return {
        ...base,
        content: null,
        binary: true,
        size: num(f.size),
        note: `${f.mimeType} is not a text format, so its content is not returned; open webViewLink to view it.`,
      };
    }
    const size = num(f.size);
    if (plan.download && size !== null && size > MAX_DOWNLOAD_BYTES) {
      return {
        ...base,
        content: null,
        size,
        note: `The file is ${size} bytes, more than the ${MAX_DOWNLOAD_BYTES} this tool downloads; open webViewLink to view it.`,
      };
    }
    const other =
      f.mimeType === GDOC
        ? `, or export it in the other format (format "${a.format === 'markdown' ? 'text' : 'markdown'}")`
        : '';
    const { data: bytes } = plan.export
      ? await api.request<Uint8Array>(ctx, 'GET', filePath(id, '/export'), {
          query: { mimeType: plan.export },
          accept: '*/*',
          expect: 'bytes',
          action: `export file ${id} as ${plan.export}`,
          // offset and maxChars cut the text after the whole export has come, so asking for less cannot help
          tooLarge: `offset and maxChars cannot help (they cut the text after the whole export is downloaded): open webViewLink (${base.webViewLink || 'the file in Google Drive'}) to read it${other}`,
        })
      : await api.request<Uint8Array>(ctx, 'GET', filePath(id), {
          query: { alt: 'media', ...ALL_DRIVES },
          accept: '*/*',
          expect: 'bytes',
          action: `download file ${id}`,
        });
    if (plan.download && bytes.subarray(0, 8000).includes(0)) {
      return {
        ...base,
        content: null,
        binary: true,
        size: bytes.length,
        note: 'The file holds binary data (NUL bytes), so its content is not returned; open webViewLink to view it.',
      };
    }
    const text = new TextDecoder('utf-8').decode(bytes);
    const start = Math.min(a.offset, text.length);
    const end = Math.min(start + a.maxChars, text.length);
    const notes = [];
    if (end < text.length)
      notes.push(`Cut at ${end} of ${text.length} characters: call again with offset ${end} for the rest.`);
    if (plan.note) notes.push(plan.note);
    return {
      ...base,
      ...(plan.export ? { exportedAs: plan.export } : {}),
      totalChars: text.length,
      offset: start,
      content: text.slice(start, end),
      nextOffset: end < text.length ? end : null,
      ...(notes.length ? { note: notes.join(' ') } : {}),
    };
  },
});
