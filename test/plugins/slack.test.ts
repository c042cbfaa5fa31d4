/**
 * @module test/plugins/slack.test
 * Every Slack tool runs through the real gateway and sandbox against a loopback stand-in for
 * slack.com (reached through the policy's origin mapping): the request each one makes (method,
 * /api/<method>, query or form body, the injected Bearer token) and its slim result are asserted
 * from one table, then the form encoding of writes, the error mappings (HTTP-200 ok:false, 429,
 * non-JSON), paging, and a lone surrogate in a read's query (sent as U+FFFD, as in a write); then
 * file uploads and downloads with a second stand-in for files.slack.com, where the token goes, and
 * a third for a file CDN, where nothing may (the token never follows a redirect to another origin).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import { startUpstream, type RecordedRequest, type Upstream, type UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'xoxp-1111-2222-slack-test-token';
type Gateway = TestGateway;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway('slack', { token: TOKEN }, (s) => ({ upstream, gw } = s));

/** Answers each /api/<method> with the body given for it (`ok: true` added unless set). */
type Reply = Record<string, unknown> | ((req: RecordedRequest) => UpstreamReply);
function route(replies: Record<string, Reply>): void {
  upstream.requests.length = 0;
  upstream.setHandler((req) => {
    const reply = replies[req.path.replace(/^\/api\//, '')];
    if (reply === undefined) return { json: { ok: false, error: 'unknown_method' } };
    if (typeof reply === 'function') return reply(req);
    return { json: { ok: true, ...reply } };
  });
}

type Call = [httpMethod: 'GET' | 'POST', api: string, params: Record<string, unknown>];

const FORM = 'application/x-www-form-urlencoded; charset=utf-8';

/** A write's form fields, decoded; each field named in `structured` is JSON text and is parsed. */
function formFields(req: RecordedRequest, structured: string[] = []): Record<string, unknown> {
  const form = new URLSearchParams(req.body);
  const fields: Record<string, unknown> = Object.fromEntries(form);
  assert.equal([...form.keys()].length, Object.keys(fields).length, `no field is sent twice: ${req.body}`);
  for (const k of structured) if (typeof fields[k] === 'string') fields[k] = JSON.parse(fields[k]);
  return fields;
}

/**
 * Asserts the requests made, in order: GET with exactly these query params, or POST with exactly
 * these form fields (values as sent, i.e. strings; an array or object stands for a field holding
 * its JSON text, such as blocks).
 */
function assertCalls(calls: Call[]): void {
  assert.equal(upstream.requests.length, calls.length, `requests: ${upstream.requests.map((r) => r.url).join(', ')}`);
  calls.forEach(([method, api, params], i) => {
    const req = upstream.requests[i]!;
    assert.equal(req.method, method, `request ${i} method`);
    assert.equal(req.path, `/api/${api}`, `request ${i} path`);
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`, `request ${i} carries the user's token`);
    if (method === 'GET') {
      assert.deepEqual(Object.fromEntries(req.query), params, `request ${i} query`);
      assert.equal(req.body, '');
    } else {
      assert.equal(req.headers['content-type'], FORM, `request ${i} is a form post`);
      assert.equal(req.url, `/api/${api}`, 'writes carry no query string');
      const structured = Object.keys(params).filter((k) => typeof params[k] === 'object');
      assert.deepEqual(formFields(req, structured), params, `request ${i} form body`);
    }
  });
}

async function run(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  return await gw.execute(tool, args);
}

async function ok(tool: string, args: Record<string, unknown>): Promise<unknown> {
  const item = await run(tool, args);
  assert.ok('result' in item, `${tool} failed: ${JSON.stringify(item)}`);
  return item['result'];
}

/** Every string inside an execute item (the error message, whatever the item's exact shape). */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

async function fails(tool: string, args: Record<string, unknown>, pattern: RegExp): Promise<Record<string, unknown>> {
  const item = await run(tool, args);
  assert.ok(!('result' in item), `${tool} should fail: ${JSON.stringify(item)}`);
  const text = strings(item).join(' | ');
  assert.match(text, pattern);
  assert.ok(!text.includes(TOKEN), 'the token never appears in an error');
  return item;
}

// ---------- fixtures: Slack-shaped answers and the slim shapes the tools return ----------

const C = 'C0GENERAL1';
const TS = '1712345678.000100';
const RAW_MSG = {
  type: 'message',
  user: 'U0ALICE001',
  text: 'ship it?',
  ts: TS,
  thread_ts: TS,
  reply_count: 2,
  reply_users: ['U0BOB00001'],
  latest_reply: '1712345999.000200',
  team: 'T0TEAM0001',
  blocks: [{ type: 'rich_text', elements: [] }],
  reactions: [{ name: 'eyes', count: 2, users: ['U0BOB00001', 'U0CAROL001'] }],
};
const MSG = {
  ts: TS,
  user: 'U0ALICE001',
  text: 'ship it?',
  thread_ts: TS,
  reply_count: 2,
  latest_reply: '1712345999.000200',
  reactions: [{ name: 'eyes', count: 2 }],
};
const RAW_REPLY = {
  type: 'message',
  user: 'U0BOB00001',
  text: 'yes',
  ts: '1712345999.000200',
  thread_ts: TS,
  parent_user_id: 'U0ALICE001',
  edited: { user: 'U0BOB00001', ts: '1' },
};
const REPLY = { ts: '1712345999.000200', user: 'U0BOB00001', text: 'yes', thread_ts: TS, edited: true };
/** A reply earlier in the same thread than RAW_REPLY. */
const RAW_EARLY_REPLY = {
  type: 'message',
  user: 'U0CAROL001',
  text: 'wait',
  ts: '1712345800.000150',
  thread_ts: TS,
  parent_user_id: 'U0ALICE001',
};

/**
 * A stand-in for Slack's message store: one channel whose only top-level message, RAW_MSG, starts
 * a thread of two replies. As Slack does, conversations.history lists top-level messages only
 * (newest first) and conversations.replies (ts = the parent's or any reply's) answers the thread's
 * parent first, whatever the time window, and the parent counts toward limit; then the replies in
 * the window, oldest first. A ts in no thread is thread_not_found.
 */
const THREAD = [RAW_MSG, RAW_EARLY_REPLY, RAW_REPLY];
function inWindow(q: URLSearchParams, ts: string): boolean {
  const t = Number(ts);
  const inclusive = q.get('inclusive') === 'true' || q.get('inclusive') === '1';
  const oldest = q.get('oldest');
  const latest = q.get('latest');
  if (oldest !== null && (inclusive ? t < Number(oldest) : t <= Number(oldest))) return false;
  if (latest !== null && (inclusive ? t > Number(latest) : t >= Number(latest))) return false;
  return true;
}
const limitOf = (q: URLSearchParams, dflt: number): number => Number(q.get('limit') ?? dflt);
const FAKE_HISTORY: Reply = (req) => {
  const messages = [RAW_MSG].filter((m) => inWindow(req.query, m.ts)).slice(0, limitOf(req.query, 100));
  return { json: { ok: true, messages, has_more: false } };
};
const FAKE_REPLIES: Reply = (req) => {
  if (!THREAD.some((m) => m.ts === req.query.get('ts'))) return { json: { ok: false, error: 'thread_not_found' } };
  const [parent, ...replies] = THREAD;
  const all = [parent, ...replies.filter((m) => inWindow(req.query, m.ts))];
  const messages = all.slice(0, limitOf(req.query, 1000));
  return { json: { ok: true, messages, has_more: messages.length < all.length } };
};
const FAKE_STORE = { 'conversations.history': FAKE_HISTORY, 'conversations.replies': FAKE_REPLIES };

const RAW_CHANNEL = {
  id: C,
  name: 'general',
  is_channel: true,
  is_private: false,
  is_archived: false,
  is_member: true,
  is_general: true,
  created: 1600000000,
  creator: 'U0ALICE001',
  topic: { value: 'Company news', creator: 'U0ALICE001', last_set: 1 },
  purpose: { value: 'All hands', creator: '', last_set: 0 },
  num_members: 42,
  previous_names: [],
  shared_team_ids: ['T0TEAM0001'],
};
const CHANNEL = {
  id: C,
  name: 'general',
  is_private: false,
  is_member: true,
  topic: 'Company news',
  purpose: 'All hands',
  num_members: 42,
  created: 1600000000,
};
const RAW_USER = {
  id: 'U0ALICE001',
  team_id: 'T0TEAM0001',
  name: 'alice',
  real_name: 'Alice Liddell',
  tz: 'Europe/London',
  tz_offset: 0,
  is_bot: false,
  deleted: false,
  is_admin: false,
  profile: {
    display_name: 'alice',
    real_name: 'Alice Liddell',
    email: 'alice@example.com',
    title: 'Engineer',
    image_512: 'https://avatars.example/a.png',
  },
};
const USER = {
  id: 'U0ALICE001',
  name: 'alice',
  real_name: 'Alice Liddell',
  display_name: 'alice',
  email: 'alice@example.com',
  title: 'Engineer',
  tz: 'Europe/London',
};
const RAW_BOT = { id: 'U0BOT00001', name: 'deploybot', is_bot: true, profile: { display_name: 'Deploy' } };
const RAW_FILE = {
  id: 'F0FILE0001',
  name: 'plan.pdf',
  title: 'Plan',
  filetype: 'pdf',
  mimetype: 'application/pdf',
  size: 1234,
  user: 'U0ALICE001',
  created: 1712300000,
  channels: [C],
  permalink: 'https://acme.slack.com/files/U0ALICE001/F0FILE0001/plan.pdf',
  url_private: 'https://files.slack.com/x',
};
const FILE = {
  id: 'F0FILE0001',
  name: 'plan.pdf',
  title: 'Plan',
  filetype: 'pdf',
  size: 1234,
  user: 'U0ALICE001',
  created: 1712300000,
  channels: [C],
  permalink: 'https://acme.slack.com/files/U0ALICE001/F0FILE0001/plan.pdf',
};
const MORE = { response_metadata: { next_cursor: 'dXNlcjpVMEc5V0ZYTlo=' } };
const END = { response_metadata: { next_cursor: '' } };

interface Case {
  tool: string;
  args: Record<string, unknown>;
  replies: Record<string, Reply>;
  calls: Call[];
  result: unknown;
}

const CASES: Case[] = [
  {
    tool: 'slack_whoami',
    args: {},
    replies: {
      'auth.test': {
        url: 'https://acme.slack.com/',
        team: 'Acme',
        user: 'alice',
        team_id: 'T0TEAM0001',
        user_id: 'U0ALICE001',
        is_enterprise_install: false,
      },
    },
    calls: [['GET', 'auth.test', {}]],
    result: {
      user_id: 'U0ALICE001',
      user: 'alice',
      team_id: 'T0TEAM0001',
      team: 'Acme',
      url: 'https://acme.slack.com/',
    },
  },
  {
    tool: 'slack_list_channels',
    args: {},
    replies: { 'conversations.list': { channels: [RAW_CHANNEL], ...MORE } },
    calls: [
      [
        'GET',
        'conversations.list',
        { types: 'public_channel,private_channel', exclude_archived: 'true', limit: '100' },
      ],
    ],
    result: { channels: [CHANNEL], next: MORE.response_metadata.next_cursor },
  },
  {
    tool: 'slack_list_channels',
    args: { member_only: true, types: ['im', 'mpim'], include_archived: true, limit: 5, cursor: 'abc' },
    replies: {
      'users.conversations': { channels: [{ id: 'D0DM000001', is_im: true, user: 'U0BOB00001', created: 1 }], ...END },
    },
    calls: [['GET', 'users.conversations', { types: 'im,mpim', exclude_archived: 'false', limit: '5', cursor: 'abc' }]],
    result: { channels: [{ id: 'D0DM000001', is_im: true, user: 'U0BOB00001', created: 1 }], next: null },
  },
  {
    tool: 'slack_get_channel_info',
    args: { channel: C },
    replies: { 'conversations.info': { channel: RAW_CHANNEL } },
    calls: [['GET', 'conversations.info', { channel: C, include_num_members: 'true' }]],
    result: CHANNEL,
  },
  {
    tool: 'slack_list_channel_members',
    args: { channel: C, limit: 2 },
    replies: { 'conversations.members': { members: ['U0ALICE001', 'U0BOB00001'], ...MORE } },
    calls: [['GET', 'conversations.members', { channel: C, limit: '2' }]],
    result: { channel: C, members: ['U0ALICE001', 'U0BOB00001'], next: MORE.response_metadata.next_cursor },
  },
  {
    tool: 'slack_get_channel_history',
    args: { channel: C, limit: 10, oldest: '2024-04-05T00:00:00Z', cursor: 'c2' },
    replies: { 'conversations.history': { messages: [RAW_MSG], has_more: false, ...END } },
    calls: [
      [
        'GET',
        'conversations.history',
        { channel: C, limit: '10', cursor: 'c2', oldest: '1712275200', inclusive: 'true' },
      ],
    ],
    result: { channel: C, messages: [MSG], next: null },
  },
  {
    tool: 'slack_get_thread_replies',
    args: { channel: C, thread_ts: TS },
    replies: { 'conversations.replies': { messages: [RAW_MSG, RAW_REPLY], ...MORE } },
    calls: [['GET', 'conversations.replies', { channel: C, ts: TS, limit: '50' }]],
    result: { channel: C, thread_ts: TS, messages: [MSG, REPLY], next: MORE.response_metadata.next_cursor },
  },
  {
    tool: 'slack_get_message',
    args: { channel: C, ts: TS },
    replies: FAKE_STORE,
    calls: [['GET', 'conversations.history', { channel: C, latest: TS, oldest: TS, inclusive: 'true', limit: '1' }]],
    result: { channel: C, message: MSG },
  },
  // a reply: Slack answers the thread's parent first, counted toward limit, so limit 1 would miss it
  {
    tool: 'slack_get_message',
    args: { permalink: `https://acme.slack.com/archives/${C}/p1712345999000200?thread_ts=${TS}&cid=${C}` },
    replies: FAKE_STORE,
    calls: [
      [
        'GET',
        'conversations.replies',
        { channel: C, ts: TS, latest: '1712345999.000200', oldest: '1712345999.000200', inclusive: 'true', limit: '2' },
      ],
    ],
    result: { channel: C, message: REPLY },
  },
  // a reply given by channel and ts alone: not in the history, so looked for in its thread
  {
    tool: 'slack_get_message',
    args: { channel: C, ts: '1712345999.000200' },
    replies: FAKE_STORE,
    calls: [
      [
        'GET',
        'conversations.history',
        { channel: C, latest: '1712345999.000200', oldest: '1712345999.000200', inclusive: 'true', limit: '1' },
      ],
      [
        'GET',
        'conversations.replies',
        {
          channel: C,
          ts: '1712345999.000200',
          latest: '1712345999.000200',
          oldest: '1712345999.000200',
          inclusive: 'true',
          limit: '2',
        },
      ],
    ],
    result: { channel: C, message: REPLY },
  },
  {
    tool: 'slack_post_message',
    args: { channel: C, text: 'Deploy *done*' },
    replies: {
      'chat.postMessage': {
        channel: C,
        ts: '1712400000.000100',
        message: { type: 'message', text: 'Deploy *done*', user: 'U0ALICE001', ts: '1712400000.000100' },
      },
    },
    calls: [['POST', 'chat.postMessage', { channel: C, text: 'Deploy *done*', unfurl_links: 'true' }]],
    result: { channel: C, ts: '1712400000.000100', text: 'Deploy *done*' },
  },
  {
    tool: 'slack_post_message',
    args: {
      channel: C,
      text: 'in thread',
      thread_ts: TS,
      unfurl_links: false,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'hi' } }],
    },
    replies: {
      'chat.postMessage': {
        channel: C,
        ts: '1712400001.000100',
        message: { text: 'in thread', thread_ts: TS, ts: '1712400001.000100' },
      },
    },
    calls: [
      [
        'POST',
        'chat.postMessage',
        {
          channel: C,
          text: 'in thread',
          thread_ts: TS,
          unfurl_links: 'false',
          blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'hi' } }],
        },
      ],
    ],
    result: { channel: C, ts: '1712400001.000100', thread_ts: TS, text: 'in thread' },
  },
  {
    tool: 'slack_reply_in_thread',
    args: { channel: C, thread_ts: TS, text: 'on it', also_send_to_channel: true },
    replies: { 'chat.postMessage': { channel: C, ts: '1712400002.000100', message: { text: 'on it' } } },
    calls: [['POST', 'chat.postMessage', { channel: C, thread_ts: TS, text: 'on it', reply_broadcast: 'true' }]],
    result: { channel: C, ts: '1712400002.000100', thread_ts: TS, text: 'on it' },
  },
  {
    tool: 'slack_update_message',
    args: { channel: C, ts: TS, text: 'ship it!' },
    replies: { 'chat.update': { channel: C, ts: TS, text: 'ship it!' } },
    calls: [['POST', 'chat.update', { channel: C, ts: TS, text: 'ship it!' }]],
    result: { channel: C, ts: TS, text: 'ship it!' },
  },
  {
    tool: 'slack_delete_message',
    args: { channel: C, ts: TS },
    replies: { 'chat.delete': { channel: C, ts: TS } },
    calls: [['POST', 'chat.delete', { channel: C, ts: TS }]],
    result: { deleted: true, channel: C, ts: TS },
  },
  {
    tool: 'slack_schedule_message',
    args: { channel: C, text: 'standup', post_at: '2030-01-02T03:04:05Z' },
    replies: { 'chat.scheduleMessage': { channel: C, scheduled_message_id: 'Q0SCHED0001', post_at: 1893553445 } },
    calls: [['POST', 'chat.scheduleMessage', { channel: C, text: 'standup', post_at: '1893553445' }]],
    result: {
      scheduled_message_id: 'Q0SCHED0001',
      channel: C,
      post_at: 1893553445,
      post_at_iso: '2030-01-02T03:04:05.000Z',
    },
  },
  {
    tool: 'slack_list_scheduled_messages',
    args: { channel: C },
    replies: {
      'chat.scheduledMessages.list': {
        scheduled_messages: [
          { id: 'Q0SCHED0001', channel_id: C, post_at: 1893553445, date_created: 1712000000, text: 'standup' },
        ],
        ...END,
      },
    },
    calls: [['GET', 'chat.scheduledMessages.list', { channel: C, limit: '100' }]],
    result: {
      scheduled_messages: [
        {
          id: 'Q0SCHED0001',
          channel: C,
          post_at: 1893553445,
          post_at_iso: '2030-01-02T03:04:05.000Z',
          text: 'standup',
        },
      ],
      next: null,
    },
  },
  {
    tool: 'slack_delete_scheduled_message',
    args: { channel: C, scheduled_message_id: 'Q0SCHED0001' },
    replies: { 'chat.deleteScheduledMessage': {} },
    calls: [['POST', 'chat.deleteScheduledMessage', { channel: C, scheduled_message_id: 'Q0SCHED0001' }]],
    result: { deleted: true, channel: C, scheduled_message_id: 'Q0SCHED0001' },
  },
  {
    tool: 'slack_add_reaction',
    args: { channel: C, ts: TS, emoji: ':white_check_mark:' },
    replies: { 'reactions.add': {} },
    calls: [['POST', 'reactions.add', { channel: C, timestamp: TS, name: 'white_check_mark' }]],
    result: { added: true, channel: C, ts: TS, emoji: 'white_check_mark' },
  },
  {
    tool: 'slack_remove_reaction',
    args: { channel: C, ts: TS, emoji: 'eyes' },
    replies: { 'reactions.remove': {} },
    calls: [['POST', 'reactions.remove', { channel: C, timestamp: TS, name: 'eyes' }]],
    result: { removed: true, channel: C, ts: TS, emoji: 'eyes' },
  },
  {
    tool: 'slack_search_messages',
    args: { query: 'deploy in:#general', limit: 1 },
    replies: {
      'search.messages': {
        query: 'deploy in:#general',
        messages: {
          total: 3,
          matches: [
            {
              iid: 'x',
              type: 'message',
              user: 'U0ALICE001',
              username: 'alice',
              ts: TS,
              text: 'deploy now',
              channel: { id: C, name: 'general', is_private: false },
              permalink: `https://acme.slack.com/archives/${C}/p1712345678000100`,
              team: 'T0TEAM0001',
            },
          ],
          paging: { count: 1, total: 3, page: 1, pages: 3 },
        },
      },
    },
    calls: [
      [
        'GET',
        'search.messages',
        { query: 'deploy in:#general', count: '1', page: '1', sort: 'timestamp', sort_dir: 'desc' },
      ],
    ],
    result: {
      total: 3,
      matches: [
        {
          ts: TS,
          user: 'U0ALICE001',
          username: 'alice',
          text: 'deploy now',
          permalink: `https://acme.slack.com/archives/${C}/p1712345678000100`,
          channel: { id: C, name: 'general' },
        },
      ],
      next: '2',
    },
  },
  {
    tool: 'slack_search_messages',
    args: { query: 'deploy', cursor: '3', sort: 'score', sort_dir: 'asc' },
    replies: {
      'search.messages': { messages: { total: 41, matches: [], paging: { count: 20, total: 41, page: 3, pages: 3 } } },
    },
    calls: [['GET', 'search.messages', { query: 'deploy', count: '20', page: '3', sort: 'score', sort_dir: 'asc' }]],
    result: { total: 41, matches: [], next: null },
  },
  {
    tool: 'slack_list_users',
    args: {},
    replies: {
      'users.list': { members: [RAW_USER, RAW_BOT, { ...RAW_USER, id: 'U0GONE0001', deleted: true }], ...MORE },
    },
    calls: [['GET', 'users.list', { limit: '100' }]],
    result: { users: [USER], next: MORE.response_metadata.next_cursor },
  },
  {
    tool: 'slack_list_users',
    args: { query: 'ALICE', limit: 1 },
    replies: {
      'users.list': (req) => ({
        json: req.query.get('cursor')
          ? { ok: true, members: [RAW_USER], ...MORE }
          : { ok: true, members: [RAW_BOT], response_metadata: { next_cursor: 'p2' } },
      }),
    },
    calls: [
      ['GET', 'users.list', { limit: '200' }],
      ['GET', 'users.list', { limit: '200', cursor: 'p2' }],
    ],
    result: { users: [USER], next: MORE.response_metadata.next_cursor },
  },
  // more matches on one page than asked for: the rest are reachable through `next`
  {
    tool: 'slack_list_users',
    args: { query: 'alice', limit: 1 },
    replies: {
      'users.list': {
        members: [RAW_USER, { ...RAW_USER, id: 'U0ALICE002' }, { ...RAW_USER, id: 'U0ALICE003' }],
        ...MORE,
      },
    },
    calls: [['GET', 'users.list', { limit: '200' }]],
    result: { users: [USER], next: '~1' },
  },
  {
    tool: 'slack_list_users',
    args: { query: 'alice', limit: 2, cursor: '~1' },
    replies: {
      'users.list': {
        members: [RAW_USER, { ...RAW_USER, id: 'U0ALICE002' }, { ...RAW_USER, id: 'U0ALICE003' }],
        ...MORE,
      },
    },
    calls: [['GET', 'users.list', { limit: '200' }]],
    result: {
      users: [
        { ...USER, id: 'U0ALICE002' },
        { ...USER, id: 'U0ALICE003' },
      ],
      next: MORE.response_metadata.next_cursor,
    },
  },
  {
    tool: 'slack_list_users',
    args: { query: 'alice', limit: 1, cursor: 'p2~2' },
    replies: {
      'users.list': {
        members: [
          RAW_USER,
          { ...RAW_USER, id: 'U0ALICE002' },
          { ...RAW_USER, id: 'U0ALICE003' },
          { ...RAW_USER, id: 'U0ALICE004' },
        ],
        ...MORE,
      },
    },
    calls: [['GET', 'users.list', { limit: '200', cursor: 'p2' }]],
    result: { users: [{ ...USER, id: 'U0ALICE003' }], next: 'p2~3' },
  },
  {
    tool: 'slack_get_user_info',
    args: { user: 'U0ALICE001' },
    replies: { 'users.info': { user: RAW_USER } },
    calls: [['GET', 'users.info', { user: 'U0ALICE001' }]],
    result: USER,
  },
  {
    tool: 'slack_get_user_info',
    args: { user: 'alice@example.com' },
    replies: { 'users.lookupByEmail': { user: RAW_USER }, 'users.info': { user: RAW_USER } },
    calls: [
      ['GET', 'users.lookupByEmail', { email: 'alice@example.com' }],
      ['GET', 'users.info', { user: 'U0ALICE001' }],
    ],
    result: USER,
  },
  {
    tool: 'slack_lookup_user_by_email',
    args: { email: 'alice@example.com' },
    replies: { 'users.lookupByEmail': { user: RAW_USER } },
    calls: [['GET', 'users.lookupByEmail', { email: 'alice@example.com' }]],
    result: USER,
  },
  {
    tool: 'slack_open_dm',
    args: { users: ['U0BOB00001'] },
    replies: { 'conversations.open': { channel: { id: 'D0DM000001' }, already_open: true } },
    calls: [['POST', 'conversations.open', { users: 'U0BOB00001', return_im: 'true' }]],
    result: { channel: 'D0DM000001', users: ['U0BOB00001'], already_open: true },
  },
  {
    tool: 'slack_join_channel',
    args: { channel: C },
    replies: {
      'conversations.join': {
        channel: RAW_CHANNEL,
        warning: 'already_in_channel',
        response_metadata: { warnings: ['already_in_channel'] },
      },
    },
    calls: [['POST', 'conversations.join', { channel: C }]],
    result: { joined: true, channel: CHANNEL, already_in_channel: true },
  },
  {
    tool: 'slack_leave_channel',
    args: { channel: C },
    replies: { 'conversations.leave': {} },
    calls: [['POST', 'conversations.leave', { channel: C }]],
    result: { left: true, channel: C },
  },
  {
    tool: 'slack_create_channel',
    args: { name: 'proj-launch', is_private: true },
    replies: {
      'conversations.create': {
        channel: {
          id: 'G0PROJ0001',
          name: 'proj-launch',
          is_private: true,
          is_member: true,
          created: 1712400000,
          topic: { value: '' },
          purpose: { value: '' },
        },
      },
    },
    calls: [['POST', 'conversations.create', { name: 'proj-launch', is_private: 'true' }]],
    result: { id: 'G0PROJ0001', name: 'proj-launch', is_private: true, is_member: true, created: 1712400000 },
  },
  {
    tool: 'slack_set_channel_topic',
    args: { channel: C, topic: 'Launch on Friday' },
    replies: { 'conversations.setTopic': { channel: { ...RAW_CHANNEL, topic: { value: 'Launch on Friday' } } } },
    calls: [['POST', 'conversations.setTopic', { channel: C, topic: 'Launch on Friday' }]],
    result: { channel: C, topic: 'Launch on Friday' },
  },
  {
    tool: 'slack_invite_to_channel',
    args: { channel: C, users: ['U0BOB00001', 'carol@example.com'] },
    replies: {
      'users.lookupByEmail': { user: { id: 'U0CAROL001', name: 'carol' } },
      'conversations.invite': {
        channel: RAW_CHANNEL,
        errors: [{ user: 'U0BOB00001', ok: false, error: 'already_in_channel' }],
      },
    },
    calls: [
      ['GET', 'users.lookupByEmail', { email: 'carol@example.com' }],
      ['POST', 'conversations.invite', { channel: C, users: 'U0BOB00001,U0CAROL001', force: 'true' }],
    ],
    result: {
      channel: C,
      invited: ['U0BOB00001', 'U0CAROL001'],
      errors: [{ user: 'U0BOB00001', error: 'already_in_channel' }],
    },
  },
  {
    tool: 'slack_archive_channel',
    args: { channel: C },
    replies: { 'conversations.archive': {} },
    calls: [['POST', 'conversations.archive', { channel: C }]],
    result: { archived: true, channel: C },
  },
  {
    tool: 'slack_pin_message',
    args: { channel: C, ts: TS },
    replies: { 'pins.add': {} },
    calls: [['POST', 'pins.add', { channel: C, timestamp: TS }]],
    result: { pinned: true, channel: C, ts: TS },
  },
  {
    tool: 'slack_unpin_message',
    args: { channel: C, ts: TS },
    replies: { 'pins.remove': {} },
    calls: [['POST', 'pins.remove', { channel: C, timestamp: TS }]],
    result: { unpinned: true, channel: C, ts: TS },
  },
  {
    tool: 'slack_list_pins',
    args: { channel: C },
    replies: {
      'pins.list': {
        items: [
          { type: 'message', created: 1712400000, created_by: 'U0ALICE001', channel: C, message: RAW_MSG },
          { type: 'file', created: 1712400001, created_by: 'U0BOB00001', file: RAW_FILE },
        ],
      },
    },
    calls: [['GET', 'pins.list', { channel: C }]],
    result: {
      channel: C,
      pins: [
        { type: 'message', pinned_by: 'U0ALICE001', pinned_at: 1712400000, message: MSG },
        { type: 'file', pinned_by: 'U0BOB00001', pinned_at: 1712400001, file: FILE },
      ],
    },
  },
  {
    tool: 'slack_get_permalink',
    args: { channel: C, ts: TS },
    replies: {
      'chat.getPermalink': { channel: C, permalink: `https://acme.slack.com/archives/${C}/p1712345678000100` },
    },
    calls: [['GET', 'chat.getPermalink', { channel: C, message_ts: TS }]],
    result: { channel: C, ts: TS, permalink: `https://acme.slack.com/archives/${C}/p1712345678000100` },
  },
  {
    tool: 'slack_list_files',
    args: { channel: C, user: 'U0ALICE001', types: ['pdfs', 'images'], since: '1712000000', limit: 5 },
    replies: { 'files.list': { files: [RAW_FILE], paging: { count: 5, total: 6, page: 1, pages: 2 } } },
    calls: [
      [
        'GET',
        'files.list',
        { channel: C, user: 'U0ALICE001', types: 'pdfs,images', ts_from: '1712000000', count: '5', page: '1' },
      ],
    ],
    result: { files: [FILE], next: '2' },
  },
  // a channel given by name is resolved with conversations.list (paging until found)
  {
    tool: 'slack_get_channel_history',
    args: { channel: '#general' },
    replies: {
      'conversations.list': (req) => ({
        json: req.query.get('cursor')
          ? { ok: true, channels: [RAW_CHANNEL], ...END }
          : { ok: true, channels: [{ id: 'C0RANDOM01', name: 'random' }], response_metadata: { next_cursor: 'n1' } },
      }),
      'conversations.history': { messages: [], ...END },
    },
    calls: [
      [
        'GET',
        'conversations.list',
        { types: 'public_channel,private_channel', exclude_archived: 'true', limit: '1000' },
      ],
      [
        'GET',
        'conversations.list',
        { types: 'public_channel,private_channel', exclude_archived: 'true', limit: '1000', cursor: 'n1' },
      ],
      ['GET', 'conversations.history', { channel: C, limit: '50' }],
    ],
    result: { channel: C, messages: [], next: null },
  },
];

describe('slack tools: request made and slim result', () => {
  test('the table covers every tool in the manifest', async () => {
    const { readFile } = await import('node:fs/promises');
    const manifest = JSON.parse(
      await readFile(new URL('../../../plugins/slack/manifest.json', import.meta.url), 'utf8'),
    ) as { tools: { name: string }[] };
    // the two file-content tools reach files.slack.com too: tested in their own suite below
    const covered = new Set([...CASES.map((c) => c.tool), 'slack_upload_file', 'slack_download_file']);
    assert.deepEqual(
      manifest.tools.map((t) => t.name).filter((n) => !covered.has(n)),
      [],
    );
    assert.ok(manifest.tools.length >= 18);
  });

  for (const [i, c] of CASES.entries()) {
    test(`${c.tool} #${i}`, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls);
    });
  }
});

describe('slack writes: form-encoded bodies, which every Web API method accepts', () => {
  /** A method that takes only form data: with a JSON body its arguments are not seen at all. */
  const formOnly =
    (answer: (fields: Record<string, unknown>) => Record<string, unknown>): Reply =>
    (req) => {
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
        return { json: { ok: false, error: 'invalid_arguments' } };
      return { json: { ok: true, ...answer(formFields(req)) } };
    };

  test('a method that refuses JSON bodies gets its arguments', async () => {
    route({
      'conversations.invite': formOnly((f) =>
        f['channel'] === C && f['users'] === 'U0BOB00001,U0CAROL001'
          ? { channel: RAW_CHANNEL }
          : { ok: false, error: 'channel_not_found' },
      ),
    });
    assert.deepEqual(await ok('slack_invite_to_channel', { channel: C, users: ['U0BOB00001', 'U0CAROL001'] }), {
      channel: C,
      invited: ['U0BOB00001', 'U0CAROL001'],
    });
    assertCalls([['POST', 'conversations.invite', { channel: C, users: 'U0BOB00001,U0CAROL001', force: 'true' }]]);
  });

  test('message text with & = + spaces, emoji and newlines arrives exactly', async () => {
    const text = 'a & b = c + d  e%20f?x=1&y=2\nsecond line 🚀 naïve 日本語 ✓\r\n  trailing  ';
    route({
      'chat.postMessage': formOnly((f) => ({
        channel: f['channel'],
        ts: '1712400003.000100',
        message: { text: f['text'] },
      })),
    });
    assert.deepEqual(await ok('slack_post_message', { channel: C, text }), {
      channel: C,
      ts: '1712400003.000100',
      text,
    });
    const req = upstream.last();
    assert.match(req.body, /^[\x21-\x7e]*$/, 'no raw space, newline or non-ASCII character in the body');
    assert.deepEqual(
      req.body.split('&').map((kv) => kv.split('=')[0]),
      ['channel', 'text', 'unfurl_links'],
      "the text's & and = are escaped",
    );
    assertCalls([['POST', 'chat.postMessage', { channel: C, text, unfurl_links: 'true' }]]);
  });

  test('blocks arrive as one field of JSON text that parses back to the same array', async () => {
    const blocks = [
      { type: 'section', text: { type: 'mrkdwn', text: '*Deploy* & rollback = safe + sound 🎉\nline two' } },
      { type: 'context', elements: [{ type: 'plain_text', text: 'a "quoted" 100% value', emoji: true }] },
    ];
    route({ 'chat.update': formOnly((f) => ({ channel: f['channel'], ts: f['ts'], text: f['text'] })) });
    assert.deepEqual(await ok('slack_update_message', { channel: C, ts: TS, text: 'fallback', blocks }), {
      channel: C,
      ts: TS,
      text: 'fallback',
    });
    const field = new URLSearchParams(upstream.last().body).get('blocks');
    assert.equal(typeof field, 'string');
    assert.deepEqual(JSON.parse(field!), blocks);
    assertCalls([['POST', 'chat.update', { channel: C, ts: TS, text: 'fallback', blocks }]]);
  });
});

describe('slack errors: one mapping for ok:false, 429 and broken answers', () => {
  const post = { channel: C, text: 'hi' };
  const okFalse = (body: Record<string, unknown>, status = 200): Record<string, Reply> => ({
    'chat.postMessage': () => ({ status, json: { ok: false, ...body } }),
  });

  const ERRORS: { name: string; replies: Record<string, Reply>; pattern: RegExp }[] = [
    {
      name: 'not_in_channel says to join first',
      replies: okFalse({ error: 'not_in_channel' }),
      pattern: /"not_in_channel".*chat\.postMessage.*join it first with slack_join_channel/,
    },
    {
      name: 'channel_not_found',
      replies: okFalse({ error: 'channel_not_found' }),
      pattern: /"channel_not_found".*slack_list_channels/,
    },
    {
      name: 'missing_scope names needed and granted scopes',
      replies: okFalse({ error: 'missing_scope', needed: 'chat:write', provided: 'channels:read,users:read' }),
      pattern: /"missing_scope".*needed: chat:write; granted: channels:read,users:read.*reconnect/,
    },
    {
      name: 'invalid_auth asks to reconnect',
      replies: okFalse({ error: 'invalid_auth' }, 401),
      pattern: /"invalid_auth".*reconnect Slack/,
    },
    {
      name: 'token_revoked asks to reconnect',
      replies: okFalse({ error: 'token_revoked' }),
      pattern: /"token_revoked".*reconnect Slack/,
    },
    {
      name: "invalid_arguments carries Slack's messages",
      replies: okFalse({
        error: 'invalid_arguments',
        response_metadata: { messages: ['[ERROR] missing required field: channel'] },
      }),
      pattern: /"invalid_arguments".*missing required field: channel/,
    },
    {
      name: 'an unknown code is still named',
      replies: okFalse({ error: 'some_new_error' }),
      pattern: /"some_new_error" from chat\.postMessage/,
    },
    {
      name: '429 gives the Retry-After time',
      replies: {
        'chat.postMessage': () => ({
          status: 429,
          headers: { 'retry-after': '30' },
          json: { ok: false, error: 'ratelimited' },
        }),
      },
      pattern: /rate limited chat\.postMessage: retry after 30 s/,
    },
    {
      name: 'a non-JSON 502 is reported, not passed through',
      replies: { 'chat.postMessage': () => ({ status: 502, body: '<html>Bad Gateway</html>' }) },
      pattern: /HTTP 502 without a JSON body/,
    },
  ];
  for (const e of ERRORS) {
    test(e.name, async () => {
      route(e.replies);
      const item = await fails('slack_post_message', post, e.pattern);
      assert.equal(item['code'], 'GW_ERR_SANDBOX_HANDLER_THREW');
      assertCalls([['POST', 'chat.postMessage', { ...post, unfurl_links: 'true' }]]);
    });
  }

  test('an ok:false on a read (GET) is an error too, never a result', async () => {
    route({ 'conversations.history': { ok: false, error: 'not_in_channel' } });
    await fails('slack_get_channel_history', { channel: C }, /"not_in_channel" from conversations\.history/);
  });

  test('a channel name nobody can see is a clear error before any write', async () => {
    route({ 'conversations.list': { channels: [{ id: 'C0RANDOM01', name: 'random' }], ...END } });
    await fails(
      'slack_post_message',
      { channel: '#nope', text: 'hi' },
      /No channel named "#nope".*slack_list_channels/,
    );
    assert.deepEqual(
      upstream.requests.map((r) => r.path),
      ['/api/conversations.list'],
    );
  });

  test('a user that is neither an ID nor an email is refused without a request', async () => {
    route({});
    await fails('slack_open_dm', { users: ['bob'] }, /neither a Slack user ID.*slack_list_users/);
    assert.equal(upstream.requests.length, 0);
  });

  test('a message in neither the history nor a thread is message_not_found', async () => {
    route(FAKE_STORE);
    await fails(
      'slack_get_message',
      { channel: C, ts: '1712345700.000100' },
      /"message_not_found": no message with this timestamp/,
    );
    assert.deepEqual(
      upstream.requests.map((r) => r.path),
      ['/api/conversations.history', '/api/conversations.replies'],
    );
  });

  test('a reply that is not in the thread named by thread_ts is message_not_found', async () => {
    route(FAKE_STORE);
    await fails('slack_get_message', { channel: C, ts: '1712345900.000100', thread_ts: TS }, /"message_not_found"/);
    assert.deepEqual(
      upstream.requests.map((r) => r.path),
      ['/api/conversations.replies'],
    );
  });

  test('any other error of the thread look-up is reported as it is', async () => {
    route({
      'conversations.history': { messages: [] },
      'conversations.replies': {
        ok: false,
        error: 'missing_scope',
        needed: 'channels:history',
        provided: 'chat:write',
      },
    });
    await fails('slack_get_message', { channel: C, ts: TS }, /"missing_scope" from conversations\.replies/);
  });

  test('an unreadable post_at is refused without a request', async () => {
    route({});
    await fails('slack_schedule_message', { channel: C, text: 'x', post_at: 'next tuesday-ish' }, /post_at must be/);
    assert.equal(upstream.requests.length, 0);
  });

  test('arguments that break the schema never reach Slack', async () => {
    route({});
    const badTs = await fails(
      'slack_add_reaction',
      { channel: C, ts: 'yesterday', emoji: 'eyes' },
      /slack_add_reaction: ts:/,
    );
    const badLimit = await fails('slack_list_channels', { limit: 5000 }, /slack_list_channels: limit:/);
    const badName = await fails('slack_create_channel', { name: 'Launch Plans' }, /slack_create_channel: name:/);
    for (const item of [badTs, badLimit, badName]) assert.equal(item['code'], 'GW_ERR_VALIDATION_INVALID_ARGS');
    assert.equal(upstream.requests.length, 0);
  });
});

describe('slack reads: a lone surrogate in a query-string argument', () => {
  test('is sent as U+FFFD (%EF%BF%BD), as URLSearchParams sends it in a write, not a failure', async () => {
    route({
      'search.messages': { messages: { total: 0, matches: [], paging: { count: 20, total: 0, page: 1, pages: 0 } } },
    });
    assert.deepEqual(await ok('slack_search_messages', { query: 'deploy \uD800 now' }), {
      total: 0,
      matches: [],
      next: null,
    });
    assertCalls([
      [
        'GET',
        'search.messages',
        { query: 'deploy \uFFFD now', count: '20', page: '1', sort: 'timestamp', sort_dir: 'desc' },
      ],
    ]);
    assert.match(upstream.last().url, /[?&]query=deploy%20%EF%BF%BD%20now(&|$)/);
  });
});

// ---------- file contents: files.slack.com, and where the token never goes ----------
describe('slack files: upload and download through files.slack.com', () => {
  let api: Upstream;
  let files: Upstream;
  let cdn: Upstream;
  let fgw: Gateway;
  const BODY_CAP = 65536;
  before(async () => {
    api = await startUpstream();
    files = await startUpstream();
    cdn = await startUpstream();
    // the CDN host is mapped too, so that a request reaching it would be seen here: none may. A
    // request body cap below the arguments cap, so that an upload over it can be tried
    fgw = await startPluginGateway(
      'slack',
      api,
      { token: TOKEN },
      {
        more: { 'https://files.slack.com': files, 'https://cdn.slack-edge.com': cdn },
        policy: { http: { maxRequestBodyBytes: BODY_CAP } },
      },
    );
  });
  after(async () => {
    await fgw?.close();
    for (const u of [api, files, cdn]) await u?.close();
  });

  const UPLOAD_URL = 'https://files.slack.com/upload/v1/CwABAAAAXgsAAQAAAA';
  const F = 'F0NEWFILE01';
  const DOWNLOAD = `https://files.slack.com/files-pri/T0TEAM0001-${F}/download/notes.txt`;
  const fileInfo = (extra: Record<string, unknown> = {}) => ({
    id: F,
    name: 'notes.txt',
    title: 'Notes',
    mimetype: 'text/plain',
    filetype: 'text',
    mode: 'hosted',
    size: 11,
    user: 'U0ALICE001',
    created: 1712300000,
    permalink: `https://acme.slack.com/files/U0ALICE001/${F}/notes.txt`,
    url_private: `https://files.slack.com/files-pri/T0TEAM0001-${F}/notes.txt`,
    url_private_download: DOWNLOAD,
    ...extra,
  });
  /** Slack's Web API on the api stand-in: each method's body, `ok: true` added. */
  function webApi(replies: Record<string, Record<string, unknown>>): void {
    for (const u of [api, files, cdn]) u.requests.length = 0;
    api.setHandler((req) => {
      const reply = replies[req.path.replace(/^\/api\//, '')];
      // anything else stands for Slack's sign-in page, which a request without the token is sent to
      return reply
        ? { json: { ok: true, ...reply } }
        : { body: '<html>Sign in to Slack</html>', headers: { 'content-type': 'text/html; charset=utf-8' } };
    });
  }
  async function run(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    return await fgw.execute(tool, args);
  }

  test('upload: an upload URL, the bytes POSTed to it, then the upload completed and shared in the channel', async () => {
    webApi({
      'files.getUploadURLExternal': { upload_url: UPLOAD_URL, file_id: F },
      'files.completeUploadExternal': { files: [{ ...fileInfo(), channels: [C] }] },
    });
    files.setHandler(() => ({ body: 'OK - 11', headers: { 'content-type': 'text/plain' } }));
    const item = await run('slack_upload_file', {
      filename: 'notes.txt',
      content: 'hello world',
      channel: C,
      title: 'Notes',
      initial_comment: 'Here are the notes',
    });
    assert.deepEqual(item['result'], {
      file: {
        id: F,
        name: 'notes.txt',
        title: 'Notes',
        filetype: 'text',
        size: 11,
        user: 'U0ALICE001',
        created: 1712300000,
        channels: [C],
        permalink: `https://acme.slack.com/files/U0ALICE001/${F}/notes.txt`,
      },
      shared_in: C,
    });
    assert.deepEqual(
      api.requests.map((r) => [r.method, r.path, Object.fromEntries(new URLSearchParams(r.body))]),
      [
        ['POST', '/api/files.getUploadURLExternal', { filename: 'notes.txt', length: '11' }],
        [
          'POST',
          '/api/files.completeUploadExternal',
          { files: JSON.stringify([{ id: F, title: 'Notes' }]), channel_id: C, initial_comment: 'Here are the notes' },
        ],
      ],
    );
    for (const r of api.requests) {
      assert.equal(r.headers['content-type'], FORM);
      assert.equal(r.headers.authorization, `Bearer ${TOKEN}`);
    }
    assert.equal(files.requests.length, 1);
    const put = files.requests[0]!;
    assert.deepEqual([put.method, put.path, put.body], ['POST', '/upload/v1/CwABAAAAXgsAAQAAAA', 'hello world']);
    assert.equal(put.headers['content-type'], 'application/octet-stream');
    assert.equal(
      put.headers.authorization,
      `Bearer ${TOKEN}`,
      'the token goes to Slack hosts only: files.slack.com is one',
    );
  });

  test('upload: base64 content is sent as its bytes; without a channel the file stays private, and says so', async () => {
    webApi({
      'files.getUploadURLExternal': { upload_url: UPLOAD_URL, file_id: F },
      'files.completeUploadExternal': { files: [{ id: F, name: 'h.txt', title: 'h.txt' }] },
    });
    files.setHandler(() => ({ body: 'OK - 6' }));
    const item = await run('slack_upload_file', {
      filename: 'h.txt',
      content_base64: Buffer.from('héllo', 'utf8').toString('base64'),
      alt_text: 'a greeting',
    });
    assert.deepEqual(item['result'], {
      file: { id: F, name: 'h.txt', title: 'h.txt' },
      shared_in: null,
      note: 'Not shared in any channel: only you can see it until it is shared.',
    });
    assert.deepEqual(Object.fromEntries(new URLSearchParams(api.requests[0]!.body)), {
      filename: 'h.txt',
      length: '6',
      alt_txt: 'a greeting',
    });
    assert.deepEqual(Object.fromEntries(new URLSearchParams(api.requests[1]!.body)), {
      files: JSON.stringify([{ id: F, title: 'h.txt' }]),
    });
    assert.equal(files.requests[0]!.body, 'héllo');
  });

  test('upload: an upload URL outside files.slack.com is never used', async () => {
    webApi({ 'files.getUploadURLExternal': { upload_url: 'https://cdn.slack-edge.com/upload/x', file_id: F } });
    const item = await run('slack_upload_file', { filename: 'a.txt', content: 'x' });
    assert.match(
      String(item['error']),
      /Slack gave a file URL outside https:\/\/files\.slack\.com\/ for file upload: it is not used/,
    );
    assert.deepEqual([api.requests.length, files.requests.length, cdn.requests.length], [1, 0, 0]);
  });

  test('upload: empty, both or neither contents, a thread without a channel, and over the body cap: refused before any request', async () => {
    webApi({});
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ filename: 'a.txt', content: '' }, /empty/],
      [{ filename: 'a.txt' }, /exactly one of `content`/],
      [{ filename: 'a.txt', content: 'x', content_base64: 'eA==' }, /exactly one of `content`/],
      [{ filename: 'a.txt', content: 'x', thread_ts: TS }, /`thread_ts` needs `channel`/],
      [
        { filename: 'a.txt', content: 'x'.repeat(BODY_CAP + 1) },
        /is 65537 bytes, over the gateway's limit of 65536 bytes for one request/,
      ],
    ];
    for (const [args, pattern] of refusals)
      assert.match(String((await run('slack_upload_file', args))['error']), pattern);
    assert.equal(api.requests.length + files.requests.length, 0);
  });

  test('upload: a failed byte upload is worded, and the upload is not completed', async () => {
    webApi({ 'files.getUploadURLExternal': { upload_url: UPLOAD_URL, file_id: F } });
    files.setHandler(() => ({ status: 500, body: 'boom' }));
    const item = await run('slack_upload_file', { filename: 'a.txt', content: 'x' });
    assert.match(String(item['error']), /Slack file upload answered HTTP 500 without a JSON body: retry later/);
    assert.equal(api.requests.length, 1, 'files.completeUploadExternal is not called');
  });

  test('download: files.info, then url_private_download on files.slack.com with the token; text comes in windows', async () => {
    webApi({ 'files.info': { file: fileInfo() } });
    files.setHandler(() => ({ body: 'hello world', headers: { 'content-type': 'text/plain' } }));
    const item = await run('slack_download_file', { file: F, max_chars: 1000, offset: 6 });
    const r = item['result'] as Record<string, unknown>;
    assert.deepEqual(
      [r['mimetype'], r['encoding'], r['content'], r['total_chars'], r['offset'], r['next_offset']],
      ['text/plain', 'text', 'world', 11, 6, null],
    );
    assert.deepEqual(Object.fromEntries(api.requests[0]!.query), { file: F });
    const get = files.requests[0]!;
    assert.deepEqual([get.method, get.path], ['GET', `/files-pri/T0TEAM0001-${F}/download/notes.txt`]);
    assert.equal(get.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(get.headers.accept, '*/*');
  });

  test('download: an image comes back as an image, other bytes as base64', async () => {
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(40, 7)]);
    webApi({
      'files.info': { file: fileInfo({ name: 'p.png', mimetype: 'image/png', filetype: 'png', size: png.length }) },
    });
    files.setHandler(() => ({ body: png, headers: { 'content-type': 'image/png' } }));
    const image = (await run('slack_download_file', { file: F }))['result'] as Record<string, any>;
    assert.deepEqual(image['image'], { _mcpImage: { data: png.toString('base64'), mimeType: 'image/png' } });
    const pdf = Buffer.from('%PDF-1.7\n\x00\x01\x02binary', 'latin1');
    webApi({ 'files.info': { file: fileInfo({ name: 'p.pdf', mimetype: 'application/pdf', filetype: 'pdf' }) } });
    files.setHandler(() => ({ body: pdf, headers: { 'content-type': 'application/pdf' } }));
    const bin = (await run('slack_download_file', { file: F }))['result'] as Record<string, unknown>;
    assert.deepEqual([bin['encoding'], bin['content_base64']], ['base64', pdf.toString('base64')]);
    const forced = await run('slack_download_file', { file: F, as: 'text' });
    assert.match(String(forced['error']), /holds binary data: download it with as "base64"/);
  });

  test('download: a file hosted outside Slack is not fetched; its link is returned', async () => {
    webApi({
      'files.info': {
        file: fileInfo({
          mode: 'external',
          is_external: true,
          external_type: 'gdrive',
          url_private: 'https://docs.google.com/document/d/abc',
          url_private_download: undefined,
        }),
      },
    });
    const r = (await run('slack_download_file', { file: F }))['result'] as Record<string, unknown>;
    assert.deepEqual([r['content'], r['external_url']], [null, 'https://docs.google.com/document/d/abc']);
    assert.match(String(r['note']), /hosted outside Slack \(gdrive\)/);
    assert.equal(files.requests.length + cdn.requests.length, 0);
  });

  test('download: a redirect to another Slack origin is followed without the token (a sign-in page is said so)', async () => {
    webApi({ 'files.info': { file: fileInfo() } });
    files.setHandler(() => ({ status: 302, headers: { location: 'https://slack.com/signin?redir=%2Ffiles-pri' } }));
    const item = await run('slack_download_file', { file: F });
    assert.match(String(item['error']), /answered the download of F0NEWFILE01 with a sign-in page .*files:read/);
    assert.equal(files.requests[0]!.headers.authorization, `Bearer ${TOKEN}`);
    const hop = api.requests.find((r) => r.path === '/signin');
    assert.ok(hop, 'the redirect to slack.com was followed');
    assert.equal(hop.headers.authorization, undefined, 'the token does not follow a redirect to another origin');
  });

  test('download: a redirect to a CDN host the plugin does not declare is refused; the CDN sees nothing', async () => {
    webApi({ 'files.info': { file: fileInfo() } });
    files.setHandler(() => ({ status: 302, headers: { location: 'https://cdn.slack-edge.com/f/notes.txt?sig=1' } }));
    const item = await run('slack_download_file', { file: F });
    assert.match(
      String(item['error']),
      /redirected the download of F0NEWFILE01 away from files\.slack\.com, and the gateway does not follow it \(GW_ERR_BRIDGE_HOST_NOT_ALLOWED/,
    );
    assert.equal(cdn.requests.length, 0, 'nothing reached the CDN, so neither did the token');
  });

  test('download: a redirect within files.slack.com keeps the token (same origin)', async () => {
    webApi({ 'files.info': { file: fileInfo() } });
    files.setHandler((req) =>
      req.path.endsWith('/notes.txt') && !req.path.includes('/v2/')
        ? { status: 302, headers: { location: `https://files.slack.com/v2/files-pri/${F}/notes.txt` } }
        : { body: 'moved text', headers: { 'content-type': 'text/plain' } },
    );
    const r = (await run('slack_download_file', { file: F }))['result'] as Record<string, unknown>;
    assert.equal(r['content'], 'moved text');
    assert.deepEqual(
      files.requests.map((q) => q.headers.authorization),
      [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`],
    );
  });

  test('download: a file whose base64 would be over the result cap is refused before it is fetched', async () => {
    webApi({
      'files.info': { file: fileInfo({ name: 'big.bin', mimetype: 'application/octet-stream', size: 20_000_000 }) },
    });
    const item = await run('slack_download_file', { file: F });
    assert.match(
      String(item['error']),
      /is 20000000 bytes: as base64 it is over the largest result this gateway returns/,
    );
    assert.equal(files.requests.length, 0);
  });
});
