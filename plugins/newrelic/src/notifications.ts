/**
 * @module plugins/newrelic/src/notifications
 * Where alerts go, in New Relic's applied-intelligence model: a destination (an email list, a
 * webhook URL) holds where; a channel holds how one product's notifications are sent through a
 * destination (subject, payload template); a workflow sends the issues that match its filter (for
 * instance those of some alert policies) to channels. Each can be created and listed. NerdGraph
 * reports a refusal of these mutations in the payload (`error`/`errors`), not as a GraphQL error,
 * so each is read and turned into the Error the agent sees.
 */
import { changes, clip, defineTool, reads, z } from 'workbench/plugin-sdk';
import { accountOf, inAccount, iso, nerdgraph } from './api.js';
import { cursor, defaultedAccount, nameContains } from './fields.js';

type Property = { key: string; value?: string | null };
const slimProperties = (list: Property[] | null | undefined) =>
  (list || []).map((p) => ({ key: p.key, value: clip(String(p.value ?? ''), 300) }));

/** The error union aiNotifications mutations answer with, every member's words selected. */
const NOTIFICATION_ERROR = `error { ... on AiNotificationsResponseError { description details type } ... on AiNotificationsDataValidationError { details fields { field message } } ... on AiNotificationsConstraintsError { constraints { dependencies name } } ... on AiNotificationsSuggestionError { description details type } }`;

type NotificationError = {
  description?: string | null;
  details?: string | null;
  type?: string | null;
  fields?: Array<{ field?: string | null; message?: string | null }> | null;
  constraints?: Array<{ name?: string | null; dependencies?: string[] | null }> | null;
} | null;

/** A payload error in words, or '' when there is none. */
function notificationError(e: NotificationError | undefined): string {
  if (!e) return '';
  const parts = [e.type, e.description, e.details].filter((x): x is string => typeof x === 'string' && x !== '');
  for (const f of e.fields || []) parts.push(`${f.field ?? '?'}: ${f.message ?? 'invalid'}`);
  for (const c of e.constraints || [])
    parts.push(`constraint ${c.name ?? '?'}${c.dependencies?.length ? ` (needs ${c.dependencies.join(', ')})` : ''}`);
  return parts.join('; ');
}

const property = z.strictObject({
  key: z.string().min(1).max(100),
  value: z.string().max(20000),
});

// ---------------------------------------------------------------- destinations ----

type Destination = {
  id: string;
  name: string;
  type: string;
  active?: boolean | null;
  status?: string | null;
  createdAt?: unknown;
  properties?: Property[] | null;
};
const DESTINATION_FIELDS = 'id name type active status createdAt properties { key value }';
const slimDestination = (d: Destination) => ({
  id: d.id,
  name: d.name,
  type: d.type,
  active: d.active ?? null,
  status: d.status ?? null,
  createdAt: iso(d.createdAt),
  properties: slimProperties(d.properties),
});

export const createNotificationDestination = defineTool({
  description:
    'Create a New Relic notification destination: where alert notifications can be sent — an EMAIL destination (a list of addresses) or a WEBHOOK destination (an https URL New Relic will POST to). Destinations that need a sign-in to another service (Slack, Jira, ServiceNow, …) are set up in the New Relic UI. Returns the destination id.',
  annotations: changes('Create notification destination'),
  input: z.object({
    accountId: defaultedAccount,
    name: z.string().min(1).max(200).describe('Destination name.'),
    type: z.enum(['EMAIL', 'WEBHOOK']),
    emails: z
      .array(z.string().regex(/^[^\s@,]{1,200}@[^\s@,]{1,200}$/))
      .min(1)
      .max(50)
      .optional()
      .describe('EMAIL: the addresses.'),
    url: z
      .string()
      .regex(/^https:\/\/\S+$/)
      .max(2000)
      .optional()
      .describe('WEBHOOK: the https URL to POST to.'),
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    if (args.type === 'EMAIL' && !args.emails) throw new Error('An EMAIL destination needs `emails`.');
    if (args.type === 'WEBHOOK' && !args.url) throw new Error('A WEBHOOK destination needs `url`.');
    const properties =
      args.type === 'EMAIL'
        ? [{ key: 'email', value: (args.emails ?? []).join(',') }]
        : [{ key: 'url', value: args.url }];
    const query = `mutation($accountId: Int!, $destination: AiNotificationsDestinationInput!) { aiNotificationsCreateDestination(accountId: $accountId, destination: $destination) { destination { ${DESTINATION_FIELDS} } ${NOTIFICATION_ERROR} } }`;
    const action = `create the notification destination "${args.name}"`;
    type Answer = { destination?: Destination | null; error?: NotificationError };
    const data = await nerdgraph<{ aiNotificationsCreateDestination?: Answer | null }>(ctx, action, query, {
      accountId,
      destination: { name: args.name, type: args.type, properties },
    });
    const r = data.aiNotificationsCreateDestination;
    const why = notificationError(r?.error);
    if (why || !r?.destination)
      throw new Error(`New Relic could not ${action}: ${why || 'no destination in the answer'}.`);
    return { accountId, ...slimDestination(r.destination) };
  },
});

export const listNotificationDestinations = defineTool({
  description:
    'List the notification destinations of a New Relic account (email lists, webhooks, Slack, …): id, name, type, whether active, status and settings. Use a destination id with newrelic_create_notification_channel. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List notification destinations'),
  input: z.object({
    accountId: defaultedAccount,
    nameContains: nameContains('destinations'),
    type: z
      .string()
      .regex(/^[A-Z_]{2,40}$/)
      .optional()
      .describe('Only this type: EMAIL, WEBHOOK, SLACK, …'),
    cursor,
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const query = `query($accountId: Int!, $cursor: String, $filters: AiNotificationsDestinationFilter) { actor { account(id: $accountId) { aiNotifications { destinations(cursor: $cursor, filters: $filters) { entities { ${DESTINATION_FIELDS} } nextCursor totalCount error { description details type } } } } } }`;
    const filters = { name: args.nameContains, type: args.type };
    type Listed = {
      entities?: Destination[] | null;
      nextCursor?: string | null;
      totalCount?: number | null;
      error?: NotificationError;
    };
    const r = await inAccount(
      ctx,
      accountId,
      'list notification destinations',
      query,
      { cursor: args.cursor || null, filters },
      (a: { aiNotifications?: { destinations?: Listed | null } | null }) => a.aiNotifications?.destinations,
    );
    const why = notificationError(r.error);
    if (why) throw new Error(`New Relic could not list notification destinations: ${why}.`);
    return {
      accountId,
      destinations: (r.entities || []).map(slimDestination),
      total: r.totalCount ?? null,
      next: r.nextCursor || null,
    };
  },
});

// ---------------------------------------------------------------- channels ----

type Channel = {
  id: string;
  name: string;
  type: string;
  destinationId?: string | null;
  product?: string | null;
  active?: boolean | null;
  status?: string | null;
  properties?: Property[] | null;
};
const CHANNEL_FIELDS = 'id name type destinationId product active status properties { key value }';
const slimChannel = (c: Channel) => ({
  id: c.id,
  name: c.name,
  type: c.type,
  destinationId: c.destinationId ?? null,
  product: c.product ?? null,
  active: c.active ?? null,
  status: c.status ?? null,
  properties: slimProperties(c.properties),
});

export const createNotificationChannel = defineTool({
  description:
    "Create a New Relic notification channel: how one product's notifications are sent through a destination (newrelic_list_notification_destinations), with the channel's settings as properties — EMAIL: optional `subject`; WEBHOOK: `payload`, the JSON template New Relic fills in (e.g. {\"issue\": {{ json issueTitle }}}); SLACK: `channelId`. The type must match the destination's. product IINT is for alert workflows. Returns the channel id, for newrelic_create_workflow.",
  annotations: changes('Create notification channel'),
  input: z.object({
    accountId: defaultedAccount,
    name: z.string().min(1).max(200).describe('Channel name.'),
    destinationId: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/)
      .describe('The destination to send through.'),
    // a pattern rather than an enum: New Relic has more channel types than are worth naming here
    type: z
      .string()
      .regex(/^[A-Z_]{2,40}$/)
      .describe("The channel type, the destination's: EMAIL, WEBHOOK, SLACK, MICROSOFT_TEAMS, JIRA_NEXTGEN, …"),
    product: z
      .enum(['IINT', 'ALERTS', 'APM', 'ERROR_TRACKING', 'CHANGE_TRACKING'])
      .default('IINT')
      .describe('The product whose notifications it sends; IINT (applied intelligence) for workflows.'),
    properties: z.array(property).max(30).default([]).describe('The channel settings, as key/value pairs.'),
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const query = `mutation($accountId: Int!, $channel: AiNotificationsChannelInput!) { aiNotificationsCreateChannel(accountId: $accountId, channel: $channel) { channel { ${CHANNEL_FIELDS} } ${NOTIFICATION_ERROR} } }`;
    const action = `create the notification channel "${args.name}"`;
    type Answer = { channel?: Channel | null; error?: NotificationError };
    const channel = {
      name: args.name,
      type: args.type,
      destinationId: args.destinationId,
      product: args.product,
      properties: args.properties,
    };
    const data = await nerdgraph<{ aiNotificationsCreateChannel?: Answer | null }>(ctx, action, query, {
      accountId,
      channel,
    });
    const r = data.aiNotificationsCreateChannel;
    const why = notificationError(r?.error);
    if (why || !r?.channel) throw new Error(`New Relic could not ${action}: ${why || 'no channel in the answer'}.`);
    return { accountId, ...slimChannel(r.channel) };
  },
});

export const listNotificationChannels = defineTool({
  description:
    'List the notification channels of a New Relic account: id, name, type, destination, product, whether active, status and settings; optionally by name, destination or type. When `next` is not null, pass it as `cursor` for more.',
  annotations: reads('List notification channels'),
  input: z.object({
    accountId: defaultedAccount,
    nameContains: nameContains('channels'),
    destinationId: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/)
      .optional()
      .describe('Only channels of this destination.'),
    type: z
      .string()
      .regex(/^[A-Z_]{2,40}$/)
      .optional()
      .describe('Only this type: EMAIL, WEBHOOK, SLACK, …'),
    cursor,
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const query = `query($accountId: Int!, $cursor: String, $filters: AiNotificationsChannelFilter) { actor { account(id: $accountId) { aiNotifications { channels(cursor: $cursor, filters: $filters) { entities { ${CHANNEL_FIELDS} } nextCursor totalCount error { description details type } } } } } }`;
    const filters = { name: args.nameContains, destinationId: args.destinationId, type: args.type };
    type Listed = {
      entities?: Channel[] | null;
      nextCursor?: string | null;
      totalCount?: number | null;
      error?: NotificationError;
    };
    const r = await inAccount(
      ctx,
      accountId,
      'list notification channels',
      query,
      { cursor: args.cursor || null, filters },
      (a: { aiNotifications?: { channels?: Listed | null } | null }) => a.aiNotifications?.channels,
    );
    const why = notificationError(r.error);
    if (why) throw new Error(`New Relic could not list notification channels: ${why}.`);
    return {
      accountId,
      channels: (r.entities || []).map(slimChannel),
      total: r.totalCount ?? null,
      next: r.nextCursor || null,
    };
  },
});

// ---------------------------------------------------------------- workflows ----

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
