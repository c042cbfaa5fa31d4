/**
 * @module plugins/notion/src/comments
 * Comments on a page: a new discussion or a reply in one, and the open comments of a page or block.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { nextOf, notion, results, type Json } from './api.js';
import { cursor, limit, ref } from './fields.js';
import { parseId } from './ids.js';
import { plain, richText } from './text.js';

function slimComment(c: Json) {
  const author =
    c['created_by'] && typeof c['created_by'] === 'object' ? (c['created_by'] as Json)['id'] || null : null;
  return {
    id: c['id'],
    discussionId: c['discussion_id'] ?? null,
    author,
    createdTime: c['created_time'] ?? null,
    text: plain(c['rich_text']),
  };
}

export const addComment = defineTool({
  description:
    "Add a comment to a Notion page (a new discussion at the top of the page), or reply in an existing discussion thread with `discussionId` (from notion_list_comments). Returns the comment's id and discussion id. Needs the integration's insert-comments capability.",
  annotations: changes('Comment on a Notion page'),
  input: z.object({
    page: ref.optional().describe('Link or id of the page to comment on.'),
    discussionId: ref.optional().describe('Reply in this discussion thread instead.'),
    text: z.string().min(1).max(20000).describe('The comment text.'),
  }),
  handler: async (ctx, args) => {
    if ([args.page, args.discussionId].filter(Boolean).length !== 1)
      throw new Error('Give exactly one of page (a new comment on the page) or discussionId (a reply in that thread).');
    const body: Json = { rich_text: richText(args.text) };
    let action: string;
    if (args.page) {
      const id = parseId(args.page, 'page');
      body['parent'] = { page_id: id };
      action = `comment on page ${id}`;
    } else {
      const d = parseId(args.discussionId, 'discussionId');
      body['discussion_id'] = d;
      action = `reply in discussion ${d}`;
    }
    return slimComment(await notion(ctx, 'POST', '/comments', { body, action }));
  },
});

export const listComments = defineTool({
  description:
    "List the open (unresolved) comments on a Notion page or block, oldest first: id, discussion id, author user id, time and text. When `next` is not null, pass it as `cursor` for the next page. Needs the integration's read-comments capability. Use notion_add_comment to reply.",
  annotations: reads('List comments on a Notion page'),
  input: z.object({ page: ref.describe('Link or id of the page or block.'), limit: limit(50, 'Comments'), cursor }),
  handler: async (ctx, args) => {
    const id = parseId(args.page, 'page');
    const query = { block_id: id, page_size: args.limit, start_cursor: args.cursor };
    const list = await notion(ctx, 'GET', '/comments', { query, action: `list the comments of ${id}` });
    return { page: id, comments: results(list).map(slimComment), next: nextOf(list) };
  },
});
