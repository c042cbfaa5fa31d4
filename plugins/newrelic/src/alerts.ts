/**
 * @module plugins/newrelic/src/alerts
 * Alerting in an account: policies (list, create), NRQL conditions, and issues (list, acknowledge,
 * resolve).
 */
import { changes, defineTool, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { accountOf, HOUR_MS, inAccount, iso, nerdgraph } from './api.js';
import { cursor, defaultedAccount, guid, nameContains, sinceHours } from './fields.js';

type Page<K extends string, T> = { nextCursor?: string | null; totalCount?: number | null } & { [P in K]?: T[] | null };
/** `<area>.<search>` of an account. */
type Area<A extends string, S extends string, T> = { [P in A]?: { [Q in S]?: T | null } | null };

export const listAlertPolicies = defineTool({
  description:
    'List the alert policies of a New Relic account (id, name, incident preference), optionally only those whose name contains some text. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List alert policies'),
  input: z.object({ accountId: defaultedAccount, nameContains: nameContains('policies'), cursor }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const query = `query($accountId: Int!, $cursor: String, $criteria: AlertsPoliciesSearchCriteriaInput) { actor { account(id: $accountId) { alerts { policiesSearch(cursor: $cursor, searchCriteria: $criteria) { nextCursor totalCount policies { id name incidentPreference } } } } } }`;
    const criteria = args.nameContains ? { nameLike: args.nameContains } : {};
    type Policy = { id: string; name: string; incidentPreference: string };
    const pick = (a: Area<'alerts', 'policiesSearch', Page<'policies', Policy>>) => a.alerts?.policiesSearch;
    const r = await inAccount(
      ctx,
      accountId,
      'list alert policies',
      query,
      { cursor: args.cursor || null, criteria },
      pick,
    );
    return {
      accountId,
      policies: (r.policies || []).map((p) => ({ id: p.id, name: p.name, incidentPreference: p.incidentPreference })),
      total: r.totalCount ?? null,
      next: r.nextCursor || null,
    };
  },
});

export const createAlertPolicy = defineTool({
  description:
    'Create a New Relic alert policy (the container for alert conditions) and get its id. incidentPreference decides how incidents are grouped into issues: PER_POLICY (one issue per policy, the default), PER_CONDITION, or PER_CONDITION_AND_TARGET.',
  annotations: changes('Create alert policy'),
  input: z.object({
    accountId: defaultedAccount,
    name: z.string().min(1).max(128).describe('Policy name.'),
    incidentPreference: z
      .enum(['PER_POLICY', 'PER_CONDITION', 'PER_CONDITION_AND_TARGET'])
      .default('PER_POLICY')
      .describe('How incidents are grouped.'),
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const query = `mutation($accountId: Int!, $policy: AlertsPolicyInput!) { alertsPolicyCreate(accountId: $accountId, policy: $policy) { id name incidentPreference accountId } }`;
    const policy = { name: args.name, incidentPreference: args.incidentPreference || 'PER_POLICY' };
    type Created = { id: string; name: string; incidentPreference: string; accountId?: number | null };
    const data = await nerdgraph<{ alertsPolicyCreate?: Created | null }>(
      ctx,
      `create the alert policy "${args.name}"`,
      query,
      { accountId, policy },
    );
    const p = data.alertsPolicyCreate;
    if (!p) throw new Error('New Relic did not create the alert policy (empty answer).');
    return { id: p.id, name: p.name, incidentPreference: p.incidentPreference, accountId: p.accountId ?? accountId };
  },
});

type Term = {
  priority: string;
  operator: string;
  threshold: number;
  thresholdDuration?: number | null;
  thresholdOccurrences?: string | null;
};
type Condition = {
  id: string;
  name: string;
  enabled: boolean;
  policyId: string;
  type?: string | null;
  description?: string | null;
  runbookUrl?: string | null;
  nrql?: { query: string } | null;
  terms?: Term[] | null;
};

export const listAlertConditions = defineTool({
  description:
    'List NRQL alert conditions of a New Relic account — name, enabled, policy, the NRQL they watch and their thresholds — optionally for one policy or matching a name or query text. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List alert conditions'),
  input: z.object({
    accountId: defaultedAccount,
    policyId: z
      .string()
      .regex(/^[0-9]{1,20}$/)
      .optional()
      .describe('Only conditions of this policy.'),
    nameContains: nameContains('conditions'),
    queryContains: z.string().min(1).max(200).optional().describe('Only conditions whose NRQL contains this.'),
    cursor,
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const query = `query($accountId: Int!, $cursor: String, $criteria: AlertsNrqlConditionsSearchCriteriaInput) { actor { account(id: $accountId) { alerts { nrqlConditionsSearch(cursor: $cursor, searchCriteria: $criteria) { nextCursor totalCount nrqlConditions { id name enabled policyId type description runbookUrl nrql { query } terms { priority operator threshold thresholdDuration thresholdOccurrences } } } } } } }`;
    const criteria: Record<string, string> = {};
    if (args.policyId) criteria.policyId = args.policyId;
    if (args.nameContains) criteria.nameLike = args.nameContains;
    if (args.queryContains) criteria.queryLike = args.queryContains;
    const pick = (a: Area<'alerts', 'nrqlConditionsSearch', Page<'nrqlConditions', Condition>>) =>
      a.alerts?.nrqlConditionsSearch;
    const r = await inAccount(
      ctx,
      accountId,
      'list alert conditions',
      query,
      { cursor: args.cursor || null, criteria },
      pick,
    );
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
  },
});

const ISSUE_FIELDS =
  'issueId title priority state createdAt activatedAt closedAt acknowledgedAt acknowledgedBy entityNames entityGuids conditionName policyName totalIncidents deepLinkUrl';

/** NerdGraph gives most issue fields as lists, sometimes as one value. */
type Many = string[] | string | null | undefined;
type Issue = {
  issueId: string;
  priority: string;
  state: string;
  totalIncidents?: number | null;
  acknowledgedBy?: string | null;
} & { [K in 'title' | 'entityNames' | 'entityGuids' | 'conditionName' | 'policyName' | 'deepLinkUrl']?: Many } & {
  [K in 'createdAt' | 'activatedAt' | 'closedAt' | 'acknowledgedAt']?: unknown;
};
const list = (a: Many): string[] => (Array.isArray(a) ? a : a ? [a] : []);

export const listIssues = defineTool({
  description:
    'List New Relic alert issues and incidents (what is firing or open right now, or fired earlier): by default the open ones (CREATED or ACTIVATED) of the last 24 hours, with title, priority, state, entities, condition, policy and times. Filter by state, priority or entity. Use the issueId with newrelic_acknowledge_issue or newrelic_resolve_issue. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List alert issues'),
  input: z.object({
    accountId: defaultedAccount,
    states: z
      .array(z.enum(['CREATED', 'ACTIVATED', 'DEACTIVATED', 'CLOSED']))
      .min(1)
      .max(4)
      .default(['CREATED', 'ACTIVATED'])
      .describe('Issue states to include.'),
    priorities: z
      .array(z.enum(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW']))
      .max(4)
      .optional()
      .describe('Only these priorities.'),
    entityGuids: z.array(guid).max(25).optional().describe('Only issues about these entities.'),
    sinceHours,
    cursor,
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const filter: Record<string, string[]> = {
      states: args.states && args.states.length ? args.states : ['CREATED', 'ACTIVATED'],
    };
    if (args.priorities && args.priorities.length) filter.priority = args.priorities;
    if (args.entityGuids && args.entityGuids.length) filter.entityGuids = args.entityGuids;
    const end = Date.now();
    const timeWindow = { startTime: end - args.sinceHours * HOUR_MS, endTime: end };
    const query = `query($accountId: Int!, $cursor: String, $filter: AiIssuesFilterIssues, $timeWindow: TimeWindowInput) { actor { account(id: $accountId) { aiIssues { issues(cursor: $cursor, filter: $filter, timeWindow: $timeWindow) { nextCursor issues { ${ISSUE_FIELDS} } } } } } }`;
    const pick = (a: Area<'aiIssues', 'issues', Page<'issues', Issue>>) => a.aiIssues?.issues;
    const r = await inAccount(
      ctx,
      accountId,
      'list alert issues',
      query,
      { cursor: args.cursor || null, filter, timeWindow },
      pick,
    );
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
  },
});

const issueInput = z.object({
  accountId: z.int().min(1).optional().describe("Account of the issue; defaults to the connection's default account."),
  issueId: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,100}$/)
    .describe('Issue id (from newrelic_list_issues).'),
});

/** Acknowledges or resolves an issue; a refusal comes back in the payload's `error`. */
async function issueAction(ctx: PluginContext, args: z.output<typeof issueInput>, mutation: string, verb: string) {
  const accountId = accountOf(ctx, args);
  const query = `mutation($accountId: Int!, $issueId: ID!) { ${mutation}(accountId: $accountId, issueId: $issueId) { error result { accountId action issueId } } }`;
  type Done = {
    error?: string | null;
    result?: { accountId?: number | null; action?: string | null; issueId?: string | null } | null;
  };
  const data = await nerdgraph<Record<string, Done | null | undefined>>(ctx, `${verb} issue ${args.issueId}`, query, {
    accountId,
    issueId: args.issueId,
  });
  const r = data[mutation];
  if (!r || r.error)
    throw new Error(`New Relic could not ${verb} issue ${args.issueId}: ${(r && r.error) || 'no result'}.`);
  return {
    issueId: r.result?.issueId ?? args.issueId,
    accountId: r.result?.accountId ?? accountId,
    action: r.result?.action ?? null,
  };
}

export const acknowledgeIssue = defineTool({
  description:
    'Acknowledge an open New Relic alert issue (tells the team someone is on it; notifications record who acknowledged it).',
  annotations: changes('Acknowledge issue', { idempotent: true }),
  input: issueInput,
  handler: (ctx, args) => issueAction(ctx, args, 'aiIssuesAckIssue', 'acknowledge'),
});

export const resolveIssue = defineTool({
  description: 'Resolve (close) a New Relic alert issue by hand, e.g. once the problem is fixed.',
  annotations: changes('Resolve issue', { destructive: true, idempotent: true }),
  input: issueInput,
  handler: (ctx, args) => issueAction(ctx, args, 'aiIssuesResolveIssue', 'resolve'),
});
