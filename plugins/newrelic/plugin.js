/**
 * @module plugins/newrelic/plugin
 * New Relic tools over NerdGraph (GraphQL, POST {query, variables}) in the connection's region.
 * User input always travels as GraphQL variables; the only literals built here are entity-search
 * query strings (the schema takes the search as one string), whose values are escaped by
 * `literal()`. Self-contained (the plugin format allows no imports), so the request helper, the
 * one error mapping and the result shapers live beside the handlers; longer than 400 lines for that.
 */

const ENDPOINTS = { us: 'https://api.newrelic.com/graphql', eu: 'https://api.eu.newrelic.com/graphql' };
const HOUR_MS = 3600 * 1000;
/**
 * NRQL timeout, seconds, when none is given (NerdGraph's own default is 5). It and the manifest's
 * maximum (12) stay under the gateway's default wait for one request (http.requestTimeoutMs,
 * 15 s), so that a slow query ends with New Relic's own timeout error rather than the gateway's.
 */
const NRQL_TIMEOUT_DEFAULT = 10;

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a NerdGraph answer becomes a message an agent can act on.

function graphqlMessages(data) {
  if (!data || typeof data !== 'object' || !Array.isArray(data.errors)) return [];
  return data.errors.map((e) => {
    const msg = e && typeof e.message === 'string' ? e.message : 'unknown error';
    const cls = e && e.extensions && e.extensions.errorClass ? ` [${e.extensions.errorClass}]` : '';
    return `${msg}${cls}`;
  });
}

function nrError(action, status, retryAfter, data) {
  const messages = graphqlMessages(data);
  const detail = messages.length ? messages.join('; ') : typeof data === 'string' ? data.trim().slice(0, 300) : '';
  const said = detail ? ` New Relic said: ${detail}` : '';
  const text = detail.toLowerCase();
  if (status === 429 || /too[_ ]many[_ ]requests|rate limit/.test(text)) {
    const wait = retryAfter ? `retry after ${retryAfter} seconds` : 'wait a minute and retry';
    return new Error(`New Relic rate limited the request to ${action}: ${wait}.${said}`);
  }
  if (status === 401) {
    return new Error(
      `New Relic rejected the API key (401) while trying to ${action}: the connection needs a valid User API key (NRAK-…) for its region; reconnect newrelic.${said}`,
    );
  }
  if (status === 403 || /forbidden|access denied|not authorized|unauthorized/.test(text)) {
    return new Error(
      `New Relic refused permission to ${action}: the key's user lacks access to this account or capability (check the account id and the user's roles).${said}`,
    );
  }
  if (status === 404) return new Error(`New Relic found nothing while trying to ${action} (404).${said}`);
  if (status >= 500) return new Error(`New Relic had a server error (${status}) while trying to ${action}: retry later.${said}`);
  if (status >= 400) return new Error(`New Relic refused to ${action} (HTTP ${status}).${said}`);
  if (/timeout/.test(text)) return new Error(`New Relic timed out while trying to ${action}: narrow the time window, or raise timeoutSeconds where a tool takes it (at most 12).${said}`);
  return new Error(`New Relic could not ${action}: ${detail || 'the answer had no data'}.`);
}

// ---------------------------------------------------------------------------------------------
// Requests

function endpoint(ctx) {
  const region = String((ctx.config && ctx.config.region) || 'us').toLowerCase();
  const url = ENDPOINTS[region];
  if (!url) throw new Error(`The newrelic connection has an unknown region "${region}": reconnect and choose us or eu.`);
  return url;
}

/**
 * One NerdGraph request. `slowHint` says what to do when New Relic answers later than the gateway
 * waits for one request (policy http.requestTimeoutMs, 15 s by default): the bridge then fails
 * with GW_ERR_BRIDGE_TIMEOUT, which becomes a message the agent can act on.
 */
async function nerdgraph(ctx, action, query, variables, slowHint) {
  let res;
  try {
    res = await ctx.http(endpoint(ctx), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables: variables || {} }),
    });
  } catch (err) {
    if (err && err.code === 'GW_ERR_BRIDGE_TIMEOUT') {
      throw new Error(
        `New Relic took longer than the gateway allows for one request while trying to ${action} (GW_ERR_BRIDGE_TIMEOUT): ${slowHint || 'ask for less, or retry later'}.`,
      );
    }
    throw err;
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) throw nrError(action, res.status, res.headers.get('retry-after'), data);
  if (!data || typeof data !== 'object') throw nrError(action, res.status, null, data);
  if (Array.isArray(data.errors) && data.errors.length) throw nrError(action, res.status, res.headers.get('retry-after'), data);
  if (!data.data) throw nrError(action, res.status, null, undefined);
  return data.data;
}

/** The account to act on: the argument, else the connection's default, else a clear error. */
function accountOf(ctx, args) {
  if (args.accountId !== undefined) return args.accountId;
  const fallback = ctx.config && ctx.config.accountId;
  const n = Number(fallback);
  if (fallback !== undefined && fallback !== null && fallback !== '' && Number.isInteger(n) && n > 0) return n;
  throw new Error(
    'No New Relic account id: pass accountId, or set a default account ID on the newrelic connection (newrelic_list_accounts lists the accounts this key can reach).',
  );
}

/** A quoted literal for entity-search query strings (the one place values become query text). */
function literal(value) {
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

const iso = (ms) => (typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : ms ?? null);

// ---------------------------------------------------------------------------------------------
// Shared entity search (entities, dashboards, monitors, workloads, APM applications)

const ENTITY_FIELDS = 'guid name entityType domain type accountId alertSeverity reporting permalink';

async function entitySearch(ctx, action, clauses, cursor, fragment) {
  const query = `query($query: String!, $cursor: String) { actor { entitySearch(query: $query) { count results(cursor: $cursor) { nextCursor entities { ${ENTITY_FIELDS} ${fragment || ''} } } } } }`;
  const data = await nerdgraph(ctx, action, query, { query: clauses.join(' AND '), cursor: cursor || null });
  const search = data.actor && data.actor.entitySearch;
  const results = (search && search.results) || {};
  return {
    entities: Array.isArray(results.entities) ? results.entities : [],
    count: search && typeof search.count === 'number' ? search.count : null,
    next: results.nextCursor || null,
  };
}

function slimEntity(e) {
  return {
    guid: e.guid,
    name: e.name,
    type: e.entityType || `${e.domain}/${e.type}`,
    domain: e.domain ?? null,
    accountId: e.accountId ?? null,
    alertSeverity: e.alertSeverity ?? null,
    reporting: e.reporting ?? null,
    url: e.permalink ?? null,
  };
}

function tagMap(tags) {
  const out = {};
  for (const t of Array.isArray(tags) ? tags : []) out[t.key] = Array.isArray(t.values) ? t.values.join(', ') : t.values;
  return out;
}

function nameClause(text) {
  return `name LIKE ${literal(text)}`;
}

const accountClause = (id) => `accountId = ${Number(id)}`;

// ---------------------------------------------------------------------------------------------
// Handlers

async function runNrql(ctx, args) {
  const accountId = accountOf(ctx, args);
  const query = `query($accountId: Int!, $nrql: Nrql!, $timeout: Seconds) { actor { account(id: $accountId) { nrql(query: $nrql, timeout: $timeout) { results metadata { eventTypes facets messages timeWindow { begin end } } } } } }`;
  const data = await nerdgraph(
    ctx,
    'run the NRQL query',
    query,
    { accountId, nrql: args.query, timeout: args.timeoutSeconds ?? NRQL_TIMEOUT_DEFAULT },
    'the query took longer than the gateway allows: narrow its time window (SINCE …) or what it reads, or lower timeoutSeconds so that New Relic stops it first and says so',
  );
  const account = data.actor && data.actor.account;
  if (!account) throw new Error(`New Relic account ${accountId} is not reachable with this API key: check the id with newrelic_list_accounts.`);
  const result = account.nrql || {};
  const rows = Array.isArray(result.results) ? result.results : [];
  const max = args.maxRows ?? 200;
  const meta = result.metadata || {};
  return {
    accountId,
    rows: rows.slice(0, max),
    rowCount: rows.length,
    truncated: rows.length > max,
    facets: meta.facets ?? null,
    eventTypes: meta.eventTypes ?? null,
    timeWindow: meta.timeWindow ? { begin: iso(meta.timeWindow.begin), end: iso(meta.timeWindow.end) } : null,
    messages: Array.isArray(meta.messages) && meta.messages.length ? meta.messages : undefined,
  };
}

async function listAccounts(ctx) {
  const data = await nerdgraph(ctx, 'list accounts', 'query { actor { accounts { id name } } }', {});
  const accounts = ((data.actor && data.actor.accounts) || []).map((a) => ({ id: a.id, name: a.name }));
  const d = ctx.config && ctx.config.accountId ? Number(ctx.config.accountId) : null;
  return { accounts, defaultAccountId: Number.isInteger(d) ? d : null };
}

async function searchEntities(ctx, args) {
  const clauses = [];
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
  if (!clauses.length) throw new Error('Give at least one filter: name, domain, type, tags, alertSeverity, accountId or query.');
  const r = await entitySearch(ctx, 'search entities', clauses, args.cursor, args.includeTags ? 'tags { key values }' : '');
  const entities = r.entities.map((e) => (args.includeTags ? { ...slimEntity(e), tags: tagMap(e.tags) } : slimEntity(e)));
  return { entities, total: r.count, next: r.next };
}

const APM_SUMMARY = 'apmSummary { apdexScore errorRate hostCount instanceCount responseTimeAverage throughput webResponseTimeAverage webThroughput nonWebResponseTimeAverage nonWebThroughput }';
const SYNTH_SUMMARY = 'monitorType monitoredUrl period monitorSummary { status successRate locationsFailing locationsRunning }';

function shapeApm(s) {
  if (!s) return null;
  const ms = (sec) => (typeof sec === 'number' ? Math.round(sec * 1000 * 100) / 100 : null);
  return {
    responseTimeMs: ms(s.responseTimeAverage),
    throughputRpm: s.throughput ?? null,
    errorRatePercent: typeof s.errorRate === 'number' ? Math.round(s.errorRate * 10000) / 100 : null,
    apdex: s.apdexScore ?? null,
    webResponseTimeMs: ms(s.webResponseTimeAverage),
    webThroughputRpm: s.webThroughput ?? null,
    nonWebResponseTimeMs: ms(s.nonWebResponseTimeAverage),
    nonWebThroughputRpm: s.nonWebThroughput ?? null,
    hosts: s.hostCount ?? null,
    instances: s.instanceCount ?? null,
  };
}

function shapeSynth(e) {
  const s = e.monitorSummary || {};
  return {
    monitorType: e.monitorType ?? null,
    monitoredUrl: e.monitoredUrl ?? null,
    periodMinutes: e.period ?? null,
    status: s.status ?? null,
    successRatePercent: typeof s.successRate === 'number' ? Math.round(s.successRate * 10000) / 100 : null,
    locationsFailing: s.locationsFailing ?? null,
    locationsRunning: s.locationsRunning ?? null,
  };
}

async function getEntityRaw(ctx, action, guid, selection) {
  const query = `query($guid: EntityGuid!) { actor { entity(guid: $guid) { ${selection} } } }`;
  const data = await nerdgraph(ctx, action, query, { guid });
  const entity = data.actor && data.actor.entity;
  if (!entity) throw new Error(`No New Relic entity with guid ${guid} is visible to this API key: check it with newrelic_search_entities.`);
  return entity;
}

async function getEntity(ctx, args) {
  const e = await getEntityRaw(
    ctx,
    `read entity ${args.guid}`,
    args.guid,
    `${ENTITY_FIELDS} tags { key values } recentAlertViolations(count: 5) { label level alertSeverity openedAt closedAt violationUrl } ... on ApmApplicationEntity { language ${APM_SUMMARY} } ... on SyntheticMonitorEntity { ${SYNTH_SUMMARY} }`,
  );
  const out = { ...slimEntity(e), tags: tagMap(e.tags) };
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
}

async function getApmSummary(ctx, args) {
  if (!args.guid && !args.name) throw new Error('Give guid or name of the APM application.');
  if (args.guid) {
    const e = await getEntityRaw(ctx, `read APM application ${args.guid}`, args.guid, `${ENTITY_FIELDS} ... on ApmApplicationEntity { language ${APM_SUMMARY} }`);
    if (e.domain !== 'APM') throw new Error(`Entity ${args.guid} is a ${e.entityType || e.domain}, not an APM application: use newrelic_get_golden_metrics for it.`);
    return { applications: [{ ...slimEntity(e), language: e.language ?? null, summary: shapeApm(e.apmSummary) }] };
  }
  const clauses = ["domain = 'APM'", "type = 'APPLICATION'", nameClause(args.name)];
  if (args.accountId !== undefined) clauses.push(accountClause(args.accountId));
  const r = await entitySearch(ctx, 'find APM applications', clauses, null, `... on ApmApplicationEntityOutline { language ${APM_SUMMARY} }`);
  if (!r.entities.length) throw new Error(`No APM application's name contains "${args.name}": check it with newrelic_search_entities.`);
  const out = {
    applications: r.entities.slice(0, 25).map((e) => ({ ...slimEntity(e), language: e.language ?? null, summary: shapeApm(e.apmSummary) })),
  };
  const total = r.count ?? r.entities.length;
  if (total > out.applications.length || r.next)
    out.more = `${total > out.applications.length ? total : 'More'} applications match "${args.name}"; the first ${out.applications.length} are shown: give a longer name, accountId, or the guid`;
  return out;
}

/** Golden metric queries may be time series; a single value per metric reads better. */
function windowed(nrql, minutes) {
  let q = String(nrql).replace(/\bTIMESERIES(\s+(AUTO|MAX|\d+\s+\w+))?/gi, ' ').replace(/\s+/g, ' ').trim();
  if (!/\bSINCE\b/i.test(q)) q = `${q} SINCE ${minutes} minutes ago`;
  return q;
}

function metricValue(rows) {
  if (!Array.isArray(rows) || !rows.length) return null;
  const clean = rows.slice(0, 10).map((r) => {
    const o = {};
    for (const [k, v] of Object.entries(r || {})) if (!/^(beginTimeSeconds|endTimeSeconds)$/.test(k)) o[k] = v;
    return o;
  });
  if (clean.length === 1) {
    const vals = Object.values(clean[0]);
    return vals.length === 1 ? vals[0] : clean[0];
  }
  return clean;
}

async function getGoldenMetrics(ctx, args) {
  const minutes = args.sinceMinutes ?? 60;
  const e = await getEntityRaw(ctx, `read the golden metrics of ${args.guid}`, args.guid, `guid name accountId entityType goldenMetrics { metrics { name title unit query } }`);
  const metrics = (e.goldenMetrics && e.goldenMetrics.metrics) || [];
  if (!metrics.length) return { guid: e.guid, name: e.name, type: e.entityType ?? null, sinceMinutes: minutes, metrics: [] };
  const vars = { accountId: e.accountId };
  const decl = ['$accountId: Int!'];
  const fields = metrics.map((m, i) => {
    vars[`q${i}`] = windowed(m.query, minutes);
    decl.push(`$q${i}: Nrql!`);
    return `m${i}: nrql(query: $q${i}) { results }`;
  });
  const query = `query(${decl.join(', ')}) { actor { account(id: $accountId) { ${fields.join(' ')} } } }`;
  const data = await nerdgraph(ctx, `run the golden metric queries of ${e.name}`, query, vars);
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
      value: metricValue(account[`m${i}`] && account[`m${i}`].results),
      nrql: vars[`q${i}`],
    })),
  };
}

async function listAlertPolicies(ctx, args) {
  const accountId = accountOf(ctx, args);
  const query = `query($accountId: Int!, $cursor: String, $criteria: AlertsPoliciesSearchCriteriaInput) { actor { account(id: $accountId) { alerts { policiesSearch(cursor: $cursor, searchCriteria: $criteria) { nextCursor totalCount policies { id name incidentPreference } } } } } }`;
  const criteria = args.nameContains ? { nameLike: args.nameContains } : {};
  const data = await nerdgraph(ctx, 'list alert policies', query, { accountId, cursor: args.cursor || null, criteria });
  const r = data.actor?.account?.alerts?.policiesSearch;
  if (!r) throw new Error(`New Relic account ${accountId} is not reachable with this API key: check the id with newrelic_list_accounts.`);
  return {
    accountId,
    policies: (r.policies || []).map((p) => ({ id: p.id, name: p.name, incidentPreference: p.incidentPreference })),
    total: r.totalCount ?? null,
    next: r.nextCursor || null,
  };
}

async function createAlertPolicy(ctx, args) {
  const accountId = accountOf(ctx, args);
  const query = `mutation($accountId: Int!, $policy: AlertsPolicyInput!) { alertsPolicyCreate(accountId: $accountId, policy: $policy) { id name incidentPreference accountId } }`;
  const policy = { name: args.name, incidentPreference: args.incidentPreference || 'PER_POLICY' };
  const data = await nerdgraph(ctx, `create the alert policy "${args.name}"`, query, { accountId, policy });
  const p = data.alertsPolicyCreate;
  if (!p) throw new Error('New Relic did not create the alert policy (empty answer).');
  return { id: p.id, name: p.name, incidentPreference: p.incidentPreference, accountId: p.accountId ?? accountId };
}

async function listAlertConditions(ctx, args) {
  const accountId = accountOf(ctx, args);
  const query = `query($accountId: Int!, $cursor: String, $criteria: AlertsNrqlConditionsSearchCriteriaInput) { actor { account(id: $accountId) { alerts { nrqlConditionsSearch(cursor: $cursor, searchCriteria: $criteria) { nextCursor totalCount nrqlConditions { id name enabled policyId type description runbookUrl nrql { query } terms { priority operator threshold thresholdDuration thresholdOccurrences } } } } } } }`;
  const criteria = {};
  if (args.policyId) criteria.policyId = args.policyId;
  if (args.nameContains) criteria.nameLike = args.nameContains;
  if (args.queryContains) criteria.queryLike = args.queryContains;
  const data = await nerdgraph(ctx, 'list alert conditions', query, { accountId, cursor: args.cursor || null, criteria });
  const r = data.actor?.account?.alerts?.nrqlConditionsSearch;
  if (!r) throw new Error(`New Relic account ${accountId} is not reachable with this API key: check the id with newrelic_list_accounts.`);
  return {
    accountId,
    conditions: (r.nrqlConditions || []).map((c) => ({
      id: c.id,
      name: c.name,
      enabled: c.enabled,
      policyId: c.policyId,
      type: c.type ?? null,
      nrql: c.nrql ? c.nrql.query : null,
      terms: (c.terms || []).map((t) => ({
        priority: t.priority,
        operator: t.operator,
        threshold: t.threshold,
        durationSeconds: t.thresholdDuration ?? null,
        occurrences: t.thresholdOccurrences ?? null,
      })),
      description: c.description || undefined,
      runbookUrl: c.runbookUrl || undefined,
    })),
    total: r.totalCount ?? null,
    next: r.nextCursor || null,
  };
}

const ISSUE_FIELDS = 'issueId title priority state createdAt activatedAt closedAt acknowledgedAt acknowledgedBy entityNames entityGuids conditionName policyName totalIncidents deepLinkUrl';

async function listIssues(ctx, args) {
  const accountId = accountOf(ctx, args);
  const filter = { states: args.states && args.states.length ? args.states : ['CREATED', 'ACTIVATED'] };
  if (args.priorities && args.priorities.length) filter.priority = args.priorities;
  if (args.entityGuids && args.entityGuids.length) filter.entityGuids = args.entityGuids;
  const end = Date.now();
  const timeWindow = { startTime: end - (args.sinceHours ?? 24) * HOUR_MS, endTime: end };
  const query = `query($accountId: Int!, $cursor: String, $filter: AiIssuesFilterIssues, $timeWindow: TimeWindowInput) { actor { account(id: $accountId) { aiIssues { issues(cursor: $cursor, filter: $filter, timeWindow: $timeWindow) { nextCursor issues { ${ISSUE_FIELDS} } } } } } }`;
  const data = await nerdgraph(ctx, 'list alert issues', query, { accountId, cursor: args.cursor || null, filter, timeWindow });
  const r = data.actor?.account?.aiIssues?.issues;
  if (!r) throw new Error(`New Relic account ${accountId} is not reachable with this API key: check the id with newrelic_list_accounts.`);
  const list = (a) => (Array.isArray(a) ? a : a ? [a] : []);
  return {
    accountId,
    issues: (r.issues || []).map((i) => ({
      issueId: i.issueId,
      title: list(i.title).slice(0, 3).join(' | '),
      priority: i.priority,
      state: i.state,
      entities: list(i.entityNames).slice(0, 10),
      entityGuids: list(i.entityGuids).slice(0, 10),
      conditions: list(i.conditionName).slice(0, 5),
      policies: list(i.policyName).slice(0, 5),
      incidents: i.totalIncidents ?? null,
      createdAt: iso(i.createdAt),
      activatedAt: iso(i.activatedAt),
      closedAt: iso(i.closedAt),
      acknowledgedAt: iso(i.acknowledgedAt),
      acknowledgedBy: i.acknowledgedBy ?? null,
      url: list(i.deepLinkUrl)[0] ?? null,
    })),
    next: r.nextCursor || null,
  };
}

async function issueAction(ctx, args, mutation, verb) {
  const accountId = accountOf(ctx, args);
  const query = `mutation($accountId: Int!, $issueId: ID!) { ${mutation}(accountId: $accountId, issueId: $issueId) { error result { accountId action issueId } } }`;
  const data = await nerdgraph(ctx, `${verb} issue ${args.issueId}`, query, { accountId, issueId: args.issueId });
  const r = data[mutation];
  if (!r || r.error) throw new Error(`New Relic could not ${verb} issue ${args.issueId}: ${(r && r.error) || 'no result'}.`);
  return { issueId: r.result?.issueId ?? args.issueId, accountId: r.result?.accountId ?? accountId, action: r.result?.action ?? null };
}

const acknowledgeIssue = (ctx, args) => issueAction(ctx, args, 'aiIssuesAckIssue', 'acknowledge');
const resolveIssue = (ctx, args) => issueAction(ctx, args, 'aiIssuesResolveIssue', 'resolve');

async function listDashboards(ctx, args) {
  const clauses = ["type = 'DASHBOARD'"];
  if (args.nameContains) clauses.push(nameClause(args.nameContains));
  if (args.accountId !== undefined) clauses.push(accountClause(args.accountId));
  const r = await entitySearch(ctx, 'list dashboards', clauses, args.cursor, '... on DashboardEntityOutline { dashboardParentGuid updatedAt owner { email } }');
  const dashboards = r.entities
    .filter((e) => !e.dashboardParentGuid)
    .map((e) => ({ guid: e.guid, name: e.name, accountId: e.accountId ?? null, owner: e.owner?.email ?? null, updatedAt: iso(e.updatedAt), url: e.permalink ?? null }));
  return { dashboards, next: r.next };
}

async function getDashboard(ctx, args) {
  const e = await getEntityRaw(
    ctx,
    `read dashboard ${args.guid}`,
    args.guid,
    'guid name accountId entityType permalink ... on DashboardEntity { description permissions createdAt updatedAt owner { email } pages { guid name widgets { id title visualization { id } rawConfiguration } } }',
  );
  if (!Array.isArray(e.pages)) throw new Error(`Entity ${args.guid} is a ${e.entityType || 'different entity'}, not a dashboard: find dashboards with newrelic_list_dashboards.`);
  return {
    guid: e.guid,
    name: e.name,
    accountId: e.accountId ?? null,
    description: e.description || '',
    permissions: e.permissions ?? null,
    owner: e.owner?.email ?? null,
    updatedAt: iso(e.updatedAt),
    url: e.permalink ?? null,
    pages: e.pages.map((p) => ({
      guid: p.guid,
      name: p.name,
      widgets: (p.widgets || []).map((w) => {
        const raw = w.rawConfiguration || {};
        const out = { id: w.id, title: w.title || '', visualization: w.visualization?.id ?? null };
        if (Array.isArray(raw.nrqlQueries)) out.queries = raw.nrqlQueries.map((q) => ({ accountId: q.accountId ?? q.accountIds?.[0] ?? null, query: q.query }));
        if (typeof raw.text === 'string') out.text = raw.text.length > 500 ? `${raw.text.slice(0, 500)}…` : raw.text;
        return out;
      }),
    })),
  };
}

async function listSyntheticMonitors(ctx, args) {
  const clauses = ["domain = 'SYNTH'", "type = 'MONITOR'"];
  if (args.nameContains) clauses.push(nameClause(args.nameContains));
  if (args.accountId !== undefined) clauses.push(accountClause(args.accountId));
  if (args.failingOnly) clauses.push("alertSeverity = 'CRITICAL'");
  const r = await entitySearch(ctx, 'list synthetic monitors', clauses, args.cursor, `... on SyntheticMonitorEntityOutline { ${SYNTH_SUMMARY} }`);
  return { monitors: r.entities.map((e) => ({ ...slimEntity(e), ...shapeSynth(e) })), next: r.next };
}

async function createDeploymentMarker(ctx, args) {
  const deployment = { entityGuid: args.entityGuid, version: args.version, deploymentType: args.deploymentType || 'BASIC' };
  for (const k of ['description', 'changelog', 'commit', 'user', 'deepLink', 'groupId', 'timestamp']) {
    if (args[k] !== undefined && args[k] !== '') deployment[k] = args[k];
  }
  const query = `mutation($deployment: ChangeTrackingDeploymentInput!) { changeTrackingCreateDeployment(deployment: $deployment) { deploymentId entityGuid version timestamp deploymentType description changelog commit user } }`;
  const data = await nerdgraph(ctx, `record deployment ${args.version}`, query, { deployment });
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
}

async function listWorkloads(ctx, args) {
  const clauses = ["type = 'WORKLOAD'"];
  if (args.nameContains) clauses.push(nameClause(args.nameContains));
  if (args.accountId !== undefined) clauses.push(accountClause(args.accountId));
  const r = await entitySearch(ctx, 'list workloads', clauses, args.cursor, '... on WorkloadEntityOutline { workloadStatus { statusValue description } }');
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
}

async function listErrorGroups(ctx, args) {
  const end = Date.now();
  const vars = {
    guids: [args.entityGuid],
    filter: { states: args.states && args.states.length ? args.states : ['UNRESOLVED'] },
    timeWindow: { startTime: end - (args.sinceHours ?? 24) * HOUR_MS, endTime: end },
    cursor: args.cursor || null,
  };
  const query = `query($guids: [EntityGuid!], $filter: ErrorsInboxErrorGroupSearchFilterInput, $timeWindow: TimeWindowInput, $cursor: String) { actor { errorsInbox { errorGroups(entityGuids: $guids, filter: $filter, timeWindow: $timeWindow, cursor: $cursor) { nextCursor totalCount results { id name message state url occurrences { totalCount firstSeenAt lastSeenAt } assignment { email } } } } } }`;
  const data = await nerdgraph(ctx, `list the error groups of ${args.entityGuid}`, query, vars);
  const r = data.actor?.errorsInbox?.errorGroups || {};
  return {
    entityGuid: args.entityGuid,
    errorGroups: (r.results || []).map((g) => ({
      id: g.id,
      name: g.name,
      message: typeof g.message === 'string' && g.message.length > 500 ? `${g.message.slice(0, 500)}…` : g.message ?? null,
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
}

async function updateErrorGroupState(ctx, args) {
  const query = `mutation($id: ID!, $state: ErrorsInboxErrorGroupState!) { errorsInboxUpdateErrorGroupState(id: $id, state: $state) { state errors { description type } } }`;
  const data = await nerdgraph(ctx, `mark error group ${args.errorGroupId} ${args.state}`, query, { id: args.errorGroupId, state: args.state });
  const r = data.errorsInboxUpdateErrorGroupState;
  if (!r) throw new Error(`New Relic did not update error group ${args.errorGroupId} (empty answer): check the id with newrelic_list_error_groups.`);
  // a refused update comes back in the payload's errors, with HTTP 200 and no GraphQL errors
  const refused = (r.errors || []).map((e) => `${e.description || 'refused'}${e.type ? ` [${e.type}]` : ''}`);
  if (refused.length > 0) throw new Error(`New Relic could not mark error group ${args.errorGroupId} ${args.state}: ${refused.join('; ')}. Check the id with newrelic_list_error_groups.`);
  return { errorGroupId: args.errorGroupId, state: r.state ?? args.state };
}

export default {
  newrelic_run_nrql: runNrql,
  newrelic_list_accounts: listAccounts,
  newrelic_search_entities: searchEntities,
  newrelic_get_entity: getEntity,
  newrelic_get_apm_summary: getApmSummary,
  newrelic_get_golden_metrics: getGoldenMetrics,
  newrelic_list_alert_policies: listAlertPolicies,
  newrelic_create_alert_policy: createAlertPolicy,
  newrelic_list_alert_conditions: listAlertConditions,
  newrelic_list_issues: listIssues,
  newrelic_acknowledge_issue: acknowledgeIssue,
  newrelic_resolve_issue: resolveIssue,
  newrelic_list_dashboards: listDashboards,
  newrelic_get_dashboard: getDashboard,
  newrelic_list_synthetic_monitors: listSyntheticMonitors,
  newrelic_create_deployment_marker: createDeploymentMarker,
  newrelic_list_workloads: listWorkloads,
  newrelic_list_error_groups: listErrorGroups,
  newrelic_update_error_group_state: updateErrorGroupState,
};
