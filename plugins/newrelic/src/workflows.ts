/**
 * @module plugins/newrelic/src/workflows
 * Alert workflows: a workflow sends the issues that match its filter (those of some alert policies,
 * and any predicates on issue attributes) to notification channels (notifications.ts). Created and
 * listed; NerdGraph reports a refused creation in the payload's `errors`, which becomes the Error the
 * agent sees.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { accountOf, inAccount, nerdgraph } from './api.js';
import { cursor, defaultedAccount, nameContains } from './fields.js';

const OPERATORS = [
  'EQUAL',
  'DOES_NOT_EQUAL',
  'EXACTLY_MATCHES',
  'DOES_NOT_EXACTLY_MATCH',
  'CONTAINS',
  'DOES_NOT_CONTAIN',
  'STARTS_WITH',
  'ENDS_WITH',
  'IS',
  'IS_NOT',
  'GREATER_THAN',
  'GREATER_OR_EQUAL',
  'LESS_THAN',
  'LESS_OR_EQUAL',
] as const;

type Predicate = { attribute: string; operator: string; values: string[] };
type Workflow = {
  id: string;
  name: string;
  workflowEnabled?: boolean | null;
  mutingRulesHandling?: string | null;
  destinationConfigurations?: Array<{
    channelId: string;
    name?: string | null;
    type?: string | null;
    notificationTriggers?: string[] | null;
  }> | null;
  issuesFilter?: { predicates?: Predicate[] | null } | null;
};
const WORKFLOW_FIELDS =
  'id name workflowEnabled mutingRulesHandling destinationConfigurations { channelId name type notificationTriggers } issuesFilter { predicates { attribute operator values } }';
const slimWorkflow = (w: Workflow) => ({
  id: w.id,
  name: w.name,
  enabled: w.workflowEnabled ?? null,
  mutingRulesHandling: w.mutingRulesHandling ?? null,
  channels: (w.destinationConfigurations || []).map((d) => ({
    channelId: d.channelId,
    name: d.name ?? null,
    type: d.type ?? null,
    triggers: d.notificationTriggers ?? [],
  })),
  filter: (w.issuesFilter?.predicates || []).map((p) => ({
    attribute: p.attribute,
    operator: p.operator,
    values: p.values,
  })),
});

/** The issues filter: the given policies (labels.policyIds), then any other predicates. */
function issuesFilter(name: string, policyIds: string[] | undefined, more: Predicate[]) {
  const predicates: Predicate[] = [];
  if (policyIds?.length)
    predicates.push({ attribute: 'labels.policyIds', operator: 'EXACTLY_MATCHES', values: policyIds });
  predicates.push(...more);
  return { name, type: 'FILTER', predicates };
}

export const createWorkflow = defineTool({
  description:
    'Create a New Relic workflow: it sends the alert issues that match its filter to notification channels (newrelic_create_notification_channel or newrelic_list_notification_channels). Filter by alert policy ids (the usual case: "notify these channels about policy 123") and/or by predicates on issue attributes (e.g. priority EQUAL CRITICAL, entitiesData.names CONTAINS checkout). Returns the workflow id and what it matches.',
  annotations: changes('Create workflow'),
  input: z.object({
    accountId: defaultedAccount,
    name: z.string().min(1).max(200).describe('Workflow name.'),
    channelIds: z
      .array(z.string().regex(/^[A-Za-z0-9-]{1,100}$/))
      .min(1)
      .max(10)
      .describe('The channels to notify.'),
    policyIds: z
      .array(z.string().regex(/^[0-9]{1,20}$/))
      .max(20)
      .optional()
      .describe('Only issues of these alert policies.'),
    predicates: z
      .array(
        z.strictObject({
          attribute: z.string().min(1).max(200).describe('Issue attribute, e.g. priority, accumulations.tag.team.'),
          operator: z.enum(OPERATORS),
          values: z.array(z.string().max(500)).min(1).max(50),
        }),
      )
      .max(10)
      .default([])
      .describe('More conditions an issue must meet.'),
    notificationTriggers: z
      .array(z.enum(['ACTIVATED', 'ACKNOWLEDGED', 'PRIORITY_CHANGED', 'CLOSED', 'OTHER_UPDATES', 'INVESTIGATING']))
      .min(1)
      .max(6)
      .default(['ACTIVATED', 'ACKNOWLEDGED', 'CLOSED'])
      .describe('Which issue events notify.'),
    enabled: z.boolean().default(true),
    mutingRulesHandling: z
      .enum(['NOTIFY_ALL_ISSUES', 'DONT_NOTIFY_FULLY_MUTED_ISSUES', 'DONT_NOTIFY_FULLY_OR_PARTIALLY_MUTED_ISSUES'])
      .default('NOTIFY_ALL_ISSUES'),
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const createWorkflowData = {
      name: args.name,
      workflowEnabled: args.enabled,
      destinationsEnabled: true,
      enrichmentsEnabled: false,
      mutingRulesHandling: args.mutingRulesHandling,
      issuesFilter: issuesFilter(args.name, args.policyIds, args.predicates),
      destinationConfigurations: args.channelIds.map((channelId) => ({
        channelId,
        notificationTriggers: args.notificationTriggers,
      })),
    };
    const query = `mutation($accountId: Int!, $createWorkflowData: AiWorkflowsCreateWorkflowInput!) { aiWorkflowsCreateWorkflow(accountId: $accountId, createWorkflowData: $createWorkflowData) { workflow { ${WORKFLOW_FIELDS} } errors { description type } } }`;
    const action = `create the workflow "${args.name}"`;
    type Answer = {
      workflow?: Workflow | null;
      errors?: Array<{ description?: string | null; type?: string | null }> | null;
    };
    const data = await nerdgraph<{ aiWorkflowsCreateWorkflow?: Answer | null }>(ctx, action, query, {
      accountId,
      createWorkflowData,
    });
    const r = data.aiWorkflowsCreateWorkflow;
    const why = (r?.errors || []).map((e) => [e.type, e.description].filter(Boolean).join(': ')).join('; ');
    if (why || !r?.workflow) throw new Error(`New Relic could not ${action}: ${why || 'no workflow in the answer'}.`);
    return { accountId, ...slimWorkflow(r.workflow) };
  },
});

export const listWorkflows = defineTool({
  description:
    'List the alert workflows of a New Relic account: id, name, whether enabled, the channels each notifies (with the issue events that trigger it) and its issue filter. Optionally by name or by a channel it uses. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List workflows'),
  input: z.object({
    accountId: defaultedAccount,
    nameContains: nameContains('workflows'),
    channelId: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/)
      .optional()
      .describe('Only workflows that notify this channel.'),
    cursor,
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const query = `query($accountId: Int!, $cursor: String, $filters: AiWorkflowsFilters) { actor { account(id: $accountId) { aiWorkflows { workflows(cursor: $cursor, filters: $filters) { entities { ${WORKFLOW_FIELDS} } nextCursor totalCount } } } } }`;
    const filters = { nameLike: args.nameContains, channelId: args.channelId };
    type Listed = { entities?: Workflow[] | null; nextCursor?: string | null; totalCount?: number | null };
    const r = await inAccount(
      ctx,
      accountId,
      'list workflows',
      query,
      { cursor: args.cursor || null, filters },
      (a: { aiWorkflows?: { workflows?: Listed | null } | null }) => a.aiWorkflows?.workflows,
    );
    return {
      accountId,
      workflows: (r.entities || []).map(slimWorkflow),
      total: r.totalCount ?? null,
      next: r.nextCursor || null,
    };
  },
});
