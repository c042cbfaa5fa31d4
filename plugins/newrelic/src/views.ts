/**
 * @module plugins/newrelic/src/views
 * Dashboards (list, read with their widgets' NRQL), synthetic monitors and workloads: entity
 * searches of one type each, shaped for what an agent asks of them.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { iso } from './api.js';
import { entitySearch, getEntity, scoped, shapeSynth, slimEntity, SYNTH_SUMMARY, type Entity } from './entity.js';
import { cursor, guid, nameContains, onlyAccount } from './fields.js';

type Owned = { owner?: { email?: string | null } | null; updatedAt?: unknown };

export const listDashboards = defineTool({
  description:
    'List New Relic dashboards (guid, name, account, owner, last update, link), optionally whose name contains some text. Pass a guid to newrelic_get_dashboard for its pages and widget queries. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List dashboards'),
  input: z.object({ nameContains: nameContains('dashboards'), accountId: onlyAccount('dashboards'), cursor }),
  handler: async (ctx, args) => {
    const fragment = '... on DashboardEntityOutline { dashboardParentGuid updatedAt owner { email } }';
    const clauses = scoped(["type = 'DASHBOARD'"], args);
    const r = await entitySearch<Entity & Owned & { dashboardParentGuid?: string | null }>(
      ctx,
      'list dashboards',
      clauses,
      args.cursor,
      fragment,
    );
    const dashboards = r.entities
      // the pages of a dashboard are dashboards of their own: only whole dashboards are listed
      .filter((e) => !e.dashboardParentGuid)
      .map((e) => ({
        guid: e.guid,
        name: e.name,
        accountId: e.accountId ?? null,
        owner: e.owner?.email ?? null,
        updatedAt: iso(e.updatedAt),
        url: e.permalink ?? null,
      }));
    return { dashboards, next: r.next };
  },
});

type Widget = {
  id: string;
  title?: string | null;
  visualization?: { id?: string | null } | null;
  rawConfiguration?: { nrqlQueries?: unknown; text?: unknown } | null;
};
type NrqlQuery = { accountId?: number | null; accountIds?: number[] | null; query: string };
type Dashboard = Entity &
  Owned & {
    description?: string | null;
    permissions?: string | null;
    pages?: Array<{ guid: string; name: string; widgets?: Widget[] | null }>;
  };

function shapeWidget(w: Widget) {
  const raw = w.rawConfiguration || {};
  const out: Record<string, unknown> = { id: w.id, title: w.title || '', visualization: w.visualization?.id ?? null };
  if (Array.isArray(raw.nrqlQueries))
    out.queries = (raw.nrqlQueries as NrqlQuery[]).map((q) => ({
      accountId: q.accountId ?? q.accountIds?.[0] ?? null,
      query: q.query,
    }));
  if (typeof raw.text === 'string') out.text = raw.text.length > 500 ? `${raw.text.slice(0, 500)}…` : raw.text;
  return out;
}

export const getDashboard = defineTool({
  description:
    'Read a New Relic dashboard: its pages and, for each widget, its title, chart type and NRQL queries (run them with newrelic_run_nrql to see the data).',
  annotations: reads('Get dashboard'),
  input: z.object({ guid: guid.describe('Dashboard guid.') }),
  handler: async (ctx, args) => {
    const selection =
      'guid name accountId entityType permalink ... on DashboardEntity { description permissions createdAt updatedAt owner { email } pages { guid name widgets { id title visualization { id } rawConfiguration } } }';
    const e = await getEntity<Dashboard>(ctx, `read dashboard ${args.guid}`, args.guid, selection);
    if (!Array.isArray(e.pages))
      throw new Error(
        `Entity ${args.guid} is a ${e.entityType || 'different entity'}, not a dashboard: find dashboards with newrelic_list_dashboards.`,
      );
    return {
      guid: e.guid,
      name: e.name,
      accountId: e.accountId ?? null,
      description: e.description || '',
      permissions: e.permissions ?? null,
      owner: e.owner?.email ?? null,
      updatedAt: iso(e.updatedAt),
      url: e.permalink ?? null,
      pages: e.pages.map((p) => ({ guid: p.guid, name: p.name, widgets: (p.widgets || []).map(shapeWidget) })),
    };
  },
});

export const listSyntheticMonitors = defineTool({
  description:
    'List New Relic synthetic monitors (uptime pings, browser and API checks) with their type, URL, period, status and success rate; optionally only failing ones or those whose name contains some text. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List synthetic monitors'),
  input: z.object({
    nameContains: nameContains('monitors'),
    accountId: onlyAccount('monitors'),
    failingOnly: z.boolean().default(false).describe('Only monitors currently alerting CRITICAL.'),
    cursor,
  }),
  handler: async (ctx, args) => {
    const clauses = scoped(["domain = 'SYNTH'", "type = 'MONITOR'"], args);
    if (args.failingOnly) clauses.push("alertSeverity = 'CRITICAL'");
    const r = await entitySearch(
      ctx,
      'list synthetic monitors',
      clauses,
      args.cursor,
      `... on SyntheticMonitorEntityOutline { ${SYNTH_SUMMARY} }`,
    );
    return { monitors: r.entities.map((e) => ({ ...slimEntity(e), ...shapeSynth(e) })), next: r.next };
  },
});

export const listWorkloads = defineTool({
  description:
    'List New Relic workloads (groups of entities that make up a product or team scope) with their health status (OPERATIONAL, DEGRADED, DISRUPTED, UNKNOWN), optionally whose name contains some text. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List workloads'),
  input: z.object({ nameContains: nameContains('workloads'), accountId: onlyAccount('workloads'), cursor }),
  handler: async (ctx, args) => {
    const clauses = scoped(["type = 'WORKLOAD'"], args);
    const fragment = '... on WorkloadEntityOutline { workloadStatus { statusValue description } }';
    const r = await entitySearch<
      Entity & { workloadStatus?: { statusValue?: string | null; description?: string | null } | null }
    >(ctx, 'list workloads', clauses, args.cursor, fragment);
    return {
      workloads: r.entities.map((e) => ({
        guid: e.guid,
        name: e.name,
        accountId: e.accountId ?? null,
        status: e.workloadStatus?.statusValue ?? null,
        statusDescription: e.workloadStatus?.description ?? null,
        alertSeverity: e.alertSeverity ?? null,
        url: e.permalink ?? null,
      })),
      next: r.next,
    };
  },
});
