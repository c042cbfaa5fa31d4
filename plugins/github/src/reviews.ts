/**
 * @module plugins/github/src/reviews
 * Pull request reviews: list and submit reviews (with line comments), request reviewers (never
 * the author), and the review comments on lines of the diff with their replies.
 */
import { changes, defineTool, reads, segment, z, type PluginContext } from 'workbench/plugin-sdk';
import { gh, paging, repoPath, type RepoArgs } from './api.js';
import { logins, page, perPage, pullNumber, repoArgs, SHA, since, teamSlugs } from './args.js';
import {
  login,
  names,
  slimReview,
  slimReviewComment,
  teamNames,
  type Pull,
  type Review,
  type ReviewComment,
} from './shape.js';

/**
 * Requests reviews on a pull request. The author cannot review their own pull request (GitHub
 * answers 422), so the author is left out and reported instead of failing the whole call.
 */
export async function askReviewers(
  ctx: PluginContext,
  a: RepoArgs & { reviewers?: string[] | undefined; team_reviewers?: string[] | undefined },
  pull: Pull,
) {
  const author = (login(pull.user) || '').toLowerCase();
  const reviewers = (a.reviewers || []).filter((r) => r.toLowerCase() !== author);
  const skipped = (a.reviewers || []).filter((r) => r.toLowerCase() === author);
  const teams = a.team_reviewers || [];
  if (reviewers.length === 0 && teams.length === 0) {
    return {
      reviewers_requested: [],
      reviewers_skipped: skipped,
      note: 'No reviewer left to request: the pull request author cannot review their own pull request.',
    };
  }
  const body = { reviewers, team_reviewers: teams.length ? teams : undefined };
  const { data } = await gh<Pull>(
    ctx,
    'POST',
    `${repoPath(a)}/pulls/${segment(pull.number, 'pull_number')}/requested_reviewers`,
    { body, what: `requesting reviewers on #${pull.number}` },
  );
  return {
    reviewers_requested: names(data.requested_reviewers).concat(teamNames(data.requested_teams)),
    reviewers_skipped: skipped,
  };
}

export const listPullRequestReviews = defineTool({
  description:
    'Lists the reviews submitted on a pull request: reviewer, state (APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING), summary body, commit and date, plus `next`. Use it to check whether a PR is approved.',
  input: z.object({ ...repoArgs, pull_number: pullNumber, per_page: perPage(30), page }),
  annotations: reads('List pull request reviews', { idempotent: true }),
  handler: async (ctx, a) => {
    const { data, next } = await gh<Review[]>(ctx, 'GET', `${repoPath(a)}/pulls/${a.pull_number}/reviews`, {
      query: paging(a),
      what: `reviews of #${a.pull_number}`,
    });
    return { reviews: data.map(slimReview), next };
  },
});

const lineComment = z.strictObject({
  path: z.string().min(1).max(1000).describe('File path as shown in the diff.'),
  line: z.int().min(1).describe('Line number in the file (new version for side RIGHT). For a range, the last line.'),
  start_line: z.int().min(1).optional().describe('First line of a multi-line comment.'),
  side: z
    .enum(['LEFT', 'RIGHT'])
    .default('RIGHT')
    .describe('RIGHT: the new version (added or unchanged lines); LEFT: the old version (deleted lines).'),
  body: z.string().min(1).max(65536).describe('Comment text.'),
});

export const createPullRequestReview = defineTool({
  description:
    'Submits a review on a pull request: approve, request changes, or comment, with an overall body (required except to approve) and optional comments on specific lines of the diff. GitHub does not let authors approve their own pull request. Returns the review id and state.',
  input: z.object({
    ...repoArgs,
    pull_number: pullNumber,
    event: z
      .enum(['APPROVE', 'REQUEST_CHANGES', 'COMMENT'])
      .default('COMMENT')
      .describe(
        'Review verdict. REQUEST_CHANGES and COMMENT (the default) need body, even with line comments; only APPROVE may leave it out.',
      ),
    body: z
      .string()
      .max(65536)
      .optional()
      .describe(
        'Overall review text in Markdown. Required unless event is APPROVE (GitHub refuses a REQUEST_CHANGES or COMMENT review without it).',
      ),
    commit_id: z.string().regex(SHA).optional().describe('Head SHA the review is about. Default: the latest commit.'),
    comments: z.array(lineComment).max(50).optional().describe('Comments on lines of the diff.'),
  }),
  annotations: changes('Review a pull request'),
  handler: async (ctx, a) => {
    const event = a.event;
    if (event !== 'APPROVE' && !a.body?.trim()) {
      throw new Error(
        `A ${event} review needs a body: GitHub requires the overall review text for REQUEST_CHANGES and COMMENT, line comments or not, and refuses the review (422) without it. Pass body (e.g. a one-line summary of the line comments), or use event APPROVE.`,
      );
    }
    const comments = (a.comments || []).map((c) => ({
      path: c.path,
      body: c.body,
      line: c.line,
      side: c.side,
      start_line: c.start_line,
      start_side: c.start_line ? c.side : undefined,
    }));
    const body = { event, body: a.body, commit_id: a.commit_id, comments: comments.length ? comments : undefined };
    const { data } = await gh<Review>(ctx, 'POST', `${repoPath(a)}/pulls/${a.pull_number}/reviews`, {
      body,
      what: `reviewing #${a.pull_number}`,
    });
    return slimReview(data);
  },
});

export const requestReviewers = defineTool({
  description:
    'Asks users and/or teams to review a pull request. The pull request author is skipped (GitHub forbids self-review) and reported in reviewers_skipped rather than failing the call. Returns who is now requested.',
  input: z.object({
    ...repoArgs,
    pull_number: pullNumber,
    reviewers: logins.optional().describe('Logins to request reviews from.'),
    team_reviewers: teamSlugs.optional().describe('Team slugs (organisation repositories only).'),
  }),
  annotations: changes('Request reviewers'),
  handler: async (ctx, a) => {
    const { data: pull } = await gh<Pull>(ctx, 'GET', `${repoPath(a)}/pulls/${a.pull_number}`, {
      what: `pull request #${a.pull_number}`,
    });
    return { number: pull.number, ...(await askReviewers(ctx, a, pull)) };
  },
});

export const listPullRequestComments = defineTool({
  description:
    'Lists what reviewers said on specific lines of code in a pull request (review comments on the diff, not the conversation tab): file path, line, side, reviewer, body, diff hunk, and in_reply_to_id for threads, plus `next`. Use it to see what reviewers asked to change; reply with github_reply_to_review_comment.',
  input: z.object({ ...repoArgs, pull_number: pullNumber, since, per_page: perPage(30), page }),
  annotations: reads('List review comments on code', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = { since: a.since, ...paging(a) };
    const { data, next } = await gh<ReviewComment[]>(ctx, 'GET', `${repoPath(a)}/pulls/${a.pull_number}/comments`, {
      query,
      what: `review comments of #${a.pull_number}`,
    });
    return { comments: data.map(slimReviewComment), next };
  },
});

export const replyToReviewComment = defineTool({
  description:
    'Replies in the thread of a review comment on a line of a pull request (e.g. "Fixed in abc123"). Take comment_id from github_list_pull_request_comments (the top comment of the thread). Returns the new comment.',
  input: z.object({
    ...repoArgs,
    pull_number: pullNumber,
    comment_id: z.int().min(1).describe('Id of the review comment to reply to.'),
    body: z.string().min(1).max(65536).describe('Reply text in Markdown.'),
  }),
  annotations: changes('Reply to a review comment'),
  handler: async (ctx, a) => {
    const path = `${repoPath(a)}/pulls/${a.pull_number}/comments/${a.comment_id}/replies`;
    const { data } = await gh<ReviewComment>(ctx, 'POST', path, {
      body: { body: a.body },
      what: `replying to review comment ${a.comment_id}`,
    });
    return slimReviewComment(data);
  },
});
