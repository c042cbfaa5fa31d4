/**
 * @module plugins/slack/src/channels
 * Channels (conversations): listing and reading them, joining and leaving, creating, setting the
 * topic, inviting people and archiving.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { compact, nextCursor, read, write } from './api.js';
import { channelId, userIds } from './args.js';
import { channel, cursor, limit, users } from './schema.js';
import { slimChannel, type RawChannel } from './shape.js';

type Channels = { channels?: RawChannel[] };
type OneChannel = { channel: RawChannel };

export const listChannels = defineTool({
  description:
    'List Slack channels (conversations) with ID, name, privacy, topic, purpose and member count. By default public and private channels, archived ones left out; set member_only to list only the channels you are in, and types to include DMs (im) or group DMs (mpim). Pages with `next`.',
  input: z.object({
    types: z
      .array(z.enum(['public_channel', 'private_channel', 'mpim', 'im']))
      .min(1)
      .max(4)
      .default(['public_channel', 'private_channel'])
      .describe('Kinds of conversation to list.'),
    member_only: z.boolean().default(false).describe('Only conversations you are a member of.'),
    include_archived: z.boolean().default(false).describe('Also list archived channels.'),
    limit: limit(1000, 100, 'channels'),
    cursor,
  }),
  annotations: reads('List channels'),
  handler: async (ctx, args) => {
    const params = {
      types: (args.types || ['public_channel', 'private_channel']).join(','),
      exclude_archived: args.include_archived ? false : true,
      limit: args.limit || 100,
      cursor: args.cursor,
    };
    const d = await read<Channels>(ctx, args.member_only ? 'users.conversations' : 'conversations.list', params);
    return { channels: (d.channels || []).map(slimChannel), next: nextCursor(d) };
  },
});

export const getChannelInfo = defineTool({
  description:
    "Get one Slack channel's details: its topic and purpose, how many people are in it (member count), name, privacy, archived or not, whether you are a member, creation time.",
  input: z.object({ channel }),
  annotations: reads('Get channel info'),
  handler: async (ctx, args) => {
    const d = await read<OneChannel>(ctx, 'conversations.info', {
      channel: await channelId(ctx, args.channel),
      include_num_members: true,
    });
    return slimChannel(d.channel);
  },
});

export const listChannelMembers = defineTool({
  description:
    'List the user IDs of the members of a Slack channel (use slack_get_user_info for names). Pages with `next`.',
  input: z.object({ channel, limit: limit(1000, 100, 'members'), cursor }),
  annotations: reads('List channel members'),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const d = await read<{ members?: string[] }>(ctx, 'conversations.members', {
      channel: id,
      limit: args.limit || 100,
      cursor: args.cursor,
    });
    return { channel: id, members: d.members || [], next: nextCursor(d) };
  },
});

export const joinChannel = defineTool({
  description:
    'Join a public Slack channel as the connected user (needed before posting or reading when you are not a member).',
  input: z.object({ channel }),
  annotations: changes('Join channel', { idempotent: true }),
  handler: async (ctx, args) => {
    const d = await write<OneChannel>(ctx, 'conversations.join', { channel: await channelId(ctx, args.channel) });
    return compact({
      joined: true,
      channel: slimChannel(d.channel),
      already_in_channel: d.warning === 'already_in_channel' || undefined,
    });
  },
});

export const leaveChannel = defineTool({
  description: 'Leave a Slack channel.',
  input: z.object({ channel }),
  annotations: changes('Leave channel', { idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const d = await write<{ not_in_channel?: boolean }>(ctx, 'conversations.leave', { channel: id });
    return compact({ left: true, channel: id, was_not_member: d.not_in_channel || undefined });
  },
});

export const createChannel = defineTool({
  description: 'Create a new Slack channel (public by default, or private). Returns its ID.',
  input: z.object({
    name: z
      .string()
      .min(1)
      .max(80)
      .regex(/^[^\sA-Z.,#@]+$/)
      .describe('Lower-case name without spaces or periods, e.g. "proj-launch".'),
    is_private: z.boolean().default(false),
  }),
  annotations: changes('Create channel'),
  handler: async (ctx, args) => {
    const d = await write<OneChannel>(ctx, 'conversations.create', {
      name: args.name,
      is_private: Boolean(args.is_private),
    });
    return slimChannel(d.channel);
  },
});

export const setChannelTopic = defineTool({
  description: 'Set or change the topic shown at the top of a Slack channel.',
  input: z.object({ channel, topic: z.string().max(250).describe('New topic (empty clears it).') }),
  annotations: changes('Set channel topic', { idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const d = await write<Partial<OneChannel>>(ctx, 'conversations.setTopic', { channel: id, topic: args.topic });
    return { channel: id, topic: d.channel?.topic ? d.channel.topic.value : args.topic };
  },
});

export const inviteToChannel = defineTool({
  description: 'Add people to a Slack channel (by user ID or email). You must be a member of the channel.',
  input: z.object({ channel, users: users(100) }),
  annotations: changes('Invite to channel', { idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    const invited = await userIds(ctx, args.users);
    const d = await write<{ errors?: Array<{ user?: string; error?: string }> }>(ctx, 'conversations.invite', {
      channel: id,
      users: invited.join(','),
      force: true,
    });
    const errors =
      Array.isArray(d.errors) && d.errors.length
        ? d.errors.map((e) => compact({ user: e.user, error: e.error }))
        : undefined;
    return compact({ channel: id, invited, errors });
  },
});

export const archiveChannel = defineTool({
  description:
    'Archive a Slack channel: it becomes read-only and leaves the channel list. Can be undone only in Slack.',
  input: z.object({ channel }),
  annotations: changes('Archive channel', { destructive: true, idempotent: true }),
  handler: async (ctx, args) => {
    const id = await channelId(ctx, args.channel);
    await write(ctx, 'conversations.archive', { channel: id });
    return { archived: true, channel: id };
  },
});
