/**
 * @module plugins/github/src/issues
 * Issues (and pull requests seen as issues): list, search, read, file, change, comment, labels.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { gh, paging, repoPath } from './api.js';
import { bareInt, direction, issueNumber, labelNames, logins, page, perPage, repoArgs, since } from './args.js';
import {
  FULL_BODY_CHARS,
  LIST_BODY_CHARS,
  slimComment,
  slimIssue,
  type Comment,
  type Issue,
  type Search,
} from './shape.js';

export const listIssues = defineTool({
  description:
    'Lists issues in one repository (pull requests are left out), filtered by state, labels, assignee, creator, mention or milestone. Returns number, title, state, author, labels, assignees, comment count, dates, html_url and a body snippet, plus `next`. For searches across repositories or by text, use github_search_issues.',
  input: z.object({
    ...repoArgs,
    state: z.enum(['open', 'closed', 'all']).default('open').describe('Issue state.'),
    labels: z
      .string()
      .max(500)
      .optional()
      .describe('Comma-separated label names that must all be present, e.g. "bug,ui".'),
    assignee: z.string().max(39).optional().describe('Login of the assignee, "none" for unassigned, "*" for any.'),
    creator: z.string().max(39).optional().describe('Login of the author.'),
    mentioned: z.string().max(39).optional().describe('Login mentioned in the issue.'),
    milestone: z.string().max(100).optional().describe('Milestone number, "none" or "*".'),
    since,
    sort: z.enum(['created', 'updated', 'comments']).default('created').describe('Sort field.'),
    direction,
    per_page: perPage(30),
    page,
  }),
  annotations: reads('List issues', { idempotent: true }),
  handler: async (ctx, a) => {
    const { state, labels, assignee, creator, mentioned, milestone, since, sort, direction } = a;
    const query = { state, labels, assignee, creator, mentioned, milestone, since, sort, direction, ...paging(a) };
    const { data, next } = await gh<Issue[]>(ctx, 'GET', `${repoPath(a)}/issues`, { query, what: 'issues' });
    const issues = data.filter((i) => !i.pull_request).map((i) => slimIssue(i, LIST_BODY_CHARS));
    return { issues, skipped_pull_requests: data.length - issues.length, next };
  },
});

export const getIssue = defineTool({
  description:
    'Returns one issue (or pull request, seen as an issue) with its full body (up to 8,000 characters), state and reason, labels, assignees, milestone and comment count. Read the discussion with github_list_issue_comments.',
  input: z.object({ ...repoArgs, issue_number: issueNumber }),
  annotations: reads('Get an issue', { idempotent: true }),
  handler: async (ctx, a) => {
    const { data } = await gh<Issue>(ctx, 'GET', `${repoPath(a)}/issues/${a.issue_number}`, {
      what: `issue #${a.issue_number}`,
    });
    return slimIssue(data, FULL_BODY_CHARS);
  },
});

export const createIssue = defineTool({
  description:
    'Files a new issue (a bug report, feature request, task or ticket) in a GitHub repository, optionally with labels, assignees and a milestone. Returns the new issue number and html_url.',
  input: z.object({
    ...repoArgs,
    title: z.string().min(1).max(256).describe('Issue title.'),
    body: z.string().max(65536).optional().describe('Issue description in GitHub Markdown.'),
    labels: labelNames
      .optional()
      .describe('Label names to apply (they must exist in the repository; see github_list_labels).'),
    assignees: logins.optional().describe('Logins to assign.'),
    milestone: z.int().min(1).optional().describe('Milestone number.'),
  }),
  annotations: changes('Create an issue'),
  handler: async (ctx, a) => {
    const body = { title: a.title, body: a.body, labels: a.labels, assignees: a.assignees, milestone: a.milestone };
    const { data } = await gh<Issue>(ctx, 'POST', `${repoPath(a)}/issues`, { body, what: 'creating the issue' });
    return slimIssue(data, LIST_BODY_CHARS);
  },
});

export const updateIssue = defineTool({
  description:
    'Changes an issue: add a label or replace the labels, assign or unassign people, close it (state "closed" with state_reason "completed" or "not_planned"), reopen it, edit title or body, or set the milestone. Only the fields passed are changed. Works on pull requests too for labels and assignees. Returns the updated issue.',
  input: z.object({
    ...repoArgs,
    issue_number: issueNumber,
    title: z.string().min(1).max(256).optional().describe('New title.'),
    body: z.string().max(65536).optional().describe('New body (replaces the old one).'),
    state: z.enum(['open', 'closed']).optional().describe('"closed" to close, "open" to reopen.'),
    state_reason: z
      .enum(['completed', 'not_planned', 'duplicate', 'reopened'])
      .optional()
      .describe('Why the state changed.'),
    labels: labelNames.optional().describe('Replaces ALL labels with this list ([] removes every label).'),
    add_labels: labelNames.optional().describe('Labels to add, keeping the existing ones.'),
    assignees: logins.optional().describe('Replaces all assignees ([] unassigns everyone).'),
    milestone: z
      .union([bareInt, z.null()])
      .meta({ minimum: 1 })
      .optional()
      .describe('Milestone number, or null to clear it.'),
  }),
  annotations: changes('Update, close or reopen an issue', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    const issuePath = `${repoPath(a)}/issues/${a.issue_number}`;
    const { title, body, state, state_reason, labels, assignees, milestone } = a;
    // only what the agent passed is sent (JSON leaves out what is undefined; a null milestone clears it)
    const patch = { title, body, state, state_reason, labels, assignees, milestone };
    const patching = Object.values(patch).some((v) => v !== undefined);
    const adding = !!a.add_labels?.length;
    if (!patching && !adding)
      throw new Error(
        'Nothing to change: pass at least one of title, body, state, state_reason, labels, add_labels, assignees, milestone.',
      );
    let issue: Issue | undefined;
    if (patching)
      issue = (await gh<Issue>(ctx, 'PATCH', issuePath, { body: patch, what: `issue #${a.issue_number}` })).data;
    if (adding) {
      const { data: added } = await gh<Issue['labels']>(ctx, 'POST', `${issuePath}/labels`, {
        body: { labels: a.add_labels },
        what: `labels of issue #${a.issue_number}`,
      });
      issue ??= (await gh<Issue>(ctx, 'GET', issuePath, { what: `issue #${a.issue_number}` })).data;
      issue.labels = added;
    }
    // the PATCH or the labels ran (nothing to change was refused above), so there is an issue
    return slimIssue(issue as Issue, LIST_BODY_CHARS);
  },
});

export const addIssueComment = defineTool({
  description:
    "Posts a comment on an issue or on a pull request's conversation tab. Returns the comment id and html_url. For a reply attached to a line of code, use github_reply_to_review_comment.",
  input: z.object({
    ...repoArgs,
    issue_number: issueNumber,
    body: z.string().min(1).max(65536).describe('Comment text in GitHub Markdown.'),
  }),
  annotations: changes('Comment on an issue or pull request'),
  handler: async (ctx, a) => {
    const { data } = await gh<Comment>(ctx, 'POST', `${repoPath(a)}/issues/${a.issue_number}/comments`, {
      body: { body: a.body },
      what: `commenting on #${a.issue_number}`,
    });
    return slimComment(data);
  },
});

export const listIssueComments = defineTool({
  description:
    'Reads the discussion thread of an issue or pull request (its conversation comments), oldest first: author, date, body (up to 2,000 characters each), html_url, and `next`.',
  input: z.object({ ...repoArgs, issue_number: issueNumber, since, per_page: perPage(30), page }),
  annotations: reads('List issue comments', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = { since: a.since, ...paging(a) };
    const { data, next } = await gh<Comment[]>(ctx, 'GET', `${repoPath(a)}/issues/${a.issue_number}/comments`, {
      query,
      what: `comments of #${a.issue_number}`,
    });
    return { comments: data.map(slimComment), next };
  },
});

export const searchIssues = defineTool({
  description:
    'Searches issues or pull requests across all of GitHub with search syntax: pull requests waiting for my review ("review-requested:@me"), my open pull requests or issues, assigned to me, mentioning a term. Examples: "repo:acme/api is:open label:bug", "author:@me is:open", "review-requested:@me", "involves:octocat memory leak", "org:acme is:merged closed:>2025-01-01". Returns number, repository, title, state, author, labels, body snippet and html_url, plus `next`.',
  input: z.object({
    query: z
      .string()
      .min(1)
      .max(256)
      .describe(
        'Search query with qualifiers such as repo:, org:, is:open/closed/merged, label:, author:, assignee:, mentions:, review-requested:, created:>DATE. "@me" means the connected user.',
      ),
    type: z
      .enum(['issue', 'pr'])
      .default('issue')
      .describe('Search issues or pull requests (added as is:issue / is:pr unless the query already says).'),
    sort: z
      .enum(['comments', 'reactions', 'created', 'updated', 'interactions'])
      .optional()
      .describe('Sort field. Default: best match.'),
    order: direction,
    per_page: perPage(30),
    page,
  }),
  annotations: reads('Search issues and pull requests', { idempotent: true }),
  handler: async (ctx, a) => {
    let q = a.query;
    if (!/(^|\s)(is|type):(issue|pr|pull-request)\b/i.test(q)) q += a.type === 'pr' ? ' is:pr' : ' is:issue';
    const query = { q, sort: a.sort, order: a.order, advanced_search: 'true', ...paging(a) };
    const { data, next } = await gh<Search<Issue>>(ctx, 'GET', '/search/issues', { query, what: 'issue search' });
    return {
      total_count: data.total_count,
      incomplete_results: !!data.incomplete_results,
      items: (data.items || []).map((i) => slimIssue(i, LIST_BODY_CHARS)),
      next,
    };
  },
});

export const listLabels = defineTool({
  description:
    'Lists the labels defined in a repository (name, colour, description), to pick valid labels before creating or updating issues.',
  input: z.object({ ...repoArgs, per_page: perPage(100), page }),
  annotations: reads('List labels', { idempotent: true }),
  handler: async (ctx, a) => {
    type Label = { name: string; color: string; description?: string | null };
    const { data, next } = await gh<Label[]>(ctx, 'GET', `${repoPath(a)}/labels`, { query: paging(a), what: 'labels' });
    return { labels: data.map((l) => ({ name: l.name, color: l.color, description: l.description || null })), next };
  },
});
