/**
 * @module plugins/newrelic/src/changes
 * Change tracking (deployment markers) and the errors inbox (error groups of an entity, and their
 * state).
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { HOUR_MS, iso, nerdgraph, type Fields } from './api.js';
import { cursor, guid, sinceHours } from './fields.js';

const DEPLOYMENT_OPTIONAL = ['description', 'changelog', 'commit', 'user', 'deepLink', 'groupId', 'timestamp'] as const;

type Deployment = { deploymentId: string; entityGuid: string; version: string; timestamp?: unknown } & Fields<
  'deploymentType' | 'description' | 'commit' | 'user'
>;

export const createDeploymentMarker = defineTool({
  description:
    'Record a deployment (release) of a service in New Relic change tracking, so charts show a marker and changes can be correlated with errors or latency. Needs the entity guid of the service and the version deployed.',
  annotations: changes('Record deployment'),
  input: z.object({
    entityGuid: guid.describe('Guid of the deployed entity (e.g. an APM service).'),
    version: z.string().min(1).max(200).describe('Version deployed, e.g. v1.4.2 or a commit SHA.'),
    description: z.string().max(2000).optional().describe('What changed.'),
    changelog: z.string().max(4000).optional().describe('Changelog text or link.'),
    commit: z.string().max(200).optional().describe('Commit SHA.'),
    user: z.string().max(200).optional().describe('Who deployed.'),
    deepLink: z.string().max(2000).optional().describe('Link to the release or pipeline run.'),
    deploymentType: z
      .enum(['BASIC', 'BLUE_GREEN', 'CANARY', 'OTHER', 'ROLLING', 'SHADOW'])
      .default('BASIC')
      .describe('Deployment strategy.'),
    groupId: z.string().max(200).optional().describe('Groups deployments of several services that belong together.'),
    timestamp: z.int().min(0).optional().describe('When it happened, epoch milliseconds; defaults to now.'),
  }),
  handler: async (ctx, args) => {
    const deployment: Record<string, unknown> = {
      entityGuid: args.entityGuid,
      version: args.version,
      deploymentType: args.deploymentType || 'BASIC',
    };
    for (const k of DEPLOYMENT_OPTIONAL) {
      if (args[k] !== undefined && args[k] !== '') deployment[k] = args[k];
    }
    const query = `mutation($deployment: ChangeTrackingDeploymentInput!) { changeTrackingCreateDeployment(deployment: $deployment) { deploymentId entityGuid version timestamp deploymentType description changelog commit user } }`;
    const data = await nerdgraph<{ changeTrackingCreateDeployment?: Deployment | null }>(
      ctx,
      `record deployment ${args.version}`,
      query,
      { deployment },
    );
    const d = data.changeTrackingCreateDeployment;
    if (!d) throw new Error('New Relic did not record the deployment (empty answer): check the entity guid.');
    return {
      deploymentId: d.deploymentId,
      entityGuid: d.entityGuid,
      version: d.version,
      timestamp: iso(d.timestamp),
      deploymentType: d.deploymentType ?? null,
      description: d.description ?? undefined,
      commit: d.commit ?? undefined,
      user: d.user ?? undefined,
    };
  },
});

type ErrorGroup = { id: string; name: string } & Fields<'message' | 'state' | 'url'> & {
    occurrences?: { totalCount?: number | null; firstSeenAt?: unknown; lastSeenAt?: unknown } | null;
    assignment?: Fields<'email'> | null;
  };
type ErrorGroups = { nextCursor?: string | null; totalCount?: number | null; results?: ErrorGroup[] | null };

export const listErrorGroups = defineTool({
  description:
    "List the error groups of an entity in New Relic's errors inbox (grouped exceptions with message, occurrences, first/last seen, state and assignee), unresolved ones of the last 24 hours by default. When `next` is not null, pass it as `cursor` for more.",
  annotations: reads('List error groups'),
  input: z.object({
    entityGuid: guid.describe('Guid of the service or app.'),
    states: z
      .array(z.enum(['UNRESOLVED', 'RESOLVED', 'IGNORED']))
      .min(1)
      .max(3)
      .default(['UNRESOLVED'])
      .describe('Error group states to include.'),
    sinceHours,
    cursor,
  }),
  handler: async (ctx, args) => {
    const end = Date.now();
    const vars = {
      guids: [args.entityGuid],
      filter: { states: args.states && args.states.length ? args.states : ['UNRESOLVED'] },
      timeWindow: { startTime: end - args.sinceHours * HOUR_MS, endTime: end },
      cursor: args.cursor || null,
    };
    const query = `query($guids: [EntityGuid!], $filter: ErrorsInboxErrorGroupSearchFilterInput, $timeWindow: TimeWindowInput, $cursor: String) { actor { errorsInbox { errorGroups(entityGuids: $guids, filter: $filter, timeWindow: $timeWindow, cursor: $cursor) { nextCursor totalCount results { id name message state url occurrences { totalCount firstSeenAt lastSeenAt } assignment { email } } } } } }`;
    const data = await nerdgraph<{ actor?: { errorsInbox?: { errorGroups?: ErrorGroups | null } | null } | null }>(
      ctx,
      `list the error groups of ${args.entityGuid}`,
      query,
      vars,
    );
    const r: ErrorGroups = data.actor?.errorsInbox?.errorGroups || {};
    return {
      entityGuid: args.entityGuid,
      errorGroups: (r.results || []).map((g) => ({
        id: g.id,
        name: g.name,
        message:
          typeof g.message === 'string' && g.message.length > 500 ? `${g.message.slice(0, 500)}…` : (g.message ?? null),
        state: g.state ?? null,
        occurrences: g.occurrences?.totalCount ?? null,
        firstSeenAt: iso(g.occurrences?.firstSeenAt),
        lastSeenAt: iso(g.occurrences?.lastSeenAt),
        assignee: g.assignment?.email ?? null,
        url: g.url ?? null,
      })),
      total: r.totalCount ?? null,
      next: r.nextCursor || null,
    };
  },
});

export const updateErrorGroupState = defineTool({
  description: 'Mark an errors-inbox error group as RESOLVED, IGNORED or UNRESOLVED (reopen).',
  annotations: changes('Resolve or ignore error group', { idempotent: true }),
  input: z.object({
    errorGroupId: z.string().min(1).max(300).describe('Error group id (from newrelic_list_error_groups).'),
    state: z.enum(['RESOLVED', 'IGNORED', 'UNRESOLVED']).describe('New state.'),
  }),
  handler: async (ctx, args) => {
    const query = `mutation($id: ID!, $state: ErrorsInboxErrorGroupState!) { errorsInboxUpdateErrorGroupState(id: $id, state: $state) { state errors { description type } } }`;
    type Updated = {
      state?: string | null;
      errors?: Array<{ description?: string | null; type?: string | null }> | null;
    };
    const data = await nerdgraph<{ errorsInboxUpdateErrorGroupState?: Updated | null }>(
      ctx,
      `mark error group ${args.errorGroupId} ${args.state}`,
      query,
      { id: args.errorGroupId, state: args.state },
    );
    const r = data.errorsInboxUpdateErrorGroupState;
    if (!r)
      throw new Error(
        `New Relic did not update error group ${args.errorGroupId} (empty answer): check the id with newrelic_list_error_groups.`,
      );
    // a refused update comes back in the payload's errors, with HTTP 200 and no GraphQL errors
    const refused = (r.errors || []).map((e) => `${e.description || 'refused'}${e.type ? ` [${e.type}]` : ''}`);
    if (refused.length > 0)
      throw new Error(
        `New Relic could not mark error group ${args.errorGroupId} ${args.state}: ${refused.join('; ')}. Check the id with newrelic_list_error_groups.`,
      );
    return { errorGroupId: args.errorGroupId, state: r.state ?? args.state };
  },
});
