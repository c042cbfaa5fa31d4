/**
 * @module plugins/asana/src/workspaces
 * The tools around tasks: who am I, workspaces, teams, projects and their sections, and finding users.
 */
import { clip, defineTool, path, reads, z } from 'workbench/plugin-sdk';
import { asana, list, nextOf, workspaceOf } from './api.js';
import { cursor, limit, project, workspace } from './fields.js';
import {
  detailProject,
  PROJECT_DETAIL_FIELDS,
  PROJECT_ROW_FIELDS,
  ref,
  slimProject,
  type RawProject,
} from './shape.js';

type Ref = { gid: string; name?: string };

export const whoami = defineTool({
  description:
    "Who am I in Asana: the connected user's own user gid (my user id), name and email, and the workspaces (gid and name) they belong to. Call it first to learn the workspace gid other Asana tools take.",
  input: z.object({}),
  annotations: reads('Who am I in Asana'),
  async handler(ctx) {
    type Me = { gid: string; name?: string; email?: string; workspaces?: Ref[] };
    const u =
      (
        await asana<Me>(ctx, 'GET', '/users/me', {
          query: { opt_fields: 'name,email,workspaces.name' },
          action: 'read your Asana profile',
        })
      ).data || ({} as Partial<Me>);
    return {
      gid: u.gid,
      name: u.name ?? null,
      email: u.email ?? null,
      workspaces: (Array.isArray(u.workspaces) ? u.workspaces : []).map(ref).filter(Boolean),
    };
  },
});

export const listWorkspaces = defineTool({
  description:
    'List the Asana workspaces and organizations the connected user belongs to (gid, name, whether it is an organization). When `next` is not null, pass it as `cursor` for the next page. asana_whoami also returns them, with the user.',
  input: z.object({ limit: limit(100, 50, 'Workspaces per page.'), cursor: cursor() }),
  annotations: reads('List workspaces'),
  async handler(ctx, args) {
    const env = await asana<Array<Ref & { is_organization?: boolean }>>(ctx, 'GET', '/workspaces', {
      query: { limit: args.limit, offset: args.cursor, opt_fields: 'name,is_organization' },
      action: 'list your workspaces',
    });
    return {
      workspaces: list(env).map((w) => ({ gid: w.gid, name: w.name ?? null, isOrganization: !!w.is_organization })),
      next: nextOf(env),
    };
  },
});

export const listTeams = defineTool({
  description:
    "List the Asana teams of a workspace (organization): gid, name, description and link. By default the teams you can see; `mine: true` lists only the teams you are a member of. Teams exist in organizations only. Use a team's gid to tell projects apart (asana_list_projects shows each project's team). When `next` is not null, pass it as `cursor`.",
  input: z.object({
    workspace,
    mine: z.boolean().default(false).describe('Only the teams you are a member of.'),
    limit: limit(100, 50, 'Teams per page.'),
    cursor: cursor(),
  }),
  annotations: reads('List teams'),
  async handler(ctx, args) {
    const ws = await workspaceOf(ctx, args.workspace);
    type Team = Ref & { description?: string; permalink_url?: string };
    const common = { limit: args.limit, offset: args.cursor, opt_fields: 'name,description,permalink_url' };
    const env = args.mine
      ? await asana<Team[]>(ctx, 'GET', '/users/me/teams', {
          query: { workspace: ws, ...common },
          action: `list your teams in workspace ${ws}`,
        })
      : await asana<Team[]>(ctx, 'GET', path`/workspaces/${ws}/teams`, {
          query: common,
          action: `list the teams of workspace ${ws}`,
        });
    return {
      workspace: ws,
      teams: list(env).map((t) => ({
        gid: t.gid,
        name: t.name ?? null,
        description: t.description ? clip(t.description, 500) : null,
        url: t.permalink_url ?? null,
      })),
      next: nextOf(env),
    };
  },
});

export const listProjects = defineTool({
  description:
    "List the Asana projects of a workspace (gid, name, owner, team, due date, link); active ones by default, or only archived ones. When `next` is not null, pass it as `cursor` for the next page. Use asana_get_project for one project's description and status, asana_list_sections for its sections.",
  input: z.object({
    workspace,
    archived: z
      .boolean()
      .default(false)
      .describe('true lists only archived projects; false (the default) only active ones.'),
    limit: limit(100, 50, 'Projects per page.'),
    cursor: cursor(),
  }),
  annotations: reads('List projects'),
  async handler(ctx, args) {
    const ws = await workspaceOf(ctx, args.workspace);
    const env = await asana<RawProject[]>(ctx, 'GET', path`/workspaces/${ws}/projects`, {
      query: {
        archived: String(args.archived),
        limit: args.limit,
        offset: args.cursor,
        opt_fields: PROJECT_ROW_FIELDS,
      },
      action: `list the projects of workspace ${ws}`,
    });
    return { workspace: ws, projects: list(env).map(slimProject), next: nextOf(env) };
  },
});

export const getProject = defineTool({
  description:
    'Read one Asana project by gid: name, description (notes), owner, team, workspace, start and due dates, archived/completed, privacy, its latest status update (title and on track / at risk / off track) and link.',
  input: z.object({ project }),
  annotations: reads('Get project'),
  async handler(ctx, args) {
    const env = await asana<RawProject>(ctx, 'GET', path`/projects/${args.project}`, {
      query: { opt_fields: PROJECT_DETAIL_FIELDS },
      action: `read project ${args.project}`,
    });
    return detailProject(env.data || ({} as RawProject));
  },
});

export const listSections = defineTool({
  description:
    'List the sections of an Asana project (the list headers, or the board columns) with their gids, in project order. Use a section gid with asana_list_tasks, asana_create_task or asana_add_task_to_project.',
  input: z.object({ project, limit: limit(100, 100, 'Sections per page.'), cursor: cursor() }),
  annotations: reads('List sections'),
  async handler(ctx, args) {
    const env = await asana<Ref[]>(ctx, 'GET', path`/projects/${args.project}/sections`, {
      query: { limit: args.limit, offset: args.cursor, opt_fields: 'name' },
      action: `list the sections of project ${args.project}`,
    });
    return {
      project: args.project,
      sections: list(env).map((s) => ({ gid: s.gid, name: s.name ?? null })),
      next: nextOf(env),
    };
  },
});

export const findUsers = defineTool({
  description:
    'Find Asana users (people, teammates, colleagues) in a workspace by part of their name or email, and get their gids and emails — to assign a task or filter tasks by assignee. Quick typeahead matching, best matches first.',
  input: z.object({
    query: z.string().min(1).max(200).describe('Part of a name, or an email.'),
    workspace,
    limit: limit(100, 10, 'Users to return.'),
  }),
  annotations: reads('Find users'),
  async handler(ctx, args) {
    const ws = await workspaceOf(ctx, args.workspace);
    const env = await asana<Array<Ref & { email?: string }>>(ctx, 'GET', path`/workspaces/${ws}/typeahead`, {
      query: { resource_type: 'user', query: args.query, count: args.limit, opt_fields: 'name,email' },
      action: `look up users matching "${args.query}"`,
    });
    return {
      workspace: ws,
      users: list(env).map((u) => ({ gid: u.gid, name: u.name ?? null, email: u.email ?? null })),
    };
  },
});
