/**
 * @module plugins/atlassian-bitbucket/src/pulls
 * The pull-request tools: list, read, open, edit, approve, decline, merge, the diff and comments.
 * Reviewers are account ids, {uuid}s or nicknames looked up among the workspace's members, and
 * never the author (Bitbucket refuses a pull request that names its author as a reviewer).
 * One module on purpose (a little over 400 lines): one tool after another, each short, sharing the
 * reviewer look-up and the pull request's shape; a file per tool would scatter those.
 */
import { changes, defineTool, query, reads, segment, z, type PluginContext } from 'workbench/plugin-sdk';
import {
  bb,
  bbql,
  bbqlString,
  call,
  cursorOf,
  pageQuery,
  prPath,
  queryOfCursor,
  repoPath,
  values,
  webRepo,
  type Page,
  type RepoArgs,
} from './api.js';
import { branchName, cursor, maxChars, offset, pagelen, pr, bbqlFilter, repo, reviewers } from './fields.js';
import { detailPr, noteWindow, slimComment, slimPr, who, type Comment, type PullRequest, type User } from './shape.js';

/** pages of workspace members read at most to resolve reviewer nicknames */
const MEMBER_PAGES = 5;
const UUID_RE = /^\{[0-9A-Fa-f-]{36}\}$/;
// an Atlassian account id: "557058:<uuid>", or the older 24 hexadecimal digits
const ACCOUNT_ID_RE = /^([0-9]{1,10}:[0-9A-Fa-f-]{36}|[0-9a-f]{24})$/;

/** A reviewer as the agent named them, and the account that is. */
interface ReviewerRef {
  given: string;
  uuid?: string | undefined;
  account_id?: string | undefined;
}

/**
 * Turns reviewer names into account references: {uuid} and account ids as they are, nicknames
 * (or display names) looked up among the workspace's members. Unknown names fail the call.
 */
async function resolveReviewers(ctx: PluginContext, a: RepoArgs, names: string[]): Promise<ReviewerRef[]> {
  const refs: ReviewerRef[] = [];
  const wanted = new Map<string, string>();
  for (const n of names) {
    if (UUID_RE.test(n)) refs.push({ given: n, uuid: n });
    else if (ACCOUNT_ID_RE.test(n)) refs.push({ given: n, account_id: n });
    else wanted.set(n.toLowerCase(), n);
  }
  let q = query({ pagelen: 100 });
  for (let page = 0; page < MEMBER_PAGES && wanted.size && q; page++) {
    const data = await bb<Page<{ user?: User }>>(
      ctx,
      'GET',
      `/workspaces/${segment(a.workspace, 'workspace')}/members${q}`,
      {
        action: `look up reviewers among the members of workspace ${a.workspace}`,
        scope: 'account',
      },
    );
    for (const m of values(data)) {
      const u = m.user || {};
      const key = [u.nickname, u.display_name].find((k) => typeof k === 'string' && wanted.has(k.toLowerCase()));
      if (key === undefined) continue;
      refs.push({ given: wanted.get(key.toLowerCase())!, uuid: u.uuid, account_id: u.account_id });
      wanted.delete(key.toLowerCase());
    }
    const c = cursorOf(data);
    q = c ? queryOfCursor(c) : '';
  }
  if (wanted.size) {
    const missing = [...wanted.values()].map((n) => `"${n}"`).join(', ');
    throw new Error(
      `No member of workspace ${a.workspace} has the nickname ${missing}: pass their Atlassian account id (e.g. from bitbucket_get_pull_request of a past pull request) instead.`,
    );
  }
  return refs;
}

const isUser = (ref: ReviewerRef, u: User | null | undefined) =>
  !!u && ((!!ref.uuid && ref.uuid === u.uuid) || (!!ref.account_id && ref.account_id === u.account_id));
const reviewerBody = (ref: ReviewerRef) => (ref.uuid ? { uuid: ref.uuid } : { account_id: ref.account_id });

/** The reviewers to send, without the author (who may not review their own pull request), and who was left out. */
function withoutAuthor(refs: ReviewerRef[], author: User | null | undefined) {
  return {
    reviewers: refs.filter((r) => !isUser(r, author)).map(reviewerBody),
    skipped: refs.filter((r) => isUser(r, author)).map((r) => r.given),
  };
}

/** The result of a create or update: the pull request, its reviewers' names, and who was left out with `note`. */
function withReviewers<T extends object>(out: T, data: PullRequest, skipped: string[], note: string) {
  const result = { ...out, reviewers: (data.reviewers || []).map(who) };
  return skipped.length ? { ...result, reviewers_skipped: skipped, note } : result;
}

const openOnly = 'read it with bitbucket_get_pull_request.';

export const listPullRequests = defineTool({
  description:
    'List the PRs of a Bitbucket repository, open ones by default: id, title, state, author, source → destination branch, comment and task counts, dates, url. `state` takes one or more of OPEN, MERGED, DECLINED, SUPERSEDED. Narrow with `source_branch`, `destination_branch`, or a raw BBQL `query` such as `author.account_id = "…"` or `title ~ "login"`. When `next` is not null, pass it as `cursor`. For the description, reviewers and approvals of one, use bitbucket_get_pull_request.',
  input: z.object({
    ...repo,
    state: z
      .array(z.enum(['OPEN', 'MERGED', 'DECLINED', 'SUPERSEDED']))
      .min(1)
      .max(4)
      .meta({ uniqueItems: true })
      .default(['OPEN'])
      .describe('States to include.'),
    source_branch: branchName.optional().describe('Only those from this branch.'),
    destination_branch: branchName.optional().describe('Only those into this branch.'),
    query: bbqlFilter('`title ~ "hotfix"` or `reviewers.account_id = "557058:…"`'),
    sort: z
      .enum(['-updated_on', 'updated_on', '-created_on', 'created_on', '-id', 'id'])
      .default('-updated_on')
      .describe('Sort order (- means descending).'),
    pagelen: z.int().min(1).max(50).default(25).describe('Results per page (at most 50).'),
    cursor,
  }),
  annotations: reads('List pull requests', { idempotent: true }),
  async handler(ctx, a) {
    const q = bbql(
      [
        a.source_branch && `source.branch.name = ${bbqlString(a.source_branch)}`,
        a.destination_branch && `destination.branch.name = ${bbqlString(a.destination_branch)}`,
      ],
      a.query,
    );
    const data = await bb<Page<PullRequest>>(
      ctx,
      'GET',
      `${repoPath(a)}/pullrequests${pageQuery(a, { state: a.state, q, sort: a.sort, pagelen: a.pagelen })}`,
      {
        action: `list the pull requests of ${a.workspace}/${a.repo_slug}`,
        scope: 'pullrequest',
      },
    );
    return { pull_requests: values(data).map(slimPr), next: cursorOf(data) };
  },
});

const readPr = async (ctx: PluginContext, a: RepoArgs & { pull_request_id: number }) =>
  (await bb<PullRequest>(ctx, 'GET', prPath(a), {
    action: `read pull request #${a.pull_request_id}`,
    scope: 'pullrequest',
  }))!;

export const getPullRequest = defineTool({
  description:
    'Read one Bitbucket pull request: title, description, state, draft, author, source and destination branches and commits, reviewers, who approved it or requested changes, merge commit, comment and task counts, url. Use bitbucket_get_pull_request_diff for the code changes and bitbucket_list_pull_request_comments for the discussion.',
  input: z.object(pr),
  annotations: reads('Get pull request', { idempotent: true }),
  handler: async (ctx, a) => detailPr(await readPr(ctx, a)),
});

export const createPullRequest = defineTool({
  description:
    "Raise a Bitbucket PR for review, from a source branch into a destination (default: the repository's main branch), with optional description, reviewers, draft flag and close-source-branch-on-merge. Reviewers are account ids, {uuid}s or workspace nicknames; an author cannot review their own work, so you are left out and reported in `reviewers_skipped`. Returns its id and url.",
  input: z.object({
    ...repo,
    title: z.string().min(1).max(255).describe('Title.'),
    source_branch: branchName.describe('Branch with the changes.'),
    destination_branch: branchName
      .optional()
      .describe("Branch to merge into; default: the repository's default branch."),
    description: z.string().max(30000).optional().describe('Description (Markdown).'),
    reviewers: reviewers
      .optional()
      .describe(
        'Reviewers: Atlassian account ids (e.g. 557058:…), Bitbucket UUIDs in braces, or nicknames of workspace members.',
      ),
    close_source_branch: z.boolean().default(false).describe('Delete the source branch once merged.'),
    draft: z.boolean().default(false).describe('Mark it as a draft.'),
  }),
  annotations: changes('Create pull request'),
  async handler(ctx, a) {
    let chosen: ReturnType<typeof withoutAuthor> | undefined;
    if (a.reviewers?.length) {
      const refs = await resolveReviewers(ctx, a, a.reviewers);
      const me = await bb<User>(ctx, 'GET', '/user', { action: 'read your Bitbucket account', scope: 'account' });
      chosen = withoutAuthor(refs, me);
    }
    const body = {
      title: a.title,
      source: { branch: { name: a.source_branch } },
      ...(a.destination_branch ? { destination: { branch: { name: a.destination_branch } } } : {}),
      ...(a.description ? { description: a.description } : {}),
      close_source_branch: !!a.close_source_branch,
      ...(a.draft ? { draft: true } : {}),
      ...(chosen ? { reviewers: chosen.reviewers } : {}),
    };
    const data = (await bb<PullRequest>(ctx, 'POST', `${repoPath(a)}/pullrequests`, {
      body,
      action: `create a pull request from ${a.source_branch} in ${a.workspace}/${a.repo_slug}`,
      scope: 'pullrequest:write',
    }))!;
    return withReviewers(
      slimPr(data),
      data,
      chosen?.skipped ?? [],
      'You are the author, and an author cannot review their own pull request on Bitbucket: left out of the reviewers.',
    );
  },
});

export const updatePullRequest = defineTool({
  description:
    'Edit an existing, unmerged Bitbucket pull request: add or remove reviewers (`reviewers` is the new list; [] removes all), change the title or the description (replaces the old one), or retarget the destination branch. Give only what changes; the rest is kept. The author is left out of reviewers. To approve use bitbucket_approve_pull_request; to close use bitbucket_decline_pull_request or bitbucket_merge_pull_request.',
  input: z.object({
    ...pr,
    title: z.string().min(1).max(255).optional().describe('New title.'),
    description: z.string().max(30000).optional().describe('New description (Markdown); an empty string clears it.'),
    reviewers: reviewers
      .optional()
      .describe('The new reviewer list (account ids, {uuid}s or nicknames); [] removes every reviewer.'),
    destination_branch: branchName.optional().describe('Retarget the pull request to this branch.'),
  }),
  annotations: changes('Update pull request', { idempotent: true }),
  async handler(ctx, a) {
    const changes = (['title', 'description', 'reviewers', 'destination_branch'] as const).filter(
      (k) => a[k] !== undefined,
    );
    if (!changes.length)
      throw new Error('Nothing to update: give at least one of title, description, reviewers, destination_branch.');
    // Bitbucket's PUT wants the title and treats a missing reviewer list as empty: start from the
    // pull request as it is, so that only what the agent names changes
    const cur = await readPr(ctx, a);
    const chosen =
      a.reviewers !== undefined
        ? withoutAuthor(await resolveReviewers(ctx, a, a.reviewers), cur.author)
        : {
            reviewers: (cur.reviewers || [])
              .filter((u) => u.uuid || u.account_id)
              .map((u) => reviewerBody({ given: '', uuid: u.uuid, account_id: u.account_id })),
            skipped: [],
          };
    const body = {
      title: a.title ?? cur.title,
      ...(a.description !== undefined ? { description: a.description } : {}),
      ...(a.destination_branch !== undefined ? { destination: { branch: { name: a.destination_branch } } } : {}),
      reviewers: chosen.reviewers,
    };
    const data = (await bb<PullRequest>(ctx, 'PUT', prPath(a), {
      body,
      action: `update pull request #${a.pull_request_id}`,
      scope: 'pullrequest:write',
    }))!;
    return withReviewers(
      { ...slimPr(data), updated: changes },
      data,
      chosen.skipped,
      'The pull request author cannot review it on Bitbucket: left out of the reviewers.',
    );
  },
});

export const approvePullRequest = defineTool({
  description:
    'Approve a Bitbucket pull request as the connected user (action "approve", the default), or withdraw your approval (action "unapprove"). Returns whether you now approve it.',
  input: z.object({
    ...pr,
    action: z
      .enum(['approve', 'unapprove'])
      .default('approve')
      .describe('"approve" or "unapprove" (remove your approval).'),
  }),
  annotations: changes('Approve / unapprove pull request', { idempotent: true }),
  async handler(ctx, a) {
    const approve = a.action !== 'unapprove';
    const res = await call<{ approved?: unknown; state?: string } | undefined>(
      ctx,
      approve ? 'POST' : 'DELETE',
      `${prPath(a)}/approve`,
      {
        action: `${approve ? 'approve' : 'withdraw your approval of'} pull request #${a.pull_request_id}`,
        scope: 'pullrequest:write',
        hints: {
          409: approve
            ? `You may already have approved it, or it is no longer open: ${openOnly}`
            : `It may no longer be open: ${openOnly}`,
        },
      },
    );
    const data = res.data;
    const approved = approve ? (data && typeof data.approved === 'boolean' ? data.approved : res.status < 300) : false;
    return { id: a.pull_request_id, approved, state: data && data.state ? data.state : null };
  },
});

export const declinePullRequest = defineTool({
  description:
    'Decline (reject, close without merging) an active Bitbucket pull request. Bitbucket cannot reactivate a declined one. Returns its new state.',
  input: z.object(pr),
  annotations: changes('Decline pull request', { destructive: true }),
  async handler(ctx, a) {
    const data = (await bb<PullRequest>(ctx, 'POST', `${prPath(a)}/decline`, {
      action: `decline pull request #${a.pull_request_id}`,
      scope: 'pullrequest:write',
    }))!;
    return { ...slimPr(data), reason: data.reason || null };
  },
});

const MERGE_HINTS = {
  400: 'Merge checks, unresolved tasks, missing approvals or conflicts block it: look at the pull request in Bitbucket, resolve them, or choose another merge_strategy.',
  409: 'The pull request or a branch changed while merging (or it is already merged or declined): read it again with bitbucket_get_pull_request before retrying.',
  555: 'The merge may still finish in the background: check bitbucket_get_pull_request in a minute before merging again.',
};

export const mergePullRequest = defineTool({
  description:
    "Merge a Bitbucket pull request into its destination branch, with a merge strategy (merge_commit, squash, fast_forward, squash_fast_forward, rebase_fast_forward, rebase_merge; default: the repository's), an optional commit message, and whether to delete the source branch. Fails with Bitbucket's reason when merge checks, conflicts or branch restrictions block it. A long merge may continue in the background: the result says so.",
  input: z.object({
    ...pr,
    merge_strategy: z
      .enum(['merge_commit', 'squash', 'fast_forward', 'squash_fast_forward', 'rebase_fast_forward', 'rebase_merge'])
      .optional()
      .describe("How to merge; default: the destination branch's default strategy."),
    message: z.string().min(1).max(20000).optional().describe('Commit message of the merge or squash commit.'),
    close_source_branch: z
      .boolean()
      .optional()
      .describe('Delete the source branch after merging; default: what the pull request says.'),
  }),
  annotations: changes('Merge pull request', { destructive: true }),
  async handler(ctx, a) {
    const body = {
      ...(a.merge_strategy ? { merge_strategy: a.merge_strategy } : {}),
      ...(a.message ? { message: a.message } : {}),
      ...(a.close_source_branch !== undefined ? { close_source_branch: a.close_source_branch } : {}),
    };
    const res = await call<PullRequest>(ctx, 'POST', `${prPath(a)}/merge`, {
      body,
      action: `merge pull request #${a.pull_request_id}`,
      scope: 'pullrequest:write',
      hints: MERGE_HINTS,
    }).catch((err: unknown) => {
      if ((err as { code?: unknown } | null)?.code === 'GW_ERR_BRIDGE_TIMEOUT') {
        throw new Error(
          `Bitbucket did not answer in time while merging pull request #${a.pull_request_id}; ${MERGE_HINTS[555]}`,
        );
      }
      throw err;
    });
    if (res.status === 202) {
      return {
        id: a.pull_request_id,
        merged: false,
        pending: true,
        note: 'Bitbucket is merging in the background: check bitbucket_get_pull_request in a moment for the MERGED state.',
      };
    }
    const data = res.data;
    return { ...slimPr(data), merged: data.state === 'MERGED', merge_commit: data.merge_commit?.hash ?? null };
  },
});

export const getPullRequestDiff = defineTool({
  description:
    'Read the code changes (unified diff, patch) of a Bitbucket pull request as text, to review what it changes. Large diffs are cut at `max_chars`: the result says how many characters there are and the `next_offset` to read on.',
  input: z.object({ ...pr, max_chars: maxChars('diff'), offset }),
  annotations: reads('Get pull request diff', { idempotent: true }),
  async handler(ctx, a) {
    const web = `${webRepo(a)}/pull-requests/${a.pull_request_id}/diff`;
    const tooLarge = `Bitbucket sends the whole diff, so offset and max_chars do not help. Open it at ${web}, or read the changed files one at a time with bitbucket_get_file_content`;
    const { data } = await call<string>(ctx, 'GET', `${prPath(a)}/diff`, {
      accept: 'text/plain',
      expect: 'text',
      action: `read the diff of pull request #${a.pull_request_id}`,
      scope: 'pullrequest',
      tooLarge,
    });
    return { id: a.pull_request_id, ...noteWindow(data, a.offset, a.max_chars) };
  },
});

export const listPullRequestComments = defineTool({
  description:
    'Read the comments (discussion, review comments) on a Bitbucket pull request, oldest first: author, text, date, and for inline comments the file path and line. When `next` is not null, pass it as `cursor` for more.',
  input: z.object({ ...pr, pagelen: pagelen(100, 50, 'Comments'), cursor }),
  annotations: reads('List pull request comments', { idempotent: true }),
  async handler(ctx, a) {
    const data = await bb<Page<Comment>>(
      ctx,
      'GET',
      `${prPath(a)}/comments${pageQuery(a, { pagelen: a.pagelen, sort: 'created_on' })}`,
      {
        action: `read the comments of pull request #${a.pull_request_id}`,
        scope: 'pullrequest',
      },
    );
    return { id: a.pull_request_id, comments: values(data).map(slimComment), next: cursorOf(data) };
  },
});

export const addPullRequestComment = defineTool({
  description:
    'Comment on a Bitbucket pull request (post, write, reply): a general comment, an inline comment on a line of the diff (`path` with `line`, the line number in the new version, or `from_line` for a removed line in the old version), or a reply to another comment (`parent_id`). Markdown is allowed. Returns the comment id and url.',
  input: z.object({
    ...pr,
    content: z.string().min(1).max(30000).describe('Comment text (Markdown).'),
    path: z.string().min(1).max(1000).optional().describe('File path for an inline comment, as shown in the diff.'),
    line: z.int().min(1).max(10000000).optional().describe('Line number in the new version of `path`.'),
    from_line: z
      .int()
      .min(1)
      .max(10000000)
      .optional()
      .describe('Line number in the old version of `path` (for a removed line).'),
    parent_id: z.int().min(1).max(2147483647).optional().describe('Reply to this comment id.'),
  }),
  annotations: changes('Add pull request comment'),
  async handler(ctx, a) {
    const inline = a.line !== undefined || a.from_line !== undefined;
    if (inline && !a.path)
      throw new Error('An inline comment needs `path` (the file) as well as `line` or `from_line`.');
    if (a.path && !inline)
      throw new Error('An inline comment needs `line` (new version) or `from_line` (old version) as well as `path`.');
    const body = {
      content: { raw: a.content },
      ...(inline
        ? {
            inline: {
              path: a.path,
              ...(a.line !== undefined ? { to: a.line } : {}),
              ...(a.from_line !== undefined ? { from: a.from_line } : {}),
            },
          }
        : {}),
      ...(a.parent_id ? { parent: { id: a.parent_id } } : {}),
    };
    const data = await bb<Comment>(ctx, 'POST', `${prPath(a)}/comments`, {
      body,
      action: `comment on pull request #${a.pull_request_id}`,
      scope: 'pullrequest:write',
    });
    return slimComment(data!);
  },
});
