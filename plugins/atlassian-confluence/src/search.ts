/**
 * @module plugins/atlassian-confluence/src/search
 * CQL search (REST v1: v2 has none).
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { nextCursor, resolveSite, results, SCOPES, wiki, type Listing } from './api.js';
import { limit } from './schema.js';
import { stripHighlight, webUrl, type Links } from './shape.js';
import { decodeEntities } from './storage-text.js';

type Hit = {
  content?: { id?: string; type?: string; title?: string; _links?: Links };
  entityType?: string;
  title?: string;
  excerpt?: string;
  lastModified?: string;
};
type HitPlace = { resultGlobalContainer?: { title?: string }; url?: unknown };

export const search = defineTool({
  description:
    'Search Confluence wiki pages, blog posts, documentation and knowledge-base articles with CQL (Confluence Query Language) and get one page of slim rows (id, type, title, space, excerpt, last modified, url). Examples: `text ~ "onboarding" AND type = page`, `space = ENG AND title ~ "runbook"`, `label = "release-notes" ORDER BY lastmodified DESC`, `lastmodified > now("-7d")`, `creator = currentUser()`. When `next` is not null, call again with `cursor` set to it. Use confluence_get_page with a result\'s id to read the page.',
  input: z.object({
    cql: z
      .string()
      .min(1)
      .max(4000)
      .describe('CQL query, e.g. `text ~ "deploy" AND space = ENG`; may end with ORDER BY.'),
    limit: limit(100, 25, 'Results per page.'),
    cursor: z.string().max(2000).optional().describe('The `next` value of the previous page; omit for the first page.'),
  }),
  annotations: reads('Search Confluence (CQL)'),
  handler: async (ctx, args) => {
    const site = await resolveSite(ctx);
    const query = { cql: args.cql, limit: args.limit ?? 25, cursor: args.cursor };
    const data = await wiki<Listing<Hit & HitPlace>>(ctx, site, 'GET', '/rest/api/search', {
      query,
      action: 'search Confluence with CQL',
      scope: SCOPES.search,
    });
    const rows = results(data).map((r) => {
      const c = r.content || {};
      const excerpt = stripHighlight(decodeEntities(String(r.excerpt || '')))
        .replace(/\s+/g, ' ')
        .trim();
      return {
        id: c.id ?? null,
        type: c.type || r.entityType || null,
        title: stripHighlight(r.title || c.title || ''),
        space: r.resultGlobalContainer ? (r.resultGlobalContainer.title ?? null) : null,
        excerpt: excerpt.length > 300 ? `${excerpt.slice(0, 300)}…` : excerpt,
        lastModified: r.lastModified ?? null,
        url: typeof r.url === 'string' && r.url ? `${site.wiki}${r.url}` : webUrl(site, c._links),
      };
    });
    return {
      results: rows,
      count: rows.length,
      totalSize: typeof data.totalSize === 'number' ? data.totalSize : null,
      next: nextCursor(data),
    };
  },
});
