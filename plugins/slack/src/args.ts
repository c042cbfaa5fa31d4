/**
 * @module plugins/slack/src/args
 * What the tools accept beyond Slack's own forms: channel names as well as IDs, emails as well as
 * user IDs, times as dates, message links, and page numbers carried as the `next` cursor.
 */
import type { PluginContext } from 'workbench/plugin-sdk';
import { nextCursor, read } from './api.js';
import type { RawChannel, RawUser } from './shape.js';

const CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/;
const USER_ID = /^[UW][A-Z0-9]{6,}$/;
/** How many pages a look-up by name scans at most. */
export const MAX_SCAN_PAGES = 10;

/** A Slack timestamp, from a ts ("1712345678.000100"), Unix seconds or an ISO 8601 date. */
export function toTs(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const s = String(value).trim();
  if (/^\d+(\.\d+)?$/.test(s)) return s;
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new Error(`${field} must be a Slack ts, Unix seconds or an ISO 8601 date, got "${s}".`);
  return String(Math.floor(ms / 1000));
}

export const emojiName = (name: string): string => String(name).trim().replace(/^:|:$/g, '');

/** Accepts a channel ID, or a channel name ("#general"/"general") which is looked up. */
export async function channelId(ctx: PluginContext, channel: string): Promise<string> {
  const c = String(channel).trim();
  if (CHANNEL_ID.test(c)) return c;
  const name = c.replace(/^#/, '').toLowerCase();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_SCAN_PAGES; page++) {
    const data = await read<{ channels?: RawChannel[] }>(ctx, 'conversations.list', {
      types: 'public_channel,private_channel',
      exclude_archived: true,
      limit: 1000,
      cursor,
    });
    const hit = (data.channels || []).find((ch) => ch.name === name || ch.name_normalized === name);
    if (hit) return hit.id;
    cursor = nextCursor(data) ?? undefined;
    if (!cursor) break;
  }
  throw new Error(
    `No channel named "#${name}" is visible to you: list channels with slack_list_channels and pass the channel ID (e.g. C0123456789).`,
  );
}

/** Accepts user IDs or email addresses (looked up with users.lookupByEmail). */
export async function userIds(ctx: PluginContext, users: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const u of users) {
    const s = String(u).trim();
    if (USER_ID.test(s)) out.push(s);
    else if (s.includes('@'))
      out.push(
        (await read<{ user: RawUser }>(ctx, 'users.lookupByEmail', { email: s.replace(/^@(?=.*@)/, '') })).user.id,
      );
    else
      throw new Error(
        `"${s}" is neither a Slack user ID (e.g. U0123456789) nor an email address: find the ID with slack_list_users.`,
      );
  }
  return out;
}

/** Page-numbered lists (search, files) expose their page as the `next` cursor string. */
export function pageArg(cursor: string | undefined): number {
  if (cursor === undefined || cursor === null || cursor === '') return 1;
  const n = Number(cursor);
  if (!Number.isInteger(n) || n < 1)
    throw new Error('cursor must be the `next` value of a previous result (a page number here).');
  return n;
}

export function nextPage(paging: { page?: number; pages?: number } | undefined): string | null {
  if (!paging) return null;
  const page = Number(paging.page || 1);
  const pages = Number(paging.pages || 0);
  return page < pages ? String(page + 1) : null;
}

/** Parses a message link such as https://x.slack.com/archives/C0123ABCD/p1712345678000100?thread_ts=… */
export function parsePermalink(link: string): { channel: string; ts: string; thread_ts: string | undefined } {
  const m = /\/archives\/([A-Z0-9]+)\/p(\d{7,})(\d{6})(?:\?(.*))?$/.exec(String(link).trim());
  if (!m) throw new Error('permalink must look like https://<workspace>.slack.com/archives/<channel>/p<digits>.');
  const thread = /(?:^|&)thread_ts=(\d+\.\d+)/.exec(m[4] || '');
  return { channel: m[1], ts: `${m[2]}.${m[3]}`, thread_ts: thread ? thread[1] : undefined };
}
