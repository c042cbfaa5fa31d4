/**
 * @module plugins/newrelic/src/conditions
 * Creating a static NRQL alert condition in a policy: the NRQL it watches, a critical threshold
 * (and optionally a warning one), and how the signal is aggregated. Every value travels as a
 * GraphQL variable (AlertsNrqlConditionStaticInput).
 */
import { changes, defineTool, z } from 'workbench/plugin-sdk';
import { accountOf, nerdgraph } from './api.js';
import { defaultedAccount } from './fields.js';

const OPERATORS = ['ABOVE', 'ABOVE_OR_EQUALS', 'BELOW', 'BELOW_OR_EQUALS', 'EQUALS', 'NOT_EQUALS'] as const;

const threshold = (level: string) =>
  z
    .strictObject({
      operator: z.enum(OPERATORS).describe('How the value compares with the threshold.'),
      threshold: z.number().describe('The threshold value.'),
      durationSeconds: z
        .int()
        .min(60)
        .max(86400)
        .default(300)
        .describe('For how long (seconds, a multiple of the aggregation window) before it opens an incident.'),
      occurrences: z
        .enum(['ALL', 'AT_LEAST_ONCE'])
        .default('ALL')
        .describe('ALL: every value in that time breaches; AT_LEAST_ONCE: one does.'),
    })
    .describe(`The ${level} threshold.`);

type Term = { priority: string; operator: string; threshold: number; thresholdDuration?: number | null };
type Created = {
  id: string;
  name: string;
  enabled: boolean;
  policyId: string;
  nrql?: { query: string } | null;
  terms?: Array<Term & { thresholdOccurrences?: string | null }> | null;
  signal?: { aggregationWindow?: number | null; aggregationMethod?: string | null } | null;
  violationTimeLimitSeconds?: number | null;
};

const MUTATION = `mutation($accountId: Int!, $policyId: ID!, $condition: AlertsNrqlConditionStaticInput!) { alertsNrqlConditionStaticCreate(accountId: $accountId, policyId: $policyId, condition: $condition) { id name enabled policyId nrql { query } terms { priority operator threshold thresholdDuration thresholdOccurrences } signal { aggregationWindow aggregationMethod } violationTimeLimitSeconds } }`;

export const createStaticNrqlCondition = defineTool({
  description:
    'Create a static NRQL alert condition in a New Relic alert policy: it runs an NRQL query continuously and opens an incident when the value crosses a fixed threshold for a while (e.g. error rate ABOVE 5 for 300 seconds). Give the policy id (newrelic_list_alert_policies or newrelic_create_alert_policy), the NRQL (SELECT … FROM … WHERE …, without SINCE/UNTIL), a critical threshold and optionally a warning one. Returns the condition id, thresholds and signal settings.',
  annotations: changes('Create static NRQL alert condition'),
  input: z.object({
    accountId: defaultedAccount,
    policyId: z
      .string()
      .regex(/^[0-9]{1,20}$/)
      .describe('The alert policy to add it to.'),
    name: z.string().min(1).max(128).describe('Condition name.'),
    nrql: z
      .string()
      .min(1)
      .max(4000)
      .describe('The NRQL query, e.g. "SELECT percentage(count(*), WHERE error IS true) FROM Transaction".'),
    critical: threshold('critical'),
    warning: threshold('warning').optional(),
    enabled: z.boolean().default(true),
    description: z.string().max(4000).optional(),
    runbookUrl: z
      .string()
      .regex(/^https?:\/\/\S+$/)
      .max(2000)
      .optional()
      .describe('Link to a runbook shown with incidents.'),
    aggregationWindowSeconds: z.int().min(30).max(21600).default(60).describe('Seconds of data in each value.'),
    aggregationMethod: z
      .enum(['EVENT_FLOW', 'EVENT_TIMER', 'CADENCE'])
      .default('EVENT_FLOW')
      .describe('When a window is evaluated: EVENT_FLOW (steady data), EVENT_TIMER (sparse data) or CADENCE.'),
    aggregationDelaySeconds: z
      .int()
      .min(0)
      .max(1200)
      .optional()
      .describe('EVENT_FLOW and CADENCE: how long to wait for late data.'),
    violationTimeLimitSeconds: z
      .int()
      .min(300)
      .max(2592000)
      .optional()
      .describe("Close an open incident after this long; New Relic's default when left out."),
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const term = (priority: string, t: z.output<ReturnType<typeof threshold>>) => ({
      priority,
      operator: t.operator,
      threshold: t.threshold,
      thresholdDuration: t.durationSeconds,
      thresholdOccurrences: t.occurrences,
    });
    const condition = {
      name: args.name,
      enabled: args.enabled,
      description: args.description,
      runbookUrl: args.runbookUrl,
      nrql: { query: args.nrql },
      terms: [term('CRITICAL', args.critical), ...(args.warning ? [term('WARNING', args.warning)] : [])],
      signal: {
        aggregationWindow: args.aggregationWindowSeconds,
        aggregationMethod: args.aggregationMethod,
        aggregationDelay: args.aggregationDelaySeconds,
      },
      violationTimeLimitSeconds: args.violationTimeLimitSeconds,
    };
    const data = await nerdgraph<{ alertsNrqlConditionStaticCreate?: Created | null }>(
      ctx,
      `create the NRQL condition "${args.name}" in policy ${args.policyId}`,
      MUTATION,
      { accountId, policyId: args.policyId, condition },
    );
    const c = data.alertsNrqlConditionStaticCreate;
    if (!c) throw new Error('New Relic did not create the NRQL condition (empty answer).');
    return {
      id: c.id,
      name: c.name,
      enabled: c.enabled,
      policyId: c.policyId,
      accountId,
      nrql: c.nrql ? c.nrql.query : null,
      terms: (c.terms || []).map((t) => ({
        priority: t.priority,
        operator: t.operator,
        threshold: t.threshold,
        durationSeconds: t.thresholdDuration ?? null,
        occurrences: t.thresholdOccurrences ?? null,
      })),
      aggregationWindowSeconds: c.signal?.aggregationWindow ?? null,
      aggregationMethod: c.signal?.aggregationMethod ?? null,
      violationTimeLimitSeconds: c.violationTimeLimitSeconds ?? null,
    };
  },
});
