/**
 * @module plugins/slack/src/files
 * Files shared in Slack: listing them, uploading one (files.getUploadURLExternal, the bytes POSTed
 * to the upload URL on files.slack.com, files.completeUploadExternal) and downloading one (files.info,
 * then its url_private_download on files.slack.com). The token is bound to slack.com and
 * files.slack.com only, and the gateway never sends it across a redirect to another origin; a
 * file hosted elsewhere (url_private outside files.slack.com) is not fetched at all.
 */
import {
  changes,
  checkUpload,
  defineTool,
  fromBase64,
  imageResult,
  reads,
  textWindow,
  toBase64,
  utf8,
  z,
} from 'workbench/plugin-sdk';
import { FILES_ORIGIN, fileRequest, read, write } from './api.js';
import { channelId, nextPage, pageArg, toTs } from './args.js';
import { channel, cursor, limit, time, ts } from './schema.js';
import { slimFile, type RawFile } from './shape.js';

export const listFiles = defineTool({
  description:
    'List files shared in Slack (name, type, size, who shared it, when, channels, link), newest first, optionally only in one channel, by one user, of some types or within a time range. Pages with `next`.',
  input: z.object({
    channel: channel.optional(),
    user: z
      .string()
      .regex(/^[UW][A-Z0-9]+$/)
      .optional()
      .describe('Only files shared by this user ID.'),
    types: z
      .array(z.enum(['spaces', 'snippets', 'images', 'gdocs', 'zips', 'pdfs']))
      .max(6)
      .optional()
      .describe('Only these kinds of file.'),
    since: time('Only files created after'),
    until: time('Only files created before'),
    limit: limit(100, 20, 'files'),
    cursor,
  }),
  annotations: reads('List files'),
  handler: async (ctx, args) => {
    const d = await read<{ files?: RawFile[]; paging?: { page?: number; pages?: number } }>(ctx, 'files.list', {
      channel: args.channel ? await channelId(ctx, args.channel) : undefined,
      user: args.user,
      types: args.types?.length ? args.types.join(',') : undefined,
      ts_from: toTs(args.since, 'since'),
      ts_to: toTs(args.until, 'until'),
      count: args.limit || 20,
      page: pageArg(args.cursor),
    });
    return { files: (d.files || []).map(slimFile), next: nextPage(d.paging) };
  },
});

// ---------------------------------------------------------------- upload ----

export const uploadFile = defineTool({
  description:
    "Upload a file to Slack and share it in a channel or thread (or keep it private to you when no channel is given): text content (`content`, e.g. a CSV, a log, code) or bytes as base64 (`content_base64`, e.g. an image or a PDF), with a title, a message introducing it and alt text for images. Uses Slack's upload flow (get an upload URL, send the bytes, complete the upload). Returns the new file's id, name and link. Needs the files:write scope.",
  input: z.object({
    filename: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^/\\\r\n]+$/)
      .describe('File name with its extension, e.g. "report.csv".'),
    content: z.string().max(10000000).optional().describe('The file content as text.'),
    content_base64: z
      .string()
      .max(14000000)
      .regex(/^[A-Za-z0-9+/=_\s-]*$/)
      .optional()
      .describe('The file content as base64 (instead of `content`), for binary files.'),
    title: z.string().min(1).max(255).optional().describe('Title shown in Slack; default the file name.'),
    channel: channel.optional().describe('Channel (ID or #name) to share it in; without one the file stays private.'),
    thread_ts: ts('Share it as a reply in the thread that starts at this message ts (needs `channel`).').optional(),
    initial_comment: z.string().min(1).max(40000).optional().describe('Message text posted with the file.'),
    alt_text: z.string().min(1).max(1000).optional().describe('Description of an image, for screen readers.'),
    snippet_type: z
      .string()
      .regex(/^[a-z0-9_+-]{1,40}$/)
      .optional()
      .describe('For a text snippet: its syntax, e.g. python, javascript.'),
  }),
  annotations: changes('Upload file'),
  handler: async (ctx, args) => {
    if ((args.content === undefined) === (args.content_base64 === undefined))
      throw new Error('Pass exactly one of `content` (text) or `content_base64`.');
    if (args.thread_ts && !args.channel) throw new Error('`thread_ts` needs `channel`: the thread is in a channel.');
    let bytes: Uint8Array;
    try {
      bytes = args.content !== undefined ? utf8(args.content) : fromBase64(args.content_base64!.replace(/\s+/g, ''));
    } catch {
      throw new Error('`content_base64` is not valid base64.');
    }
    if (bytes.length === 0) throw new Error('The file is empty: Slack does not accept an empty upload.');
    checkUpload(ctx, bytes.length, `the file "${args.filename}"`);
    const sharedIn = args.channel ? await channelId(ctx, args.channel) : undefined;
    const target = await write<{ upload_url?: string; file_id?: string }>(ctx, 'files.getUploadURLExternal', {
      filename: args.filename,
      length: bytes.length,
      alt_txt: args.alt_text,
      snippet_type: args.snippet_type,
    });
    if (!target.upload_url || !target.file_id)
      throw new Error('Slack gave no upload URL (files.getUploadURLExternal): retry later.');
    await fileRequest(ctx, 'POST', target.upload_url, 'file upload', {
      rawBody: bytes,
      contentType: 'application/octet-stream',
      expect: 'text',
    });
    const done = await write<{ files?: RawFile[] }>(ctx, 'files.completeUploadExternal', {
      files: [{ id: target.file_id, title: args.title || args.filename }],
      channel_id: sharedIn,
      thread_ts: args.thread_ts,
      initial_comment: args.initial_comment,
    });
    const file = done.files?.[0] ?? { id: target.file_id, name: args.filename };
    return {
      file: slimFile(file),
      shared_in: sharedIn ?? null,
      ...(sharedIn ? {} : { note: 'Not shared in any channel: only you can see it until it is shared.' }),
    };
  },
});

// ---------------------------------------------------------------- download ----

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-yaml|yaml|csv|x-sh|sql))/;

/** The file's bytes as the result carries them: an image block, a text window, or base64. */
function downloaded(f: RawFile, bytes: Uint8Array, as: 'auto' | 'text' | 'base64', offset: number, max: number) {
  const type = String(f.mimetype || '').toLowerCase();
  if (as === 'auto' && IMAGE_TYPES.has(type)) return { image: imageResult(bytes, type) };
  const texty = as === 'text' || (as === 'auto' && (TEXT_TYPES.test(type) || f.mode === 'snippet'));
  if (texty && !bytes.subarray(0, 8000).includes(0)) {
    try {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      return { encoding: 'text', ...textWindow(text, offset, max) };
    } catch {
      if (as === 'text') throw new Error(`File ${String(f.id)} is not UTF-8 text: download it with as "base64".`);
    }
  } else if (as === 'text') {
    throw new Error(`File ${String(f.id)} holds binary data: download it with as "base64".`);
  }
  return { encoding: 'base64', content_base64: toBase64(bytes) };
}

/** A refusal on the way to the bytes, in words: a redirect away from files.slack.com, or a file over the cap. */
function downloadRefusal(err: unknown, f: RawFile): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'GW_ERR_BRIDGE_HOST_NOT_ALLOWED')
    return new Error(
      `Slack redirected the download of ${String(f.id)} away from files.slack.com, and the gateway does not follow it (GW_ERR_BRIDGE_HOST_NOT_ALLOWED; the Slack token never goes to another host). Open it in Slack instead: ${f.permalink || 'its permalink'}.`,
    );
  if (code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE')
    return new Error(
      `File ${String(f.id)} is larger than the gateway accepts for one answer (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE). Open it in Slack instead: ${f.permalink || 'its permalink'}.`,
    );
  return err;
}

export const downloadFile = defineTool({
  description:
    "Download a file shared in Slack by its id (F…, from slack_list_files or a message's files): its details and content — an image (PNG, JPEG, GIF, WebP) as an image, text (plain text, CSV, JSON, code, snippets) as text in windows of max_chars (pass next_offset as offset for more), anything else as base64. `as` forces text or base64. Files hosted outside Slack (external files) are not downloaded: their link is returned. Needs the files:read scope.",
  input: z.object({
    file: z
      .string()
      .regex(/^F[A-Z0-9]{6,}$/)
      .describe('The file ID, e.g. F0123456789.'),
    as: z.enum(['auto', 'text', 'base64']).default('auto').describe('auto: by the file type.'),
    offset: z.int().min(0).default(0).describe('For text: where to start (the next_offset of the previous call).'),
    max_chars: z.int().min(1000).max(500000).default(100000).describe('For text: characters to return at most.'),
  }),
  annotations: reads('Download file'),
  handler: async (ctx, args) => {
    const { file: f } = await read<{ file: RawFile }>(ctx, 'files.info', { file: args.file });
    const base = { file: slimFile(f), mimetype: f.mimetype || null };
    const url = f.url_private_download || f.url_private || '';
    if (f.is_external || f.mode === 'external' || !url.startsWith(FILES_ORIGIN)) {
      const where = f.external_type ? ` (${f.external_type})` : '';
      return {
        ...base,
        content: null,
        external_url: f.url_private || null,
        note: `This file is hosted outside Slack${where}: it is not downloaded here, since the Slack token is sent only to Slack. Open its link instead.`,
      };
    }
    // a base64 answer is a third larger than the file, and the whole result must fit the result cap
    if (
      args.as !== 'text' &&
      typeof f.size === 'number' &&
      Math.ceil(f.size / 3) * 4 + 4096 > ctx.limits.maxResultBytes
    )
      throw new Error(
        `File ${args.file} is ${f.size} bytes: as base64 it is over the largest result this gateway returns (${ctx.limits.maxResultBytes} bytes). Open it in Slack instead: ${f.permalink || 'its permalink'}.`,
      );
    let answer;
    try {
      answer = await fileRequest(ctx, 'GET', url, `download of ${args.file}`, { accept: '*/*', expect: 'bytes' });
    } catch (err) {
      throw downloadRefusal(err, f);
    }
    const type = String(answer.headers.get('content-type') || '').toLowerCase();
    if (!answer.url.startsWith(FILES_ORIGIN) || (type.startsWith('text/html') && !String(f.mimetype).includes('html')))
      throw new Error(
        `Slack answered the download of ${args.file} with a sign-in page instead of the file: the connection lacks the files:read scope (reconnect Slack and approve it), or you cannot see this file.`,
      );
    return { ...base, ...downloaded(f, answer.data as Uint8Array, args.as, args.offset, args.max_chars) };
  },
});
