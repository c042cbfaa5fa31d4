/**
 * @module plugins/atlassian-bitbucket/src/pull-review
 * Reviewing a pull request beyond approving it: request changes (or withdraw the request), read the
 * commits it would merge, and see the default reviewers a new pull request gets.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { bb, call, cursorOf, pageQuery, prPath, repoPath, values, type Page } from './api.js';
import { cursor, pagelen, pr, repo } from './fields.js';
import { slimCommit, slimUser, type Commit, type User } from './shape.js';

const openOnly = 'read it with bitbucket_get_pull_request.';

export const requestChanges = defineTool({
  description:
    'Request changes on a Bitbucket pull request as the connected user (action "request", the default): it shows as "changes requested" and blocks merging where the repository requires it. `comment` also posts a comment saying what to change. Action "withdraw" removes your request. Returns whether you now request changes.',
  input: z.object({
    ...pr,
    action: z
      .enum(['request', 'withdraw'])
      .default('request')
      .describe('"request" changes, or "withdraw" your earlier request.'),
    comment: z.string().min(1).max(30000).optional().describe('A comment (Markdown) to post with the request.'),
  }),
  annotations: changes('Request changes on pull request', { idempotent: true }),
  async handler(ctx, a) {
    const request = a.action !== 'withdraw';
    const res = await call<{ state?: string | null; user?: User } | undefined>(
      ctx,
      request ? 'POST' : 'DELETE',
      `${prPath(a)}/request-changes`,
      {
        action: `${request ? 'request changes on' : 'withdraw your change request on'} pull request #${a.pull_request_id}`,
        scope: 'pullrequest:write',
        hints: {
          409: `It may no longer be open, or you may already have done this: ${openOnly}`,
          400: `It may no longer be open: ${openOnly}`,
        },
      },
    );
    const out = {
      id: a.pull_request_id,
      changes_requested: request,
      state: request ? (res.data?.state ?? 'changes_requested') : null,
    };
    if (!a.comment || !request) return out;
    // the request is made: a comment that fails is reported with it, not thrown
    try {
      const c = await bb<{ id?: number }>(ctx, 'POST', `${prPath(a)}/comments`, {
        body: { content: { raw: a.comment } },
        action: `comment on pull request #${a.pull_request_id}`,
        scope: 'pullrequest:write',
      });
      return { ...out, comment_id: c?.id ?? null };
    } catch (err) {
      return { ...out, comment_id: null, comment_error: err instanceof Error ? err.message : String(err) };
    }
  },
});

export const listPullRequestCommits = defineTool({
  description:
    'List the commits of a Bitbucket pull request (what it would merge), newest first: hash, date, author, message and url. Cheaper than the diff for seeing its shape. When `next` is not null, pass it as `cursor`.',
  input: z.object({ ...pr, pagelen: pagelen(100, 30, 'Commits'), cursor }),
  annotations: reads('List pull request commits', { idempotent: true }),
  async handler(ctx, a) {
    const data = await bb<Page<Commit>>(ctx, 'GET', `${prPath(a)}/commits${pageQuery(a, { pagelen: a.pagelen })}`, {
      action: `list the commits of pull request #${a.pull_request_id}`,
      scope: 'pullrequest',
    });
    return { id: a.pull_request_id, commits: values(data).map(slimCommit), next: cursorOf(data) };
  },
});

type DefaultReviewer = { reviewer_type?: string; user?: User };

export const listDefaultReviewers = defineTool({
  description:
    "List a Bitbucket repository's default reviewers: the people added to every new pull request, from the repository's settings and from its project's (`from` says which). When `next` is not null, pass it as `cursor`.",
  input: z.object({ ...repo, pagelen: pagelen(100, 50, 'Reviewers'), cursor }),
  annotations: reads('List default reviewers', { idempotent: true }),
  async handler(ctx, a) {
    const data = await bb<Page<DefaultReviewer>>(
      ctx,
      'GET',
      `${repoPath(a)}/effective-default-reviewers${pageQuery(a, { pagelen: a.pagelen })}`,
      {
        action: `list the default reviewers of ${a.workspace}/${a.repo_slug}`,
        scope: 'pullrequest',
      },
    );
    return {
      reviewers: values(data).map((r) => ({ ...slimUser(r.user || {}), from: r.reviewer_type ?? null })),
      next: cursorOf(data),
    };
  },
});
