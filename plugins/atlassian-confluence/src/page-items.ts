/**
 * @module plugins/atlassian-confluence/src/page-items
 * What hangs off a page besides its body: footer comments (adding one or a reply, and reading them
 * as text), attachments and labels.
 */
import { changes, defineTool, path, reads, z } from 'workbench/plugin-sdk';
import { nextCursor, resolveSite, results, SCOPES, wiki, type Listing } from './api.js';
import { bodyFormat, cursor, limit, pageId } from './schema.js';
import { pageUrl, storageOf, webUrl, type Links, type RawVersion } from './shape.js';
import { toStorage } from './storage-markup.js';
import { storageToText } from './storage-text.js';

const MAX_COMMENT_TEXT = 4000;

type RawComment = {
  id: string;
  pageId?: string;
  parentCommentId?: string;
  version?: RawVersion;
  body?: { storage?: { value?: string } };
  _links?: Links;
};

export const addComment = defineTool({
  description:
    'Add (post, write) a footer comment at the bottom of a Confluence page, or reply to an existing comment with parentCommentId. The comment is markdown-ish text by default. Returns the comment id and url.',
  input: z.object({
    pageId: pageId('Id of the page to comment on.'),
    body: z.string().min(1).max(30000).describe('Comment text.'),
    bodyFormat: bodyFormat(),
    parentCommentId: pageId('Reply to this comment instead of starting a new thread.').optional(),
  }),
  annotations: changes('Add page comment'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const storage = { representation: 'storage', value: toStorage(args.body, args.bodyFormat) };
    // a reply names its parent comment, a new thread its page
    const body = args.parentCommentId
      ? { body: storage, parentCommentId: args.parentCommentId }
      : { body: storage, pageId: args.pageId };
    const action = args.parentCommentId ? `reply to comment ${args.parentCommentId}` : `comment on page ${args.pageId}`;
    const c = await wiki<RawComment>(ctx, site, 'POST', '/api/v2/footer-comments', {
      body,
      action,
      scope: SCOPES.writeComment,
    });
    const created = c.version ? (c.version.createdAt ?? null) : null;
    return {
      id: c.id,
      pageId: c.pageId ?? args.pageId,
      parentCommentId: c.parentCommentId ?? args.parentCommentId ?? null,
      created,
      url: webUrl(site, c._links),
    };
  },
});

export const listComments = defineTool({
  description:
    'Read the footer comments (the discussion, feedback) on a Confluence page as readable text, with author account id, date and url, newest first by default. When `next` is not null, pass it as `cursor` for more.',
  input: z.object({
    pageId: pageId('Id of the page.'),
    order: z.enum(['newest', 'oldest']).default('newest').describe('Newest or oldest comments first.'),
    limit: limit(100, 25, 'Comments per page.'),
    cursor,
  }),
  annotations: reads('List page comments'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const query = {
      'body-format': 'storage',
      sort: args.order === 'oldest' ? 'created-date' : '-created-date',
      limit: args.limit ?? 25,
      cursor: args.cursor,
    };
    const action = `read the comments of page ${args.pageId}`;
    const data = await wiki<Listing<RawComment>>(ctx, site, 'GET', path`/api/v2/pages/${args.pageId}/footer-comments`, {
      query,
      action,
      scope: SCOPES.readComment,
    });
    const comments = results(data).map((c) => ({
      id: c.id,
      authorId: c.version ? (c.version.authorId ?? null) : null,
      created: c.version ? (c.version.createdAt ?? null) : null,
      body: storageToText(storageOf(c), MAX_COMMENT_TEXT).text,
      url: webUrl(site, c._links),
    }));
    return { pageId: args.pageId, comments, next: nextCursor(data) };
  },
});

type RawAttachment = {
  id: string;
  title?: string;
  mediaType?: string;
  fileSize?: number;
  comment?: string;
  createdAt?: string;
  version?: { number?: number };
};
type AttachmentLinks = { downloadLink?: unknown; webuiLink?: unknown; _links?: Links };

export const listAttachments = defineTool({
  description:
    'List the files attached to a Confluence page (id, file name, media type, size, comment, version, download url and url), optionally filtered by file name or media type. When `next` is not null, pass it as `cursor` for more.',
  input: z.object({
    pageId: pageId('Id of the page.'),
    filename: z.string().min(1).max(255).optional().describe('Only the attachment with this file name.'),
    mediaType: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Only attachments of this media type, e.g. application/pdf.'),
    limit: limit(250, 50, 'Attachments per page.'),
    cursor,
  }),
  annotations: reads('List page attachments'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const query = { filename: args.filename, mediaType: args.mediaType, limit: args.limit ?? 50, cursor: args.cursor };
    const action = `list the attachments of page ${args.pageId}`;
    const data = await wiki<Listing<RawAttachment & AttachmentLinks>>(
      ctx,
      site,
      'GET',
      path`/api/v2/pages/${args.pageId}/attachments`,
      { query, action, scope: SCOPES.attachment },
    );
    const attachments = results(data).map((a) => ({
      id: a.id,
      title: a.title,
      mediaType: a.mediaType ?? null,
      fileSize: a.fileSize ?? null,
      comment: a.comment || '',
      createdAt: a.createdAt ?? null,
      version: a.version ? (a.version.number ?? null) : null,
      downloadUrl: typeof a.downloadLink === 'string' ? `${site.wiki}${a.downloadLink}` : null,
      url: typeof a.webuiLink === 'string' ? `${site.wiki}${a.webuiLink}` : webUrl(site, a._links),
    }));
    return { pageId: args.pageId, attachments, next: nextCursor(data) };
  },
});

type Label = { name?: string; label?: string };

export const addLabels = defineTool({
  description:
    'Add labels (tags) to a Confluence page, keeping the ones it has; returns all its labels. Labels are lower-case words without spaces, e.g. release-notes. Find labelled pages with confluence_search and `label = "release-notes"`.',
  input: z.object({
    pageId: pageId('Id of the page.'),
    labels: z
      .array(z.string().regex(/^[^\s:]{1,255}$/))
      .min(1)
      .max(20)
      .describe('Labels to add (no spaces or colons).'),
  }),
  annotations: changes('Add labels', { idempotent: true }),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    // REST v1: v2 cannot add labels
    const body = args.labels.map((name) => ({ prefix: 'global', name: name.toLowerCase() }));
    const action = `add labels to page ${args.pageId}`;
    const data = await wiki<Listing<Label>>(ctx, site, 'POST', path`/rest/api/content/${args.pageId}/label`, {
      body,
      action,
      scope: SCOPES.label,
    });
    const labels = results(data)
      .map((l) => l.name || l.label)
      .filter(Boolean);
    return {
      pageId: args.pageId,
      added: args.labels.map((l) => l.toLowerCase()),
      labels,
      url: pageUrl(site, args.pageId),
    };
  },
});
