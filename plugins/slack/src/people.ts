/**
 * @module plugins/slack/src/people
 * People: who the connected user is, finding users by name or email, and opening a DM with them.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { compact, nextCursor, read, write } from './api.js';
import { MAX_SCAN_PAGES, userIds } from './args.js';
import { cursor, limit, users } from './schema.js';
import { slimUser, type RawUser } from './shape.js';

export const whoami = defineTool({
  description:
    "Who am I on Slack: the connected user's ID and handle, and the workspace (team) name, ID and URL. Use it to check the connection or to learn your own user ID.",
  input: z.object({}),
  annotations: reads('Whoami'),
  handler: async (ctx) => {
    type Auth = {
      user_id?: string;
      user?: string;
      team_id?: string;
      team?: string;
      url?: string;
      enterprise_id?: string;
    };
    const d = await read<Auth>(ctx, 'auth.test');
    return compact({
      user_id: d.user_id,
      user: d.user,
      team_id: d.team_id,
      team: d.team,
      url: d.url,
      enterprise_id: d.enterprise_id,
    });
  },
});

export const listUsers = defineTool({
  description:
    "List or find people in the Slack workspace: ID, handle, real and display name, email, title, time zone. Pass query to find a person's user ID by name (or part of a name, handle or email). Bots and deactivated accounts are left out unless asked for. Pages with `next`.",
  input: z.object({
    query: z.string().max(200).optional().describe('Part of a name, handle or email to look for.'),
    include_bots: z.boolean().default(false),
    include_deleted: z.boolean().default(false),
    limit: limit(200, 100, 'users'),
    cursor,
  }),
  annotations: reads('List users'),
  handler: async (ctx, args) => {
    const max = args.limit || 100;
    const q = args.query ? String(args.query).toLowerCase() : '';
    const keep = (u: RawUser) =>
      (args.include_deleted || !u.deleted) &&
      (args.include_bots || !(u.is_bot || u.id === 'USLACKBOT')) &&
      (!q ||
        [u.name, u.real_name, u.profile?.display_name, u.profile?.email].some(
          (v) => v && String(v).toLowerCase().includes(q),
        ));
    const found: ReturnType<typeof slimUser>[] = [];
    // Slack's cursor points past a whole page; when a query matches more users on a page than
    // fit, `next` is "<that page's cursor>~<matches already returned from it>", so none is lost
    const given = args.cursor ?? '';
    const at = given.lastIndexOf('~');
    let cursor = at >= 0 ? given.slice(0, at) || undefined : args.cursor;
    let skip = at >= 0 ? Number(given.slice(at + 1)) || 0 : 0;
    for (let page = 0; page < (q ? MAX_SCAN_PAGES : 1); page++) {
      const d = await read<{ members?: RawUser[] }>(ctx, 'users.list', { limit: q ? 200 : max, cursor });
      const kept = (d.members || []).filter(keep).slice(skip);
      const room = max - found.length;
      if (kept.length > room) {
        found.push(...kept.slice(0, room).map(slimUser));
        return { users: found, next: `${cursor || ''}~${skip + room}` };
      }
      found.push(...kept.map(slimUser));
      skip = 0;
      cursor = nextCursor(d) ?? undefined;
      if (!cursor || found.length >= max) break;
    }
    return { users: found, next: cursor || null };
  },
});

export const getUserInfo = defineTool({
  description:
    "Get a Slack user's profile by user ID (U…) or email: name, display name, email, title, time zone, bot/admin/deactivated flags.",
  input: z.object({ user: z.string().min(1).max(254).describe('User ID (U…) or email address.') }),
  annotations: reads('Get user info'),
  handler: async (ctx, args) => {
    const [id] = await userIds(ctx, [args.user]);
    const d = await read<{ user: RawUser }>(ctx, 'users.info', { user: id });
    return slimUser(d.user);
  },
});

export const lookupUserByEmail = defineTool({
  description: 'Find the Slack user who has a given email address (returns their user ID and profile).',
  input: z.object({
    email: z
      .string()
      .min(3)
      .max(254)
      .regex(/^[^@\s]+@[^@\s]+$/)
      .describe('Email address.'),
  }),
  annotations: reads('Lookup user by email'),
  handler: async (ctx, args) => {
    const d = await read<{ user: RawUser }>(ctx, 'users.lookupByEmail', { email: args.email });
    return slimUser(d.user);
  },
});

export const openDm = defineTool({
  description:
    'Open (or find) a private direct message (DM) with a person, or a group DM with up to 8 people, and return its channel ID: to DM someone, call this and then send the text with slack_post_message.',
  input: z.object({ users: users(8) }),
  annotations: changes('Open dm', { idempotent: true }),
  handler: async (ctx, args) => {
    const ids = await userIds(ctx, args.users);
    const d = await write<{ channel: { id: string }; already_open?: boolean }>(ctx, 'conversations.open', {
      users: ids.join(','),
      return_im: true,
    });
    return compact({ channel: d.channel.id, users: ids, already_open: d.already_open || undefined });
  },
});
