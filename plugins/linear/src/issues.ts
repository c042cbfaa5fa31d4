/**
 * @module plugins/linear/src/issues
 * Listing, searching, reading, creating and updating issues. Every value from the caller travels
 * in `variables` (filters as IssueFilter objects); names are resolved to ids before a write.
 */
import { changes, defineTool, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { codeOf, gql, LIMIT_HINT, nextOf, nodes, PAGE, type Connection } from './api.js';
import {
  assignee,
  cursor,
  issue,
  issueRef,
  labelName,
  labelNames,
  limit,
  markdown,
  priority,
  stateName,
  team,
  title,
} from './fields.js';
import {
  resolveIssue,
  resolveLabels,
  resolveState,
  resolveTeam,
  resolveUser,
  userNameFilter,
  UUID,
} from './resolve.js';
import { detailIssue, ISSUE_DETAIL, ISSUE_ROW, slimIssue, WRITE_RESULT, writeResult, type Issue } from './shape.js';

const listInput = z.object({
  query: z.string().min(1).max(500).optional().describe('Text to search for in issues (full-text search).'),
  team: team.optional(),
  assignee: assignee('"me", "none" (unassigned), an email, a user id (UUID), or a display name.'),
  state: stateName.optional().describe('Workflow state name, e.g. Todo, In Progress, Done (ignoring case).'),
  stateType: z
    .enum(['triage', 'backlog', 'unstarted', 'started', 'completed', 'canceled'])
    .optional()
    .describe('Workflow state type.'),
  open: z.boolean().default(false).describe('true: only issues not completed or canceled (ignored with stateType).'),
  label: labelName.optional().describe('Only issues with this label name.'),
  project: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Only issues of the project with this exact name (ignoring case).'),
  limit: limit(25),
  cursor,
});

function issueFilter(args: z.output<typeof listInput>): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  if (args.team) f.team = { key: { eqIgnoreCase: args.team } };
  if (args.assignee === 'me') f.assignee = { isMe: { eq: true } };
  else if (args.assignee === 'none') f.assignee = { null: true };
  else if (args.assignee && args.assignee.includes('@')) f.assignee = { email: { eqIgnoreCase: args.assignee } };
  else if (args.assignee && UUID.test(args.assignee)) f.assignee = { id: { eq: args.assignee } };
  else if (args.assignee) f.assignee = userNameFilter(args.assignee);
  const state: Record<string, unknown> = {};
  if (args.state) state.name = { eqIgnoreCase: args.state };
  if (args.stateType) state.type = { eq: args.stateType };
  else if (args.open) state.type = { nin: ['completed', 'canceled'] };
  if (Object.keys(state).length) f.state = state;
  if (args.label) f.labels = { some: { name: { eqIgnoreCase: args.label } } };
  if (args.project) f.project = { name: { eqIgnoreCase: args.project } };
  return f;
}

export const listIssues = defineTool({
  description:
    'List or search Linear issues, most recently updated first: filter by team key, assignee ("me", "none", an email, a user id or a display name), workflow state name ("In Progress") or state type, open only, label name and project name; `query` searches titles and descriptions by text (ranked by relevance; Linear allows 30 searches a minute). Returns identifier, title, state, assignee, priority, team and link. Use linear_get_issue for one issue\'s description and details. When `next` is not null, pass it as `cursor`.',
  annotations: reads('List or search issues'),
  input: listInput,
  handler: async (ctx, args) => {
    const vars = { first: args.limit, after: args.cursor ?? null, filter: issueFilter(args) };
    let conn: Connection | undefined;
    if (args.query) {
      const query = `query($term: String!, $filter: IssueFilter, $first: Int!, $after: String) { searchIssues(term: $term, filter: $filter, first: $first, after: $after) { nodes { ${ISSUE_ROW} } ${PAGE} } }`;
      conn = (
        await gql<{ searchIssues?: Connection }>(
          ctx,
          `search issues for "${args.query}"`,
          query,
          { term: args.query, ...vars },
          LIMIT_HINT,
        )
      ).searchIssues;
    } else {
      const query = `query($filter: IssueFilter, $first: Int!, $after: String) { issues(filter: $filter, first: $first, after: $after, orderBy: updatedAt) { nodes { ${ISSUE_ROW} } ${PAGE} } }`;
      conn = (await gql<{ issues?: Connection }>(ctx, 'list issues', query, vars, LIMIT_HINT)).issues;
    }
    return { issues: nodes<Issue>(conn, vars.first).map(slimIssue), next: nextOf(conn) };
  },
});

type OneIssue = { issue?: Issue | null };

/** An issue over the gateway's size cap: its link, when a small second request can find it. */
async function tooLargeIssue(ctx: PluginContext, ref: string, err: unknown): Promise<Error | undefined> {
  if (codeOf(err) !== 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') return undefined;
  let url: string | null = null;
  try {
    const small = await gql<{ issue?: { url?: unknown } | null }>(
      ctx,
      `find the link of issue ${ref}`,
      'query($id: String!) { issue(id: $id) { url } }',
      { id: ref },
    );
    url =
      small.issue && typeof small.issue.url === 'string' && small.issue.url.startsWith('https://linear.app/')
        ? small.issue.url
        : null;
  } catch {
    // keep the first message
  }
  if (!url) return undefined;
  const message = `Issue ${ref} is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE), so it cannot be read here: open it in Linear: ${url} (linear_list_comments reads its comments).`;
  return Object.assign(new Error(message), { code: codeOf(err) });
}

export const getIssue = defineTool({
  description:
    'Read one Linear issue by identifier (ENG-123): title, description (markdown), state, assignee, creator, priority, team, labels, project, cycle, parent, due date, estimate, number of comments, dates and link. Use linear_list_comments for the comments themselves.',
  annotations: reads('Get issue'),
  input: z.object({ issue }),
  handler: async (ctx, args) => {
    let data: OneIssue;
    try {
      data = await gql<OneIssue>(
        ctx,
        `read issue ${args.issue}`,
        `query($id: String!) { issue(id: $id) { ${ISSUE_DETAIL} } }`,
        { id: args.issue },
        {
          tooLarge:
            'it cannot be read here: open it in Linear (its url is in linear_list_issues; linear_list_comments reads its comments)',
        },
      );
    } catch (err) {
      throw (await tooLargeIssue(ctx, args.issue, err)) ?? err;
    }
    if (!data.issue) throw new Error(`Linear found no issue ${args.issue}.`);
    return detailIssue(data.issue);
  },
});

type IssueWrite = { success?: boolean; issue?: Issue | null };

export const createIssue = defineTool({
  description:
    'Create a Linear issue in a team (by key): title, markdown description, assignee ("me", an email, a user id or a display name), priority 0-4, labels and workflow state by name, and a parent issue for a sub-issue. Without a state Linear puts it in the team\'s default state (Backlog or Triage). Returns the new issue\'s identifier and link.',
  annotations: changes('Create issue'),
  input: z.object({
    team,
    title: title.describe('Issue title.'),
    description: markdown.optional().describe('Description in markdown.'),
    assignee: assignee('"me", an email, a user id (UUID), or a display name.'),
    priority,
    labels: labelNames('Label names (existing team or workspace labels).'),
    state: stateName.optional().describe('Workflow state name of the team, e.g. Todo.'),
    parent: issueRef.optional().describe('Parent issue identifier, to create a sub-issue.'),
  }),
  handler: async (ctx, args) => {
    const team = await resolveTeam(ctx, args.team);
    const input: Record<string, unknown> = { teamId: team.id, title: args.title };
    if (args.description) input.description = args.description;
    if (args.priority !== undefined) input.priority = args.priority;
    if (args.state) input.stateId = (await resolveState(ctx, team, args.state)).id;
    if (args.labels && args.labels.length) input.labelIds = await resolveLabels(ctx, team, args.labels);
    if (args.assignee && args.assignee !== 'none') input.assigneeId = await resolveUser(ctx, args.assignee);
    if (args.parent) input.parentId = (await resolveIssue(ctx, args.parent, `find parent issue ${args.parent}`)).id;
    const mutation = `mutation($input: IssueCreateInput!) { issueCreate(input: $input) { ${WRITE_RESULT} } }`;
    const data = await gql<{ issueCreate?: IssueWrite | null }>(
      ctx,
      `create an issue in team ${team.key}`,
      mutation,
      { input },
      { write: true },
    );
    return writeResult(data.issueCreate, 'created');
  },
});

const CHANGES = ['title', 'description', 'state', 'assignee', 'priority', 'addLabels', 'removeLabels'] as const;

export const updateIssue = defineTool({
  description:
    'Change a Linear issue (ENG-123): move it to another workflow state by name ("Done", "In Progress"), reassign it ("me", an email, a user id, or "none" to unassign), set its priority, title or markdown description (replaces the whole description), add or remove labels by name. Only the fields given change. Use linear_add_comment to comment.',
  annotations: changes('Update issue', { destructive: true, idempotent: true }),
  input: z.object({
    issue,
    state: stateName.optional().describe("Workflow state name of the issue's team."),
    assignee: assignee('"me", "none" (unassign), an email, a user id (UUID), or a display name.'),
    priority,
    title: title.optional(),
    description: markdown.optional().describe('New description in markdown (replaces it).'),
    addLabels: labelNames('Label names to add.'),
    removeLabels: labelNames('Label names to remove.'),
  }),
  handler: async (ctx, args) => {
    if (!CHANGES.some((k) => args[k] !== undefined && !(Array.isArray(args[k]) && !args[k].length))) {
      throw new Error(`Nothing to change: give at least one of ${CHANGES.join(', ')}.`);
    }
    const add = args.addLabels || [];
    const remove = args.removeLabels || [];
    const clash = add.find((n) => remove.some((m) => m.toLowerCase() === n.toLowerCase()));
    if (clash) throw new Error(`Label "${clash}" is both in addLabels and removeLabels: give it in one of them.`);
    const input: Record<string, unknown> = {};
    if (args.title !== undefined) input.title = args.title;
    if (args.description !== undefined) input.description = args.description;
    if (args.priority !== undefined) input.priority = args.priority;
    if (args.assignee !== undefined) input.assigneeId = await resolveUser(ctx, args.assignee);
    let id = args.issue;
    if (args.state || add.length || remove.length) {
      const found = await resolveIssue(ctx, args.issue, `read issue ${args.issue}`);
      id = found.id;
      if (args.state) input.stateId = (await resolveState(ctx, found.team, args.state)).id;
      if (add.length) input.addedLabelIds = await resolveLabels(ctx, found.team, add);
      if (remove.length) input.removedLabelIds = await resolveLabels(ctx, found.team, remove);
    }
    const mutation = `mutation($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { ${WRITE_RESULT} } }`;
    const data = await gql<{ issueUpdate?: IssueWrite | null }>(
      ctx,
      `update issue ${args.issue}`,
      mutation,
      { id, input },
      { write: true },
    );
    return writeResult(data.issueUpdate, 'updated');
  },
});
