/**
 * @module plugins/atlassian-jira/src/issues
 * The issue tools: search with JQL, read, create, update, comment, move through the workflow,
 * assign, watch and link.
 * One module on purpose (a little over 400 lines): one tool after another, each short, sharing the
 * issue's shape and the field handling.
 */
import { changes, defineTool, path, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { textToAdf } from './adf.js';
import { browse, jira, resolveSite, READ, USERS, WRITE, type Site } from './api.js';
import {
  commentUrl,
  detailIssue,
  DETAIL_FIELDS,
  name,
  slimComment,
  slimIssue,
  slimTransition,
  SLIM_FIELDS,
  type RawComment,
  type RawIssue,
  type RawTransition,
  type RawUser,
} from './shape.js';

const KEY = /^[A-Za-z][A-Za-z0-9_]*-[0-9]+$/;
export const issueKey = z
  .string()
  .regex(/^([A-Za-z][A-Za-z0-9_]*-[0-9]+|[0-9]+)$/)
  .describe('Issue key such as ABC-123.');
const label = z.string().regex(/^\S{1,255}$/);
const labels = (what: string) => z.array(label).max(20).optional().describe(what);
const plainText = (what: string) => z.string().max(30000).optional().describe(what);
export const cursor = z
  .string()
  .regex(/^[0-9]{1,9}$/)
  .optional()
  .describe('The `next` value of the previous page.');
export const accountId = z.string().min(1).max(128).optional();
const numericId = (v: string) => /^[0-9]+$/.test(v);
const byIdOrName = (v: string) => (numericId(v) ? { id: v } : { name: v });

export const searchIssues = defineTool({
  description:
    'Search Jira issues (tickets) with JQL — my open tickets, tickets assigned to me, bugs of a project, issues mentioning some text — and get one page of slim rows (key, summary, status, assignee, priority, issue type, updated, url). The JQL must be bounded by a condition, e.g. `project = ABC AND status != Done ORDER BY updated DESC`, `assignee = currentUser() AND resolution = Unresolved`, `text ~ "login error" AND created >= -14d`. When `next` is not null, call again with `cursor` set to it for the following page. Use jira_get_issue for the description and details of one issue.',
  input: z.object({
    jql: z
      .string()
      .min(1)
      .max(4000)
      .describe(
        'JQL query, bounded by at least one condition (project, assignee, created, text, …); may end with ORDER BY.',
      ),
    maxResults: z.int().min(1).max(100).default(25).describe('Issues per page.'),
    cursor: z.string().max(2000).optional().describe('The `next` value of the previous page; omit for the first page.'),
  }),
  annotations: reads('Search issues (JQL)'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const body = {
      jql: args.jql,
      maxResults: args.maxResults,
      fields: SLIM_FIELDS,
      ...(args.cursor ? { nextPageToken: args.cursor } : {}),
    };
    const data = await jira<{ issues?: RawIssue[]; isLast?: boolean; nextPageToken?: string }>(
      ctx,
      site,
      'POST',
      '/search/jql',
      { body, action: 'search issues', scope: READ },
    );
    const issues = Array.isArray(data?.issues) ? data.issues.map((i) => slimIssue(i, site)) : [];
    return {
      issues,
      count: issues.length,
      next: data && !data.isLast && data.nextPageToken ? data.nextPageToken : null,
    };
  },
});

export const getIssue = defineTool({
  description:
    'Read one Jira issue: summary, status, assignee, reporter, priority, type, labels, components, dates, parent, subtasks, links, comment count and the description as plain text. Use jira_list_comments for its comments and jira_list_transitions for the statuses it can move to.',
  input: z.object({ issueKey: issueKey.describe('Issue key such as ABC-123 (or its numeric id).') }),
  annotations: reads('Get issue'),
  async handler(ctx, { issueKey }) {
    const site = await resolveSite(ctx);
    const issue = await jira<RawIssue>(ctx, site, 'GET', path`/issue/${issueKey}`, {
      query: { fields: DETAIL_FIELDS.join(',') },
      action: `read issue ${issueKey}`,
      scope: READ,
    });
    return detailIssue(issue!, site);
  },
});

export const createIssue = defineTool({
  description:
    "Create (open, file, report) a new Jira issue — task, bug, story, sub-task, … — in a project and get its key and url. The description is plain text (blank lines separate paragraphs). Use jira_list_issue_types to see which types a project accepts, and jira_search_users to find an assignee's accountId. For a sub-task, set parentKey.",
  input: z.object({
    projectKey: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_]{0,99}$/)
      .describe('Project key, e.g. ABC.'),
    summary: z.string().min(1).max(255).describe('One-line title.'),
    issueType: z
      .string()
      .min(1)
      .max(100)
      .default('Task')
      .describe('Issue type name (Task, Bug, Story, Epic, Subtask, …) or its numeric id.'),
    description: plainText('Plain-text description.'),
    labels: labels('Labels (no spaces).'),
    priority: z.string().max(100).optional().describe('Priority name, e.g. High.'),
    assigneeAccountId: z.string().max(128).optional().describe('Atlassian accountId of the assignee.'),
    parentKey: z.string().regex(KEY).optional().describe("Parent issue key (for sub-tasks, or an epic's child)."),
    dueDate: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .optional()
      .describe('Due date, YYYY-MM-DD.'),
  }),
  annotations: changes('Create issue'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const project = args.projectKey.toUpperCase();
    const fields = {
      project: { key: project },
      summary: args.summary,
      issuetype: byIdOrName(args.issueType),
      ...(args.description ? { description: textToAdf(args.description) } : {}),
      ...(args.labels?.length ? { labels: args.labels } : {}),
      ...(args.priority ? { priority: { name: args.priority } } : {}),
      ...(args.assigneeAccountId ? { assignee: { accountId: args.assigneeAccountId } } : {}),
      ...(args.parentKey ? { parent: { key: args.parentKey } } : {}),
      ...(args.dueDate ? { duedate: args.dueDate } : {}),
    };
    const created = await jira<{ key: string; id: string }>(ctx, site, 'POST', '/issue', {
      body: { fields },
      action: `create an issue in project ${project}`,
      scope: WRITE,
    });
    return { key: created!.key, id: created!.id, url: browse(site, created!.key) };
  },
});

export const updateIssue = defineTool({
  description:
    'Change fields of an existing Jira issue: summary, description (plain text, replaces the old one), priority, due date, and labels (add a label, remove a label, or replace them all). Give only what changes. To change status use jira_transition_issue; to change the assignee use jira_assign_issue.',
  input: z.object({
    issueKey,
    summary: z.string().min(1).max(255).optional().describe('New one-line title.'),
    description: plainText('New plain-text description (replaces the current one; an empty string clears it).'),
    priority: z.string().max(100).optional().describe('New priority name.'),
    dueDate: z
      .string()
      .regex(/^(\d{4}-\d{2}-\d{2})?$/)
      .optional()
      .describe('New due date YYYY-MM-DD; an empty string clears it.'),
    labels: labels('Replace all labels with these.'),
    addLabels: labels('Labels to add (keeps the others).'),
    removeLabels: labels('Labels to remove.'),
  }),
  annotations: changes('Update issue fields', { idempotent: true }),
  async handler(ctx, args) {
    const fields: Record<string, unknown> = {};
    if (args.summary !== undefined) fields['summary'] = args.summary;
    if (args.description !== undefined)
      fields['description'] = args.description === '' ? null : textToAdf(args.description);
    if (args.priority !== undefined) fields['priority'] = { name: args.priority };
    if (args.dueDate !== undefined) fields['duedate'] = args.dueDate === '' ? null : args.dueDate;
    if (args.labels !== undefined) fields['labels'] = args.labels;
    const ops = [
      ...(args.addLabels || []).map((l) => ({ add: l })),
      ...(args.removeLabels || []).map((l) => ({ remove: l })),
    ];
    if (ops.length && args.labels !== undefined)
      throw new Error('Give either labels (replace all) or addLabels/removeLabels, not both.');
    const changed = [...Object.keys(fields), ...(ops.length ? ['labels'] : [])];
    if (!changed.length)
      throw new Error(
        'Nothing to update: give at least one of summary, description, priority, dueDate, labels, addLabels, removeLabels.',
      );
    const site = await resolveSite(ctx);
    const body = { fields, ...(ops.length ? { update: { labels: ops } } : {}) };
    await jira(ctx, site, 'PUT', path`/issue/${args.issueKey}`, {
      body,
      action: `update issue ${args.issueKey}`,
      scope: WRITE,
    });
    return { key: args.issueKey, updated: changed, url: browse(site, args.issueKey) };
  },
});

export const addComment = defineTool({
  description:
    'Add (post, leave, write) a plain-text comment on a Jira issue or ticket (blank lines separate paragraphs). Returns the comment id and a link to it.',
  input: z.object({ issueKey, body: z.string().min(1).max(30000).describe('Comment text.') }),
  annotations: changes('Add comment'),
  async handler(ctx, { issueKey, body }) {
    const site = await resolveSite(ctx);
    const c = await jira<RawComment>(ctx, site, 'POST', path`/issue/${issueKey}/comment`, {
      body: { body: textToAdf(body) },
      action: `comment on issue ${issueKey}`,
      scope: WRITE,
    });
    return { key: issueKey, id: c!.id, created: c!.created ?? null, url: commentUrl(site, issueKey, c!.id) };
  },
});

export const listComments = defineTool({
  description:
    'Read the comments (the discussion, the conversation) on a Jira issue as plain text with author and dates, newest first by default. When `next` is not null, pass it as `cursor` for older comments.',
  input: z.object({
    issueKey,
    order: z.enum(['newest', 'oldest']).default('newest').describe('Newest or oldest comments first.'),
    maxResults: z.int().min(1).max(100).default(20).describe('Comments per page.'),
    cursor,
  }),
  annotations: reads('List comments'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const startAt = Number(args.cursor || 0);
    const data = await jira<{ comments?: RawComment[]; total?: number }>(
      ctx,
      site,
      'GET',
      path`/issue/${args.issueKey}/comment`,
      {
        query: { startAt, maxResults: args.maxResults, orderBy: args.order === 'oldest' ? 'created' : '-created' },
        action: `read the comments of issue ${args.issueKey}`,
        scope: READ,
      },
    );
    const comments = Array.isArray(data?.comments) ? data.comments.map((c) => slimComment(c, site, args.issueKey)) : [];
    const total = typeof data?.total === 'number' ? data.total : null;
    const end = startAt + comments.length;
    return {
      key: args.issueKey,
      comments,
      total,
      next: comments.length && (total === null || end < total) ? String(end) : null,
    };
  },
});

async function fetchTransitions(ctx: PluginContext, site: Site, key: string): Promise<RawTransition[]> {
  const data = await jira<{ transitions?: RawTransition[] }>(ctx, site, 'GET', path`/issue/${key}/transitions`, {
    action: `list the transitions of issue ${key}`,
    scope: READ,
  });
  return Array.isArray(data?.transitions) ? data.transitions : [];
}

export const listTransitions = defineTool({
  description:
    'List the workflow transitions available on a Jira issue (ticket) right now — the statuses it can move to next (e.g. Start Progress → In Progress, Done) with the status each one leads to. Use before jira_transition_issue when unsure of the names.',
  input: z.object({ issueKey }),
  annotations: reads('List transitions'),
  async handler(ctx, { issueKey }) {
    const site = await resolveSite(ctx);
    return { key: issueKey, transitions: (await fetchTransitions(ctx, site, issueKey)).map(slimTransition) };
  },
});

export const transitionIssue = defineTool({
  description:
    'Move a Jira issue through its workflow: change its status (start, resolve, close, reopen, …). `transition` is a transition name (e.g. "Done", "In Progress"), a transition id, or the name of the target status; matching ignores case. Optionally add a comment and set the resolution. If nothing matches, the error lists the available transitions.',
  input: z.object({
    issueKey,
    transition: z.string().min(1).max(255).describe('Transition name or id, or the target status name.'),
    comment: plainText('Optional plain-text comment added with the transition.'),
    resolution: z
      .string()
      .max(100)
      .optional()
      .describe("Optional resolution name (e.g. Fixed, Won't Do) when the transition's screen asks for one."),
  }),
  annotations: changes('Transition issue (change status)'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const all = await fetchTransitions(ctx, site, args.issueKey);
    const want = args.transition.trim().toLowerCase();
    const pick =
      all.find((t) => String(t.id) === want) ||
      all.find((t) => String(t.name || '').toLowerCase() === want) ||
      all.find((t) => String(name(t.to) || '').toLowerCase() === want);
    if (!pick) {
      const avail = all.map((t) => `"${t.name}" (id ${t.id} → ${name(t.to)})`).join(', ') || 'none';
      throw new Error(
        `Issue ${args.issueKey} has no transition matching "${args.transition}". Available now: ${avail}.`,
      );
    }
    const body = {
      transition: { id: String(pick.id) },
      ...(args.resolution ? { fields: { resolution: { name: args.resolution } } } : {}),
      ...(args.comment ? { update: { comment: [{ add: { body: textToAdf(args.comment) } }] } } : {}),
    };
    await jira(ctx, site, 'POST', path`/issue/${args.issueKey}/transitions`, {
      body,
      action: `move issue ${args.issueKey} with transition "${pick.name}"`,
      scope: WRITE,
    });
    return { key: args.issueKey, transition: pick.name, status: name(pick.to), url: browse(site, args.issueKey) };
  },
});

/** The one active person `who` (a name or email) names; the error lists the candidates when several do. */
async function findOneUser(ctx: PluginContext, site: Site, who: string): Promise<RawUser> {
  const users = await jira<RawUser[]>(ctx, site, 'GET', '/user/search', {
    query: { query: who, maxResults: 10 },
    action: `look up the user "${who}"`,
    scope: USERS,
  });
  const list = (Array.isArray(users) ? users : []).filter((u) => u.accountType !== 'app' && u.active !== false);
  const w = who.toLowerCase();
  const exact = list.filter(
    (u) => String(u.emailAddress || '').toLowerCase() === w || String(u.displayName || '').toLowerCase() === w,
  );
  const hits = exact.length ? exact : list;
  if (hits.length === 1) return hits[0];
  if (!hits.length)
    throw new Error(`No active Jira user matches "${who}": check the spelling, or use jira_search_users.`);
  const names = hits
    .slice(0, 5)
    .map((u) => `${u.displayName} (${u.accountId})`)
    .join(', ');
  throw new Error(`"${who}" matches several Jira users: ${names}. Pass the accountId of the right one.`);
}

export const assignIssue = defineTool({
  description:
    'Assign a Jira issue to someone, or unassign it. Give `accountId`, or `user` (a name or email, looked up among Jira users; it must match one person), or `unassign: true`.',
  input: z.object({
    issueKey,
    accountId: accountId.describe('Atlassian accountId of the new assignee.'),
    user: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Display name or email of the new assignee, when the accountId is unknown.'),
    unassign: z.boolean().default(false).describe('Remove the assignee.'),
  }),
  annotations: changes('Assign issue', { idempotent: true }),
  async handler(ctx, args) {
    if ([args.accountId, args.user, args.unassign].filter(Boolean).length !== 1)
      throw new Error('Give exactly one of accountId, user or unassign: true.');
    const site = await resolveSite(ctx);
    const user = args.user ? await findOneUser(ctx, site, args.user) : undefined;
    const accountId = user?.accountId ?? args.accountId ?? null;
    await jira(ctx, site, 'PUT', path`/issue/${args.issueKey}/assignee`, {
      body: { accountId },
      action: accountId ? `assign issue ${args.issueKey}` : `unassign issue ${args.issueKey}`,
      scope: WRITE,
    });
    return {
      key: args.issueKey,
      assigneeAccountId: accountId,
      assignee: user?.displayName ?? null,
      url: browse(site, args.issueKey),
    };
  },
});

export const addWatcher = defineTool({
  description:
    'Add a watcher to a Jira issue so they get notified of changes. Without accountId, the connected user starts watching it.',
  input: z.object({
    issueKey,
    accountId: accountId.describe('accountId of the user to add; omit to watch it yourself.'),
  }),
  annotations: changes('Watch issue', { idempotent: true }),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const accountId =
      args.accountId ||
      (await jira<RawUser>(ctx, site, 'GET', '/myself', { action: 'read your Jira profile', scope: USERS }))!.accountId;
    await jira(ctx, site, 'POST', path`/issue/${args.issueKey}/watchers`, {
      body: accountId,
      action: `add a watcher to issue ${args.issueKey}`,
      scope: WRITE,
    });
    return { key: args.issueKey, watcherAccountId: accountId, url: browse(site, args.issueKey) };
  },
});

export const linkIssues = defineTool({
  description:
    'Link two Jira issues so that `issueKey` <verb of linkType> `targetIssueKey`, e.g. ABC-1 blocks ABC-2 (linkType "Blocks"), ABC-1 duplicates ABC-2 ("Duplicate"), ABC-1 relates to ABC-2 ("Relates"). jira_list_link_types shows the link types of the site.',
  input: z.object({
    issueKey: z.string().regex(KEY).describe('The issue the link reads from (e.g. the one that blocks).'),
    targetIssueKey: z.string().regex(KEY).describe('The other issue (e.g. the one that is blocked).'),
    linkType: z
      .string()
      .min(1)
      .max(255)
      .default('Relates')
      .describe('Link type name: Blocks, Duplicate, Relates, Cloners, …'),
    comment: plainText('Optional plain-text comment added to issueKey.'),
  }),
  annotations: changes('Link issues'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const type = args.linkType;
    const body = {
      type: byIdOrName(type),
      inwardIssue: { key: args.issueKey },
      outwardIssue: { key: args.targetIssueKey },
      ...(args.comment ? { comment: { body: textToAdf(args.comment) } } : {}),
    };
    await jira(ctx, site, 'POST', '/issueLink', {
      body,
      action: `link ${args.issueKey} to ${args.targetIssueKey} (${type})`,
      scope: WRITE,
    });
    return {
      issueKey: args.issueKey,
      targetIssueKey: args.targetIssueKey,
      linkType: type,
      url: browse(site, args.issueKey),
    };
  },
});
