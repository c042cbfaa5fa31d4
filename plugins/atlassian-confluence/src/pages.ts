/**
 * @module plugins/atlassian-confluence/src/pages
 * Pages: reading one (as readable text or storage XHTML), its children, and creating, updating
 * (an update reads the current version first and saves the next) and deleting pages.
 */
import { changes, defineTool, path, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { nextCursor, resolveSite, results, SCOPES, wiki, type Listing, type Site } from './api.js';
import { bodyFormat, cursor, limit, pageId, space } from './schema.js';
import { pageUrl, storageOf, versionOf, webUrl, type RawPage } from './shape.js';
import { spaceId } from './spaces.js';
import { toStorage } from './storage-markup.js';
import { MAX_TEXT, storageToText } from './storage-text.js';

/** A page with its storage body; Confluence sends it whole, so nothing smaller can be asked for. */
function fetchPage(ctx: PluginContext, site: Site, id: string, action: string): Promise<RawPage> {
  const tooLarge = `the page's body is too large to read here (and so to update here). Open it in Confluence: ${pageUrl(site, id)}`;
  return wiki<RawPage>(ctx, site, 'GET', path`/api/v2/pages/${id}`, {
    query: { 'body-format': 'storage' },
    action,
    scope: SCOPES.readPage,
    tooLarge,
  });
}

/** What pages.create and pages.update are sent. */
type PageBody = {
  id?: string;
  spaceId?: string;
  status: 'current';
  title?: string;
  parentId?: string;
  body: { representation: 'storage'; value: string };
  version?: { number: number; message?: string };
};

export const getPage = defineTool({
  description:
    'Read (open, view) a Confluence page or document by id: title, space id, parent id, author, version number and date, url, and its content converted from Confluence storage format to readable markdown-like text (headings, lists, tables, code blocks, links and macros kept legible; cut at 20,000 characters, `truncated` says so). `format: "storage"` returns the raw XHTML instead (cut at 100,000 characters), e.g. to edit it exactly with confluence_update_page; never write back a storage body whose `truncated` is true, or the rest of the page is lost.',
  input: z.object({
    pageId: pageId('Page id (the number in the page URL, or from confluence_search).'),
    format: z.enum(['text', 'storage']).default('text').describe('`text` (readable) or `storage` (Confluence XHTML).'),
  }),
  annotations: reads('Get page content'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const p = await fetchPage(ctx, site, args.pageId, `read page ${args.pageId}`);
    const storage = storageOf(p);
    const raw = args.format === 'storage';
    // the raw XHTML is cut at five times the text's length
    const { text: body, truncated } = raw
      ? { text: storage.slice(0, MAX_TEXT * 5), truncated: storage.length > MAX_TEXT * 5 }
      : storageToText(storage);
    return {
      id: p.id,
      title: p.title,
      status: p.status ?? null,
      spaceId: p.spaceId ?? null,
      parentId: p.parentId ?? null,
      authorId: p.authorId ?? null,
      createdAt: p.createdAt ?? null,
      version: versionOf(p.version),
      format: raw ? 'storage' : 'text',
      body,
      truncated,
      url: webUrl(site, p._links) || pageUrl(site, p.id),
    };
  },
});

export const getPageChildren = defineTool({
  description:
    'List the child pages directly under a Confluence page (the page tree one level down): id, title, status, position and url. When `next` is not null, pass it as `cursor` for more.',
  input: z.object({
    pageId: pageId('Id of the parent page.'),
    sort: z
      .enum([
        'child-position',
        '-child-position',
        'created-date',
        '-created-date',
        'modified-date',
        '-modified-date',
        'id',
        '-id',
      ])
      .optional()
      .describe('Sort order; the default is the order shown in the page tree.'),
    limit: limit(250, 25, 'Child pages per page of results.'),
    cursor,
  }),
  annotations: reads('Get child pages'),
  handler: async (ctx, args) => {
    type Child = { id: string; title?: string; status?: string; childPosition?: number };
    const site = await resolveSite(ctx);
    const query = { sort: args.sort, limit: args.limit ?? 25, cursor: args.cursor };
    const data = await wiki<Listing<Child>>(ctx, site, 'GET', path`/api/v2/pages/${args.pageId}/children`, {
      query,
      action: `list the child pages of page ${args.pageId}`,
      scope: SCOPES.readPage,
    });
    const pages = results(data).map((c) => ({
      id: c.id,
      title: c.title,
      status: c.status ?? null,
      position: c.childPosition ?? null,
      url: pageUrl(site, c.id),
    }));
    return { parentId: args.pageId, pages, next: nextCursor(data) };
  },
});

export const createPage = defineTool({
  description:
    "Create (write, publish) a new Confluence page or document in a space, optionally under a parent page, and get its id and url. The body is markdown-ish text by default (# headings, - and 1. lists, **bold**, _italic_, `code`, ``` code blocks, [links](https://…), | tables |), or plain text, or raw storage XHTML. Without parentId the page goes under the space's homepage.",
  input: z.object({
    space: space('Space key (e.g. ENG) or numeric space id.'),
    title: z.string().min(1).max(255).describe('Page title (unique within the space).'),
    body: z.string().max(200000).optional().describe('Page content, in bodyFormat.'),
    bodyFormat: bodyFormat(
      '`markdown` (markdown-ish), `text` (paragraphs only, nothing interpreted) or `storage` (Confluence XHTML, sent as is).',
    ),
    parentId: pageId('Id of the parent page.').optional(),
  }),
  annotations: changes('Create page'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const id = await spaceId(ctx, site, args.space);
    const body: PageBody = {
      spaceId: id,
      status: 'current',
      title: args.title,
      body: { representation: 'storage', value: toStorage(args.body ?? '', args.bodyFormat) },
    };
    if (args.parentId) body.parentId = args.parentId;
    const p = await wiki<RawPage>(ctx, site, 'POST', '/api/v2/pages', {
      body,
      action: `create the page "${args.title}" in space ${args.space}`,
      scope: SCOPES.writePage,
    });
    return {
      id: p.id,
      title: p.title,
      spaceId: p.spaceId ?? id,
      parentId: p.parentId ?? null,
      version: p.version ? (p.version.number ?? 1) : 1,
      url: webUrl(site, p._links) || pageUrl(site, p.id),
    };
  },
});

export const updatePage = defineTool({
  description:
    'Edit an existing Confluence page: replace its content, append to it (`mode: "append"` adds a section at the end), and/or rename it. Reads the current version first and saves the next one, keeping the old content when only the title changes. The body is markdown-ish by default, or plain text, or storage XHTML (use confluence_get_page with format "storage" to edit the exact markup; for long pages prefer mode "append"). Replacing discards the previous content (it stays in the page history).',
  input: z.object({
    pageId: pageId('Id of the page to edit.'),
    title: z.string().min(1).max(255).optional().describe('New title.'),
    body: z.string().max(200000).optional().describe('New content (or the content to append), in bodyFormat.'),
    bodyFormat: bodyFormat(),
    mode: z
      .enum(['replace', 'append'])
      .default('replace')
      .describe('Replace the content, or append the body at the end.'),
    versionMessage: z.string().max(500).optional().describe('Optional note stored with the new version.'),
  }),
  annotations: changes('Update page', { destructive: true }),
  handler: async (ctx, args) => {
    if (args.body === undefined && args.title === undefined)
      throw new Error('Nothing to update: give a new body, a new title, or both.');
    if (args.mode === 'append' && args.body === undefined) throw new Error('mode "append" needs a body to append.');
    const site = await resolveSite(ctx);
    const cur = await fetchPage(ctx, site, args.pageId, `read page ${args.pageId} before updating it`);
    const current = storageOf(cur);
    const seen = cur.version?.number;
    const number = typeof seen === 'number' && Number.isInteger(seen) ? seen : null;
    if (number === null)
      throw new Error(
        `Confluence did not say which version page ${args.pageId} is at, so it cannot be updated safely; retry.`,
      );
    let value = current;
    if (args.body !== undefined)
      value =
        args.mode === 'append'
          ? current + toStorage(args.body, args.bodyFormat)
          : toStorage(args.body, args.bodyFormat);
    const version: PageBody['version'] = { number: number + 1 };
    if (args.versionMessage) version.message = args.versionMessage;
    const body: PageBody = {
      id: String(cur.id ?? args.pageId),
      status: 'current',
      title: args.title ?? cur.title,
      body: { representation: 'storage', value },
      version,
    };
    const p = await wiki<Partial<RawPage>>(ctx, site, 'PUT', path`/api/v2/pages/${args.pageId}`, {
      body,
      action: `update page ${args.pageId}`,
      scope: SCOPES.writePage,
    });
    const changed = [...(args.title !== undefined ? ['title'] : []), ...(args.body !== undefined ? ['body'] : [])];
    const saved = p.version ? (p.version.number ?? number + 1) : number + 1;
    return {
      id: p.id ?? args.pageId,
      title: p.title ?? body.title,
      version: saved,
      updated: changed,
      url: webUrl(site, p._links) || pageUrl(site, args.pageId),
    };
  },
});

export const deletePage = defineTool({
  description:
    "Delete a Confluence page: it moves to its space's trash, from where a space admin can restore it (its child pages move up to its parent). `purge: true` deletes it permanently instead (trashing it first when it is not in the trash yet), which needs space admin permission and cannot be undone. Returns the page's id, title and what was done.",
  input: z.object({
    pageId: pageId('Id of the page to delete.'),
    purge: z.boolean().default(false).describe('Delete permanently (cannot be undone) instead of moving to the trash.'),
  }),
  annotations: changes('Delete page', { destructive: true }),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const p = await wiki<Partial<RawPage>>(ctx, site, 'GET', path`/api/v2/pages/${args.pageId}`, {
      action: `read page ${args.pageId} before deleting it`,
      scope: SCOPES.readPage,
    });
    const base = { id: p.id ?? args.pageId, title: p.title ?? null, spaceId: p.spaceId ?? null };
    const remove = (query: { purge?: boolean }, what: string) =>
      wiki(ctx, site, 'DELETE', path`/api/v2/pages/${args.pageId}`, {
        query,
        action: `${what} page ${args.pageId}`,
        scope: SCOPES.deletePage,
      });
    // v2 purges only a page that is already in the trash
    if (p.status !== 'trashed') await remove({}, 'move to the trash');
    if (!args.purge) return { ...base, status: 'trashed', note: 'In the space trash: a space admin can restore it.' };
    await remove({ purge: true }, 'permanently delete');
    return { ...base, status: 'purged', note: 'Deleted permanently: it cannot be restored.' };
  },
});
