/**
 * @module plugins/gitlab/src/issues
 * The issue lifecycle: list (in a project or across projects), read, open, change, comment.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { crossProjectScope, get, idsFor, isEmpty, list, paging, projectPath, send, someIds } from './api.js';
import { FULL_TEXT_CHARS, LIST_TEXT_CHARS, orNull, slimIssue, slimNote, who, type Issue, type Note } from './shape.js';
import {
  comment,
  issueIid,
  labels,
  markdown,
  optionalProject,
  paged,
  project,
  sort,
  text255,
  username,
  usernames,
} from './schema.js';

export const listIssues = defineTool({
  description:
    "Lists GitLab issues of one project, or across all projects when `project` is left out (then `scope` chooses: assigned_to_me, created_by_me or all; left out, it is all when assignee_username or author_username is given, else GitLab's default created_by_me), filtered by state (default opened), labels, assignee, author, milestone or a search text. Rows: iid, reference (group/project#12), title, state, author, assignees, labels, milestone, due date, web URL and the start of the description. When `next` is not null, pass it as `page`. Use gitlab_get_issue for the whole description.",
  input: z
    .object({
      ...optionalProject,
      state: z.enum(['opened', 'closed', 'all']).default('opened'),
      scope: z
        .enum(['assigned_to_me', 'created_by_me', 'all'])
        .optional()
        .describe(
          "Whose issues: assigned_to_me, created_by_me or all. In a project the default is all; without a project it is all when assignee_username or author_username is given, else created_by_me (GitLab's default).",
        ),
      labels: labels.optional().describe('Only issues with all of these labels.'),
      assignee_username: username.optional().describe('Only issues assigned to this username.'),
      author_username: username.optional().describe('Only issues opened by this username.'),
      milestone: text255.optional().describe('Milestone title (None: no milestone; Any: any).'),
      search: text255.optional().describe('Text to find in the title or description.'),
      order_by: z
        .enum(['created_at', 'updated_at', 'priority', 'due_date', 'popularity', 'title'])
        .default('updated_at'),
      sort,
      ...paged,
    })
    .meta({ required: [] }),
  annotations: reads('List issues', { idempotent: true }),
  handler: async (ctx, a) => {
    const scope = crossProjectScope(a, [a.assignee_username, a.author_username]);
    const query = {
      state: a.state,
      scope,
      labels: a.labels?.join(','),
      assignee_username: a.assignee_username,
      author_username: a.author_username,
      milestone: a.milestone,
      search: a.search,
      order_by: a.order_by,
      sort: a.sort,
      ...paging(a),
    };
    const path = a.project !== undefined ? `${projectPath(ctx, a)}/issues` : '/issues';
    const { rows, next } = await list<Issue>(ctx, path, { query, action: 'issues' });
    return { issues: rows.map((i) => slimIssue(i, LIST_TEXT_CHARS)), next };
  },
});

export const getIssue = defineTool({
  description:
    'Reads one GitLab issue by its iid (#42 in the project): title, state, type, author, assignees, labels, milestone, due date, confidentiality, who closed it, task completion, related merge request count, note count and the whole description (up to 8,000 characters).',
  input: z.object({ ...project, ...issueIid }),
  annotations: reads('Get issue', { idempotent: true }),
  handler: async (ctx, a) => {
    const i = await get<Issue>(ctx, `${projectPath(ctx, a)}/issues/${a.issue_iid}`, {
      action: `issue #${a.issue_iid}`,
    });
    const tasks = i.task_completion_status;
    return {
      ...slimIssue(i, FULL_TEXT_CHARS),
      closed_by: who(i.closed_by),
      merge_requests_count: orNull(i.merge_requests_count),
      tasks: tasks ? `${tasks.completed_count}/${tasks.count}` : null,
    };
  },
});

export const createIssue = defineTool({
  description:
    'Creates (opens, files) a new GitLab issue in a project and returns its iid and web URL. Labels that do not exist yet are created; assignees are given by username and looked up. Use gitlab_update_issue to change or close an existing one.',
  input: z.object({
    ...project,
    title: text255,
    description: markdown.optional().describe('Markdown description.'),
    labels: labels.optional().describe('Labels to set.'),
    assignees: usernames.optional().describe('Usernames to assign (looked up with GET /users?username=).'),
    milestone_id: z.int().min(1).optional().describe('Global id of a milestone.'),
    due_date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .optional()
      .describe('YYYY-MM-DD.'),
    confidential: z
      .boolean()
      .optional()
      .describe('Only project members with at least the Planner or Reporter role can see it.'),
    issue_type: z.enum(['issue', 'incident', 'test_case', 'task']).optional().describe('Default: issue.'),
  }),
  annotations: changes('Create issue'),
  handler: async (ctx, a) => {
    const body = {
      title: a.title,
      description: a.description,
      labels: a.labels?.join(','),
      assignee_ids: await someIds(ctx, a.assignees, 'assignee'),
      milestone_id: a.milestone_id,
      due_date: a.due_date,
      confidential: a.confidential,
      issue_type: a.issue_type,
    };
    return slimIssue(
      await send<Issue>(ctx, 'POST', `${projectPath(ctx, a)}/issues`, body, 'creating the issue'),
      LIST_TEXT_CHARS,
    );
  },
});

export const updateIssue = defineTool({
  description:
    'Changes an existing GitLab issue: close or reopen it (state_event), edit the title or description, replace, add or remove labels, reassign (usernames; an empty list unassigns everyone), set the due date, milestone, confidentiality or lock the discussion. Give only what changes. Use gitlab_add_issue_note to comment.',
  input: z.object({
    ...project,
    ...issueIid,
    state_event: z.enum(['close', 'reopen']).optional().describe('Close or reopen the issue.'),
    title: text255.optional(),
    description: markdown.optional().describe('New Markdown description (replaces the old one).'),
    labels: labels.optional().describe('Replace all labels with these (an empty list removes them all).'),
    add_labels: labels.optional().describe('Labels to add, keeping the others.'),
    remove_labels: labels.optional().describe('Labels to remove.'),
    assignees: usernames
      .optional()
      .describe('Replace the assignees with these usernames; an empty list unassigns everyone.'),
    due_date: z
      .string()
      .regex(/^(\d{4}-\d{2}-\d{2})?$/)
      .optional()
      .describe('YYYY-MM-DD; an empty string clears it.'),
    milestone_id: z.int().min(0).optional().describe('Global id of a milestone; 0 removes the milestone.'),
    confidential: z.boolean().optional(),
    discussion_locked: z.boolean().optional().describe('Lock the discussion to project members.'),
  }),
  annotations: changes('Update, close or reopen issue', { idempotent: true }),
  handler: async (ctx, a) => {
    const body = {
      title: a.title,
      description: a.description,
      state_event: a.state_event,
      labels: a.labels?.join(','),
      add_labels: a.add_labels?.join(','),
      remove_labels: a.remove_labels?.join(','),
      due_date: a.due_date,
      confidential: a.confidential,
      milestone_id: a.milestone_id,
      discussion_locked: a.discussion_locked,
    };
    if (isEmpty(body) && a.assignees === undefined) {
      throw new Error(
        'Nothing to change: pass at least one of title, description, state_event, labels, add_labels, remove_labels, assignees, due_date, confidential, milestone_id, discussion_locked.',
      );
    }
    const assignee_ids = await idsFor(ctx, a.assignees, 'assignee');
    const issue = await send<Issue>(
      ctx,
      'PUT',
      `${projectPath(ctx, a)}/issues/${a.issue_iid}`,
      { ...body, assignee_ids },
      `issue #${a.issue_iid}`,
    );
    return slimIssue(issue, LIST_TEXT_CHARS);
  },
});

export const addIssueNote = defineTool({
  description:
    'Comments on a GitLab issue: adds a note (comment, reply) in Markdown; `internal: true` makes it visible to project members only. Returns the note id, author and time. Quick actions such as /close or /assign in the body are carried out by GitLab.',
  input: z.object({
    ...project,
    ...issueIid,
    ...comment,
    internal: z.boolean().default(false).describe('Visible only to project members with at least the Reporter role.'),
  }),
  annotations: changes('Comment on issue'),
  handler: async (ctx, a) => {
    const path = `${projectPath(ctx, a)}/issues/${a.issue_iid}/notes`;
    return slimNote(
      await send<Note>(
        ctx,
        'POST',
        path,
        { body: a.body, internal: a.internal },
        `commenting on issue #${a.issue_iid}`,
      ),
    );
  },
});
