/**
 * @module plugins/google-drive/src/write
 * Changing Drive: create a folder, create a text file or a Google Doc (a multipart/related upload
 * of its metadata and text), rename or move a file, and move it to the trash or back.
 */
import { changes, defineTool, z } from 'workbench/plugin-sdk';
import {
  ALL_DRIVES,
  api,
  fileIdOf,
  fileOrFolder,
  filePath,
  FOLDER,
  GDOC,
  parentId,
  UPLOAD,
  WRITE_FIELDS,
} from './api.js';
import { slimFile, type DriveFile } from './shape.js';

/** A boundary that occurs in none of the parts (RFC 2046: up to 70 characters). */
function boundaryFor(parts: string[]): string {
  for (;;) {
    let b = 'workbench-drive-';
    while (b.length < 48) b += Math.random().toString(36).slice(2);
    b = b.slice(0, 48);
    if (!parts.some((p) => p.includes(b))) return b;
  }
}

/** The upload body: the metadata as JSON, then the content. */
function multipartRelated(
  metadata: object,
  content: string,
  contentType: string,
): { body: string; contentType: string } {
  const json = JSON.stringify(metadata);
  const boundary = boundaryFor([json, content]);
  const body =
    `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${json}\r\n` +
    `--${boundary}\r\nContent-Type: ${contentType}\r\n\r\n${content}\r\n` +
    `--${boundary}--\r\n`;
  return { body, contentType: `multipart/related; boundary=${boundary}` };
}

/** The `parents` of a new file, when a folder is given. */
const parents = (a: { parentId?: string }) => (a.parentId ? { parents: [fileIdOf(a.parentId, 'parentId')] } : {});

export const createFolder = defineTool({
  description:
    "Create (make, add) a new folder in Google Drive, at the top of My Drive or inside another folder (parentId, which may be in a shared drive). Returns the new folder's id and link.",
  input: z.object({ name: z.string().min(1).max(255).describe('Folder name.'), ...parentId }),
  annotations: changes('Create folder'),
  handler: async (ctx, a) => {
    const body = { name: a.name, mimeType: FOLDER, ...parents(a) };
    return slimFile(
      await api.json<DriveFile>(ctx, 'POST', '/files', {
        query: { ...ALL_DRIVES, fields: WRITE_FIELDS },
        body,
        action: `create the folder "${a.name}"`,
      }),
    );
  },
});

export const createFile = defineTool({
  description:
    "Create (upload, save, write) a new text file in Google Drive from text you give — notes, a CSV, Markdown, JSON, code — or, with convertToGoogleDoc, a new Google Doc from plain text. Optionally inside a folder (parentId). Returns the new file's id and link. It always creates a new file (Drive allows several files with one name); it does not change existing files.",
  input: z.object({
    name: z.string().min(1).max(255).describe('File name, e.g. notes.txt or report.md (for a Google Doc, its title).'),
    content: z.string().max(200000).describe("The file's text."),
    // the pattern as JSON Schema text (.meta): a RegExp's source would publish "/" as "\/"
    mimeType: z
      .string()
      .meta({ pattern: '^(text/[a-z0-9.+-]{1,50}|application/(json|xml|x-yaml|yaml|javascript|x-sh|sql))$' })
      .default('text/plain')
      .describe("The text's type, e.g. text/plain, text/csv, text/markdown, application/json."),
    convertToGoogleDoc: z
      .boolean()
      .default(false)
      .describe('Create an editable Google Doc from the plain text instead of a text file.'),
    ...parentId,
    description: z.string().max(2000).optional().describe('A description shown in Drive.'),
  }),
  annotations: changes('Create text file or Google Doc'),
  handler: async (ctx, a) => {
    const asDoc = a.convertToGoogleDoc;
    const mime = a.mimeType;
    if (asDoc && mime !== 'text/plain')
      throw new Error('convertToGoogleDoc converts plain text: leave mimeType out (or text/plain) when setting it.');
    const metadata = {
      name: a.name,
      mimeType: asDoc ? GDOC : mime,
      ...parents(a),
      ...(a.description ? { description: a.description } : {}),
    };
    const { body, contentType } = multipartRelated(metadata, a.content, `${mime}; charset=UTF-8`);
    const query = { uploadType: 'multipart', ...ALL_DRIVES, fields: WRITE_FIELDS };
    return slimFile(
      await api.json<DriveFile>(ctx, 'POST', `${UPLOAD}/files`, {
        query,
        rawBody: body,
        contentType,
        action: `create the file "${a.name}"`,
      }),
    );
  },
});

export const moveOrRenameFile = defineTool({
  description:
    "Rename a Google Drive file or folder, change its description, or move it into another folder (it leaves the folders it was in). Give only what changes. Returns the file's name, parents and link after the change. To delete a file use drive_trash_file.",
  input: z.object({
    ...fileOrFolder,
    name: z.string().min(1).max(255).optional().describe('New name.'),
    description: z.string().max(2000).optional().describe('New description (an empty string clears it).'),
    moveToFolderId: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe('Id or link of the folder to move it into ("root" for the top of My Drive).'),
  }),
  annotations: changes('Move or rename file', { idempotent: true }),
  handler: async (ctx, a) => {
    const id = fileIdOf(a.fileId);
    if (a.name === undefined && a.description === undefined && !a.moveToFolderId)
      throw new Error('Nothing to change: give name, description or moveToFolderId.');
    let move = {};
    if (a.moveToFolderId) {
      const target = fileIdOf(a.moveToFolderId, 'moveToFolderId');
      const current = await api.json<DriveFile>(ctx, 'GET', filePath(id), {
        query: { fields: 'parents', ...ALL_DRIVES },
        action: `read the current folder of file ${id}`,
      });
      const old = (Array.isArray(current.parents) ? current.parents : []).filter((p) => p !== target);
      move = { addParents: target, removeParents: old.join(',') };
    }
    const body = { name: a.name, description: a.description };
    const query = { ...ALL_DRIVES, fields: WRITE_FIELDS, ...move };
    return slimFile(
      await api.json<DriveFile>(ctx, 'PATCH', filePath(id), { query, body, action: `update file ${id}` }),
    );
  },
});

export const trashFile = defineTool({
  description:
    'Delete (remove) a Google Drive file or folder by moving it to the trash, from where it can be restored for 30 days; it is never deleted permanently. A trashed folder takes its contents with it. With restore: true, takes it back out of the trash.',
  input: z.object({
    ...fileOrFolder,
    restore: z.boolean().default(false).describe('Take the file out of the trash instead.'),
  }),
  annotations: changes('Move file to trash', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    const id = fileIdOf(a.fileId);
    const f = await api.json<DriveFile>(ctx, 'PATCH', filePath(id), {
      query: { ...ALL_DRIVES, fields: 'id,name,mimeType,trashed,webViewLink' },
      body: { trashed: !a.restore },
      action: a.restore ? `restore file ${id} from the trash` : `move file ${id} to the trash`,
    });
    return {
      id: f.id || id,
      name: f.name ?? null,
      mimeType: f.mimeType ?? null,
      trashed: !!f.trashed,
      webViewLink: f.webViewLink ?? null,
    };
  },
});
