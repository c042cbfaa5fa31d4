/**
 * @module plugins/slack/src/marks
 * What is added to a message in a channel: emoji reactions and pins.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { compact, read, write } from './api.js';
import { channelId, emojiName } from './args.js';
import { channel, ts } from './schema.js';
import { slimFile, slimMessage, type RawFile, type RawMessage } from './shape.js';

export const addReaction = defineTool({
  description: 'Add an emoji reaction to a Slack message (e.g. thumbsup, white_check_mark, eyes).',
  input: z.object({
    channel,
    ts: ts('ts of the message to react to.'),
    emoji: z.string().min(1).max(100).describe('Emoji name, with or without colons: "thumbsup" or ":eyes:".'),
  }),
  annotations: changes('Add reaction', { idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const name = emojiName(args.emoji);
    await write(ctx, 'reactions.add', { channel: id, timestamp: args.ts, name });
    return { added: true, channel: id, ts: args.ts, emoji: name };
  },
});

export const removeReaction = defineTool({
  description: 'Remove an emoji reaction you added to a Slack message.',
  input: z.object({
    channel,
    ts: ts('ts of the message.'),
    emoji: z.string().min(1).max(100).describe('Emoji name, with or without colons.'),
  }),
  annotations: changes('Remove reaction', { idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const name = emojiName(args.emoji);
    await write(ctx, 'reactions.remove', { channel: id, timestamp: args.ts, name });
    return { removed: true, channel: id, ts: args.ts, emoji: name };
  },
});

export const pinMessage = defineTool({
  description: "Pin a message to a Slack channel so everyone finds it in the channel's pinned items.",
  input: z.object({ channel, ts: ts('ts of the message to pin.') }),
  annotations: changes('Pin message', { idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    await write(ctx, 'pins.add', { channel: id, timestamp: args.ts });
    return { pinned: true, channel: id, ts: args.ts };
  },
});

export const unpinMessage = defineTool({
  description: 'Unpin a pinned message from a Slack channel.',
  input: z.object({ channel, ts: ts('ts of the pinned message.') }),
  annotations: changes('Unpin message', { idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    await write(ctx, 'pins.remove', { channel: id, timestamp: args.ts });
    return { unpinned: true, channel: id, ts: args.ts };
  },
});

export const listPins = defineTool({
  description: 'List the messages and files pinned in a Slack channel.',
  input: z.object({ channel }),
  annotations: reads('List pins'),
  handler: async (ctx, args) => {
    type Pin = { type?: string; created_by?: string; created?: number; message?: RawMessage; file?: RawFile };
    const id = await channelId(ctx, args.channel);
    const d = await read<{ items?: Pin[] }>(ctx, 'pins.list', { channel: id });
    const pins = (d.items || []).map((it) =>
      compact({
        type: it.type,
        pinned_by: it.created_by,
        pinned_at: it.created,
        message: it.message ? slimMessage(it.message) : undefined,
        file: it.file ? slimFile(it.file) : undefined,
      }),
    );
    return { channel: id, pins };
  },
});
