/**
 * @module plugins/newrelic/src/views
 * Dashboards (list, read with their widgets' NRQL, add widgets to a page), synthetic monitors and
 * workloads: entity searches of one type each, shaped for what an agent asks of them.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { accountOf, iso, nerdgraph } from './api.js';
import { entitySearch, getEntity, scoped, shapeSynth, slimEntity, SYNTH_SUMMARY, type Entity } from './entity.js';
import { accountId, cursor, guid, nameContains, onlyAccount } from './fields.js';

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

const widgetInput = z.strictObject({
  title: z.string().min(1).max(200),
  visualization: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/)
    .default('viz.line')
    .describe('Chart type: viz.line, viz.area, viz.bar, viz.billboard, viz.pie, viz.table, viz.markdown, …'),
  nrql: z.string().min(1).max(4000).optional().describe('The NRQL query it charts (every type but viz.markdown).'),
  accountId: accountId.optional().describe("The account the query runs in; defaults to the connection's default."),
  text: z.string().max(10000).optional().describe('viz.markdown: the Markdown text.'),
  column: z.int().min(1).max(12).optional().describe('Column it starts in (1-12); New Relic places it when left out.'),
  row: z.int().min(1).max(500).optional(),
  width: z.int().min(1).max(12).default(4),
  height: z.int().min(1).max(12).default(3),
});

export const addWidgetsToDashboardPage = defineTool({
  description:
    "Add widgets (charts, tables, billboards, Markdown text) to a page of a New Relic dashboard, keeping the widgets already there. Each widget has a title, a chart type (viz.line by default) and the NRQL it shows, or Markdown text for viz.markdown. The page guid is a page's `guid` in newrelic_get_dashboard (a dashboard's own guid is not a page's). Returns how many widgets were added.",
  annotations: changes('Add widgets to dashboard page'),
  input: z.object({
    pageGuid: guid.describe('Guid of the dashboard page.'),
    widgets: z.array(widgetInput).min(1).max(20),
  }),
  handler: async (ctx, args) => {
    const widgets = args.widgets.map((w, i) => {
      const markdown = w.visualization === 'viz.markdown';
      if (markdown ? w.text === undefined : w.nrql === undefined)
        throw new Error(`Widget ${i + 1} ("${w.title}") needs ${markdown ? '`text` (viz.markdown)' : '`nrql`'}.`);
      const rawConfiguration = markdown
        ? { text: w.text }
        : { nrqlQueries: [{ accountIds: [accountOf(ctx, w)], query: w.nrql }] };
      const layout = { column: w.column, row: w.row, width: w.width, height: w.height };
      return { title: w.title, visualization: { id: w.visualization }, layout, rawConfiguration };
    });
    const query = `mutation($guid: EntityGuid!, $widgets: [DashboardWidgetInput!]!) { dashboardAddWidgetsToPage(guid: $guid, widgets: $widgets) { errors { description type } } }`;
    const action = `add widgets to dashboard page ${args.pageGuid}`;
    type Answer = { errors?: Array<{ description?: string | null; type?: string | null }> | null };
    const data = await nerdgraph<{ dashboardAddWidgetsToPage?: Answer | null }>(ctx, action, query, {
      guid: args.pageGuid,
      widgets,
    });
    const errors = data.dashboardAddWidgetsToPage?.errors || [];
    if (errors.length)
      throw new Error(
        `New Relic could not ${action}: ${errors.map((e) => [e.type, e.description].filter(Boolean).join(': ')).join('; ')}.`,
      );
    return { pageGuid: args.pageGuid, added: widgets.length, titles: widgets.map((w) => w.title) };
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
