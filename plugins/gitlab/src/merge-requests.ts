/**
 * @module plugins/gitlab/src/merge-requests
 * Merge requests: list, read, open, change (draft or ready, retarget, relabel, reassign), merge
 * (with each refusal said in words an agent can act on), review the diffs, comment.
 * One module on purpose (a little over 400 lines): one tool after another, each short, sharing the
 * merge request's shape and the merge refusals.
 */
import { changes, defineTool, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import {
  crossProjectScope,
  defaultBranch,
  get,
  GitLabError,
  idsFor,
  isEmpty,
  list,
  paging,
  projectPath,
  send,
  someIds,
} from './api.js';
import {
  fullMergeRequest,
  LIST_TEXT_CHARS,
  slimMergeRequest,
  slimNote,
  who,
  type MergeRequest,
  type Note,
  type User,
} from './shape.js';
import {
  comment,
  labels,
  markdown,
  mergeRequestIid,
  optionalProject,
  page,
  paged,
  perPage,
  project,
  sha,
  sort,
  text255,
  username,
  usernames,
} from './schema.js';

/** all diffs of one gitlab_get_merge_request_diffs answer together, at most */
const DIFF_BUDGET_CHARS = 200000;

/** GitLab's REST API marks a draft by the title's "Draft:" prefix. */
const DRAFT_PREFIX = /^\s*(draft:|\[draft\]|\(draft\))\s*/i;

/** What `detailed_merge_status` means for someone who wants to merge now. */
const MERGE_BLOCKERS = new Map([
  ['not_open', 'it is not open (closed or already merged)'],
  ['draft_status', 'it is a draft: mark it ready first (gitlab_update_merge_request with draft: false)'],
  ['discussions_not_resolved', 'it has unresolved threads that must be resolved first'],
  ['not_approved', 'it lacks the approvals it needs'],
  ['requested_changes', 'a reviewer requested changes'],
  ['ci_must_pass', 'the pipeline must succeed first (project setting) and it has not'],
  ['ci_still_running', 'its pipeline is still running'],
  ['need_rebase', 'the source branch must be rebased onto the target branch first'],
  ['conflict', 'it has conflicts with the target branch'],
  ['blocked_status', 'it is blocked by another merge request'],
  ['merge_request_blocked', 'it is blocked by another merge request'],
  ['checking', 'GitLab is still checking whether it can be merged: try again in a few seconds'],
  ['unchecked', 'GitLab has not checked yet whether it can be merged: try again in a few seconds'],
  ['preparing', 'GitLab is still preparing it: try again in a few seconds'],
  ['approvals_syncing', 'its approvals are still being synchronised: try again in a few seconds'],
  ['jira_association_missing', 'its title or description must reference a Jira issue'],
  ['external_status_checks', 'external status checks have not passed'],
  ['security_policy_violations', 'security policies are violated'],
  ['locked_paths', 'it changes paths locked by another user'],
  ['locked_lfs_files', 'it changes LFS files locked by another user'],
  ['title_regex', 'its title does not match the pattern the project requires'],
  ['merge_time', 'it may not be merged before its merge_after time'],
  ['commits_status', 'its source branch has no commits or is missing'],
]);

const mrPath = (ctx: PluginContext, a: { project: unknown; merge_request_iid: number }) =>
  `${projectPath(ctx, a)}/merge_requests/${a.merge_request_iid}`;
const readMergeRequest = (ctx: PluginContext, a: { project: unknown; merge_request_iid: number }) =>
  get<MergeRequest>(ctx, mrPath(ctx, a), { action: `merge request !${a.merge_request_iid}` });

export const listMergeRequests = defineTool({
  description:
    "Lists GitLab merge requests (MRs) of one project, or across all projects when `project` is left out (then `scope` chooses: created_by_me, assigned_to_me or all; left out, it is all when author_username or reviewer_username is given, else GitLab's default created_by_me), filtered by state (default opened), labels, author, reviewer, source or target branch or a search text. Rows: iid, reference (group/project!7), title, state, draft, author, assignees, reviewers, branches, labels, detailed merge status and web URL. To find MRs waiting for my review, pass reviewer_username with my username (gitlab_get_current_user). When `next` is not null, pass it as `page`.",
  input: z
    .object({
      ...optionalProject,
      state: z.enum(['opened', 'closed', 'locked', 'merged', 'all']).default('opened'),
      scope: z
        .enum(['created_by_me', 'assigned_to_me', 'all'])
        .optional()
        .describe(
          "Whose merge requests: created_by_me, assigned_to_me or all. In a project the default is all; without a project it is all when author_username or reviewer_username is given, else created_by_me (GitLab's default).",
        ),
      labels: labels.optional().describe('Only merge requests with all of these labels.'),
      author_username: username.optional().describe('Only merge requests opened by this username.'),
      reviewer_username: username.optional().describe('Only merge requests with this reviewer.'),
      source_branch: text255.optional().describe('Only merge requests from this branch.'),
      target_branch: text255.optional().describe('Only merge requests into this branch.'),
      search: text255.optional().describe('Text to find in the title or description.'),
      order_by: z.enum(['created_at', 'updated_at', 'title', 'merged_at']).default('updated_at'),
      sort,
      ...paged,
    })
    .meta({ required: [] }),
  annotations: reads('List merge requests', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = {
      state: a.state,
      scope: crossProjectScope(a, [a.author_username, a.reviewer_username]),
      labels: a.labels?.join(','),
      author_username: a.author_username,
      reviewer_username: a.reviewer_username,
      source_branch: a.source_branch,
      target_branch: a.target_branch,
      search: a.search,
      order_by: a.order_by,
      sort: a.sort,
      ...paging(a),
    };
    const path = a.project !== undefined ? `${projectPath(ctx, a)}/merge_requests` : '/merge_requests';
    const { rows, next } = await list<MergeRequest>(ctx, path, { query, action: 'merge requests' });
    return { merge_requests: rows.map((m) => slimMergeRequest(m, LIST_TEXT_CHARS)), next };
  },
});

export const getMergeRequest = defineTool({
  description:
    'Reads one GitLab merge request by its iid (!7 in the project): title, state, draft, branches, author, assignees, reviewers, labels, whether and why it can be merged (detailed_merge_status: mergeable, ci_must_pass, not_approved, conflict, draft_status, …), conflicts, head pipeline status, head sha (pass it to gitlab_merge_merge_request), merge and squash settings and the whole description. Use gitlab_get_merge_request_diffs for the changed files.',
  input: z.object({ ...project, ...mergeRequestIid }),
  annotations: reads('Get merge request', { idempotent: true }),
  handler: async (ctx, a) => fullMergeRequest(await readMergeRequest(ctx, a)),
});

export const createMergeRequest = defineTool({
  description:
    "Opens a GitLab merge request from a source branch into a target branch (default: the project's default branch) and returns its iid and web URL. Assignees and reviewers are given by username; `draft: true` opens it as a draft. Use gitlab_create_branch first if the branch does not exist yet.",
  input: z.object({
    ...project,
    source_branch: text255.describe('The branch with the changes.'),
    target_branch: text255.optional().describe("The branch to merge into; default: the project's default branch."),
    title: text255,
    description: markdown.optional().describe('Markdown description ("Closes #12" closes the issue on merge).'),
    draft: z.boolean().default(false).describe('Open it as a draft (title prefixed with "Draft:").'),
    labels: labels.optional().describe('Labels to set.'),
    assignees: usernames.optional().describe('Usernames to assign.'),
    reviewers: usernames.optional().describe('Usernames to request a review from.'),
    remove_source_branch: z.boolean().optional().describe('Delete the source branch when it is merged.'),
    squash: z.boolean().optional().describe('Squash the commits into one when it is merged.'),
  }),
  annotations: changes('Create merge request'),
  handler: async (ctx, a) => {
    const target = a.target_branch || (await defaultBranch(ctx, a));
    const title = a.draft && !/^(draft:|\[draft\]|\(draft\))/i.test(a.title) ? `Draft: ${a.title}` : a.title;
    const body = {
      source_branch: a.source_branch,
      target_branch: target,
      title,
      description: a.description,
      labels: a.labels?.join(','),
      assignee_ids: await someIds(ctx, a.assignees, 'assignee'),
      reviewer_ids: await someIds(ctx, a.reviewers, 'reviewer'),
      remove_source_branch: a.remove_source_branch,
      squash: a.squash,
    };
    return slimMergeRequest(
      await send<MergeRequest>(
        ctx,
        'POST',
        `${projectPath(ctx, a)}/merge_requests`,
        body,
        'creating the merge request',
      ),
      LIST_TEXT_CHARS,
    );
  },
});

export const updateMergeRequest = defineTool({
  description:
    'Changes an existing GitLab merge request: close or reopen it (state_event), mark it draft or ready, edit title or description, retarget it, replace, add or remove labels, set assignees or reviewers by username (an empty list clears them), or its squash and remove-source-branch settings. Give only what changes. To merge it use gitlab_merge_merge_request.',
  input: z.object({
    ...project,
    ...mergeRequestIid,
    state_event: z.enum(['close', 'reopen']).optional(),
    draft: z.boolean().optional().describe('true marks it as a draft, false as ready for review.'),
    title: text255
      .optional()
      .describe('New title. Without `draft`, a draft stays a draft (the "Draft: " prefix is kept).'),
    description: markdown.optional().describe('New Markdown description (replaces the old one).'),
    target_branch: text255.optional().describe('New target branch.'),
    labels: labels.optional().describe('Replace all labels with these (an empty list removes them all).'),
    add_labels: labels.optional().describe('Labels to add.'),
    remove_labels: labels.optional().describe('Labels to remove.'),
    assignees: usernames.optional().describe('Replace the assignees; an empty list clears them.'),
    reviewers: usernames.optional().describe('Replace the reviewers; an empty list clears them.'),
    remove_source_branch: z.boolean().optional(),
    squash: z.boolean().optional(),
    discussion_locked: z.boolean().optional(),
  }),
  annotations: changes('Update, close or reopen merge request', { idempotent: true }),
  handler: async (ctx, a) => {
    const path = mrPath(ctx, a);
    const body: Record<string, unknown> = {
      title: a.title,
      description: a.description,
      state_event: a.state_event,
      target_branch: a.target_branch,
      labels: a.labels?.join(','),
      add_labels: a.add_labels?.join(','),
      remove_labels: a.remove_labels?.join(','),
      remove_source_branch: a.remove_source_branch,
      squash: a.squash,
      discussion_locked: a.discussion_locked,
    };
    if (isEmpty(body) && a.assignees === undefined && a.reviewers === undefined && a.draft === undefined) {
      throw new Error(
        'Nothing to change: pass at least one of title, description, state_event, draft, target_branch, labels, add_labels, remove_labels, assignees, reviewers, remove_source_branch, squash, discussion_locked.',
      );
    }
    // a new title without the "Draft:" prefix would mark a draft ready, so a title change alone
    // keeps the merge request's current draft state
    let draft = a.draft;
    let title = a.title;
    if (draft === undefined && title !== undefined && !DRAFT_PREFIX.test(title)) {
      const current = await readMergeRequest(ctx, a);
      if (current.draft || current.work_in_progress) draft = true;
    }
    if (draft !== undefined) {
      if (title === undefined) title = (await readMergeRequest(ctx, a)).title;
      const bare = title.replace(DRAFT_PREFIX, '');
      body['title'] = draft ? `Draft: ${bare}` : bare;
    }
    body['assignee_ids'] = await idsFor(ctx, a.assignees, 'assignee');
    body['reviewer_ids'] = await idsFor(ctx, a.reviewers, 'reviewer');
    return slimMergeRequest(
      await send<MergeRequest>(ctx, 'PUT', path, body, `merge request !${a.merge_request_iid}`),
      LIST_TEXT_CHARS,
    );
  },
});

/** Why GitLab would not merge, read back from the merge request's own detailed_merge_status; null when it cannot be read. */
async function mergeBlocker(
  ctx: PluginContext,
  a: { project: unknown; merge_request_iid: number },
  status: number,
): Promise<string | null> {
  try {
    const mr = await readMergeRequest(ctx, a);
    const merge = mr.detailed_merge_status || mr.merge_status;
    if (mr.has_conflicts && status !== 405) return MERGE_BLOCKERS.get('conflict')!;
    if (merge && MERGE_BLOCKERS.has(merge)) return `${MERGE_BLOCKERS.get(merge)} (detailed_merge_status: ${merge})`;
    return merge ? `detailed_merge_status is ${merge}` : null;
  } catch {
    return null;
  }
}

/** The merge endpoint's refusals (401, 405, 406, 409, 422) in words; the error as it is for any other. */
async function mergeRefusal(
  ctx: PluginContext,
  a: { project: unknown; merge_request_iid: number },
  err: unknown,
): Promise<unknown> {
  if (!(err instanceof GitLabError)) return err;
  const iid = a.merge_request_iid;
  const status = err.status;
  const said = err.said ? ` GitLab said: ${err.said}` : '';
  if (status === 405 || status === 406 || status === 422) {
    const reason = await mergeBlocker(ctx, a, status);
    if (status === 405) {
      return new Error(
        `GitLab will not merge !${iid} now (405 not mergeable): ${reason || 'it is a draft, closed, has unresolved threads, lacks approvals, or its pipeline must succeed first'}. To have GitLab merge it when the pipeline succeeds, call again with auto_merge: true.${said}`,
      );
    }
    return new Error(
      `GitLab could not merge !${iid} (${status} ${status === 406 ? 'conflicts' : 'merge failed'}): ${reason || 'the source branch has conflicts with the target branch or must be rebased'}. Resolve the conflicts or rebase the source branch, then merge again.${said}`,
    );
  }
  if (status === 409) {
    return new Error(
      `The source branch of !${iid} has moved (409): the sha you passed is no longer its HEAD, so GitLab did not merge. Read the merge request again (gitlab_get_merge_request), review the new commits, and merge with the new sha.${said}`,
    );
  }
  if (status === 401) {
    // the merge endpoint answers 401 also when the user may not merge: tell the two apart
    try {
      await get<User>(ctx, '/user', { action: 'checking the token' });
    } catch {
      return err;
    }
    return new Error(
      `GitLab refused to merge !${iid} (401): you are not allowed to merge into its target branch (a protected branch, or your role is below the one allowed to merge).${said}`,
    );
  }
  return err;
}

export const mergeMergeRequest = defineTool({
  description:
    'Merges (accepts) a GitLab merge request into its target branch, optionally squashing its commits and deleting the source branch. Pass `sha` (from gitlab_get_merge_request) so that it merges only what was reviewed. If the MR cannot be merged now, the error says why (draft, unresolved threads, approvals missing, pipeline must succeed or still running, conflicts, rebase needed); `auto_merge: true` asks GitLab to merge it when its pipeline succeeds instead.',
  input: z.object({
    ...project,
    ...mergeRequestIid,
    squash: z.boolean().optional().describe('Squash all commits into one.'),
    remove_source_branch: z.boolean().optional().describe('Delete the source branch after merging.'),
    sha: sha.optional().describe('Merge only if the source branch HEAD is still this commit.'),
    merge_commit_message: z.string().min(1).max(10000).optional(),
    squash_commit_message: z.string().min(1).max(10000).optional(),
    auto_merge: z.boolean().default(false).describe('Merge automatically when the pipeline succeeds, instead of now.'),
  }),
  annotations: changes('Merge merge request', { destructive: true }),
  handler: async (ctx, a) => {
    const body = {
      squash: a.squash,
      should_remove_source_branch: a.remove_source_branch,
      sha: a.sha,
      merge_commit_message: a.merge_commit_message,
      squash_commit_message: a.squash_commit_message,
      // `auto_merge` replaced merge_when_pipeline_succeeds in GitLab 17.11; older instances know only the latter
      auto_merge: a.auto_merge ? true : undefined,
      merge_when_pipeline_succeeds: a.auto_merge ? true : undefined,
    };
    let mr: MergeRequest;
    try {
      mr = await send<MergeRequest>(ctx, 'PUT', `${mrPath(ctx, a)}/merge`, body, `merging !${a.merge_request_iid}`);
    } catch (err) {
      throw await mergeRefusal(ctx, a, err);
    }
    return {
      iid: mr.iid,
      state: mr.state,
      merged: mr.state === 'merged',
      auto_merge: !mr.merged_at && !!mr.merge_when_pipeline_succeeds,
      merge_commit_sha: mr.merge_commit_sha || null,
      squash_commit_sha: mr.squash_commit_sha || null,
      merged_by: who(mr.merge_user || mr.merged_by),
      merged_at: mr.merged_at || null,
      web_url: mr.web_url,
    };
  },
});

interface Diff {
  old_path: string;
  new_path: string;
  diff?: string;
  new_file?: boolean;
  deleted_file?: boolean;
  renamed_file?: boolean;
  generated_file?: boolean;
  too_large?: boolean;
  collapsed?: boolean;
}

export const getMergeRequestDiffs = defineTool({
  description:
    'Lists the files a GitLab merge request changes, each with its change type (added, modified, renamed, deleted) and unified diff (each cut at max_diff_chars, with a note saying so). Use it to review the code of an MR. When `next` is not null, pass it as `page` for more files.',
  input: z.object({
    ...project,
    ...mergeRequestIid,
    max_diff_chars: z.int().min(200).max(50000).default(5000).describe("Characters of each file's diff at most."),
    per_page: perPage(20, 'Files per page.'),
    page,
  }),
  annotations: reads('Get merge request changes (diffs)', { idempotent: true }),
  handler: async (ctx, a) => {
    const { rows, next } = await list<Diff>(ctx, `${mrPath(ctx, a)}/diffs`, {
      query: paging(a),
      action: `diffs of !${a.merge_request_iid}`,
    });
    let budget = DIFF_BUDGET_CHARS;
    let left = 0;
    const files = rows.map((d) => {
      const diff = typeof d.diff === 'string' ? d.diff : '';
      const change = d.new_file ? 'added' : d.deleted_file ? 'deleted' : d.renamed_file ? 'renamed' : 'modified';
      const out: {
        old_path: string;
        new_path: string;
        change: string;
        generated?: true;
        diff?: string | null;
        note?: string;
      } = { old_path: d.old_path, new_path: d.new_path, change };
      if (d.generated_file) out.generated = true;
      const max = Math.min(a.max_diff_chars, budget);
      if (max <= 0) {
        left++;
        out.diff = null;
        out.note = 'diff left out: this answer reached its size limit; ask for this file with a smaller per_page';
        return out;
      }
      out.diff = diff.length > max ? diff.slice(0, max) : diff;
      if (diff.length > max)
        out.note = `diff cut at ${max} of ${diff.length} characters; see it whole at the merge request's web page`;
      else if (!diff && (d.too_large || d.collapsed))
        out.note = `GitLab sent no diff for this file (${d.too_large ? 'too large' : 'collapsed'}); see it on the merge request's web page`;
      else if (!diff) out.note = 'no textual diff (binary file, or only the mode changed)';
      budget -= out.diff.length;
      return out;
    });
    return {
      files,
      next,
      ...(left ? { note: `${left} diff(s) left out to keep the answer under ${DIFF_BUDGET_CHARS} characters` } : {}),
    };
  },
});

export const addMergeRequestNote = defineTool({
  description:
    'Comments on a GitLab merge request: adds a note (a review comment, reply or remark on the MR as a whole) in Markdown; `internal: true` makes it visible to project members only. Returns the note id, author and time.',
  input: z.object({
    ...project,
    ...mergeRequestIid,
    ...comment,
    internal: z.boolean().default(false).describe('Visible only to project members.'),
  }),
  annotations: changes('Comment on merge request (review note)'),
  handler: async (ctx, a) =>
    slimNote(
      await send<Note>(
        ctx,
        'POST',
        `${mrPath(ctx, a)}/notes`,
        { body: a.body, internal: a.internal },
        `commenting on !${a.merge_request_iid}`,
      ),
    ),
});
