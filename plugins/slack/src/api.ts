/**
 * @module plugins/slack/src/api
 * Calling Slack's Web API and the one place a Slack answer becomes an error an agent can act on.
 * Reads are GET with a query string, writes are POST with a form body: every method accepts form
 * data, while only most take JSON, and the others silently ignore a JSON body's arguments. Slack
 * answers most failures with HTTP 200 and `{ok: false, error: "<code>"}`, so a 2xx answer is
 * checked for `ok: true` too. The gateway adds the user's token (Authorization: Bearer). File
 * contents are not Web API methods: they go to and come from files.slack.com (`fileRequest`).
 */
import { createApi, type PluginContext, type QueryParams, type RequestOptions } from 'workbench/plugin-sdk';

/** What Slack's `error` codes mean for the caller, and what to do next. */
export const MEANINGS: Record<string, string> = {
  not_in_channel:
    'you are not a member of this channel: join it first with slack_join_channel (public channels) or ask a member to invite you (private channels)',
  channel_not_found:
    'no channel with this ID is visible to you: check it with slack_list_channels (private channels and DMs are visible only to their members)',
  is_archived: 'the channel is archived, so it cannot be changed or posted to',
  already_archived: 'the channel is already archived',
  message_not_found:
    'no message with this timestamp in this channel: check the ts (e.g. with slack_get_channel_history)',
  thread_not_found: 'no thread starts at this timestamp in this channel',
  user_not_found: 'no user with this ID or email in the workspace',
  users_not_found: 'one or more of these users do not exist: check the IDs with slack_list_users',
  already_reacted: 'you already added this reaction to the message',
  no_reaction: 'you have not added this reaction to the message, so there is nothing to remove',
  invalid_name:
    'the emoji or channel name is not valid (emoji names have no colons, e.g. "thumbsup"; channel names are lower-case, without spaces or periods, at most 80 characters)',
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
  cant_archive_general: "the workspace's general channel cannot be archived",
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

/** The fields every Web API answer may carry. */
export interface SlackAnswer {
  ok?: boolean;
  error?: string;
  needed?: string;
  provided?: string;
  warning?: string;
  response_metadata?: { next_cursor?: string; messages?: string[] };
}

/** A Slack failure; `slackCode` is Slack's `error` code (or http_<status>). Named Error: the agent reads only the message. */
export class SlackError extends Error {
  slackCode?: string;
}

/** The one place where a Slack answer becomes an error message an agent can act on. */
function slackError(method: string, status: number, retryAfter: string | null, data: unknown): SlackError {
  const answer = data as SlackAnswer | null | undefined;
  if (status === 429 || answer?.error === 'ratelimited') {
    const wait = retryAfter ? `retry after ${retryAfter} s` : 'retry later';
    return new SlackError(`Slack rate limited ${method}: ${wait}.`);
  }
  if (!answer || typeof answer !== 'object')
    return new SlackError(`Slack ${method} answered HTTP ${status} without a JSON body: retry later.`);
  const code = typeof answer.error === 'string' ? answer.error : `http_${status}`;
  let meaning = MEANINGS[code];
  if (code === 'missing_scope') {
    meaning = `the Slack connection lacks the scope this needs (needed: ${answer.needed || 'unknown'}; granted: ${answer.provided || 'unknown'}): reconnect Slack and approve the missing scope`;
  }
  if (!meaning)
    meaning = status >= 500 ? 'Slack had a server error: retry later' : 'see https://api.slack.com/methods/' + method;
  const messages = answer.response_metadata?.messages;
  const details = Array.isArray(messages) ? ` (${messages.join('; ')})` : '';
  const err = new SlackError(`Slack error "${code}" from ${method}: ${meaning}${details}.`);
  err.slackCode = code;
  return err;
}

const api = createApi({
  base: 'https://slack.com/api/',
  provider: 'Slack',
  failure: (f) => slackError(String(f.options['method']), f.status, f.retryAfter, f.data),
});

/** Drops undefined, null and empty-string values (results must be plain JSON; Slack ignores absent args). */
export function compact<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(obj).filter(([, v]) => v !== undefined && v !== null && v !== ''),
  ) as Partial<T>;
}

/** A write's arguments: absent, null and '' values are left out; structured ones (blocks) go as JSON text. */
export type Form = Record<string, string | number | boolean | object | null | undefined>;

function formBody(params: Form): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(compact(params)))
    form.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  return form.toString();
}

/** Resolves to a method's answer when it says ok; anything else is the method's error. */
async function call<T>(
  ctx: PluginContext,
  verb: 'GET' | 'POST',
  method: string,
  options: Partial<RequestOptions>,
): Promise<T & SlackAnswer> {
  // `method` is for slackError; a body that is not JSON is worded there too (lenient)
  const answer = await api.request(ctx, verb, method, { ...options, action: `call ${method}`, method, lenient: true });
  const data = answer.data as (T & SlackAnswer) | string | undefined;
  if (!data || typeof data !== 'object' || data.ok !== true)
    throw slackError(method, answer.status, answer.headers.get('retry-after'), data);
  return data;
}

/** A read: GET with a query string (query() leaves out undefined, null and '' as Slack wants). */
export function read<T = SlackAnswer>(
  ctx: PluginContext,
  method: string,
  params: QueryParams = {},
): Promise<T & SlackAnswer> {
  return call<T>(ctx, 'GET', method, { query: params });
}

/** A write: POST with a form body, which every Web API method accepts. */
export function write<T = SlackAnswer>(ctx: PluginContext, method: string, params: Form): Promise<T & SlackAnswer> {
  return call<T>(ctx, 'POST', method, {
    rawBody: formBody(params),
    contentType: 'application/x-www-form-urlencoded; charset=utf-8',
  });
}

/** Slack's cursor for the next page, or null on the last. */
export const nextCursor = (data: SlackAnswer): string | null => data.response_metadata?.next_cursor || null;

/** Where Slack keeps file contents; the only host a file's bytes are sent to or read from. */
export const FILES_ORIGIN = 'https://files.slack.com/';

/**
 * A request for file contents on files.slack.com (an upload URL, a file's url_private_download):
 * `url` must be on that host, which the manifest binds the token to as well; a failed answer is
 * worded by the same mapping as a Web API method (`what` names it).
 */
export function fileRequest(
  ctx: PluginContext,
  verb: 'GET' | 'POST',
  url: string,
  what: string,
  options: Partial<RequestOptions>,
): ReturnType<typeof api.request> {
  if (!url.startsWith(FILES_ORIGIN))
    throw new SlackError(`Slack gave a file URL outside ${FILES_ORIGIN} for ${what}: it is not used.`);
  return api.request(ctx, verb, url, { ...options, action: what, method: what });
}
