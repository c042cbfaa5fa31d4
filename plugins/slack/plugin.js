/**
 * @module plugins/slack/plugin
 * Slack Web API tools acting with the connected user's token. Self-contained (the plugin format
 * allows no imports), so the request helper, the one error mapping and the result shapers live
 * here beside the handlers; the file is longer than 400 lines for that reason.
 */

const API = 'https://slack.com/api/';
const CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/;
const USER_ID = /^[UW][A-Z0-9]{6,}$/;
const MAX_SCAN_PAGES = 10;

/** What Slack's `error` codes mean for the caller, and what to do next. */
const MEANINGS = {
  not_in_channel: 'you are not a member of this channel: join it first with slack_join_channel (public channels) or ask a member to invite you (private channels)',
  channel_not_found: 'no channel with this ID is visible to you: check it with slack_list_channels (private channels and DMs are visible only to their members)',
  is_archived: 'the channel is archived, so it cannot be changed or posted to',
  already_archived: 'the channel is already archived',
  message_not_found: 'no message with this timestamp in this channel: check the ts (e.g. with slack_get_channel_history)',
  thread_not_found: 'no thread starts at this timestamp in this channel',
  user_not_found: 'no user with this ID or email in the workspace',
  users_not_found: 'one or more of these users do not exist: check the IDs with slack_list_users',
  already_reacted: 'you already added this reaction to the message',
  no_reaction: 'you have not added this reaction to the message, so there is nothing to remove',
  invalid_name: 'the emoji or channel name is not valid (emoji names have no colons, e.g. "thumbsup"; channel names are lower-case, without spaces or periods, at most 80 characters)',
  name_taken: 'a channel with this name already exists: pick another name or join the existing one',
  already_in_channel: 'the user is already a member of the channel',
  cant_invite_self: 'you cannot invite yourself; join the channel with slack_join_channel instead',
  cant_update_message: 'you can only edit messages you posted yourself',
  cant_delete_message: 'you can only delete messages you posted yourself (or your workspace forbids deleting)',
  edit_window_closed: 'the workspace no longer allows this message to be edited',
  msg_too_long: 'the message text is too long (Slack truncates above 40,000 characters; keep it shorter)',
  no_text: 'the message has no text',
  time_in_past: 'post_at is in the past: scheduled messages must be in the future',
  time_too_far: 'post_at is more than 120 days in the future',
  invalid_time: 'post_at is not a valid time',
  invalid_scheduled_message_id: 'no scheduled message with this ID in this channel (it may already have been sent)',
  already_pinned: 'the message is already pinned',
  not_pinned: 'the message is not pinned',
  no_item_specified: 'no message was given',
  restricted_action: 'a workspace setting forbids you to do this',
  method_not_supported_for_channel_type: 'this action is not available for this kind of conversation (e.g. a DM)',
  cant_archive_general: 'the workspace\'s general channel cannot be archived',
  invalid_cursor: 'the cursor is not valid: pass the `next` value of the previous result unchanged',
  invalid_ts_latest: 'latest is not a valid timestamp',
  invalid_ts_oldest: 'oldest is not a valid timestamp',
  invalid_blocks: 'the blocks are not valid Block Kit JSON',
  invalid_arguments: 'Slack refused the arguments',
  user_is_restricted: 'your account is restricted (guest) and cannot do this',
  user_is_bot: 'this cannot be done with a bot user',
  not_allowed_token_type: 'this method does not accept a user token',
  ekm_access_denied: 'your workspace administrators have suspended access to this content',
  team_access_not_granted: 'the connection has no access to this workspace',
  invalid_auth: 'the Slack token is not valid: reconnect Slack',
  not_authed: 'no Slack token was sent: reconnect Slack',
  token_revoked: 'the Slack token was revoked: reconnect Slack',
  token_expired: 'the Slack token expired: reconnect Slack',
  account_inactive: 'the Slack account was deactivated: reconnect Slack with an active account',
  no_permission: 'you do not have permission to do this in Slack',
  ratelimited: 'Slack is rate limiting these calls: wait a minute and retry',
  fatal_error: 'Slack had an internal error: retry later',
  internal_error: 'Slack had an internal error: retry later',
  service_unavailable: 'Slack is unavailable: retry later',
  request_timeout: 'Slack timed out: retry later',
};

/** The one place where a Slack answer becomes an error message an agent can act on. */
function slackError(method, status, retryAfter, data) {
  if (status === 429 || (data && data.error === 'ratelimited')) {
    const wait = retryAfter ? `retry after ${retryAfter} s` : 'retry later';
    return new Error(`Slack rate limited ${method}: ${wait}.`);
  }
  if (!data || typeof data !== 'object') {
    return new Error(`Slack ${method} answered HTTP ${status} without a JSON body: retry later.`);
  }
  const code = typeof data.error === 'string' ? data.error : `http_${status}`;
  let meaning = MEANINGS[code];
  if (code === 'missing_scope') {
    meaning = `the Slack connection lacks the scope this needs (needed: ${data.needed || 'unknown'}; granted: ${data.provided || 'unknown'}): reconnect Slack and approve the missing scope`;
  }
  if (!meaning) meaning = status >= 500 ? 'Slack had a server error: retry later' : 'see https://api.slack.com/methods/' + method;
  const details = data.response_metadata && Array.isArray(data.response_metadata.messages) ? ` (${data.response_metadata.messages.join('; ')})` : '';
  const err = new Error(`Slack error "${code}" from ${method}: ${meaning}${details}.`);
  err.slackCode = code;
  return err;
}

/** Drops undefined, null and empty-string values (results must be plain JSON; Slack ignores absent args). */
function compact(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

function queryString(params) {
  return Object.entries(compact(params))
    .map(([k, v]) => `${enc(k)}=${enc(v)}`)
    .join('&');
}

/** A write's form body: every method takes these; structured args (blocks, arrays) go as JSON text. */
function formBody(params) {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(compact(params))) form.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  return form.toString();
}

/**
 * Calls one Web API method: reads as GET with a query string, writes as POST with a form body
 * (every method accepts form data; only most take JSON, and the others ignore a JSON body's args).
 * The gateway adds the user's token (Authorization: Bearer) for slack.com.
 */
async function slack(ctx, method, params, write) {
  let res;
  if (write) {
    res = await ctx.http(API + method, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', accept: 'application/json' },
      body: formBody(params),
    });
  } else {
    const qs = queryString(params);
    res = await ctx.http(API + method + (qs ? '?' + qs : ''), { method: 'GET', headers: { accept: 'application/json' } });
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (res.status === 429 || !data || typeof data !== 'object' || data.ok !== true) {
    throw slackError(method, res.status, res.headers.get('retry-after'), data);
  }
  return data;
}

const nextCursor = (data) => (data.response_metadata && data.response_metadata.next_cursor) || null;

/** A Slack timestamp, from a ts ("1712345678.000100"), Unix seconds or an ISO 8601 date. */
function toTs(value, field) {
  if (value === undefined || value === null || value === '') return undefined;
  const s = String(value).trim();
  if (/^\d+(\.\d+)?$/.test(s)) return s;
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new Error(`${field} must be a Slack ts, Unix seconds or an ISO 8601 date, got "${s}".`);
  return String(Math.floor(ms / 1000));
}

function emojiName(name) {
  return String(name).trim().replace(/^:|:$/g, '');
}

/** Accepts a channel ID, or a channel name ("#general"/"general") which is looked up. */
async function channelId(ctx, channel) {
  const c = String(channel).trim();
  if (CHANNEL_ID.test(c)) return c;
  const name = c.replace(/^#/, '').toLowerCase();
  let cursor;
  for (let page = 0; page < MAX_SCAN_PAGES; page++) {
    const data = await slack(ctx, 'conversations.list', { types: 'public_channel,private_channel', exclude_archived: true, limit: 1000, cursor });
    const hit = (data.channels || []).find((ch) => ch.name === name || ch.name_normalized === name);
    if (hit) return hit.id;
    cursor = nextCursor(data);
    if (!cursor) break;
  }
  throw new Error(`No channel named "#${name}" is visible to you: list channels with slack_list_channels and pass the channel ID (e.g. C0123456789).`);
}

/** Accepts user IDs or email addresses (looked up with users.lookupByEmail). */
async function userIds(ctx, users) {
  const out = [];
  for (const u of users) {
    const s = String(u).trim();
    if (USER_ID.test(s)) out.push(s);
    else if (s.includes('@')) out.push((await slack(ctx, 'users.lookupByEmail', { email: s.replace(/^@(?=.*@)/, '') })).user.id);
    else throw new Error(`"${s}" is neither a Slack user ID (e.g. U0123456789) nor an email address: find the ID with slack_list_users.`);
  }
  return out;
}

// ---------- result shapers: the fields that matter, not a raw dump ----------

function slimMessage(m) {
  if (!m) return null;
  const isParent = m.thread_ts && m.thread_ts === m.ts;
  return compact({
    ts: m.ts,
    user: m.user || m.bot_id,
    username: m.username || (m.bot_profile && m.bot_profile.name),
    text: m.text,
    subtype: m.subtype,
    thread_ts: m.thread_ts,
    reply_count: isParent ? m.reply_count || 0 : undefined,
    latest_reply: isParent ? m.latest_reply : undefined,
    edited: m.edited ? true : undefined,
    reactions: Array.isArray(m.reactions) && m.reactions.length ? m.reactions.map((r) => ({ name: r.name, count: r.count })) : undefined,
    files: Array.isArray(m.files) && m.files.length ? m.files.map((f) => compact({ id: f.id, name: f.name, title: f.title })) : undefined,
    permalink: m.permalink,
  });
}

function slimChannel(c) {
  return compact({
    id: c.id,
    name: c.name,
    is_private: c.is_private === undefined ? undefined : Boolean(c.is_private),
    is_im: c.is_im || undefined,
    is_mpim: c.is_mpim || undefined,
    is_archived: c.is_archived || undefined,
    is_member: c.is_member,
    user: c.user,
    topic: c.topic && c.topic.value,
    purpose: c.purpose && c.purpose.value,
    num_members: c.num_members,
    created: c.created,
  });
}

function slimUser(u) {
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

function slimFile(f) {
  return compact({
    id: f.id,
    name: f.name,
    title: f.title,
    filetype: f.filetype,
    size: f.size,
    user: f.user,
    created: f.created,
    channels: f.channels && f.channels.length ? f.channels : undefined,
    permalink: f.permalink,
  });
}

/** Page-numbered lists (search, files) expose their page as the `next` cursor string. */
function pageArg(cursor) {
  if (cursor === undefined || cursor === null || cursor === '') return 1;
  const n = Number(cursor);
  if (!Number.isInteger(n) || n < 1) throw new Error('cursor must be the `next` value of a previous result (a page number here).');
  return n;
}

function nextPage(paging) {
  if (!paging) return null;
  const page = Number(paging.page || 1);
  const pages = Number(paging.pages || 0);
  return page < pages ? String(page + 1) : null;
}

/** Parses a message link such as https://x.slack.com/archives/C0123ABCD/p1712345678000100?thread_ts=… */
function parsePermalink(link) {
  const m = /\/archives\/([A-Z0-9]+)\/p(\d{7,})(\d{6})(?:\?(.*))?$/.exec(String(link).trim());
  if (!m) throw new Error('permalink must look like https://<workspace>.slack.com/archives/<channel>/p<digits>.');
  const thread = /(?:^|&)thread_ts=(\d+\.\d+)/.exec(m[4] || '');
  return { channel: m[1], ts: `${m[2]}.${m[3]}`, thread_ts: thread ? thread[1] : undefined };
}

// ---------- handlers ----------

export default {
  async slack_whoami(ctx) {
    const d = await slack(ctx, 'auth.test', {});
    return compact({ user_id: d.user_id, user: d.user, team_id: d.team_id, team: d.team, url: d.url, enterprise_id: d.enterprise_id });
  },

  async slack_list_channels(ctx, args) {
    const params = {
      types: (args.types || ['public_channel', 'private_channel']).join(','),
      exclude_archived: args.include_archived ? false : true,
      limit: args.limit || 100,
      cursor: args.cursor,
    };
    const d = args.member_only ? await slack(ctx, 'users.conversations', params) : await slack(ctx, 'conversations.list', params);
    return { channels: (d.channels || []).map(slimChannel), next: nextCursor(d) };
  },

  async slack_get_channel_info(ctx, args) {
    const d = await slack(ctx, 'conversations.info', { channel: await channelId(ctx, args.channel), include_num_members: true });
    return slimChannel(d.channel);
  },

  async slack_list_channel_members(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const d = await slack(ctx, 'conversations.members', { channel, limit: args.limit || 100, cursor: args.cursor });
    return { channel, members: d.members || [], next: nextCursor(d) };
  },

  async slack_get_channel_history(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const d = await slack(ctx, 'conversations.history', {
      channel,
      limit: args.limit || 50,
      cursor: args.cursor,
      oldest: toTs(args.oldest, 'oldest'),
      latest: toTs(args.latest, 'latest'),
      inclusive: args.oldest || args.latest ? true : undefined,
    });
    return { channel, messages: (d.messages || []).map(slimMessage), next: nextCursor(d) };
  },

  async slack_get_thread_replies(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const d = await slack(ctx, 'conversations.replies', { channel, ts: args.thread_ts, limit: args.limit || 50, cursor: args.cursor });
    return { channel, thread_ts: args.thread_ts, messages: (d.messages || []).map(slimMessage), next: nextCursor(d) };
  },

  async slack_get_message(ctx, args) {
    let { channel, ts, thread_ts } = args;
    if (args.permalink) ({ channel, ts, thread_ts } = parsePermalink(args.permalink));
    if (!channel || !ts) throw new Error('Pass either permalink, or channel and ts.');
    channel = await channelId(ctx, channel);
    const window = { channel, latest: ts, oldest: ts, inclusive: true };
    // conversations.replies always answers with the thread's parent first, and the parent counts
    // toward limit: limit 2 leaves room for the reply itself. Its ts may be the parent's or any
    // reply's.
    const fromThread = async (threadTs) => {
      const d = await slack(ctx, 'conversations.replies', { ...window, ts: threadTs, limit: 2 });
      return (d.messages || []).find((m) => m.ts === ts);
    };
    let msg;
    if (thread_ts && thread_ts !== ts) {
      msg = await fromThread(thread_ts);
    } else {
      const d = await slack(ctx, 'conversations.history', { ...window, limit: 1 });
      msg = (d.messages || []).find((m) => m.ts === ts);
      // a reply (not also sent to the channel) is not in the history: look for it as one
      if (!msg && !thread_ts) {
        try {
          msg = await fromThread(ts);
        } catch (err) {
          if (!(err && (err.slackCode === 'thread_not_found' || err.slackCode === 'message_not_found'))) throw err;
        }
      }
    }
    if (!msg) throw new Error(`Slack error "message_not_found": ${MEANINGS.message_not_found}.`);
    return { channel, message: slimMessage(msg) };
  },

  async slack_post_message(ctx, args) {
    const d = await slack(
      ctx,
      'chat.postMessage',
      { channel: await channelId(ctx, args.channel), text: args.text, thread_ts: args.thread_ts, blocks: args.blocks, unfurl_links: args.unfurl_links },
      true,
    );
    return compact({ channel: d.channel, ts: d.ts, thread_ts: d.message && d.message.thread_ts, text: d.message ? d.message.text : args.text });
  },

  async slack_reply_in_thread(ctx, args) {
    const d = await slack(
      ctx,
      'chat.postMessage',
      { channel: await channelId(ctx, args.channel), thread_ts: args.thread_ts, text: args.text, reply_broadcast: args.also_send_to_channel || undefined },
      true,
    );
    return compact({ channel: d.channel, ts: d.ts, thread_ts: args.thread_ts, text: d.message ? d.message.text : args.text });
  },

  async slack_update_message(ctx, args) {
    const d = await slack(ctx, 'chat.update', { channel: await channelId(ctx, args.channel), ts: args.ts, text: args.text, blocks: args.blocks }, true);
    return compact({ channel: d.channel, ts: d.ts, text: d.text !== undefined ? d.text : args.text });
  },

  async slack_delete_message(ctx, args) {
    const d = await slack(ctx, 'chat.delete', { channel: await channelId(ctx, args.channel), ts: args.ts }, true);
    return { deleted: true, channel: d.channel, ts: d.ts };
  },

  async slack_schedule_message(ctx, args) {
    const postAt = Number(toTs(args.post_at, 'post_at'));
    const d = await slack(
      ctx,
      'chat.scheduleMessage',
      { channel: await channelId(ctx, args.channel), text: args.text, post_at: Math.floor(postAt), thread_ts: args.thread_ts },
      true,
    );
    return { scheduled_message_id: d.scheduled_message_id, channel: d.channel, post_at: d.post_at, post_at_iso: new Date(d.post_at * 1000).toISOString() };
  },

  async slack_list_scheduled_messages(ctx, args) {
    const d = await slack(ctx, 'chat.scheduledMessages.list', {
      channel: args.channel ? await channelId(ctx, args.channel) : undefined,
      limit: args.limit || 100,
      cursor: args.cursor,
    });
    const scheduled = (d.scheduled_messages || []).map((m) =>
      compact({ id: m.id, channel: m.channel_id, post_at: m.post_at, post_at_iso: m.post_at ? new Date(m.post_at * 1000).toISOString() : undefined, text: m.text }),
    );
    return { scheduled_messages: scheduled, next: nextCursor(d) };
  },

  async slack_delete_scheduled_message(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    await slack(ctx, 'chat.deleteScheduledMessage', { channel, scheduled_message_id: args.scheduled_message_id }, true);
    return { deleted: true, channel, scheduled_message_id: args.scheduled_message_id };
  },

  async slack_add_reaction(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const name = emojiName(args.emoji);
    await slack(ctx, 'reactions.add', { channel, timestamp: args.ts, name }, true);
    return { added: true, channel, ts: args.ts, emoji: name };
  },

  async slack_remove_reaction(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const name = emojiName(args.emoji);
    await slack(ctx, 'reactions.remove', { channel, timestamp: args.ts, name }, true);
    return { removed: true, channel, ts: args.ts, emoji: name };
  },

  async slack_search_messages(ctx, args) {
    const d = await slack(ctx, 'search.messages', {
      query: args.query,
      count: args.limit || 20,
      page: pageArg(args.cursor),
      sort: args.sort || 'timestamp',
      sort_dir: args.sort_dir || 'desc',
    });
    const m = d.messages || {};
    const matches = (m.matches || []).map((x) =>
      compact({ ...slimMessage(x), channel: x.channel ? compact({ id: x.channel.id, name: x.channel.name }) : undefined }),
    );
    return { total: m.total || 0, matches, next: nextPage(m.paging) };
  },

  async slack_list_users(ctx, args) {
    const limit = args.limit || 100;
    const q = args.query ? String(args.query).toLowerCase() : '';
    const keep = (u) =>
      (args.include_deleted || !u.deleted) &&
      (args.include_bots || !(u.is_bot || u.id === 'USLACKBOT')) &&
      (!q || [u.name, u.real_name, u.profile && u.profile.display_name, u.profile && u.profile.email].some((v) => v && String(v).toLowerCase().includes(q)));
    const users = [];
    // Slack's cursor points past a whole page; when a query matches more users on a page than
    // fit, `next` is "<that page's cursor>~<matches already returned from it>", so none is lost
    const at = typeof args.cursor === 'string' ? args.cursor.lastIndexOf('~') : -1;
    let cursor = at >= 0 ? args.cursor.slice(0, at) || undefined : args.cursor;
    let skip = at >= 0 ? Number(args.cursor.slice(at + 1)) || 0 : 0;
    for (let page = 0; page < (q ? MAX_SCAN_PAGES : 1); page++) {
      const d = await slack(ctx, 'users.list', { limit: q ? 200 : limit, cursor });
      const kept = (d.members || []).filter(keep).slice(skip);
      const room = limit - users.length;
      if (kept.length > room) {
        users.push(...kept.slice(0, room).map(slimUser));
        return { users, next: `${cursor || ''}~${skip + room}` };
      }
      users.push(...kept.map(slimUser));
      skip = 0;
      cursor = nextCursor(d);
      if (!cursor || users.length >= limit) break;
    }
    return { users, next: cursor || null };
  },

  async slack_get_user_info(ctx, args) {
    const [id] = await userIds(ctx, [args.user]);
    const d = await slack(ctx, 'users.info', { user: id });
    return slimUser(d.user);
  },

  async slack_lookup_user_by_email(ctx, args) {
    const d = await slack(ctx, 'users.lookupByEmail', { email: args.email });
    return slimUser(d.user);
  },

  async slack_open_dm(ctx, args) {
    const users = await userIds(ctx, args.users);
    const d = await slack(ctx, 'conversations.open', { users: users.join(','), return_im: true }, true);
    return compact({ channel: d.channel.id, users, already_open: d.already_open || undefined });
  },

  async slack_join_channel(ctx, args) {
    const d = await slack(ctx, 'conversations.join', { channel: await channelId(ctx, args.channel) }, true);
    return compact({ joined: true, channel: slimChannel(d.channel), already_in_channel: d.warning === 'already_in_channel' || undefined });
  },

  async slack_leave_channel(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const d = await slack(ctx, 'conversations.leave', { channel }, true);
    return compact({ left: true, channel, was_not_member: d.not_in_channel || undefined });
  },

  async slack_create_channel(ctx, args) {
    const d = await slack(ctx, 'conversations.create', { name: args.name, is_private: Boolean(args.is_private) }, true);
    return slimChannel(d.channel);
  },

  async slack_set_channel_topic(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const d = await slack(ctx, 'conversations.setTopic', { channel, topic: args.topic }, true);
    return { channel, topic: d.channel && d.channel.topic ? d.channel.topic.value : args.topic };
  },

  async slack_invite_to_channel(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const users = await userIds(ctx, args.users);
    const d = await slack(ctx, 'conversations.invite', { channel, users: users.join(','), force: true }, true);
    return compact({ channel, invited: users, errors: Array.isArray(d.errors) && d.errors.length ? d.errors.map((e) => compact({ user: e.user, error: e.error })) : undefined });
  },

  async slack_archive_channel(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    await slack(ctx, 'conversations.archive', { channel }, true);
    return { archived: true, channel };
  },

  async slack_pin_message(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    await slack(ctx, 'pins.add', { channel, timestamp: args.ts }, true);
    return { pinned: true, channel, ts: args.ts };
  },

  async slack_unpin_message(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    await slack(ctx, 'pins.remove', { channel, timestamp: args.ts }, true);
    return { unpinned: true, channel, ts: args.ts };
  },

  async slack_list_pins(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const d = await slack(ctx, 'pins.list', { channel });
    const pins = (d.items || []).map((it) =>
      compact({ type: it.type, pinned_by: it.created_by, pinned_at: it.created, message: it.message ? slimMessage(it.message) : undefined, file: it.file ? slimFile(it.file) : undefined }),
    );
    return { channel, pins };
  },

  async slack_get_permalink(ctx, args) {
    const channel = await channelId(ctx, args.channel);
    const d = await slack(ctx, 'chat.getPermalink', { channel, message_ts: args.ts });
    return { channel, ts: args.ts, permalink: d.permalink };
  },

  async slack_list_files(ctx, args) {
    const d = await slack(ctx, 'files.list', {
      channel: args.channel ? await channelId(ctx, args.channel) : undefined,
      user: args.user,
      types: args.types && args.types.length ? args.types.join(',') : undefined,
      ts_from: toTs(args.since, 'since'),
      ts_to: toTs(args.until, 'until'),
      count: args.limit || 20,
      page: pageArg(args.cursor),
    });
    return { files: (d.files || []).map(slimFile), next: nextPage(d.paging) };
  },
};
