/**
 * @module plugins/newrelic/src/notifications
 * Where alerts go, in New Relic's applied-intelligence model: a destination (an email list, a
 * webhook URL) holds where; a channel holds how one product's notifications are sent through a
 * destination (subject, payload template); a workflow (workflows.ts) sends the issues that match
 * its filter to channels. Destinations and channels can be created and listed. NerdGraph reports a
 * refusal of these mutations in the payload (`error`, a union of error types), not as a GraphQL
 * error, so it is read and turned into the Error the agent sees.
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
