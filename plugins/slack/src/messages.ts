/**
 * @module plugins/slack/src/messages
 * Messages: reading a channel's history, a thread or one message, searching, and posting, replying,
 * editing and deleting as the connected user.
 */
import { changes, defineTool, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { compact, MEANINGS, nextCursor, read, SlackError, write } from './api.js';
import { channelId, nextPage, pageArg, parsePermalink, toTs } from './args.js';
import { blocks, channel, cursor, limit, text, time, ts } from './schema.js';
import { slimMessage, type RawMessage } from './shape.js';

type Messages = { messages?: RawMessage[] };
/** What chat.postMessage and chat.update answer. */
type Posted = { channel?: string; ts?: string; text?: string; message?: RawMessage };

export const getChannelHistory = defineTool({
  description:
    'Read recent messages of a Slack channel or DM, newest first: ts, author user ID, text, thread info (thread_ts, reply_count), reactions and files. Optionally bounded by oldest/latest. Thread replies are not included: read them with slack_get_thread_replies. Pages with `next`.',
  input: z.object({
    channel,
    limit: limit(200, 50, 'messages'),
    oldest: time('Only messages after'),
    latest: time('Only messages before'),
    cursor,
  }),
  annotations: reads('Get channel history'),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const d = await read<Messages>(ctx, 'conversations.history', {
      channel: id,
      limit: args.limit || 50,
      cursor: args.cursor,
      oldest: toTs(args.oldest, 'oldest'),
      latest: toTs(args.latest, 'latest'),
      inclusive: args.oldest || args.latest ? true : undefined,
    });
    return { channel: id, messages: (d.messages || []).map(slimMessage), next: nextCursor(d) };
  },
});

export const getThreadReplies = defineTool({
  description: 'Read a Slack thread: the parent message followed by its replies, oldest first. Pages with `next`.',
  input: z.object({
    channel,
    thread_ts: ts("ts of the thread's parent message."),
    limit: limit(200, 50, 'messages'),
    cursor,
  }),
  annotations: reads('Get thread replies'),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const d = await read<Messages>(ctx, 'conversations.replies', {
      channel: id,
      ts: args.thread_ts,
      limit: args.limit || 50,
      cursor: args.cursor,
    });
    return {
      channel: id,
      thread_ts: args.thread_ts,
      messages: (d.messages || []).map(slimMessage),
      next: nextCursor(d),
    };
  },
});

/** One message by channel and ts: from the history, or from its thread when it is a reply. */
async function findMessage(
  ctx: PluginContext,
  id: string,
  ts: string,
  threadTs: string | undefined,
): Promise<RawMessage | undefined> {
  const window = { channel: id, latest: ts, oldest: ts, inclusive: true };
  // conversations.replies always answers with the thread's parent first, and the parent counts
  // toward limit: limit 2 leaves room for the reply itself. Its ts may be the parent's or any reply's.
  const fromThread = async (thread: string) =>
    (await read<Messages>(ctx, 'conversations.replies', { ...window, ts: thread, limit: 2 })).messages?.find(
      (m) => m.ts === ts,
    );
  if (threadTs && threadTs !== ts) return fromThread(threadTs);
  const msg = (await read<Messages>(ctx, 'conversations.history', { ...window, limit: 1 })).messages?.find(
    (m) => m.ts === ts,
  );
  if (msg || threadTs) return msg;
  // a reply (not also sent to the channel) is not in the history: look for it as one
  try {
    return await fromThread(ts);
  } catch (err) {
    if (err instanceof SlackError && (err.slackCode === 'thread_not_found' || err.slackCode === 'message_not_found'))
      return undefined;
    throw err;
  }
}

export const getMessage = defineTool({
  description:
    "Fetch one Slack message by its link (permalink) or by channel and ts: text, author, thread info, reactions. Works for a reply inside a thread too; passing its thread_ts (a reply's permalink carries it) saves a request.",
  input: z.object({
    permalink: z
      .string()
      .max(500)
      .optional()
      .describe('A message link such as https://acme.slack.com/archives/C0123456789/p1712345678000100.'),
    channel: channel.optional(),
    ts: ts("The message's ts.").optional(),
    thread_ts: ts(
      "The thread parent's ts, when the message is a reply (optional: without it a reply is found with one more request).",
    ).optional(),
  }),
  annotations: reads('Get message'),
  handler: async (ctx, args) => {
    const at = args.permalink ? parsePermalink(args.permalink) : args;
    if (!at.channel || !at.ts) throw new Error('Pass either permalink, or channel and ts.');
    const id = await channelId(ctx, at.channel);
    const msg = await findMessage(ctx, id, at.ts, at.thread_ts);
    if (!msg) throw new Error(`Slack error "message_not_found": ${MEANINGS['message_not_found']}.`);
    return { channel: id, message: slimMessage(msg) };
  },
});

export const postMessage = defineTool({
  description:
    "Send a message to a Slack channel, DM or group DM as the connected user. Pass thread_ts to answer inside a thread. To write to a person privately, get the conversation ID first with slack_open_dm. Returns the new message's ts.",
  input: z.object({
    channel,
    text,
    thread_ts: ts('Optional: ts of a parent message, to reply in its thread.').optional(),
    blocks,
    unfurl_links: z.boolean().default(true).describe('Show link previews.'),
  }),
  annotations: changes('Post message'),
  handler: async (ctx, args) => {
    const form = {
      channel: await channelId(ctx, args.channel),
      text: args.text,
      thread_ts: args.thread_ts,
      blocks: args.blocks,
      unfurl_links: args.unfurl_links,
    };
    const d = await write<Posted>(ctx, 'chat.postMessage', form);
    return compact({
      channel: d.channel,
      ts: d.ts,
      thread_ts: d.message?.thread_ts,
      text: d.message ? d.message.text : args.text,
    });
  },
});

export const replyInThread = defineTool({
  description:
    "Reply to a Slack message in its thread: answer or respond under that message (optionally also showing the reply in the channel). Returns the reply's ts.",
  input: z.object({
    channel,
    thread_ts: ts('ts of the message to reply to (the thread parent).'),
    text,
    also_send_to_channel: z.boolean().default(false).describe('Also show the reply in the channel (reply_broadcast).'),
  }),
  annotations: changes('Reply in thread'),
  handler: async (ctx, args) => {
    const form = {
      channel: await channelId(ctx, args.channel),
      thread_ts: args.thread_ts,
      text: args.text,
      reply_broadcast: args.also_send_to_channel || undefined,
    };
    const d = await write<Posted>(ctx, 'chat.postMessage', form);
    return compact({
      channel: d.channel,
      ts: d.ts,
      thread_ts: args.thread_ts,
      text: d.message ? d.message.text : args.text,
    });
  },
});

export const updateMessage = defineTool({
  description: 'Edit the text of a Slack message you posted earlier.',
  input: z.object({ channel, ts: ts('ts of the message to edit.'), text, blocks }),
  annotations: changes('Update message', { idempotent: true }),
  handler: async (ctx, args) => {
    const d = await write<Posted>(ctx, 'chat.update', {
      channel: await channelId(ctx, args.channel),
      ts: args.ts,
      text: args.text,
      blocks: args.blocks,
    });
    return compact({ channel: d.channel, ts: d.ts, text: d.text !== undefined ? d.text : args.text });
  },
});

export const deleteMessage = defineTool({
  description: 'Delete a Slack message you posted. This cannot be undone.',
  input: z.object({ channel, ts: ts('ts of the message to delete.') }),
  annotations: changes('Delete message', { destructive: true, idempotent: true }),
  handler: async (ctx, args) => {
    const d = await write<Posted>(ctx, 'chat.delete', { channel: await channelId(ctx, args.channel), ts: args.ts });
    return { deleted: true, channel: d.channel, ts: d.ts };
  },
});

export const searchMessages = defineTool({
  description:
    'Search Slack messages across the workspace with Slack\'s search syntax (e.g. "deploy in:#ops from:@alice after:2025-01-01 has:link"). Returns channel, author, ts, text and permalink of each match, newest first by default. Pages with `next`.',
  input: z.object({
    query: z
      .string()
      .min(1)
      .max(1000)
      .describe(
        'Search words and modifiers such as in:#channel, from:@user, before:/after:/on:YYYY-MM-DD, has:link, is:thread.',
      ),
    sort: z
      .enum(['timestamp', 'score'])
      .default('timestamp')
      .describe('Newest first (timestamp) or best match (score).'),
    sort_dir: z.enum(['desc', 'asc']).default('desc'),
    limit: limit(100, 20, 'matches'),
    cursor,
  }),
  annotations: reads('Search messages'),
  handler: async (ctx, args) => {
    type Match = RawMessage & { channel?: { id?: string; name?: string } };
    const d = await read<{
      messages?: { total?: number; matches?: Match[]; paging?: { page?: number; pages?: number } };
    }>(ctx, 'search.messages', {
      query: args.query,
      count: args.limit || 20,
      page: pageArg(args.cursor),
      sort: args.sort || 'timestamp',
      sort_dir: args.sort_dir || 'desc',
    });
    const m = d.messages || {};
    const matches = (m.matches || []).map((x) =>
      compact({
        ...slimMessage(x),
        channel: x.channel ? compact({ id: x.channel.id, name: x.channel.name }) : undefined,
      }),
    );
    return { total: m.total || 0, matches, next: nextPage(m.paging) };
  },
});

export const getPermalink = defineTool({
  description: 'Get a shareable link (permalink) to a Slack message.',
  input: z.object({ channel, ts: ts('ts of the message.') }),
  annotations: reads('Get permalink'),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const d = await read<{ permalink?: string }>(ctx, 'chat.getPermalink', { channel: id, message_ts: args.ts });
    return { channel: id, ts: args.ts, permalink: d.permalink };
  },
});
