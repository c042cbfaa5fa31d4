/**
 * @module plugins/atlassian-confluence/src/spaces
 * Spaces: listing them, reading one by key or id, and the pages in one.
 */
import { defineTool, path, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { nextCursor, results, resolveSite, SCOPES, wiki, type Listing, type Site } from './api.js';
import { cursor, limit, space } from './schema.js';
import { slimPage, slimSpace, type RawPage, type RawSpace } from './shape.js';

async function findSpaceByKey(
  ctx: PluginContext,
  site: Site,
  key: string,
  extra: Record<string, string> = {},
): Promise<RawSpace> {
  const data = await wiki<Listing<RawSpace>>(ctx, site, 'GET', '/api/v2/spaces', {
    query: { keys: key, ...extra },
    action: `look up the space with key ${key}`,
    scope: SCOPES.space,
  });
  const s = results(data).find((x) => String(x.key).toLowerCase() === key.toLowerCase()) || results(data)[0];
  if (!s)
    throw new Error(
      `No Confluence space has the key "${key}" (or you cannot see it): use confluence_list_spaces to find the key.`,
    );
  return s;
}

/** A space key (ENG, ~accountid) or a numeric space id → the numeric id v2 wants. */
export async function spaceId(ctx: PluginContext, site: Site, space: string): Promise<string> {
  if (/^[0-9]+$/.test(space)) return space;
  return (await findSpaceByKey(ctx, site, space)).id;
}

export const listSpaces = defineTool({
  description:
    'List the Confluence spaces (wikis of teams and people) you can see: id, key, name, type, status, description, homepage id and url. Space keys (e.g. ENG) are what the other Confluence tools and CQL take. When `next` is not null, pass it as `cursor` for more.',
  input: z.object({
    type: z
      .enum(['global', 'collaboration', 'knowledge_base', 'personal'])
      .optional()
      .describe('Only spaces of this type.'),
    status: z.enum(['current', 'archived']).optional().describe('Only current or only archived spaces.'),
    sort: z
      .enum(['id', '-id', 'key', '-key', 'name', '-name'])
      .optional()
      .describe('Sort order; a leading - sorts descending.'),
    limit: limit(250, 25, 'Spaces per page.'),
    cursor,
  }),
  annotations: reads('List spaces'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const query = {
      type: args.type,
      status: args.status,
      sort: args.sort,
      'description-format': 'plain',
      limit: args.limit ?? 25,
      cursor: args.cursor,
    };
    const data = await wiki<Listing<RawSpace>>(ctx, site, 'GET', '/api/v2/spaces', {
      query,
      action: 'list spaces',
      scope: SCOPES.space,
    });
    return { spaces: results(data).map((s) => slimSpace(s, site)), next: nextCursor(data) };
  },
});

export const getSpace = defineTool({
  description:
    'Read one Confluence space by key (e.g. ENG) or numeric id: name, type, status, plain-text description, homepage page id, creation date and url. Use confluence_list_pages for the pages in it.',
  input: z.object({ space: space('Space key (ENG, ~accountId for a personal space) or numeric space id.') }),
  annotations: reads('Get space'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const plain = { 'description-format': 'plain' };
    const s = /^[0-9]+$/.test(args.space)
      ? await wiki<RawSpace>(ctx, site, 'GET', path`/api/v2/spaces/${args.space}`, {
          query: plain,
          action: `read space ${args.space}`,
          scope: SCOPES.space,
        })
      : await findSpaceByKey(ctx, site, args.space, plain);
    return { ...slimSpace(s, site), createdAt: s.createdAt ?? null, authorId: s.authorId ?? null };
  },
});

export const listPages = defineTool({
  description:
    'List the pages in a Confluence space (id, title, status, parent id, version, last updated, url), optionally only its top-level pages, or the page with an exact title. When `next` is not null, pass it as `cursor` for more. To search page text use confluence_search; for the pages under one page use confluence_get_page_children.',
  input: z.object({
    space: space('Space key (e.g. ENG) or numeric space id.'),
    title: z.string().min(1).max(255).optional().describe('Only the page with exactly this title.'),
    depth: z.enum(['all', 'root']).default('all').describe("`root` for the space's top-level pages only."),
    sort: z
      .enum(['id', '-id', 'created-date', '-created-date', 'modified-date', '-modified-date', 'title', '-title'])
      .optional()
      .describe('Sort order; `-modified-date` puts recently edited pages first.'),
    limit: limit(250, 25, 'Pages per page of results.'),
    cursor,
  }),
  annotations: reads('List pages in a space'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const id = await spaceId(ctx, site, args.space);
    const query = {
      depth: args.depth,
      title: args.title,
      sort: args.sort,
      limit: args.limit ?? 25,
      cursor: args.cursor,
    };
    const data = await wiki<Listing<RawPage>>(ctx, site, 'GET', path`/api/v2/spaces/${id}/pages`, {
      query,
      action: `list the pages of space ${args.space}`,
      scope: SCOPES.readPage,
    });
    return { spaceId: id, pages: results(data).map((p) => slimPage(p, site)), next: nextCursor(data) };
  },
});
