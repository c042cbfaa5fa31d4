/**
 * @module plugins/clevertap/src/campaigns
 * Campaigns and messages: the campaigns (targets) scheduled in a date range, one campaign's
 * delivery and engagement report, and the report of the messages sent per channel.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { call, projectFor, shown } from './api.js';
import { dateRange, dayNumber, project, rangeOf } from './args.js';
import { withoutStatus } from './query.js';

export const listCampaigns = defineTool({
  description:
    'List the campaigns of a CleverTap project scheduled between two dates: each with its id, name, when it was scheduled and its status. The id goes to clevertap_get_campaign_report.',
  input: z.object({ project, ...dateRange }),
  annotations: reads('List campaigns'),
  handler: async (ctx, a) => {
    const p = projectFor(ctx, a.project);
    const { data } = await call(ctx, p, 'POST', '/targets/list.json', 'list the campaigns', { body: rangeOf(a) });
    const targets = Array.isArray(data['targets']) ? (data['targets'] as Array<Record<string, unknown>>) : [];
    return {
      project: shown(p),
      campaigns: targets.map((t) => ({
        id: t['id'] ?? null,
        name: t['name'] ?? null,
        scheduledOn: t['scheduled_on'] ?? null,
        status: t['status'] ?? null,
      })),
      count: targets.length,
    };
  },
});

export const getCampaignReport = defineTool({
  description:
    'The delivery and engagement report of one CleverTap campaign (by its id from clevertap_list_campaigns): how many messages were sent, delivered, viewed and clicked, and the conversions, as CleverTap reports them.',
  input: z.object({ project, campaignId: z.int().min(1).describe('The campaign id.') }),
  annotations: reads('Campaign report'),
  handler: async (ctx, a) => {
    const p = projectFor(ctx, a.project);
    const { data } = await call(ctx, p, 'POST', '/targets/result.json', `read the report of campaign ${a.campaignId}`, {
      body: { id: a.campaignId },
    });
    return { project: shown(p), campaignId: a.campaignId, report: data['result'] ?? withoutStatus(data) };
  },
});

const CHANNELS = [
  'push',
  'email',
  'sms',
  'browser',
  'audiences',
  'inapp',
  'webhooks',
  'web_pop_up',
  'web_exit_intent',
  'web_native_display',
  'web_inbox',
  'whatsapp',
] as const;

export const getMessageReport = defineTool({
  description:
    'The report of the messages a CleverTap project sent between two dates (push, email, SMS, in-app, web, WhatsApp …): per message, how many were sent, delivered, viewed and clicked; filtered by channel, delivery type, status, message type or label, aggregated or day by day.',
  input: z.object({
    project,
    ...dateRange,
    channels: z.array(z.enum(CHANNELS)).max(12).optional().describe('Only these channels.'),
    delivery: z
      .array(z.enum(['one_time', 'inaction', 'action', 'recurring', 'property_time', 'api']))
      .max(6)
      .optional()
      .describe('Only these delivery types.'),
    status: z
      .array(z.enum(['scheduled', 'running', 'stopped', 'completed']))
      .max(4)
      .optional()
      .describe('Only messages with these statuses.'),
    messageType: z
      .array(z.enum(['single', 'ab', 'message_on_user_property']))
      .max(3)
      .optional()
      .describe('Only these message types.'),
    labels: z.array(z.string().min(1).max(200)).max(20).optional().describe('Only messages with these labels.'),
    daily: z.boolean().default(false).describe('Day by day instead of one aggregate per message.'),
  }),
  annotations: reads('Message report'),
  handler: async (ctx, a) => {
    const p = projectFor(ctx, a.project);
    rangeOf(a);
    // this endpoint takes the dates as strings
    const body = {
      from: String(dayNumber(a.from, 'from')),
      to: String(dayNumber(a.to, 'to')),
      ...(a.channels ? { channel: a.channels } : {}),
      ...(a.delivery ? { delivery: a.delivery } : {}),
      ...(a.status ? { status: a.status } : {}),
      ...(a.messageType ? { message_type: a.messageType } : {}),
      ...(a.labels ? { label: a.labels } : {}),
      daily: a.daily,
    };
    const { data } = await call(ctx, p, 'POST', '/message/report.json', 'read the message report', { body });
    return { project: shown(p), from: a.from, to: a.to, report: withoutStatus(data) };
  },
});
