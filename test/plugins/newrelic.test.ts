/**
 * @module test/plugins/newrelic.test
 * Every New Relic tool runs through the real gateway and sandbox against loopback stand-ins for
 * the US and EU NerdGraph endpoints (reached through the policy's origin mapping): the GraphQL
 * request each one makes (POST /graphql, the operation, its variables, the injected `api-key`
 * header, the region) and its slim result come from one table; then region routing, the account
 * fallback and the error mappings (HTTP status and GraphQL `errors` in an HTTP-200 body).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { startUpstream, type Upstream, type UpstreamReply } from '../helpers/upstream.js';

const KEY = 'NRAK-US0123456789ABCDEFGHIJKLMN';
const KEY_EU = 'NRAK-EU0123456789ABCDEFGHIJKLMN';
const ACCOUNT = 1234;
type Gateway = TestGateway;
let us: Upstream;
let eu: Upstream;
let gw: Gateway;
let euApiKey: string;

before(async () => {
  us = await startUpstream();
  eu = await startUpstream();
  gw = await startPluginGateway(
    'newrelic',
    us,
    { values: { apiKey: KEY }, config: { region: 'us', accountId: String(ACCOUNT) } },
    { more: { 'https://api.eu.newrelic.com': eu } },
  );
  const other = await gw.createUser('eu-user@example.com');
  euApiKey = other.apiKey;
  await gw.connect('newrelic', { values: { apiKey: KEY_EU }, config: { region: 'eu' } }, other.user);
});
after(async () => {
  await gw?.close();
  await us?.close();
  await eu?.close();
});

/** Answers the GraphQL requests in order: `data` objects, or full replies (status, errors, …). */
function replyWith(up: Upstream, replies: Array<Record<string, unknown> | UpstreamReply>): void {
  up.requests.length = 0;
  const queue = [...replies];
  up.setHandler(() => {
    const next = queue.shift();
    if (!next) return { status: 500, json: { errors: [{ message: 'no more replies in this test' }] } };
    return 'status' in next || 'body' in next || 'headers' in next ? next : { json: { data: next } };
  });
}

/** A loose syntax check: balanced brackets, every variable declared once and used, and vice versa. */
function checkGraphql(query: string, variables: Record<string, unknown>): void {
  let depth = 0;
  for (const ch of query) {
    if (ch === '{' || ch === '(') depth++;
    if (ch === '}' || ch === ')') depth--;
    assert.ok(depth >= 0, `unbalanced brackets in ${query}`);
  }
  assert.equal(depth, 0, `unbalanced brackets in ${query}`);
  const header = /^(query|mutation)\s*(\(([^)]*)\))?\s*\{/.exec(query);
  assert.ok(header, `operation header in ${query}`);
  const declared = [...(header[3] ?? '').matchAll(/\$(\w+)\s*:\s*([\w[\]!]+)/g)].map((m) => [m[1]!, m[2]!] as const);
  const body = query.slice(header[0].length);
  const used = new Set([...body.matchAll(/\$(\w+)/g)].map((m) => m[1]!));
  assert.deepEqual(new Set(declared.map(([n]) => n)), used, `declared vs used variables in ${query}`);
  for (const k of Object.keys(variables)) assert.ok(used.has(k), `variable ${k} is not declared`);
  for (const [n, type] of declared)
    if (type.endsWith('!')) assert.ok(variables[n] !== undefined && variables[n] !== null, `required $${n}`);
}

type Vars = Record<string, unknown>;
/** One expected request: fragments its query must contain, and its exact variables (time windows by size). */
interface Expect {
  has: string[];
  vars: Vars;
  windowHours?: number;
}

function assertRequests(up: Upstream, expected: Expect[], key = KEY): void {
  assert.equal(
    up.requests.length,
    expected.length,
    `requests: ${up.requests.map((r) => r.body.slice(0, 80)).join(' | ')}`,
  );
  expected.forEach((e, i) => {
    const req = up.requests[i]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/graphql');
    assert.equal(req.headers['api-key'], key, 'the API key is injected in the api-key header');
    assert.equal(req.headers.authorization, undefined);
    assert.match(String(req.headers['content-type']), /^application\/json/);
    const { query, variables } = req.json as { query: string; variables: Vars };
    checkGraphql(query, variables);
    for (const h of e.has) assert.ok(query.includes(h), `request ${i} query contains ${h}: ${query}`);
    const vars = { ...variables };
    if (e.windowHours !== undefined) {
      const tw = vars['timeWindow'] as { startTime: number; endTime: number };
      assert.ok(Math.abs(Date.now() - tw.endTime) < 60_000, 'the window ends now');
      assert.equal(tw.endTime - tw.startTime, e.windowHours * 3600_000);
      delete vars['timeWindow'];
    }
    assert.deepEqual(vars, e.vars, `request ${i} variables`);
  });
}

const { ok, fails } = toolCalls(() => gw, [KEY, KEY_EU]);

// ---------- fixtures ----------

const T0 = 1700000000000;
const ISO0 = '2023-11-14T22:13:20.000Z';
const G = 'MTIzNHxBUE18QVBQTElDQVRJT058NDI';
const GD = 'MTIzNHxWSVp8REFTSEJPQVJEfDk5';
const url = (g: string) => `https://one.newrelic.com/redirect/entity/${g}`;
const RAW_APM = {
  guid: G,
  name: 'checkout',
  entityType: 'APM_APPLICATION_ENTITY',
  domain: 'APM',
  type: 'APPLICATION',
  accountId: ACCOUNT,
  alertSeverity: 'CRITICAL',
  reporting: true,
  permalink: url(G),
};
const SLIM_APM = {
  guid: G,
  name: 'checkout',
  type: 'APM_APPLICATION_ENTITY',
  domain: 'APM',
  accountId: ACCOUNT,
  alertSeverity: 'CRITICAL',
  reporting: true,
  url: url(G),
};
const APM_SUMMARY = {
  apdexScore: 0.95,
  errorRate: 0.0123,
  hostCount: 3,
  instanceCount: 6,
  responseTimeAverage: 0.1234,
  throughput: 456.7,
  webResponseTimeAverage: 0.2,
  webThroughput: 400,
  nonWebResponseTimeAverage: 0.05,
  nonWebThroughput: 56.7,
};
const SUMMARY = {
  responseTimeMs: 123.4,
  throughputRpm: 456.7,
  errorRatePercent: 1.23,
  apdex: 0.95,
  webResponseTimeMs: 200,
  webThroughputRpm: 400,
  nonWebResponseTimeMs: 50,
  nonWebThroughputRpm: 56.7,
  hosts: 3,
  instances: 6,
};
const TAGS = [
  { key: 'env', values: ['prod'] },
  { key: 'team', values: ['core', 'pay'] },
];
const search = (entities: unknown[], nextCursor: string | null = null) => ({
  actor: { entitySearch: { count: entities.length, results: { nextCursor, entities } } },
});
const account = (x: Record<string, unknown>) => ({ actor: { account: x } });
const ISSUE_ID = 'f0668430-60c4-4bfd-8188-fcbeefb1d5ca';
const RAW_ISSUE = {
  issueId: ISSUE_ID,
  title: ['High error rate on checkout'],
  priority: 'CRITICAL',
  state: 'ACTIVATED',
  createdAt: T0,
  activatedAt: T0,
  closedAt: null,
  acknowledgedAt: null,
  acknowledgedBy: null,
  entityNames: ['checkout'],
  entityGuids: [G],
  conditionName: ['Error rate'],
  policyName: ['Prod'],
  totalIncidents: 2,
  deepLinkUrl: ['https://radar-api.service.newrelic.com/accounts/1234/issues/x'],
};
const ISSUE = {
  issueId: ISSUE_ID,
  title: 'High error rate on checkout',
  priority: 'CRITICAL',
  state: 'ACTIVATED',
  entities: ['checkout'],
  entityGuids: [G],
  conditions: ['Error rate'],
  policies: ['Prod'],
  incidents: 2,
  createdAt: ISO0,
  activatedAt: ISO0,
  closedAt: null,
  acknowledgedAt: null,
  acknowledgedBy: null,
  url: 'https://radar-api.service.newrelic.com/accounts/1234/issues/x',
};
const GM_Q0 =
  "SELECT average(apm.service.transaction.duration * 1000) AS 'Response time (ms)' FROM Metric WHERE entity.guid = 'X' TIMESERIES";
const GM_Q1 =
  "SELECT rate(count(apm.service.transaction.duration), 1 minute) AS 'rpm' FROM Metric WHERE entity.guid = 'X' FACET host SINCE 1 hour ago";

interface Case {
  name?: string;
  tool: string;
  args: Record<string, unknown>;
  replies: Array<Record<string, unknown> | UpstreamReply>;
  expect: Expect[];
  result: unknown;
}

const CASES: Case[] = [
  {
    tool: 'newrelic_run_nrql',
    args: { query: 'SELECT count(*) FROM Transaction FACET appName SINCE 1 hour ago', maxRows: 2 },
    replies: [
      account({
        nrql: {
          results: [
            { appName: 'a', count: 5 },
            { appName: 'b', count: 3 },
            { appName: 'c', count: 1 },
          ],
          metadata: {
            eventTypes: ['Transaction'],
            facets: ['appName'],
            messages: [],
            timeWindow: { begin: T0, end: T0 + 3600_000 },
          },
        },
      }),
    ],
    expect: [
      {
        has: ['account(id: $accountId)', 'nrql(query: $nrql, timeout: $timeout)', 'results'],
        vars: {
          accountId: ACCOUNT,
          nrql: 'SELECT count(*) FROM Transaction FACET appName SINCE 1 hour ago',
          timeout: 10,
        },
      },
    ],
    result: {
      accountId: ACCOUNT,
      rows: [
        { appName: 'a', count: 5 },
        { appName: 'b', count: 3 },
      ],
      rowCount: 3,
      truncated: true,
      facets: ['appName'],
      eventTypes: ['Transaction'],
      timeWindow: { begin: ISO0, end: '2023-11-14T23:13:20.000Z' },
    },
  },
  {
    name: 'newrelic_run_nrql (explicit account, timeout)',
    tool: 'newrelic_run_nrql',
    args: { query: 'SELECT 1 FROM Log', accountId: 999, timeoutSeconds: 12 },
    replies: [account({ nrql: { results: [{ x: 1 }], metadata: { messages: ['Your query hit a limit'] } } })],
    expect: [{ has: ['nrql('], vars: { accountId: 999, nrql: 'SELECT 1 FROM Log', timeout: 12 } }],
    result: {
      accountId: 999,
      rows: [{ x: 1 }],
      rowCount: 1,
      truncated: false,
      facets: null,
      eventTypes: null,
      timeWindow: null,
      messages: ['Your query hit a limit'],
    },
  },
  {
    tool: 'newrelic_list_accounts',
    args: {},
    replies: [
      {
        actor: {
          accounts: [
            { id: ACCOUNT, name: 'Prod', reportingEventTypes: [] },
            { id: 999, name: 'Staging' },
          ],
        },
      },
    ],
    expect: [{ has: ['accounts { id name }'], vars: {} }],
    result: {
      accounts: [
        { id: ACCOUNT, name: 'Prod' },
        { id: 999, name: 'Staging' },
      ],
      defaultAccountId: ACCOUNT,
    },
  },
  {
    tool: 'newrelic_search_entities',
    args: {
      name: "O'Brien svc",
      domain: 'apm',
      type: 'application',
      tags: [
        { key: 'env', value: 'prod' },
        { key: 'team-name', value: 'core' },
      ],
      alertSeverity: 'CRITICAL',
      accountId: ACCOUNT,
      includeTags: true,
    },
    replies: [search([{ ...RAW_APM, tags: TAGS }], 'cur-2')],
    expect: [
      {
        has: ['entitySearch(query: $query)', 'results(cursor: $cursor)', 'nextCursor', 'tags { key values }'],
        vars: {
          query:
            "name LIKE 'O\\'Brien svc' AND domain = 'APM' AND type = 'APPLICATION' AND alertSeverity = 'CRITICAL' AND accountId = 1234 AND tags.env = 'prod' AND tags.`team-name` = 'core'",
          cursor: null,
        },
      },
    ],
    result: { entities: [{ ...SLIM_APM, tags: { env: 'prod', team: 'core, pay' } }], total: 1, next: 'cur-2' },
  },
  {
    name: 'newrelic_search_entities (raw query, next page)',
    tool: 'newrelic_search_entities',
    args: { query: "reporting = 'false'", cursor: 'cur-2' },
    replies: [search([RAW_APM])],
    expect: [{ has: ['entitySearch(query: $query)'], vars: { query: "(reporting = 'false')", cursor: 'cur-2' } }],
    result: { entities: [SLIM_APM], total: 1, next: null },
  },
  {
    tool: 'newrelic_get_entity',
    args: { guid: G },
    replies: [
      {
        actor: {
          entity: {
            ...RAW_APM,
            tags: TAGS,
            language: 'java',
            apmSummary: APM_SUMMARY,
            recentAlertViolations: [
              {
                label: 'Error rate > 1%',
                level: 'CRITICAL',
                alertSeverity: 'CRITICAL',
                openedAt: T0,
                closedAt: null,
                violationUrl: 'https://alerts.newrelic.com/v/1',
              },
            ],
          },
        },
      },
    ],
    expect: [
      {
        has: [
          'entity(guid: $guid)',
          'recentAlertViolations(count: 5)',
          '... on ApmApplicationEntity',
          '... on SyntheticMonitorEntity',
        ],
        vars: { guid: G },
      },
    ],
    result: {
      ...SLIM_APM,
      tags: { env: 'prod', team: 'core, pay' },
      recentViolations: [
        {
          label: 'Error rate > 1%',
          level: 'CRITICAL',
          severity: 'CRITICAL',
          openedAt: ISO0,
          closedAt: null,
          url: 'https://alerts.newrelic.com/v/1',
        },
      ],
      language: 'java',
      apmSummary: SUMMARY,
    },
  },
  {
    tool: 'newrelic_get_apm_summary',
    args: { name: 'checkout' },
    replies: [search([{ ...RAW_APM, language: 'java', apmSummary: APM_SUMMARY }])],
    expect: [
      {
        has: ['... on ApmApplicationEntityOutline', 'apmSummary {'],
        vars: { query: "domain = 'APM' AND type = 'APPLICATION' AND name LIKE 'checkout'", cursor: null },
      },
    ],
    result: { applications: [{ ...SLIM_APM, language: 'java', summary: SUMMARY }] },
  },
  {
    name: 'newrelic_get_apm_summary with more matches than shown says so',
    tool: 'newrelic_get_apm_summary',
    args: { name: 'svc' },
    replies: [
      {
        actor: {
          entitySearch: {
            count: 40,
            results: {
              nextCursor: 'c2',
              entities: Array.from({ length: 25 }, () => ({ ...RAW_APM, language: 'go', apmSummary: null })),
            },
          },
        },
      },
    ],
    expect: [
      {
        has: ['... on ApmApplicationEntityOutline'],
        vars: { query: "domain = 'APM' AND type = 'APPLICATION' AND name LIKE 'svc'", cursor: null },
      },
    ],
    result: {
      applications: Array.from({ length: 25 }, () => ({ ...SLIM_APM, language: 'go', summary: null })),
      more: '40 applications match "svc"; the first 25 are shown: give a longer name, accountId, or the guid',
    },
  },
  {
    name: 'newrelic_get_apm_summary (by guid)',
    tool: 'newrelic_get_apm_summary',
    args: { guid: G },
    replies: [{ actor: { entity: { ...RAW_APM, language: 'go', apmSummary: null } } }],
    expect: [{ has: ['entity(guid: $guid)', '... on ApmApplicationEntity'], vars: { guid: G } }],
    result: { applications: [{ ...SLIM_APM, language: 'go', summary: null }] },
  },
  {
    tool: 'newrelic_get_golden_metrics',
    args: { guid: G, sinceMinutes: 30 },
    replies: [
      {
        actor: {
          entity: {
            guid: G,
            name: 'checkout',
            accountId: ACCOUNT,
            entityType: 'APM_APPLICATION_ENTITY',
            goldenMetrics: {
              metrics: [
                { name: 'responseTimeMs', title: 'Response time (ms)', unit: 'MS', query: GM_Q0 },
                { name: 'throughput', title: 'Throughput', unit: 'REQUESTS_PER_MINUTE', query: GM_Q1 },
              ],
            },
          },
        },
      },
      account({
        m0: { results: [{ 'Response time (ms)': 87.5 }] },
        m1: {
          results: [
            { host: 'h1', rpm: 10, beginTimeSeconds: 1 },
            { host: 'h2', rpm: 5 },
          ],
        },
      }),
    ],
    expect: [
      { has: ['entity(guid: $guid)', 'goldenMetrics { metrics { name title unit query } }'], vars: { guid: G } },
      {
        has: ['m0: nrql(query: $q0) { results }', 'm1: nrql(query: $q1) { results }', 'account(id: $accountId)'],
        vars: {
          accountId: ACCOUNT,
          q0: "SELECT average(apm.service.transaction.duration * 1000) AS 'Response time (ms)' FROM Metric WHERE entity.guid = 'X' SINCE 30 minutes ago",
          q1: GM_Q1,
        },
      },
    ],
    result: {
      guid: G,
      name: 'checkout',
      type: 'APM_APPLICATION_ENTITY',
      sinceMinutes: 30,
      metrics: [
        {
          name: 'responseTimeMs',
          title: 'Response time (ms)',
          unit: 'MS',
          value: 87.5,
          nrql: "SELECT average(apm.service.transaction.duration * 1000) AS 'Response time (ms)' FROM Metric WHERE entity.guid = 'X' SINCE 30 minutes ago",
        },
        {
          name: 'throughput',
          title: 'Throughput',
          unit: 'REQUESTS_PER_MINUTE',
          value: [
            { host: 'h1', rpm: 10 },
            { host: 'h2', rpm: 5 },
          ],
          nrql: GM_Q1,
        },
      ],
    },
  },
  {
    tool: 'newrelic_list_alert_policies',
    args: { nameContains: 'prod' },
    replies: [
      account({
        alerts: {
          policiesSearch: {
            nextCursor: 'p2',
            totalCount: 3,
            policies: [{ id: '77', name: 'Prod checkout', incidentPreference: 'PER_POLICY' }],
          },
        },
      }),
    ],
    expect: [
      {
        has: [
          'policiesSearch(cursor: $cursor, searchCriteria: $criteria)',
          '$criteria: AlertsPoliciesSearchCriteriaInput',
        ],
        vars: { accountId: ACCOUNT, cursor: null, criteria: { nameLike: 'prod' } },
      },
    ],
    result: {
      accountId: ACCOUNT,
      policies: [{ id: '77', name: 'Prod checkout', incidentPreference: 'PER_POLICY' }],
      total: 3,
      next: 'p2',
    },
  },
  {
    tool: 'newrelic_create_alert_policy',
    args: { name: 'Checkout', incidentPreference: 'PER_CONDITION', accountId: 999 },
    replies: [
      { alertsPolicyCreate: { id: '78', name: 'Checkout', incidentPreference: 'PER_CONDITION', accountId: 999 } },
    ],
    expect: [
      {
        has: ['mutation(', 'alertsPolicyCreate(accountId: $accountId, policy: $policy)', '$policy: AlertsPolicyInput!'],
        vars: { accountId: 999, policy: { name: 'Checkout', incidentPreference: 'PER_CONDITION' } },
      },
    ],
    result: { id: '78', name: 'Checkout', incidentPreference: 'PER_CONDITION', accountId: 999 },
  },
  {
    tool: 'newrelic_list_alert_conditions',
    args: { policyId: '77', queryContains: 'Transaction', cursor: 'c-1' },
    replies: [
      account({
        alerts: {
          nrqlConditionsSearch: {
            nextCursor: null,
            totalCount: 1,
            nrqlConditions: [
              {
                id: '5',
                name: 'Errors',
                enabled: true,
                policyId: '77',
                type: 'STATIC',
                description: null,
                runbookUrl: 'https://runbooks.example/errors',
                nrql: { query: 'SELECT count(*) FROM TransactionError' },
                terms: [
                  {
                    priority: 'CRITICAL',
                    operator: 'ABOVE',
                    threshold: 10,
                    thresholdDuration: 300,
                    thresholdOccurrences: 'ALL',
                  },
                ],
              },
            ],
          },
        },
      }),
    ],
    expect: [
      {
        has: [
          'nrqlConditionsSearch(cursor: $cursor, searchCriteria: $criteria)',
          '$criteria: AlertsNrqlConditionsSearchCriteriaInput',
        ],
        vars: { accountId: ACCOUNT, cursor: 'c-1', criteria: { policyId: '77', queryLike: 'Transaction' } },
      },
    ],
    result: {
      accountId: ACCOUNT,
      conditions: [
        {
          id: '5',
          name: 'Errors',
          enabled: true,
          policyId: '77',
          type: 'STATIC',
          nrql: 'SELECT count(*) FROM TransactionError',
          terms: [{ priority: 'CRITICAL', operator: 'ABOVE', threshold: 10, durationSeconds: 300, occurrences: 'ALL' }],
          runbookUrl: 'https://runbooks.example/errors',
        },
      ],
      total: 1,
      next: null,
    },
  },
  {
    tool: 'newrelic_list_issues',
    args: {},
    replies: [account({ aiIssues: { issues: { nextCursor: 'i2', issues: [RAW_ISSUE] } } })],
    expect: [
      {
        has: [
          'aiIssues { issues(cursor: $cursor, filter: $filter, timeWindow: $timeWindow)',
          '$filter: AiIssuesFilterIssues',
          '$timeWindow: TimeWindowInput',
        ],
        vars: { accountId: ACCOUNT, cursor: null, filter: { states: ['CREATED', 'ACTIVATED'] } },
        windowHours: 24,
      },
    ],
    result: { accountId: ACCOUNT, issues: [ISSUE], next: 'i2' },
  },
  {
    name: 'newrelic_list_issues (filters)',
    tool: 'newrelic_list_issues',
    args: {
      states: ['CLOSED'],
      priorities: ['CRITICAL'],
      entityGuids: [G],
      sinceHours: 2,
      cursor: 'i2',
      accountId: 999,
    },
    replies: [account({ aiIssues: { issues: { nextCursor: null, issues: [] } } })],
    expect: [
      {
        has: ['aiIssues'],
        vars: {
          accountId: 999,
          cursor: 'i2',
          filter: { states: ['CLOSED'], priority: ['CRITICAL'], entityGuids: [G] },
        },
        windowHours: 2,
      },
    ],
    result: { accountId: 999, issues: [], next: null },
  },
  {
    tool: 'newrelic_acknowledge_issue',
    args: { issueId: ISSUE_ID },
    replies: [{ aiIssuesAckIssue: { error: null, result: { accountId: ACCOUNT, action: 'ACK', issueId: ISSUE_ID } } }],
    expect: [
      {
        has: ['mutation(', 'aiIssuesAckIssue(accountId: $accountId, issueId: $issueId)', '$issueId: ID!'],
        vars: { accountId: ACCOUNT, issueId: ISSUE_ID },
      },
    ],
    result: { issueId: ISSUE_ID, accountId: ACCOUNT, action: 'ACK' },
  },
  {
    tool: 'newrelic_resolve_issue',
    args: { issueId: ISSUE_ID },
    replies: [
      { aiIssuesResolveIssue: { error: null, result: { accountId: ACCOUNT, action: 'RESOLVE', issueId: ISSUE_ID } } },
    ],
    expect: [
      {
        has: ['aiIssuesResolveIssue(accountId: $accountId, issueId: $issueId)'],
        vars: { accountId: ACCOUNT, issueId: ISSUE_ID },
      },
    ],
    result: { issueId: ISSUE_ID, accountId: ACCOUNT, action: 'RESOLVE' },
  },
  {
    tool: 'newrelic_list_dashboards',
    args: { nameContains: 'SLO' },
    replies: [
      search([
        {
          guid: GD,
          name: 'SLOs',
          entityType: 'DASHBOARD_ENTITY',
          domain: 'VIZ',
          type: 'DASHBOARD',
          accountId: ACCOUNT,
          permalink: url(GD),
          dashboardParentGuid: null,
          updatedAt: T0,
          owner: { email: 'o@example.com', userId: 1 },
        },
        {
          guid: 'MTIzNHxWSVp8UEFHRXwx',
          name: 'SLOs / Page 1',
          entityType: 'DASHBOARD_ENTITY',
          domain: 'VIZ',
          type: 'DASHBOARD',
          accountId: ACCOUNT,
          dashboardParentGuid: GD,
        },
      ]),
    ],
    expect: [
      {
        has: ['... on DashboardEntityOutline'],
        vars: { query: "type = 'DASHBOARD' AND name LIKE 'SLO'", cursor: null },
      },
    ],
    result: {
      dashboards: [
        { guid: GD, name: 'SLOs', accountId: ACCOUNT, owner: 'o@example.com', updatedAt: ISO0, url: url(GD) },
      ],
      next: null,
    },
  },
  {
    tool: 'newrelic_get_dashboard',
    args: { guid: GD },
    replies: [
      {
        actor: {
          entity: {
            guid: GD,
            name: 'SLOs',
            accountId: ACCOUNT,
            entityType: 'DASHBOARD_ENTITY',
            permalink: url(GD),
            description: null,
            permissions: 'PUBLIC_READ_WRITE',
            createdAt: T0,
            updatedAt: T0,
            owner: { email: 'o@example.com' },
            pages: [
              {
                guid: 'P1',
                name: 'Overview',
                widgets: [
                  {
                    id: 'w1',
                    title: 'Errors',
                    visualization: { id: 'viz.line' },
                    rawConfiguration: {
                      nrqlQueries: [
                        { accountIds: [ACCOUNT], query: 'SELECT count(*) FROM TransactionError TIMESERIES' },
                      ],
                      legend: { enabled: true },
                    },
                  },
                  { id: 'w2', title: '', visualization: { id: 'viz.markdown' }, rawConfiguration: { text: '# Notes' } },
                ],
              },
            ],
          },
        },
      },
    ],
    expect: [
      {
        has: [
          '... on DashboardEntity',
          'pages { guid name widgets { id title visualization { id } rawConfiguration } }',
        ],
        vars: { guid: GD },
      },
    ],
    result: {
      guid: GD,
      name: 'SLOs',
      accountId: ACCOUNT,
      description: '',
      permissions: 'PUBLIC_READ_WRITE',
      owner: 'o@example.com',
      updatedAt: ISO0,
      url: url(GD),
      pages: [
        {
          guid: 'P1',
          name: 'Overview',
          widgets: [
            {
              id: 'w1',
              title: 'Errors',
              visualization: 'viz.line',
              queries: [{ accountId: ACCOUNT, query: 'SELECT count(*) FROM TransactionError TIMESERIES' }],
            },
            { id: 'w2', title: '', visualization: 'viz.markdown', text: '# Notes' },
          ],
        },
      ],
    },
  },
  {
    tool: 'newrelic_list_synthetic_monitors',
    args: { failingOnly: true },
    replies: [
      search([
        {
          guid: 'MTIzNHxTWU5USHxNT058MQ',
          name: 'Home ping',
          entityType: 'SYNTHETIC_MONITOR_ENTITY',
          domain: 'SYNTH',
          type: 'MONITOR',
          accountId: ACCOUNT,
          alertSeverity: 'CRITICAL',
          reporting: true,
          permalink: 'p',
          monitorType: 'SIMPLE',
          monitoredUrl: 'https://example.com',
          period: 5,
          monitorSummary: { status: 'ENABLED', successRate: 0.875, locationsFailing: 2, locationsRunning: 8 },
        },
      ]),
    ],
    expect: [
      {
        has: ['... on SyntheticMonitorEntityOutline', 'monitorSummary { status successRate'],
        vars: { query: "domain = 'SYNTH' AND type = 'MONITOR' AND alertSeverity = 'CRITICAL'", cursor: null },
      },
    ],
    result: {
      monitors: [
        {
          guid: 'MTIzNHxTWU5USHxNT058MQ',
          name: 'Home ping',
          type: 'SYNTHETIC_MONITOR_ENTITY',
          domain: 'SYNTH',
          accountId: ACCOUNT,
          alertSeverity: 'CRITICAL',
          reporting: true,
          url: 'p',
          monitorType: 'SIMPLE',
          monitoredUrl: 'https://example.com',
          periodMinutes: 5,
          status: 'ENABLED',
          successRatePercent: 87.5,
          locationsFailing: 2,
          locationsRunning: 8,
        },
      ],
      next: null,
    },
  },
  {
    tool: 'newrelic_create_deployment_marker',
    args: {
      entityGuid: G,
      version: 'v1.4.2',
      commit: 'abc123',
      user: 'ci-bot',
      description: 'Release 1.4.2',
      timestamp: T0,
    },
    replies: [
      {
        changeTrackingCreateDeployment: {
          deploymentId: 'dep-1',
          entityGuid: G,
          version: 'v1.4.2',
          timestamp: T0,
          deploymentType: 'BASIC',
          description: 'Release 1.4.2',
          changelog: null,
          commit: 'abc123',
          user: 'ci-bot',
        },
      },
    ],
    expect: [
      {
        has: ['changeTrackingCreateDeployment(deployment: $deployment)', '$deployment: ChangeTrackingDeploymentInput!'],
        vars: {
          deployment: {
            entityGuid: G,
            version: 'v1.4.2',
            deploymentType: 'BASIC',
            commit: 'abc123',
            user: 'ci-bot',
            description: 'Release 1.4.2',
            timestamp: T0,
          },
        },
      },
    ],
    result: {
      deploymentId: 'dep-1',
      entityGuid: G,
      version: 'v1.4.2',
      timestamp: ISO0,
      deploymentType: 'BASIC',
      description: 'Release 1.4.2',
      commit: 'abc123',
      user: 'ci-bot',
    },
  },
  {
    tool: 'newrelic_list_workloads',
    args: {},
    replies: [
      search(
        [
          {
            guid: 'MTIzNHxOUjF8V09SS0xPQUR8MQ',
            name: 'Payments',
            entityType: 'WORKLOAD_ENTITY',
            domain: 'NR1',
            type: 'WORKLOAD',
            accountId: ACCOUNT,
            alertSeverity: 'WARNING',
            permalink: 'w',
            workloadStatus: { statusValue: 'DEGRADED', description: '1 of 4 entities degraded' },
          },
        ],
        'w2',
      ),
    ],
    expect: [
      {
        has: ['... on WorkloadEntityOutline { workloadStatus { statusValue description } }'],
        vars: { query: "type = 'WORKLOAD'", cursor: null },
      },
    ],
    result: {
      workloads: [
        {
          guid: 'MTIzNHxOUjF8V09SS0xPQUR8MQ',
          name: 'Payments',
          accountId: ACCOUNT,
          status: 'DEGRADED',
          statusDescription: '1 of 4 entities degraded',
          alertSeverity: 'WARNING',
          url: 'w',
        },
      ],
      next: 'w2',
    },
  },
  {
    tool: 'newrelic_list_error_groups',
    args: { entityGuid: G },
    replies: [
      {
        actor: {
          errorsInbox: {
            errorGroups: {
              nextCursor: null,
              totalCount: 1,
              results: [
                {
                  id: 'eg-1',
                  name: 'NullPointerException',
                  message: 'x is null',
                  state: 'UNRESOLVED',
                  url: 'https://one.newrelic.com/eg-1',
                  occurrences: { totalCount: 42, firstSeenAt: T0, lastSeenAt: T0 },
                  assignment: { email: 'dev@example.com' },
                },
              ],
            },
          },
        },
      },
    ],
    expect: [
      {
        has: [
          'errorsInbox { errorGroups(entityGuids: $guids, filter: $filter, timeWindow: $timeWindow, cursor: $cursor)',
          '$filter: ErrorsInboxErrorGroupSearchFilterInput',
        ],
        vars: { guids: [G], filter: { states: ['UNRESOLVED'] }, cursor: null },
        windowHours: 24,
      },
    ],
    result: {
      entityGuid: G,
      errorGroups: [
        {
          id: 'eg-1',
          name: 'NullPointerException',
          message: 'x is null',
          state: 'UNRESOLVED',
          occurrences: 42,
          firstSeenAt: ISO0,
          lastSeenAt: ISO0,
          assignee: 'dev@example.com',
          url: 'https://one.newrelic.com/eg-1',
        },
      ],
      total: 1,
      next: null,
    },
  },
  {
    tool: 'newrelic_update_error_group_state',
    args: { errorGroupId: 'eg-1', state: 'RESOLVED' },
    replies: [{ errorsInboxUpdateErrorGroupState: { state: 'RESOLVED' } }],
    expect: [
      {
        has: [
          'errorsInboxUpdateErrorGroupState(id: $id, state: $state) { state errors { description type } }',
          '$state: ErrorsInboxErrorGroupState!',
        ],
        vars: { id: 'eg-1', state: 'RESOLVED' },
      },
    ],
    result: { errorGroupId: 'eg-1', state: 'RESOLVED' },
  },

  // ---------- static NRQL conditions, notifications and workflows, tags, dashboard widgets ----------
  {
    tool: 'newrelic_create_static_nrql_condition',
    args: {
      policyId: '77',
      name: 'High error rate',
      nrql: "SELECT percentage(count(*), WHERE error IS true) FROM Transaction WHERE appName = 'checkout'",
      critical: { operator: 'ABOVE', threshold: 5 },
      warning: { operator: 'ABOVE', threshold: 2, durationSeconds: 600, occurrences: 'AT_LEAST_ONCE' },
      runbookUrl: 'https://runbooks.example/errors',
      aggregationDelaySeconds: 120,
    },
    replies: [
      {
        alertsNrqlConditionStaticCreate: {
          id: '901',
          name: 'High error rate',
          enabled: true,
          policyId: '77',
          nrql: {
            query: "SELECT percentage(count(*), WHERE error IS true) FROM Transaction WHERE appName = 'checkout'",
          },
          terms: [
            {
              priority: 'CRITICAL',
              operator: 'ABOVE',
              threshold: 5,
              thresholdDuration: 300,
              thresholdOccurrences: 'ALL',
            },
            {
              priority: 'WARNING',
              operator: 'ABOVE',
              threshold: 2,
              thresholdDuration: 600,
              thresholdOccurrences: 'AT_LEAST_ONCE',
            },
          ],
          signal: { aggregationWindow: 60, aggregationMethod: 'EVENT_FLOW' },
          violationTimeLimitSeconds: 259200,
        },
      },
    ],
    expect: [
      {
        has: [
          'mutation(',
          'alertsNrqlConditionStaticCreate(accountId: $accountId, policyId: $policyId, condition: $condition)',
          '$policyId: ID!',
          '$condition: AlertsNrqlConditionStaticInput!',
        ],
        vars: {
          accountId: ACCOUNT,
          policyId: '77',
          condition: {
            name: 'High error rate',
            enabled: true,
            runbookUrl: 'https://runbooks.example/errors',
            nrql: {
              query: "SELECT percentage(count(*), WHERE error IS true) FROM Transaction WHERE appName = 'checkout'",
            },
            terms: [
              {
                priority: 'CRITICAL',
                operator: 'ABOVE',
                threshold: 5,
                thresholdDuration: 300,
                thresholdOccurrences: 'ALL',
              },
              {
                priority: 'WARNING',
                operator: 'ABOVE',
                threshold: 2,
                thresholdDuration: 600,
                thresholdOccurrences: 'AT_LEAST_ONCE',
              },
            ],
            signal: { aggregationWindow: 60, aggregationMethod: 'EVENT_FLOW', aggregationDelay: 120 },
          },
        },
      },
    ],
    result: {
      id: '901',
      name: 'High error rate',
      enabled: true,
      policyId: '77',
      accountId: ACCOUNT,
      nrql: "SELECT percentage(count(*), WHERE error IS true) FROM Transaction WHERE appName = 'checkout'",
      terms: [
        { priority: 'CRITICAL', operator: 'ABOVE', threshold: 5, durationSeconds: 300, occurrences: 'ALL' },
        { priority: 'WARNING', operator: 'ABOVE', threshold: 2, durationSeconds: 600, occurrences: 'AT_LEAST_ONCE' },
      ],
      aggregationWindowSeconds: 60,
      aggregationMethod: 'EVENT_FLOW',
      violationTimeLimitSeconds: 259200,
    },
  },
  {
    tool: 'newrelic_create_notification_destination',
    args: { name: 'On-call email', type: 'EMAIL', emails: ['oncall@example.com', 'sre@example.com'] },
    replies: [
      {
        aiNotificationsCreateDestination: {
          destination: {
            id: 'dest-1',
            name: 'On-call email',
            type: 'EMAIL',
            active: true,
            status: 'DEFAULT',
            createdAt: ISO0,
            properties: [{ key: 'email', value: 'oncall@example.com,sre@example.com' }],
          },
          error: null,
        },
      },
    ],
    expect: [
      {
        has: [
          'aiNotificationsCreateDestination(accountId: $accountId, destination: $destination)',
          '$destination: AiNotificationsDestinationInput!',
          '... on AiNotificationsDataValidationError',
        ],
        vars: {
          accountId: ACCOUNT,
          destination: {
            name: 'On-call email',
            type: 'EMAIL',
            properties: [{ key: 'email', value: 'oncall@example.com,sre@example.com' }],
          },
        },
      },
    ],
    result: {
      accountId: ACCOUNT,
      id: 'dest-1',
      name: 'On-call email',
      type: 'EMAIL',
      active: true,
      status: 'DEFAULT',
      createdAt: ISO0,
      properties: [{ key: 'email', value: 'oncall@example.com,sre@example.com' }],
    },
  },
  {
    name: 'newrelic_create_notification_destination (webhook)',
    tool: 'newrelic_create_notification_destination',
    args: { name: 'Hook', type: 'WEBHOOK', url: 'https://hooks.example.com/nr', accountId: 999 },
    replies: [
      {
        aiNotificationsCreateDestination: {
          destination: {
            id: 'dest-2',
            name: 'Hook',
            type: 'WEBHOOK',
            properties: [{ key: 'url', value: 'https://hooks.example.com/nr' }],
          },
        },
      },
    ],
    expect: [
      {
        has: ['aiNotificationsCreateDestination('],
        vars: {
          accountId: 999,
          destination: {
            name: 'Hook',
            type: 'WEBHOOK',
            properties: [{ key: 'url', value: 'https://hooks.example.com/nr' }],
          },
        },
      },
    ],
    result: {
      accountId: 999,
      id: 'dest-2',
      name: 'Hook',
      type: 'WEBHOOK',
      active: null,
      status: null,
      createdAt: null,
      properties: [{ key: 'url', value: 'https://hooks.example.com/nr' }],
    },
  },
  {
    tool: 'newrelic_list_notification_destinations',
    args: { nameContains: 'call', type: 'EMAIL' },
    replies: [
      account({
        aiNotifications: {
          destinations: {
            entities: [
              {
                id: 'dest-1',
                name: 'On-call email',
                type: 'EMAIL',
                active: true,
                status: 'DEFAULT',
                createdAt: ISO0,
                properties: [{ key: 'email', value: 'oncall@example.com' }],
              },
            ],
            nextCursor: 'd-2',
            totalCount: 3,
            error: null,
          },
        },
      }),
    ],
    expect: [
      {
        has: ['destinations(cursor: $cursor, filters: $filters)', '$filters: AiNotificationsDestinationFilter'],
        vars: { accountId: ACCOUNT, cursor: null, filters: { name: 'call', type: 'EMAIL' } },
      },
    ],
    result: {
      accountId: ACCOUNT,
      destinations: [
        {
          id: 'dest-1',
          name: 'On-call email',
          type: 'EMAIL',
          active: true,
          status: 'DEFAULT',
          createdAt: ISO0,
          properties: [{ key: 'email', value: 'oncall@example.com' }],
        },
      ],
      total: 3,
      next: 'd-2',
    },
  },
  {
    tool: 'newrelic_create_notification_channel',
    args: {
      name: 'Checkout webhook',
      destinationId: 'dest-2',
      type: 'WEBHOOK',
      properties: [{ key: 'payload', value: '{"issue": {{ json issueTitle }}}' }],
    },
    replies: [
      {
        aiNotificationsCreateChannel: {
          channel: {
            id: 'chan-1',
            name: 'Checkout webhook',
            type: 'WEBHOOK',
            destinationId: 'dest-2',
            product: 'IINT',
            active: true,
            status: 'DEFAULT',
            properties: [{ key: 'payload', value: '{"issue": {{ json issueTitle }}}' }],
          },
          error: null,
        },
      },
    ],
    expect: [
      {
        has: [
          'aiNotificationsCreateChannel(accountId: $accountId, channel: $channel)',
          '$channel: AiNotificationsChannelInput!',
        ],
        vars: {
          accountId: ACCOUNT,
          channel: {
            name: 'Checkout webhook',
            type: 'WEBHOOK',
            destinationId: 'dest-2',
            product: 'IINT',
            properties: [{ key: 'payload', value: '{"issue": {{ json issueTitle }}}' }],
          },
        },
      },
    ],
    result: {
      accountId: ACCOUNT,
      id: 'chan-1',
      name: 'Checkout webhook',
      type: 'WEBHOOK',
      destinationId: 'dest-2',
      product: 'IINT',
      active: true,
      status: 'DEFAULT',
      properties: [{ key: 'payload', value: '{"issue": {{ json issueTitle }}}' }],
    },
  },
  {
    tool: 'newrelic_list_notification_channels',
    args: { destinationId: 'dest-2', cursor: 'c-2' },
    replies: [
      account({
        aiNotifications: {
          channels: {
            entities: [
              { id: 'chan-1', name: 'Checkout webhook', type: 'WEBHOOK', destinationId: 'dest-2', product: 'IINT' },
            ],
            nextCursor: null,
            totalCount: 1,
          },
        },
      }),
    ],
    expect: [
      {
        has: ['channels(cursor: $cursor, filters: $filters)', '$filters: AiNotificationsChannelFilter'],
        vars: { accountId: ACCOUNT, cursor: 'c-2', filters: { destinationId: 'dest-2' } },
      },
    ],
    result: {
      accountId: ACCOUNT,
      channels: [
        {
          id: 'chan-1',
          name: 'Checkout webhook',
          type: 'WEBHOOK',
          destinationId: 'dest-2',
          product: 'IINT',
          active: null,
          status: null,
          properties: [],
        },
      ],
      total: 1,
      next: null,
    },
  },
  {
    tool: 'newrelic_create_workflow',
    args: {
      name: 'Checkout to on-call',
      channelIds: ['chan-1'],
      policyIds: ['77'],
      predicates: [{ attribute: 'priority', operator: 'EQUAL', values: ['CRITICAL'] }],
    },
    replies: [
      {
        aiWorkflowsCreateWorkflow: {
          workflow: {
            id: 'wf-1',
            name: 'Checkout to on-call',
            workflowEnabled: true,
            mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
            destinationConfigurations: [
              {
                channelId: 'chan-1',
                name: 'Checkout webhook',
                type: 'WEBHOOK',
                notificationTriggers: ['ACTIVATED', 'ACKNOWLEDGED', 'CLOSED'],
              },
            ],
            issuesFilter: {
              predicates: [
                { attribute: 'labels.policyIds', operator: 'EXACTLY_MATCHES', values: ['77'] },
                { attribute: 'priority', operator: 'EQUAL', values: ['CRITICAL'] },
              ],
            },
          },
          errors: [],
        },
      },
    ],
    expect: [
      {
        has: [
          'aiWorkflowsCreateWorkflow(accountId: $accountId, createWorkflowData: $createWorkflowData)',
          '$createWorkflowData: AiWorkflowsCreateWorkflowInput!',
        ],
        vars: {
          accountId: ACCOUNT,
          createWorkflowData: {
            name: 'Checkout to on-call',
            workflowEnabled: true,
            destinationsEnabled: true,
            enrichmentsEnabled: false,
            mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
            issuesFilter: {
              name: 'Checkout to on-call',
              type: 'FILTER',
              predicates: [
                { attribute: 'labels.policyIds', operator: 'EXACTLY_MATCHES', values: ['77'] },
                { attribute: 'priority', operator: 'EQUAL', values: ['CRITICAL'] },
              ],
            },
            destinationConfigurations: [
              { channelId: 'chan-1', notificationTriggers: ['ACTIVATED', 'ACKNOWLEDGED', 'CLOSED'] },
            ],
          },
        },
      },
    ],
    result: {
      accountId: ACCOUNT,
      id: 'wf-1',
      name: 'Checkout to on-call',
      enabled: true,
      mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
      channels: [
        {
          channelId: 'chan-1',
          name: 'Checkout webhook',
          type: 'WEBHOOK',
          triggers: ['ACTIVATED', 'ACKNOWLEDGED', 'CLOSED'],
        },
      ],
      filter: [
        { attribute: 'labels.policyIds', operator: 'EXACTLY_MATCHES', values: ['77'] },
        { attribute: 'priority', operator: 'EQUAL', values: ['CRITICAL'] },
      ],
    },
  },
  {
    tool: 'newrelic_list_workflows',
    args: { nameContains: 'Checkout' },
    replies: [
      account({
        aiWorkflows: {
          workflows: {
            entities: [{ id: 'wf-1', name: 'Checkout to on-call', workflowEnabled: false }],
            nextCursor: 'w-2',
            totalCount: 2,
          },
        },
      }),
    ],
    expect: [
      {
        has: ['aiWorkflows { workflows(cursor: $cursor, filters: $filters)', '$filters: AiWorkflowsFilters'],
        vars: { accountId: ACCOUNT, cursor: null, filters: { nameLike: 'Checkout' } },
      },
    ],
    result: {
      accountId: ACCOUNT,
      workflows: [
        {
          id: 'wf-1',
          name: 'Checkout to on-call',
          enabled: false,
          mutingRulesHandling: null,
          channels: [],
          filter: [],
        },
      ],
      total: 2,
      next: 'w-2',
    },
  },
  {
    tool: 'newrelic_add_tags_to_entity',
    args: {
      guid: G,
      tags: [
        { key: 'team', values: ['payments'] },
        { key: 'env', values: ['prod', 'eu'] },
      ],
    },
    replies: [{ taggingAddTagsToEntity: { errors: [] } }],
    expect: [
      {
        has: ['taggingAddTagsToEntity(guid: $guid, tags: $tags)', '$tags: [TaggingTagInput!]!', '$guid: EntityGuid!'],
        vars: {
          guid: G,
          tags: [
            { key: 'team', values: ['payments'] },
            { key: 'env', values: ['prod', 'eu'] },
          ],
        },
      },
    ],
    result: {
      guid: G,
      added: [
        { key: 'team', values: ['payments'] },
        { key: 'env', values: ['prod', 'eu'] },
      ],
    },
  },
  {
    tool: 'newrelic_add_widgets_to_dashboard_page',
    args: {
      pageGuid: GD,
      widgets: [
        { title: 'Errors', nrql: 'SELECT count(*) FROM TransactionError TIMESERIES', column: 1, row: 1 },
        { title: 'Notes', visualization: 'viz.markdown', text: '# Runbook', width: 6 },
        {
          title: 'EU traffic',
          visualization: 'viz.billboard',
          nrql: 'SELECT rate(count(*), 1 minute) FROM Transaction',
          accountId: 999,
        },
      ],
    },
    replies: [{ dashboardAddWidgetsToPage: { errors: [] } }],
    expect: [
      {
        has: ['dashboardAddWidgetsToPage(guid: $guid, widgets: $widgets)', '$widgets: [DashboardWidgetInput!]!'],
        vars: {
          guid: GD,
          widgets: [
            {
              title: 'Errors',
              visualization: { id: 'viz.line' },
              layout: { column: 1, row: 1, width: 4, height: 3 },
              rawConfiguration: {
                nrqlQueries: [{ accountIds: [ACCOUNT], query: 'SELECT count(*) FROM TransactionError TIMESERIES' }],
              },
            },
            {
              title: 'Notes',
              visualization: { id: 'viz.markdown' },
              layout: { width: 6, height: 3 },
              rawConfiguration: { text: '# Runbook' },
            },
            {
              title: 'EU traffic',
              visualization: { id: 'viz.billboard' },
              layout: { width: 4, height: 3 },
              rawConfiguration: {
                nrqlQueries: [{ accountIds: [999], query: 'SELECT rate(count(*), 1 minute) FROM Transaction' }],
              },
            },
          ],
        },
      },
    ],
    result: { pageGuid: GD, added: 3, titles: ['Errors', 'Notes', 'EU traffic'] },
  },
];

describe('newrelic tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      replyWith(us, c.replies);
      eu.requests.length = 0;
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertRequests(us, c.expect);
      assert.equal(eu.requests.length, 0, 'a US connection never reaches the EU endpoint');
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('newrelic')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });
});

describe('newrelic region and account', () => {
  test('an EU connection calls the EU endpoint with its own key', async () => {
    replyWith(eu, [{ actor: { accounts: [{ id: 55, name: 'EU prod' }] } }]);
    us.requests.length = 0;
    assert.deepEqual(await ok('newrelic_list_accounts', {}, euApiKey), {
      accounts: [{ id: 55, name: 'EU prod' }],
      defaultAccountId: null,
    });
    assertRequests(eu, [{ has: ['accounts'], vars: {} }], KEY_EU);
    assert.equal(us.requests.length, 0);
  });

  test('without accountId and without a default account, the error says what to do and nothing is sent', async () => {
    replyWith(eu, []);
    await fails(
      'newrelic_run_nrql',
      { query: 'SELECT 1 FROM Log' },
      /No New Relic account id: pass accountId, or set a default account ID/,
      euApiKey,
    );
    await fails('newrelic_list_issues', {}, /No New Relic account id/, euApiKey);
    assert.equal(eu.requests.length, 0);
  });

  test('an explicit accountId works without a default', async () => {
    replyWith(eu, [account({ alerts: { policiesSearch: { nextCursor: null, totalCount: 0, policies: [] } } })]);
    assert.deepEqual(await ok('newrelic_list_alert_policies', { accountId: 55 }, euApiKey), {
      accountId: 55,
      policies: [],
      total: 0,
      next: null,
    });
    assertRequests(eu, [{ has: ['policiesSearch'], vars: { accountId: 55, cursor: null, criteria: {} } }], KEY_EU);
  });
});

describe('newrelic: refusals in mutation payloads, and arguments', () => {
  test('a destination the validation refuses names the field', async () => {
    replyWith(us, [
      {
        aiNotificationsCreateDestination: {
          destination: null,
          error: { details: 'Invalid property', fields: [{ field: 'email', message: 'not a valid email' }] },
        },
      },
    ]);
    await fails(
      'newrelic_create_notification_destination',
      { name: 'x', type: 'EMAIL', emails: ['a@b'] },
      /New Relic could not create the notification destination "x": Invalid property; email: not a valid email\./,
    );
  });

  test('a workflow refused in `errors` says why', async () => {
    replyWith(us, [
      {
        aiWorkflowsCreateWorkflow: {
          workflow: null,
          errors: [{ type: 'INVALID_PARAMETER', description: 'Channel not found' }],
        },
      },
    ]);
    await fails(
      'newrelic_create_workflow',
      { name: 'w', channelIds: ['nope'] },
      /could not create the workflow "w": INVALID_PARAMETER: Channel not found\./,
    );
  });

  test('tags and widgets refused in `errors` say why', async () => {
    replyWith(us, [{ taggingAddTagsToEntity: { errors: [{ type: 'NOT_FOUND', message: 'Entity not found' }] } }]);
    await fails(
      'newrelic_add_tags_to_entity',
      { guid: G, tags: [{ key: 'a', values: ['b'] }] },
      /NOT_FOUND: Entity not found/,
    );
    replyWith(us, [
      { dashboardAddWidgetsToPage: { errors: [{ type: 'PAGE_NOT_FOUND', description: 'Page not found' }] } },
    ]);
    await fails(
      'newrelic_add_widgets_to_dashboard_page',
      { pageGuid: GD, widgets: [{ title: 't', nrql: 'SELECT 1 FROM Transaction' }] },
      /could not add widgets to dashboard page .*: PAGE_NOT_FOUND: Page not found\./,
    );
  });

  test('a destination or widget without what its type needs is refused before any request', async () => {
    us.requests.length = 0;
    await fails('newrelic_create_notification_destination', { name: 'x', type: 'WEBHOOK' }, /needs `url`/);
    await fails(
      'newrelic_add_widgets_to_dashboard_page',
      { pageGuid: GD, widgets: [{ title: 'md', visualization: 'viz.markdown' }] },
      /Widget 1 \("md"\) needs `text` \(viz\.markdown\)/,
    );
    await fails(
      'newrelic_create_notification_destination',
      { name: 'x', type: 'WEBHOOK', url: 'http://plain.example.com' },
      /url/,
    );
    assert.equal(us.requests.length, 0);
  });
});

describe('newrelic error mapping', () => {
  const cases: Array<[string, string, Record<string, unknown>, Record<string, unknown> | UpstreamReply, RegExp]> = [
    [
      'GraphQL errors in an HTTP-200 body',
      'newrelic_run_nrql',
      { query: 'SELEC oops' },
      {
        status: 200,
        json: {
          data: { actor: { account: { nrql: null } } },
          errors: [
            {
              message: "NRQL Syntax Error: Error at line 1 position 1, unexpected 'SELEC'",
              extensions: { errorClass: 'INVALID_INPUT' },
            },
          ],
        },
      },
      /could not run the NRQL query: NRQL Syntax Error: Error at line 1 position 1.*\[INVALID_INPUT\]/,
    ],
    [
      'several GraphQL errors are all reported',
      'newrelic_create_deployment_marker',
      { entityGuid: G, version: '1' },
      {
        status: 200,
        json: {
          data: { changeTrackingCreateDeployment: null },
          errors: [{ message: 'Entity not found' }, { message: 'Invalid version' }],
        },
      },
      /could not record deployment 1: Entity not found; Invalid version/,
    ],
    [
      '401 bad key',
      'newrelic_list_accounts',
      {},
      { status: 401, json: { errors: [{ message: 'Invalid API key' }] } },
      /rejected the API key \(401\).*User API key \(NRAK-…\).*Invalid API key/,
    ],
    [
      '403 forbidden',
      'newrelic_list_dashboards',
      {},
      { status: 403, body: 'Forbidden' },
      /refused permission to list dashboards/,
    ],
    [
      'access denied inside a 200',
      'newrelic_list_alert_policies',
      {},
      {
        status: 200,
        json: {
          data: { actor: { account: null } },
          errors: [{ message: 'Access denied.', extensions: { errorClass: 'FORBIDDEN' } }],
        },
      },
      /refused permission to list alert policies.*Access denied/,
    ],
    [
      '429 with Retry-After',
      'newrelic_list_workloads',
      {},
      { status: 429, headers: { 'retry-after': '30' }, json: { errors: [{ message: 'Too many requests' }] } },
      /rate limited the request to list workloads: retry after 30 seconds/,
    ],
    [
      '5xx',
      'newrelic_list_synthetic_monitors',
      {},
      { status: 503, body: 'unavailable' },
      /server error \(503\).*retry later/,
    ],
    [
      'mutation-level error',
      'newrelic_acknowledge_issue',
      { issueId: ISSUE_ID },
      { aiIssuesAckIssue: { error: 'Issue is already closed', result: null } },
      /could not acknowledge issue f0668430.*: Issue is already closed/,
    ],
    [
      'error group update refused in the payload',
      'newrelic_update_error_group_state',
      { errorGroupId: 'bad', state: 'RESOLVED' },
      {
        errorsInboxUpdateErrorGroupState: {
          state: null,
          errors: [{ description: 'Error group not found', type: 'NOT_FOUND' }],
        },
      },
      /could not mark error group bad RESOLVED: Error group not found \[NOT_FOUND\]/,
    ],
    [
      'unknown entity',
      'newrelic_get_entity',
      { guid: G },
      { actor: { entity: null } },
      /No New Relic entity with guid MTIz.*newrelic_search_entities/,
    ],
    [
      'not a dashboard',
      'newrelic_get_dashboard',
      { guid: G },
      { actor: { entity: { ...RAW_APM } } },
      /is a APM_APPLICATION_ENTITY.*not a dashboard/,
    ],
    [
      'unreachable account',
      'newrelic_run_nrql',
      { query: 'SELECT 1 FROM Log', accountId: 42 },
      { actor: { account: null } },
      /account 42 is not reachable with this API key/,
    ],
    [
      'no APM match',
      'newrelic_get_apm_summary',
      { name: 'nothing' },
      search([]),
      /No APM application's name contains "nothing"/,
    ],
  ];
  for (const [name, tool, args, reply, pattern] of cases) {
    test(name, async () => {
      replyWith(us, [reply]);
      await fails(tool, args, pattern);
    });
  }

  test('argument problems are refused before any request', async () => {
    replyWith(us, []);
    await fails('newrelic_search_entities', {}, /Give at least one filter/);
    await fails('newrelic_get_apm_summary', {}, /Give guid or name/);
    await fails(
      'newrelic_run_nrql',
      { query: 'SELECT 1', accountId: 'abc' },
      /Invalid arguments for newrelic_run_nrql/,
    );
    // a longer NRQL timeout than the gateway's default wait for one request (15 s) could never be used
    await fails(
      'newrelic_run_nrql',
      { query: 'SELECT 1', timeoutSeconds: 13 },
      /Invalid arguments for newrelic_run_nrql: timeoutSeconds: .*<=12/,
    );
    await fails(
      'newrelic_search_entities',
      { domain: "APM' OR name = 'x" },
      /Invalid arguments for newrelic_search_entities/,
    );
    assert.equal(us.requests.length, 0);
  });
});

describe('newrelic: an answer later than the gateway waits for one request', () => {
  let slow: Upstream;
  let slowGw: Gateway;
  before(async () => {
    // New Relic never answers; the gateway waits 200 ms for one request (15 s by default).
    slow = await startUpstream(() => new Promise<UpstreamReply>(() => undefined));
    slowGw = await startPluginGateway(
      'newrelic',
      slow,
      { values: { apiKey: KEY }, config: { region: 'us', accountId: String(ACCOUNT) } },
      { policy: { http: { requestTimeoutMs: 200 } } },
    );
  });
  after(async () => {
    await slowGw?.close();
    await slow?.close();
  });

  test('a slow NRQL query says to narrow the window or lower timeoutSeconds, not a bare bridge code', async () => {
    const item = (await slowGw.execute('newrelic_run_nrql', {
      query: 'SELECT count(*) FROM Log SINCE 1 month ago',
    })) as unknown as Record<string, unknown>;
    assert.ok(!('result' in item), JSON.stringify(item));
    assert.equal(item['code'], 'GW_ERR_SANDBOX_HANDLER_THREW');
    assert.match(
      String(item['error']),
      /took longer than the gateway allows for one request while trying to run the NRQL query \(GW_ERR_BRIDGE_TIMEOUT\): .*narrow its time window.*lower timeoutSeconds/,
    );
    assert.equal(slow.requests.length, 1);
  });

  test('any other tool says so too', async () => {
    const item = (await slowGw.execute('newrelic_list_accounts', {})) as unknown as Record<string, unknown>;
    assert.match(
      String(item['error']),
      /took longer than the gateway allows for one request while trying to list accounts \(GW_ERR_BRIDGE_TIMEOUT\)/,
    );
  });
});
