/**
 * @module plugins/linear/src/comments
 * Reading an issue's comments (newest first, as Linear orders them) and adding one.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { gql, nextOf, nodes, PAGE, type Connection } from './api.js';
import { cursor, issue, limit, markdown } from './fields.js';
import { resolveIssue, UUID } from './resolve.js';
import { COMMENT, slimComment, type Comment } from './shape.js';

export const addComment = defineTool({
  description:
    "Add a comment (markdown) to a Linear issue, as the connected user. Returns the comment's id, time and link.",
  annotations: changes('Add comment'),
  input: z.object({ issue, body: markdown.min(1).describe('Comment text in markdown.') }),
  handler: async (ctx, args) => {
    const found = UUID.test(args.issue)
      ? { id: args.issue, identifier: null }
      : await resolveIssue(ctx, args.issue, `find issue ${args.issue}`);
    const data = await gql<{ commentCreate?: { success?: boolean; comment?: Comment | null } | null }>(
      ctx,
      `comment on issue ${args.issue}`,
      `mutation($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { ${COMMENT} } } }`,
      { input: { issueId: found.id, body: args.body } },
      { write: true },
    );
    const p = data.commentCreate;
    if (!p || !p.success || !p.comment)
      throw new Error(
        `Linear did not confirm the comment on ${args.issue}: check with linear_list_comments before trying again.`,
      );
    return { issue: found.identifier || args.issue, ...slimComment(p.comment) };
  },
});

export const listComments = defineTool({
  description:
    'Read the comments of a Linear issue (ENG-123), newest first: author, time, markdown body and link. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List comments'),
  input: z.object({ issue, limit: limit(25), cursor }),
  handler: async (ctx, args) => {
    const first = args.limit;
    const data = await gql<{ issue?: { identifier?: string | null; comments?: Connection } | null }>(
      ctx,
      `read the comments of issue ${args.issue}`,
      `query($id: String!, $first: Int!, $after: String) { issue(id: $id) { identifier comments(first: $first, after: $after, orderBy: createdAt) { nodes { ${COMMENT} } ${PAGE} } } }`,
      { id: args.issue, first, after: args.cursor ?? null },
      { tooLarge: 'ask for fewer comments with a smaller limit (1 reads one at a time)' },
    );
    if (!data.issue) throw new Error(`Linear found no issue ${args.issue}.`);
    const conn = data.issue.comments;
    return {
      issue: data.issue.identifier ?? args.issue,
      comments: nodes<Comment>(conn, first).map(slimComment),
      next: nextOf(conn),
    };
  },
});
