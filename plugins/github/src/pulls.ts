/**
 * @module plugins/github/src/pulls
 * Pull requests: list, read, open (with reviewers), edit, close, merge, and their changes (files
 * and the diff). Reviews and review comments are in reviews.ts.
 */
import { changes, defineTool, reads, textWindow, z } from 'workbench/plugin-sdk';
import { defaultBranch, gh, ghText, paging, repoPath } from './api.js';
import { direction, logins, page, perPage, pullNumber, repoArgs, SHA, teamSlugs, windowArgs } from './args.js';
import { askReviewers } from './reviews.js';
import { FULL_BODY_CHARS, LIST_BODY_CHARS, slimFile, slimPull, type File, type Pull } from './shape.js';

export const listPullRequests = defineTool({
  description:
    'Lists pull requests in a repository filtered by state, head branch or base branch. Returns number, title, state, draft, author, head/base branches, labels, requested reviewers, dates, html_url and a body snippet, plus `next`. To find PRs by author or reviewer across repositories use github_search_issues with type "pr".',
  input: z.object({
    ...repoArgs,
    state: z.enum(['open', 'closed', 'all']).default('open').describe('Pull request state (merged ones are "closed").'),
    head: z
      .string()
      .max(300)
      .optional()
      .describe('Source branch as "user:branch" or "org:branch", e.g. "octocat:fix-typo".'),
    base: z.string().min(1).max(255).optional().describe('Target branch, e.g. "main".'),
    sort: z.enum(['created', 'updated', 'popularity', 'long-running']).default('created').describe('Sort field.'),
    direction,
    per_page: perPage(30),
    page,
  }),
  annotations: reads('List pull requests', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = { state: a.state, head: a.head, base: a.base, sort: a.sort, direction: a.direction, ...paging(a) };
    const { data, next } = await gh<Pull[]>(ctx, 'GET', `${repoPath(a)}/pulls`, { query, what: 'pull requests' });
    return { pull_requests: data.map((p) => slimPull(p, LIST_BODY_CHARS)), next };
  },
});

export const getPullRequest = defineTool({
  description:
    'Returns one pull request: title, full body, state, draft, merged, mergeable state, author, head and base branches and head SHA, labels, requested reviewers, commit/addition/deletion/changed-file counts. Use github_get_pull_request_diff or github_list_pull_request_files for the changes.',
  input: z.object({ ...repoArgs, pull_number: pullNumber }),
  annotations: reads('Get a pull request', { idempotent: true }),
  handler: async (ctx, a) => {
    const { data } = await gh<Pull>(ctx, 'GET', `${repoPath(a)}/pulls/${a.pull_number}`, {
      what: `pull request #${a.pull_number}`,
    });
    return slimPull(data, FULL_BODY_CHARS);
  },
});

export const createPullRequest = defineTool({
  description:
    "Opens a pull request from a head branch into a base branch (default: the repository's default branch), optionally as a draft and with reviewers. The author is never requested as a reviewer (GitHub forbids it): such names are reported in reviewers_skipped. Returns the new number and html_url.",
  input: z.object({
    ...repoArgs,
    title: z.string().min(1).max(256).describe('Pull request title.'),
    head: z.string().min(1).max(300).describe('Branch with the changes; "user:branch" for a branch in a fork.'),
    base: z.string().min(1).max(255).optional().describe('Branch to merge into. Default: the default branch.'),
    body: z.string().max(65536).optional().describe('Description in GitHub Markdown.'),
    draft: z.boolean().default(false).describe('Open as a draft.'),
    maintainer_can_modify: z.boolean().optional().describe('Let maintainers push to the head branch (forks only).'),
    reviewers: logins.optional().describe('Logins to request reviews from.'),
    team_reviewers: teamSlugs.optional().describe('Team slugs to request reviews from.'),
  }),
  annotations: changes('Open a pull request'),
  handler: async (ctx, a) => {
    const base = a.base || (await defaultBranch(ctx, a));
    const body = {
      title: a.title,
      head: a.head,
      base,
      body: a.body,
      draft: a.draft,
      maintainer_can_modify: a.maintainer_can_modify,
    };
    const { data } = await gh<Pull>(ctx, 'POST', `${repoPath(a)}/pulls`, { body, what: 'creating the pull request' });
    const created = slimPull(data, LIST_BODY_CHARS);
    if (!a.reviewers?.length && !a.team_reviewers?.length) return created;
    try {
      return { ...created, ...(await askReviewers(ctx, a, data)) };
    } catch (err) {
      // the pull request exists: report it, and what went wrong with the reviewers
      return {
        ...created,
        reviewers_warning: `The pull request was created, but requesting reviewers failed: ${(err as Error).message}`,
      };
    }
  },
});

export const updatePullRequest = defineTool({
  description:
    "Edits a pull request's title, body or base branch, or closes / reopens it (state). Only the fields passed are changed. To merge, use github_merge_pull_request; for labels and assignees use github_update_issue.",
  input: z.object({
    ...repoArgs,
    pull_number: pullNumber,
    title: z.string().min(1).max(256).optional().describe('New title.'),
    body: z.string().max(65536).optional().describe('New description (replaces the old one).'),
    state: z.enum(['open', 'closed']).optional().describe('"closed" closes without merging; "open" reopens.'),
    base: z.string().min(1).max(255).optional().describe('New target branch.'),
    maintainer_can_modify: z.boolean().optional().describe('Let maintainers push to the head branch.'),
  }),
  annotations: changes('Update or close a pull request', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    const patch = {
      title: a.title,
      body: a.body,
      state: a.state,
      base: a.base,
      maintainer_can_modify: a.maintainer_can_modify,
    };
    if (Object.values(patch).every((v) => v === undefined))
      throw new Error('Nothing to change: pass at least one of title, body, state, base, maintainer_can_modify.');
    const { data } = await gh<Pull>(ctx, 'PATCH', `${repoPath(a)}/pulls/${a.pull_number}`, {
      body: patch,
      what: `pull request #${a.pull_number}`,
    });
    return slimPull(data, LIST_BODY_CHARS);
  },
});

export const mergePullRequest = defineTool({
  description:
    'Merges a pull request with a merge commit, squash or rebase. Pass sha (the head SHA you reviewed) to refuse the merge if new commits arrived. Fails with a clear message when the PR is not mergeable (conflicts, failing required checks, missing approvals). Returns the merge commit SHA.',
  input: z.object({
    ...repoArgs,
    pull_number: pullNumber,
    merge_method: z.enum(['merge', 'squash', 'rebase']).default('merge').describe('How to merge.'),
    commit_title: z.string().max(256).optional().describe('Title of the merge/squash commit.'),
    commit_message: z.string().max(65536).optional().describe('Extra detail for the merge/squash commit message.'),
    sha: z.string().regex(SHA).optional().describe('Expected head SHA; the merge fails (409) if the head moved.'),
  }),
  annotations: changes('Merge a pull request', { destructive: true }),
  handler: async (ctx, a) => {
    const body = {
      merge_method: a.merge_method,
      commit_title: a.commit_title,
      commit_message: a.commit_message,
      sha: a.sha,
    };
    type Merge = { merged?: boolean; sha: string; message: string };
    const { data } = await gh<Merge>(ctx, 'PUT', `${repoPath(a)}/pulls/${a.pull_number}/merge`, {
      body,
      what: `merging #${a.pull_number}`,
    });
    return { merged: !!data.merged, sha: data.sha, message: data.message };
  },
});

export const listPullRequestFiles = defineTool({
  description:
    'Lists the files a pull request changes: filename, status (added, modified, removed, renamed), additions, deletions and the patch (truncated to 1,200 characters per file), plus `next`. For the complete diff text use github_get_pull_request_diff.',
  input: z.object({ ...repoArgs, pull_number: pullNumber, per_page: perPage(30), page }),
  annotations: reads('List changed files of a pull request', { idempotent: true }),
  handler: async (ctx, a) => {
    const { data, next } = await gh<File[]>(ctx, 'GET', `${repoPath(a)}/pulls/${a.pull_number}/files`, {
      query: paging(a),
      what: `files of #${a.pull_number}`,
    });
    return { files: data.map(slimFile), next };
  },
});

export const getPullRequestDiff = defineTool({
  description:
    'Returns the full unified diff of a pull request (the code changes) as text, in windows of max_chars; pass `next_offset` back as offset to read the rest. Use it to review the actual code changes.',
  input: z.object({ ...repoArgs, pull_number: pullNumber, ...windowArgs }),
  annotations: reads('Get a pull request diff', { idempotent: true }),
  handler: async (ctx, a) => {
    const diff = await ghText(
      ctx,
      `${repoPath(a)}/pulls/${a.pull_number}`,
      `diff of #${a.pull_number}`,
      'application/vnd.github.diff',
    );
    return textWindow(diff, a.offset, a.max_chars);
  },
});
