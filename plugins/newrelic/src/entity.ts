/**
 * @module plugins/newrelic/src/entity
 * What the entity tools share: the entity search (entities, dashboards, monitors, workloads, APM
 * applications), reading one entity by guid, and the shapers of entities, tags and the APM and
 * synthetic-monitor summaries.
 */
import type { PluginContext } from 'workbench/plugin-sdk';
import { literal, nerdgraph, type Fields } from './api.js';

type Maybe<T> = T | null | undefined;

type ApmSummary = Fields<
  | 'apdexScore'
  | 'errorRate'
  | 'hostCount'
  | 'instanceCount'
  | 'responseTimeAverage'
  | 'throughput'
  | 'webResponseTimeAverage'
  | 'webThroughput'
  | 'nonWebResponseTimeAverage'
  | 'nonWebThroughput',
  number
>;

/** An entity or entity outline, with the fields the shared fragments add; tools extend it with their own. */
export type Entity = { guid: string; name: string } & Fields<
  'entityType' | 'domain' | 'type' | 'alertSeverity' | 'permalink' | 'language' | 'monitorType' | 'monitoredUrl'
> &
  Fields<'accountId' | 'period', number> & {
    reporting?: boolean | null;
    tags?: Maybe<Array<{ key: string; values?: unknown }>>;
    apmSummary?: Maybe<ApmSummary>;
    monitorSummary?: Maybe<Fields<'status'> & Fields<'successRate' | 'locationsFailing' | 'locationsRunning', number>>;
  };

const ENTITY_FIELDS = 'guid name entityType domain type accountId alertSeverity reporting permalink';
export const APM_SUMMARY =
  'apmSummary { apdexScore errorRate hostCount instanceCount responseTimeAverage throughput webResponseTimeAverage webThroughput nonWebResponseTimeAverage nonWebThroughput }';
export const SYNTH_SUMMARY =
  'monitorType monitoredUrl period monitorSummary { status successRate locationsFailing locationsRunning }';

interface Search {
  actor?: Maybe<{
    entitySearch?: Maybe<{ count?: unknown; results?: Maybe<{ nextCursor?: string | null; entities?: unknown }> }>;
  }>;
}

/** One page of an entity search: the clauses joined by AND, with `fragment` added to each entity. */
export async function entitySearch<E extends Entity = Entity>(
  ctx: PluginContext,
  action: string,
  clauses: string[],
  cursor: string | null | undefined,
  fragment = '',
) {
  const query = `query($query: String!, $cursor: String) { actor { entitySearch(query: $query) { count results(cursor: $cursor) { nextCursor entities { ${ENTITY_FIELDS} ${fragment} } } } } }`;
  const data = await nerdgraph<Search>(ctx, action, query, { query: clauses.join(' AND '), cursor: cursor || null });
  const search = data.actor && data.actor.entitySearch;
  const results = (search && search.results) || {};
  return {
    entities: Array.isArray(results.entities) ? (results.entities as E[]) : [],
    count: search && typeof search.count === 'number' ? search.count : null,
    next: results.nextCursor || null,
  };
}

/** One entity by guid with `selection`; an unknown guid is named. */
export async function getEntity<E extends Entity = Entity>(
  ctx: PluginContext,
  action: string,
  guid: string,
  selection: string,
): Promise<E> {
  const query = `query($guid: EntityGuid!) { actor { entity(guid: $guid) { ${selection} } } }`;
  const data = await nerdgraph<{ actor?: Maybe<{ entity?: Maybe<E> }> }>(ctx, action, query, { guid });
  const entity = data.actor && data.actor.entity;
  if (!entity)
    throw new Error(
      `No New Relic entity with guid ${guid} is visible to this API key: check it with newrelic_search_entities.`,
    );
  return entity;
}

/** The entity fields, with the selection's own. */
export const withEntityFields = (selection: string) => `${ENTITY_FIELDS} ${selection}`;

export function slimEntity(e: Entity) {
  const type = e.entityType || `${e.domain}/${e.type}`;
  return {
    guid: e.guid,
    name: e.name,
    type,
    domain: e.domain ?? null,
    accountId: e.accountId ?? null,
    alertSeverity: e.alertSeverity ?? null,
    reporting: e.reporting ?? null,
    url: e.permalink ?? null,
  };
}

export function tagMap(tags: Entity['tags']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const t of Array.isArray(tags) ? tags : [])
    out[t.key] = Array.isArray(t.values) ? t.values.join(', ') : t.values;
  return out;
}

export const nameClause = (text: string) => `name LIKE ${literal(text)}`;
export const accountClause = (id: number) => `accountId = ${Number(id)}`;

/** The clauses of a search for one kind of entity, narrowed by name and account where given. */
export function scoped(
  clauses: string[],
  args: { nameContains?: string | undefined; accountId?: number | undefined },
): string[] {
  if (args.nameContains) clauses.push(nameClause(args.nameContains));
  if (args.accountId !== undefined) clauses.push(accountClause(args.accountId));
  return clauses;
}

const percent = (rate: unknown) => (typeof rate === 'number' ? Math.round(rate * 10000) / 100 : null);

export function shapeApm(s: Maybe<ApmSummary>) {
  if (!s) return null;
  const ms = (sec: unknown) => (typeof sec === 'number' ? Math.round(sec * 1000 * 100) / 100 : null);
  return {
    responseTimeMs: ms(s.responseTimeAverage),
    throughputRpm: s.throughput ?? null,
    errorRatePercent: percent(s.errorRate),
    apdex: s.apdexScore ?? null,
    webResponseTimeMs: ms(s.webResponseTimeAverage),
    webThroughputRpm: s.webThroughput ?? null,
    nonWebResponseTimeMs: ms(s.nonWebResponseTimeAverage),
    nonWebThroughputRpm: s.nonWebThroughput ?? null,
    hosts: s.hostCount ?? null,
    instances: s.instanceCount ?? null,
  };
}

export function shapeSynth(e: Entity) {
  const s = e.monitorSummary || {};
  return {
    monitorType: e.monitorType ?? null,
    monitoredUrl: e.monitoredUrl ?? null,
    periodMinutes: e.period ?? null,
    status: s.status ?? null,
    successRatePercent: percent(s.successRate),
    locationsFailing: s.locationsFailing ?? null,
    locationsRunning: s.locationsRunning ?? null,
  };
}
