/**
 * @module plugins/slack/src/scheduled
 * Scheduled messages: scheduling one, listing those not yet sent, and cancelling one.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { compact, nextCursor, read, write } from './api.js';
import { channelId, toTs } from './args.js';
import { channel, cursor, limit, text, ts } from './schema.js';

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

export const scheduleMessage = defineTool({
  description:
    'Schedule a Slack message to be sent later (up to 120 days ahead), optionally inside a thread. Returns the scheduled_message_id (used by slack_delete_scheduled_message).',
  input: z.object({
    channel,
    text,
    post_at: z
      .string()
      .min(1)
      .max(40)
      .describe('When to send: an ISO 8601 date-time with a time zone (e.g. 2025-01-31T09:00:00Z) or Unix seconds.'),
    thread_ts: ts('Optional: ts of a parent message, to send in its thread.').optional(),
  }),
  annotations: changes('Schedule message'),
  handler: async (ctx, args) => {
    const postAt = Number(toTs(args.post_at, 'post_at'));
    const form = {
      channel: await channelId(ctx, args.channel),
      text: args.text,
      post_at: Math.floor(postAt),
      thread_ts: args.thread_ts,
    };
    const d = await write<{ scheduled_message_id: string; channel: string; post_at: number }>(
      ctx,
      'chat.scheduleMessage',
      form,
    );
    return {
      scheduled_message_id: d.scheduled_message_id,
      channel: d.channel,
      post_at: d.post_at,
      post_at_iso: iso(d.post_at),
    };
  },
});

export const listScheduledMessages = defineTool({
  description:
    'List the Slack messages you have scheduled but not yet sent (ID, channel, send time, text), optionally for one channel. Pages with `next`.',
  input: z.object({ channel: channel.optional(), limit: limit(1000, 100, 'scheduled messages'), cursor }),
  annotations: reads('List scheduled messages'),
  handler: async (ctx, args) => {
    type Scheduled = { id?: string; channel_id?: string; post_at?: number; text?: string };
    const d = await read<{ scheduled_messages?: Scheduled[] }>(ctx, 'chat.scheduledMessages.list', {
      channel: args.channel ? await channelId(ctx, args.channel) : undefined,
      limit: args.limit || 100,
      cursor: args.cursor,
    });
    const scheduled = (d.scheduled_messages || []).map((m) =>
      compact({
        id: m.id,
        channel: m.channel_id,
        post_at: m.post_at,
        post_at_iso: m.post_at ? iso(m.post_at) : undefined,
        text: m.text,
      }),
    );
    return { scheduled_messages: scheduled, next: nextCursor(d) };
  },
});

export const deleteScheduledMessage = defineTool({
  description: 'Cancel (unschedule) a scheduled Slack message before it is sent, e.g. one set for a later day.',
  input: z.object({
    channel,
    scheduled_message_id: z
      .string()
      .min(1)
      .max(100)
      .describe('ID from slack_schedule_message or slack_list_scheduled_messages (Q…).'),
  }),
  annotations: changes('Delete scheduled message', { destructive: true, idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    await write(ctx, 'chat.deleteScheduledMessage', { channel: id, scheduled_message_id: args.scheduled_message_id });
    return { deleted: true, channel: id, scheduled_message_id: args.scheduled_message_id };
  },
});
