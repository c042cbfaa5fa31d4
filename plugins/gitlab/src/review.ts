/**
 * @module plugins/gitlab/src/review
 * Reviewing a merge request: read its notes (comments, review threads, system events), and approve
 * it or withdraw the approval, with GitLab's refusals said in words an agent can act on.
 */
import { changes, defineTool, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { get, GitLabError, list, paging, projectPath, send } from './api.js';
import { slimNote, who, type Note, type User } from './shape.js';
import { mergeRequestIid, paged, project, sha } from './schema.js';

/** A note as a review thread shows it: a diff note's file and line, and whether it is resolved. */
interface ReviewNote extends Note {
  system?: boolean;
  type?: string | null;
  resolvable?: boolean;
  resolved?: boolean;
  position?: {
    new_path?: string | null;
    old_path?: string | null;
    new_line?: number | null;
    old_line?: number | null;
  } | null;
}

function slimReviewNote(n: ReviewNote) {
  const p = n.position;
  return {
    ...slimNote(n),
    system: !!n.system,
    type: n.type || null,
    resolvable: !!n.resolvable,
    resolved: n.resolvable ? !!n.resolved : null,
    ...(p ? { path: p.new_path || p.old_path || null, line: p.new_line ?? p.old_line ?? null } : {}),
  };
}

const mrPath = (ctx: PluginContext, a: { project: unknown; merge_request_iid: number }) =>
  `${projectPath(ctx, a)}/merge_requests/${a.merge_request_iid}`;

export const listMergeRequestNotes = defineTool({
  description:
    'Lists the comments (notes, the discussion) on a GitLab merge request, to read what reviewers said: general comments and diff notes on lines of a changed file (with their file, line and whether the thread is resolved), oldest first by default. GitLab\'s system notes ("added 1 commit", "approved this merge request", label changes) are left out unless include_system is true. When `next` is not null, pass it as `page`.',
  input: z.object({
    ...project,
    ...mergeRequestIid,
    include_system: z.boolean().default(false).describe("Also return GitLab's system notes (events)."),
    sort: z.enum(['asc', 'desc']).default('asc').describe('asc: oldest first; desc: newest first.'),
    ...paged,
  }),
  annotations: reads('List merge request notes (comments)', { idempotent: true }),
  handler: async (ctx, a) => {
    const { rows, next } = await list<ReviewNote>(ctx, `${mrPath(ctx, a)}/notes`, {
      query: { sort: a.sort, order_by: 'created_at', ...paging(a) },
      action: `notes of !${a.merge_request_iid}`,
    });
    // GitLab has no filter for system notes on this endpoint: they are left out here, and counted
    const kept = a.include_system ? rows : rows.filter((n) => !n.system);
    return {
      merge_request_iid: a.merge_request_iid,
      notes: kept.map(slimReviewNote),
      system_notes_left_out: rows.length - kept.length,
      next,
    };
  },
});

interface Approvals {
  approved?: boolean;
  approvals_required?: number;
  approvals_left?: number;
  approved_by?: Array<{ user?: { username?: string } | null }> | null;
}

/** GitLab's refusals of approve/unapprove in words; the error as it is for any other. */
async function approvalRefusal(ctx: PluginContext, iid: number, approve: boolean, err: unknown): Promise<unknown> {
  if (!(err instanceof GitLabError)) return err;
  const said = err.said ? ` GitLab said: ${err.said}` : '';
  if (err.status === 409)
    return new Error(
      `The source branch of !${iid} has moved (409): the sha you passed is no longer its HEAD, so GitLab did not approve. Read the merge request again (gitlab_get_merge_request), review the new commits, and approve with the new sha.${said}`,
    );
  if (err.status !== 401) return err;
  // GitLab answers 401 also when the user already approved or may not approve: tell these apart from a bad token
  try {
    await get<User>(ctx, '/user', { action: 'checking the token' });
  } catch {
    return err;
  }
  return new Error(
    approve
      ? `GitLab refused to approve !${iid} (401): you have already approved it, or you may not approve it (the author, or a committer, where the project forbids approving your own work, or a role that may not approve).${said}`
      : `GitLab refused to withdraw an approval of !${iid} (401): you have not approved it.${said}`,
  );
}

export const approveMergeRequest = defineTool({
  description:
    'Approves a GitLab merge request as the connected user (action "approve", the default), or withdraws your approval (action "unapprove"). Pass `sha` (the head sha from gitlab_get_merge_request) so that only the commits you reviewed are approved. Returns whether it is now approved, how many approvals are still needed and who approved it.',
  input: z.object({
    ...project,
    ...mergeRequestIid,
    action: z.enum(['approve', 'unapprove']).default('approve').describe('"approve", or "unapprove" to withdraw it.'),
    sha: sha.optional().describe('Approve only if the source branch HEAD is still this commit.'),
  }),
  annotations: changes('Approve / unapprove merge request', { idempotent: true }),
  handler: async (ctx, a) => {
    const approve = a.action !== 'unapprove';
    let state: Approvals;
    try {
      state = await send<Approvals>(
        ctx,
        'POST',
        `${mrPath(ctx, a)}/${approve ? 'approve' : 'unapprove'}`,
        approve ? { sha: a.sha } : {},
        `${approve ? 'approving' : 'withdrawing the approval of'} !${a.merge_request_iid}`,
      );
    } catch (err) {
      throw await approvalRefusal(ctx, a.merge_request_iid, approve, err);
    }
    const by = Array.isArray(state.approved_by) ? state.approved_by.map((x) => who(x?.user)).filter(Boolean) : [];
    return {
      merge_request_iid: a.merge_request_iid,
      action: approve ? 'approved' : 'unapproved',
      approved: typeof state.approved === 'boolean' ? state.approved : null,
      approvals_required: state.approvals_required ?? null,
      approvals_left: state.approvals_left ?? null,
      approved_by: by,
    };
  },
});
