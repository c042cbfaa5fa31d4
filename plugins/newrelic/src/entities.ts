/**
 * @module plugins/newrelic/src/entities
 * Finding entities and reading their health: the entity search, one entity in detail, the APM
 * summary of a service and any entity's golden metrics (each metric's NRQL run over a window);
 * and tagging an entity.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { iso, literal, nerdgraph } from './api.js';
import {
  accountClause,
  APM_SUMMARY,
  entitySearch,
  getEntity,
  nameClause,
  shapeApm,
  shapeSynth,
  slimEntity,
  SYNTH_SUMMARY,
  tagMap,
  withEntityFields,
  type Entity,
} from './entity.js';
import { accountId, cursor, guid, onlyAccount } from './fields.js';

export const searchEntities = defineTool({
  description:
    "Find New Relic entities — APM services, browser and mobile apps, hosts, synthetic monitors, dashboards, workloads, … — by name, domain, type, tag, alert severity or a raw entity-search query. Returns guid, name, type, account, alert severity and whether it reports. Pass a result's guid to newrelic_get_entity. When `next` is not null, pass it as `cursor` for more.",
  annotations: reads('Search entities'),
  input: z.object({
    name: z.string().min(1).max(200).optional().describe('Part of the entity name.'),
    domain: z
      .string()
      .regex(/^[A-Za-z0-9_]{1,40}$/)
      .optional()
      .describe('Entity domain: APM, BROWSER, MOBILE, INFRA, SYNTH, EXT, NR1, …'),
    type: z
      .string()
      .regex(/^[A-Za-z0-9_]{1,60}$/)
      .optional()
      .describe('Entity type: APPLICATION, HOST, MONITOR, DASHBOARD, WORKLOAD, SERVICE, …'),
    tags: z
      .array(
        z.strictObject({
          key: z.string().regex(new RegExp('^[A-Za-z0-9_.:/-]{1,100}$')),
          value: z.string().min(1).max(200),
        }),
      )
      .max(10)
      .optional()
      .describe('Tags that must match.'),
    alertSeverity: z
      .enum(['CRITICAL', 'WARNING', 'NOT_ALERTING', 'NOT_CONFIGURED'])
      .optional()
      .describe('Only entities in this alert state.'),
    accountId: onlyAccount('entities'),
    query: z
      .string()
      .max(2000)
      .optional()
      .describe(
        "Raw entity-search query, e.g. `domain = 'APM' AND reporting = 'true'`; combined with the other filters by AND.",
      ),
    includeTags: z.boolean().default(false).describe("Also return each entity's tags."),
    cursor,
  }),
  handler: async (ctx, args) => {
    const clauses: string[] = [];
    if (args.query) clauses.push(`(${args.query})`);
    if (args.name) clauses.push(nameClause(args.name));
    if (args.domain) clauses.push(`domain = ${literal(args.domain.toUpperCase())}`);
    if (args.type) clauses.push(`type = ${literal(args.type.toUpperCase())}`);
    if (args.alertSeverity) clauses.push(`alertSeverity = ${literal(args.alertSeverity)}`);
    if (args.accountId !== undefined) clauses.push(accountClause(args.accountId));
    for (const t of args.tags || []) {
      const key = /^[A-Za-z0-9_]+$/.test(t.key) ? t.key : `\`${t.key}\``;
      clauses.push(`tags.${key} = ${literal(t.value)}`);
    }
    if (!clauses.length)
      throw new Error('Give at least one filter: name, domain, type, tags, alertSeverity, accountId or query.');
    const r = await entitySearch(
      ctx,
      'search entities',
      clauses,
      args.cursor,
      args.includeTags ? 'tags { key values }' : '',
    );
    const entities = r.entities.map((e) =>
      args.includeTags ? { ...slimEntity(e), tags: tagMap(e.tags) } : slimEntity(e),
    );
    return { entities, total: r.count, next: r.next };
  },
});

type Violation = {
  label?: string;
  level?: string | null;
  alertSeverity?: string | null;
  openedAt?: unknown;
  closedAt?: unknown;
  violationUrl?: string | null;
};

export const getEntityTool = defineTool({
  description:
    'Read one New Relic entity by guid: name, type, account, alert severity, reporting, tags, recent alert violations, and the current summary of APM services and synthetic monitors.',
  annotations: reads('Get entity'),
  input: z.object({ guid: guid.describe('Entity guid (from newrelic_search_entities).') }),
  handler: async (ctx, args) => {
    const selection = `tags { key values } recentAlertViolations(count: 5) { label level alertSeverity openedAt closedAt violationUrl } ... on ApmApplicationEntity { language ${APM_SUMMARY} } ... on SyntheticMonitorEntity { ${SYNTH_SUMMARY} }`;
    const e = await getEntity<Entity & { recentAlertViolations?: Violation[] | null }>(
      ctx,
      `read entity ${args.guid}`,
      args.guid,
      withEntityFields(selection),
    );
    const out: Record<string, unknown> = { ...slimEntity(e), tags: tagMap(e.tags) };
    out.recentViolations = (e.recentAlertViolations || []).map((v) => ({
      label: v.label,
      level: v.level ?? null,
      severity: v.alertSeverity ?? null,
      openedAt: iso(v.openedAt),
      closedAt: iso(v.closedAt),
      url: v.violationUrl ?? null,
    }));
    if (e.apmSummary !== undefined) {
      out.language = e.language ?? null;
      out.apmSummary = shapeApm(e.apmSummary);
    }
    if (e.monitorSummary !== undefined) out.monitor = shapeSynth(e);
    return out;
  },
});

const apmApplication = (e: Entity) => ({
  ...slimEntity(e),
  language: e.language ?? null,
  summary: shapeApm(e.apmSummary),
});

export const getApmSummary = defineTool({
  description:
    'How an APM service is doing right now: average response time (ms), throughput (requests per minute), error rate (%), Apdex, hosts and instances. Find the service by guid, or by part of its name (returns every APM application whose name matches, up to 25).',
  annotations: reads('APM service summary'),
  input: z.object({
    guid: guid.optional().describe('APM application guid.'),
    name: z.string().min(1).max(200).optional().describe('Part of the application name (when the guid is unknown).'),
    accountId: accountId.optional().describe('Only applications of this account (with name).'),
  }),
  handler: async (ctx, args) => {
    if (args.guid) {
      const e = await getEntity(
        ctx,
        `read APM application ${args.guid}`,
        args.guid,
        withEntityFields(`... on ApmApplicationEntity { language ${APM_SUMMARY} }`),
      );
      if (e.domain !== 'APM')
        throw new Error(
          `Entity ${args.guid} is a ${e.entityType || e.domain}, not an APM application: use newrelic_get_golden_metrics for it.`,
        );
      return { applications: [apmApplication(e)] };
    }
    if (!args.name) throw new Error('Give guid or name of the APM application.');
    const clauses = ["domain = 'APM'", "type = 'APPLICATION'", nameClause(args.name)];
    if (args.accountId !== undefined) clauses.push(accountClause(args.accountId));
    const r = await entitySearch(
      ctx,
      'find APM applications',
      clauses,
      null,
      `... on ApmApplicationEntityOutline { language ${APM_SUMMARY} }`,
    );
    if (!r.entities.length)
      throw new Error(`No APM application's name contains "${args.name}": check it with newrelic_search_entities.`);
    const applications = r.entities.slice(0, 25).map(apmApplication);
    const total = r.count ?? r.entities.length;
    if (!(total > applications.length || r.next)) return { applications };
    const more = `${total > applications.length ? total : 'More'} applications match "${args.name}"; the first ${applications.length} are shown: give a longer name, accountId, or the guid`;
    return { applications, more };
  },
});

/** Golden metric queries may be time series; a single value per metric reads better. */
function windowed(nrql: unknown, minutes: number): string {
  let q = String(nrql)
    .replace(/\bTIMESERIES(\s+(AUTO|MAX|\d+\s+\w+))?/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!/\bSINCE\b/i.test(q)) q = `${q} SINCE ${minutes} minutes ago`;
  return q;
}

/** One value when a metric gave one, else its rows (at most 10, without the time-series bounds). */
function metricValue(rows: unknown): unknown {
  if (!Array.isArray(rows) || !rows.length) return null;
  const clean = rows.slice(0, 10).map((r: unknown) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r || {})) if (!/^(beginTimeSeconds|endTimeSeconds)$/.test(k)) o[k] = v;
    return o;
  });
  if (clean.length === 1) {
    const vals = Object.values(clean[0]);
    return vals.length === 1 ? vals[0] : clean[0];
  }
  return clean;
}

type GoldenMetric = { name?: string; title?: string; unit?: string | null; query?: string };

export const getGoldenMetrics = defineTool({
  description:
    "The golden signals of any entity (e.g. throughput, latency, error rate for a service; CPU, memory for a host) over the last N minutes: each metric's title, unit, current value and the NRQL behind it.",
  annotations: reads('Golden metrics'),
  input: z.object({
    guid: guid.describe('Entity guid.'),
    sinceMinutes: z.int().min(1).max(10080).default(60).describe('Time window, in minutes before now.'),
  }),
  handler: async (ctx, args) => {
    const minutes = args.sinceMinutes;
    const selection = 'guid name accountId entityType goldenMetrics { metrics { name title unit query } }';
    const e = await getEntity<Entity & { goldenMetrics?: { metrics?: GoldenMetric[] | null } | null }>(
      ctx,
      `read the golden metrics of ${args.guid}`,
      args.guid,
      selection,
    );
    const metrics = (e.goldenMetrics && e.goldenMetrics.metrics) || [];
    if (!metrics.length)
      return { guid: e.guid, name: e.name, type: e.entityType ?? null, sinceMinutes: minutes, metrics: [] };
    const vars: Record<string, unknown> = { accountId: e.accountId };
    const decl = ['$accountId: Int!'];
    const fields = metrics.map((m, i) => {
      vars[`q${i}`] = windowed(m.query, minutes);
      decl.push(`$q${i}: Nrql!`);
      return `m${i}: nrql(query: $q${i}) { results }`;
    });
    const query = `query(${decl.join(', ')}) { actor { account(id: $accountId) { ${fields.join(' ')} } } }`;
    const data = await nerdgraph<{ actor?: { account?: Record<string, { results?: unknown } | null> | null } | null }>(
      ctx,
      `run the golden metric queries of ${e.name}`,
      query,
      vars,
    );
    const account = (data.actor && data.actor.account) || {};
    return {
      guid: e.guid,
      name: e.name,
      type: e.entityType ?? null,
      sinceMinutes: minutes,
      metrics: metrics.map((m, i) => ({
        name: m.name,
        title: m.title,
        unit: m.unit ?? null,
        value: metricValue(account[`m${i}`]?.results),
        nrql: vars[`q${i}`],
      })),
    };
  },
});

export const addTagsToEntity = defineTool({
  description:
    "Add tags (key: values labels) to a New Relic entity, e.g. team: payments, to group it and find it again by tag. A key that exists gets the new values added; nothing is removed. Find the entity's guid with newrelic_search_entities.",
  annotations: changes('Add tags to entity', { idempotent: true }),
  input: z.object({
    guid: guid.describe('Entity guid.'),
    tags: z
      .array(
        z.strictObject({
          key: z.string().min(1).max(128).describe('Tag key, e.g. "team".'),
          values: z.array(z.string().min(1).max(256)).min(1).max(20).describe('Values, e.g. ["payments"].'),
        }),
      )
      .min(1)
      .max(20),
  }),
  handler: async (ctx, args) => {
    const query = `mutation($guid: EntityGuid!, $tags: [TaggingTagInput!]!) { taggingAddTagsToEntity(guid: $guid, tags: $tags) { errors { message type } } }`;
    const action = `tag entity ${args.guid}`;
    type Answer = { errors?: Array<{ message?: string | null; type?: string | null }> | null };
    const data = await nerdgraph<{ taggingAddTagsToEntity?: Answer | null }>(ctx, action, query, {
      guid: args.guid,
      tags: args.tags,
    });
    const errors = data.taggingAddTagsToEntity?.errors || [];
    if (errors.length)
      throw new Error(
        `New Relic could not ${action}: ${errors.map((e) => [e.type, e.message].filter(Boolean).join(': ')).join('; ')}.`,
      );
    return { guid: args.guid, added: args.tags.map((t) => ({ key: t.key, values: t.values })) };
  },
});
