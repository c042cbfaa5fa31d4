/**
 * @module plugins/slack/src/shape
 * Slack's objects as the tools return them: the fields that matter, not a raw dump. Absent, null
 * and empty values are left out (compact).
 */
import { compact } from './api.js';

export interface RawMessage {
  ts?: string;
  user?: string;
  bot_id?: string;
  username?: string;
  bot_profile?: { name?: string };
  text?: string;
  subtype?: string;
  thread_ts?: string;
  reply_count?: number;
  latest_reply?: string;
  edited?: unknown;
  reactions?: Array<{ name: string; count: number }>;
  files?: Array<{ id?: string; name?: string; title?: string }>;
  permalink?: string;
}

export interface RawChannel {
  id: string;
  name?: string;
  name_normalized?: string;
  is_private?: boolean;
  is_im?: boolean;
  is_mpim?: boolean;
  is_archived?: boolean;
  is_member?: boolean;
  user?: string;
  topic?: { value?: string };
  purpose?: { value?: string };
  num_members?: number;
  created?: number;
}

export interface RawUser {
  id: string;
  name?: string;
  real_name?: string;
  tz?: string;
  is_bot?: boolean;
  is_admin?: boolean;
  deleted?: boolean;
  profile?: { real_name?: string; display_name?: string; email?: string; title?: string };
}

export interface RawFile {
  id?: string;
  name?: string;
  title?: string;
  filetype?: string;
  mimetype?: string;
  size?: number;
  user?: string;
  created?: number;
  channels?: string[];
  permalink?: string;
  /** hosted, snippet, external, … */
  mode?: string;
  is_external?: boolean;
  external_type?: string;
  url_private?: string;
  url_private_download?: string;
}

export function slimMessage(m: RawMessage) {
  const isParent = m.thread_ts && m.thread_ts === m.ts;
  return compact({
    ts: m.ts,
    user: m.user || m.bot_id,
    username: m.username || m.bot_profile?.name,
    text: m.text,
    subtype: m.subtype,
    thread_ts: m.thread_ts,
    reply_count: isParent ? m.reply_count || 0 : undefined,
    latest_reply: isParent ? m.latest_reply : undefined,
    edited: m.edited ? true : undefined,
    reactions: m.reactions?.length ? m.reactions.map((r) => ({ name: r.name, count: r.count })) : undefined,
    files: m.files?.length ? m.files.map((f) => compact({ id: f.id, name: f.name, title: f.title })) : undefined,
    permalink: m.permalink,
  });
}

export function slimChannel(c: RawChannel) {
  return compact({
    id: c.id,
    name: c.name,
    is_private: c.is_private === undefined ? undefined : Boolean(c.is_private),
    is_im: c.is_im || undefined,
    is_mpim: c.is_mpim || undefined,
    is_archived: c.is_archived || undefined,
    is_member: c.is_member,
    user: c.user,
    topic: c.topic?.value,
    purpose: c.purpose?.value,
    num_members: c.num_members,
    created: c.created,
  });
}

export function slimUser(u: RawUser) {
  const p = u.profile || {};
  return compact({
    id: u.id,
    name: u.name,
    real_name: u.real_name || p.real_name,
    display_name: p.display_name,
    email: p.email,
    title: p.title,
    tz: u.tz,
    is_bot: u.is_bot || undefined,
    is_admin: u.is_admin || undefined,
    deleted: u.deleted || undefined,
  });
}

export function slimFile(f: RawFile) {
  return compact({
    id: f.id,
    name: f.name,
    title: f.title,
    filetype: f.filetype,
    size: f.size,
    user: f.user,
    created: f.created,
    channels: f.channels?.length ? f.channels : undefined,
    permalink: f.permalink,
  });
}
