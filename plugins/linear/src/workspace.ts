/**
 * @module plugins/linear/src/workspace
 * The tools about the workspace rather than one issue: who you are, the teams, a team's workflow
 * states and the projects.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { gql, LIMIT_HINT, nextOf, nodes, PAGE, type Connection } from './api.js';
import { cursor, limit, team } from './fields.js';
import { nameOf, type Named, type Texts } from './shape.js';

type Viewer = Named &
  Texts<'displayName' | 'email' | 'url'> & {
    admin?: boolean | null;
    organization?: Texts<'id' | 'name' | 'urlKey'> | null;
  };

export const whoami = defineTool({
  description:
    'Who am I in Linear: the connected user\'s id, name, display name, email, whether they are an admin, and their workspace (organization id, name and URL key). Use the id or "me" wherever a Linear tool takes an assignee.',
  annotations: reads('Who am I in Linear'),
  input: z.object({}),
  handler: async (ctx) => {
    const data = await gql<{ viewer?: Viewer | null }>(
      ctx,
      'read your Linear user',
      'query { viewer { id name displayName email admin url organization { id name urlKey } } }',
      {},
    );
    const v = data.viewer;
    if (!v || typeof v !== 'object')
      throw new Error('Linear did not say who you are (no viewer): reconnect linear if this persists.');
    const o = v.organization || {};
    return {
      id: v.id,
      name: v.name ?? null,
      displayName: v.displayName ?? null,
      email: v.email ?? null,
      admin: !!v.admin,
      url: v.url ?? null,
      organization: { id: o.id ?? null, name: o.name ?? null, urlKey: o.urlKey ?? null },
    };
  },
});

type Team = Named & Texts<'key' | 'description'>;

export const listTeams = defineTool({
  description:
    'List the Linear teams you can see: id, key (the ENG in ENG-123, which other Linear tools take as `team`), name and description. When `next` is not null, pass it as `cursor` for the next page.',
  annotations: reads('List teams'),
  input: z.object({ limit: limit(50), cursor }),
  handler: async (ctx, args) => {
    const first = args.limit;
    const query = `query($first: Int!, $after: String) { teams(first: $first, after: $after) { nodes { id key name description } ${PAGE} } }`;
    const data = await gql<{ teams?: Connection }>(
      ctx,
      'list teams',
      query,
      { first, after: args.cursor ?? null },
      LIMIT_HINT,
    );
    return {
      teams: nodes<Team>(data.teams, first).map((t) => ({
        id: t.id,
        key: t.key ?? null,
        name: t.name ?? null,
        description: t.description ?? null,
      })),
      next: nextOf(data.teams),
    };
  },
});

type State = Named & Texts<'type' | 'description'> & { position?: number | null };

export const listWorkflowStates = defineTool({
  description:
    'List the workflow states (statuses) of a Linear team in board order: name, type (triage, backlog, unstarted, started, completed, canceled) and id. Use it to learn which state names linear_update_issue and linear_create_issue accept.',
  annotations: reads('List workflow states'),
  input: z.object({ team }),
  handler: async (ctx, args) => {
    const data = await gql<{ workflowStates?: Connection }>(
      ctx,
      `list the workflow states of team ${args.team}`,
      'query($key: String!) { workflowStates(first: 100, filter: { team: { key: { eqIgnoreCase: $key } } }) { nodes { id name type position description } } }',
      { key: args.team },
    );
    const states = nodes<State>(data.workflowStates, 100)
      .map((s) => ({
        id: s.id,
        name: s.name ?? null,
        type: s.type ?? null,
        position: s.position ?? null,
        description: s.description ?? null,
      }))
      .sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
    if (!states.length)
      throw new Error(
        `Linear has no team with key "${args.team}" that you can see: linear_list_teams lists the teams and their keys.`,
      );
    return { team: args.team.toUpperCase(), states };
  },
});

type Project = Named &
  Texts<'startDate' | 'targetDate' | 'url'> & {
    status?: (Named & Texts<'type'>) | null;
    lead?: Named | null;
    progress?: unknown;
  };

export const listProjects = defineTool({
  description:
    'List Linear projects, most recently updated first, optionally of one team (key) or whose name contains a text: name, status, lead, start and target dates, progress (0 to 1) and link. When `next` is not null, pass it as `cursor`.',
  annotations: reads('List projects'),
  input: z.object({
    team: team.optional(),
    name: z.string().min(1).max(200).optional().describe('Part of the project name.'),
    limit: limit(25),
    cursor,
  }),
  handler: async (ctx, args) => {
    const filter: Record<string, unknown> = {};
    if (args.team) filter.accessibleTeams = { some: { key: { eqIgnoreCase: args.team } } };
    if (args.name) filter.name = { containsIgnoreCase: args.name };
    const first = args.limit;
    const data = await gql<{ projects?: Connection }>(
      ctx,
      'list projects',
      `query($filter: ProjectFilter, $first: Int!, $after: String) { projects(filter: $filter, first: $first, after: $after, orderBy: updatedAt) { nodes { id name status { name type } lead { name } startDate targetDate progress url } ${PAGE} } }`,
      { filter, first, after: args.cursor ?? null },
      LIMIT_HINT,
    );
    return {
      projects: nodes<Project>(data.projects, first).map((p) => ({
        id: p.id,
        name: p.name ?? null,
        status: nameOf(p.status),
        statusType: p.status ? (p.status.type ?? null) : null,
        lead: nameOf(p.lead),
        startDate: p.startDate ?? null,
        targetDate: p.targetDate ?? null,
        progress: typeof p.progress === 'number' ? p.progress : null,
        url: p.url ?? null,
      })),
      next: nextOf(data.projects),
    };
  },
});
