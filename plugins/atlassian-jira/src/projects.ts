/**
 * @module plugins/atlassian-jira/src/projects
 * The look-up tools: projects and project types, issue types, users (and the connected one) and
 * link types.
 */
import { collectPages, defineTool, path, reads, z } from 'workbench/plugin-sdk';
import { browse, jira, resolveSite, READ, USERS } from './api.js';
import { cursor } from './issues.js';
import { name, slimUser, type Named, type RawUser } from './shape.js';

const projectKey = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_]{0,99}$/)
  .describe('Project key (e.g. ABC) or numeric id.');

interface RawIssueType {
  id: string;
  name?: string;
  subtask?: boolean;
  description?: string;
}
interface RawProject {
  id: string;
  key: string;
  name?: string;
  projectTypeKey?: string;
  description?: string;
  lead?: Named;
  issueTypes?: RawIssueType[];
}

export const listProjects = defineTool({
  description:
    'List the Jira projects we have, i.e. that you can see (key, name, type), optionally filtered by a piece of the name or key. When `next` is not null, pass it as `cursor` for the next page.',
  input: z.object({
    query: z.string().max(200).optional().describe('Filter: text contained in the project name or key.'),
    maxResults: z.int().min(1).max(100).default(50).describe('Projects per page.'),
    cursor,
  }),
  annotations: reads('List projects'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const startAt = Number(args.cursor || 0);
    const data = await jira<{ values?: RawProject[]; total?: number; isLast?: boolean }>(
      ctx,
      site,
      'GET',
      '/project/search',
      {
        query: { startAt, maxResults: args.maxResults, query: args.query },
        action: 'list projects',
        scope: READ,
      },
    );
    const values = Array.isArray(data?.values) ? data.values : [];
    const projects = values.map((p) => ({
      key: p.key,
      name: p.name,
      id: p.id,
      type: p.projectTypeKey ?? null,
      url: browse(site, p.key),
    }));
    const next = data && data.isLast === false && values.length ? String(startAt + values.length) : null;
    return { projects, total: typeof data?.total === 'number' ? data.total : null, next };
  },
});

export const getProject = defineTool({
  description: 'Read the details of one Jira project, by key: name, description, lead, type and its issue types.',
  input: z.object({ projectKey }),
  annotations: reads('Get project'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const p = (await jira<RawProject>(ctx, site, 'GET', path`/project/${args.projectKey}`, {
      query: { expand: 'description,lead,issueTypes' },
      action: `read project ${args.projectKey}`,
      scope: READ,
    }))!;
    return {
      key: p.key,
      id: p.id,
      name: p.name,
      description: p.description || '',
      lead: name(p.lead),
      type: p.projectTypeKey ?? null,
      issueTypes: Array.isArray(p.issueTypes)
        ? p.issueTypes.map((t) => ({ id: t.id, name: t.name, subtask: !!t.subtask }))
        : [],
      url: browse(site, p.key),
    };
  },
});

export const listProjectTypes = defineTool({
  description:
    'List the Jira project types (software, business, service_desk, product_discovery): key, name and colour; `licensedOnly: true` lists only the types your Jira license covers. The key is the `type` of jira_list_projects rows.',
  input: z.object({
    licensedOnly: z.boolean().default(false).describe('Only the project types your license covers.'),
  }),
  annotations: reads('List project types'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    // each type comes with its icon as a base64 SVG: left out
    type ProjectType = { key: string; formattedKey?: string; color?: string; icon?: string };
    const data = await jira<ProjectType[]>(
      ctx,
      site,
      'GET',
      args.licensedOnly ? '/project/type/accessible' : '/project/type',
      {
        action: 'list project types',
        scope: READ,
      },
    );
    return {
      projectTypes: (Array.isArray(data) ? data : []).map((t) => ({
        key: t.key,
        name: t.formattedKey ?? t.key,
        color: t.color ?? null,
      })),
    };
  },
});

export const listIssueTypes = defineTool({
  description:
    'List the issue types that can be created in a Jira project (e.g. Task, Bug, Story, Epic, Subtask), with ids and whether each is a sub-task type. Use before jira_create_issue.',
  input: z.object({ projectKey }),
  annotations: reads('List issue types'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    // the list is paged (startAt / maxResults / total): read every page, a few at most
    const { items } = await collectPages<RawIssueType, number>(
      ctx,
      0,
      async (at) => {
        const startAt = at ?? 0;
        type Page = {
          issueTypes?: RawIssueType[];
          values?: RawIssueType[];
          createMetaIssueType?: RawIssueType[];
          total?: number;
        };
        const data = await jira<Page>(ctx, site, 'GET', path`/issue/createmeta/${args.projectKey}/issuetypes`, {
          query: { startAt, maxResults: 100 },
          action: `list the issue types of project ${args.projectKey}`,
          scope: READ,
        });
        const got = data?.issueTypes || data?.values || data?.createMetaIssueType || [];
        const end = startAt + got.length;
        return {
          items: got,
          next: got.length === 0 || typeof data?.total !== 'number' || end >= data.total ? null : end,
        };
      },
      { limit: Infinity },
    );
    return {
      project: args.projectKey,
      issueTypes: items.map((t) => ({
        id: t.id,
        name: t.name,
        subtask: !!t.subtask,
        description: t.description || '',
      })),
    };
  },
});

export const searchUsers = defineTool({
  description:
    "Find Jira users by name or email and get their accountIds (needed to assign issues, add watchers or write JQL like `assignee = <accountId>`). Emails are shown only when the user's privacy settings allow it.",
  input: z.object({
    query: z.string().min(1).max(255).describe('Part of a display name, or an email address.'),
    maxResults: z.int().min(1).max(50).default(10).describe('Users to return.'),
  }),
  annotations: reads('Search users'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const users = await jira<RawUser[]>(ctx, site, 'GET', '/user/search', {
      query: { query: args.query, maxResults: args.maxResults },
      action: 'search users',
      scope: USERS,
    });
    return { users: (Array.isArray(users) ? users : []).map(slimUser) };
  },
});

export const getMyself = defineTool({
  description:
    "Who am I in Jira: the connected user's accountId, name, email and time zone, and which Jira site the connection acts on.",
  input: z.object({}),
  annotations: reads('Get current user'),
  async handler(ctx) {
    const site = await resolveSite(ctx);
    const me = (await jira<RawUser>(ctx, site, 'GET', '/myself', { action: 'read your Jira profile', scope: USERS }))!;
    return { ...slimUser(me), timeZone: me.timeZone ?? null, site: { name: site.name, url: site.url } };
  },
});

export const listLinkTypes = defineTool({
  description:
    'List the issue link types of the Jira site (name, outward wording such as "blocks", inward wording such as "is blocked by"), for jira_link_issues.',
  input: z.object({}),
  annotations: reads('List link types'),
  async handler(ctx) {
    const site = await resolveSite(ctx);
    type LinkType = { id: string; name: string; outward: string; inward: string };
    const data = await jira<{ issueLinkTypes?: LinkType[] }>(ctx, site, 'GET', '/issueLinkType', {
      action: 'list issue link types',
      scope: READ,
    });
    const list = Array.isArray(data?.issueLinkTypes) ? data.issueLinkTypes : [];
    return { linkTypes: list.map((t) => ({ id: t.id, name: t.name, outward: t.outward, inward: t.inward })) };
  },
});
