/**
 * @module plugins/slack/plugin
 * Slack Web API tools acting with the connected user's token (OAuth v2 user scopes; see README.md).
 * The tool table, in the order agents see it; the tools live in src/ by area.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import {
  archiveChannel,
  createChannel,
  getChannelInfo,
  inviteToChannel,
  joinChannel,
  leaveChannel,
  listChannelMembers,
  listChannels,
  setChannelTopic,
} from './src/channels.js';
import { downloadFile, listFiles, uploadFile } from './src/files.js';
import { addReaction, listPins, pinMessage, removeReaction, unpinMessage } from './src/marks.js';
import {
  deleteMessage,
  getChannelHistory,
  getMessage,
  getPermalink,
  getThreadReplies,
  postMessage,
  replyInThread,
  searchMessages,
  updateMessage,
} from './src/messages.js';
import { getUserInfo, listUsers, lookupUserByEmail, openDm, whoami } from './src/people.js';
import { deleteScheduledMessage, listScheduledMessages, scheduleMessage } from './src/scheduled.js';

const USER_SCOPES = [
  'channels:history',
  'channels:read',
  'channels:write',
  'chat:write',
  'files:read',
  'files:write',
  'groups:history',
  'groups:read',
  'groups:write',
  'im:history',
  'im:read',
  'im:write',
  'mpim:history',
  'mpim:read',
  'mpim:write',
  'pins:read',
  'pins:write',
  'reactions:write',
  'search:read',
  'users:read',
  'users:read.email',
];

export default definePlugin({
  name: 'slack',
  version: '1.0.0',
  displayName: 'Slack',
  description:
    'Read and search Slack channels, threads and DMs, post, reply, edit, schedule and delete messages, react, pin, upload and download files, manage channels and find people — acting as the connected Slack user.',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://slack.com/oauth/v2/authorize',
    tokenUrl: 'https://slack.com/api/oauth.v2.access',
    revocationUrl: 'https://slack.com/api/auth.revoke',
    // user scopes go in `user_scope`, not `scope` (which is for bot tokens)
    scopes: [],
    scopeSeparator: ',',
    pkce: false,
    authorizationParams: { user_scope: USER_SCOPES.join(',') },
    clientAuth: 'body',
    tokenPath: 'authed_user',
    // files.slack.com holds file contents (downloads need the token; uploads go there too)
    inject: { hosts: ['slack.com', 'files.slack.com'], header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['slack.com', 'files.slack.com'],
  tools: {
    slack_whoami: whoami,
    slack_list_channels: listChannels,
    slack_get_channel_info: getChannelInfo,
    slack_list_channel_members: listChannelMembers,
    slack_get_channel_history: getChannelHistory,
    slack_get_thread_replies: getThreadReplies,
    slack_get_message: getMessage,
    slack_post_message: postMessage,
    slack_reply_in_thread: replyInThread,
    slack_update_message: updateMessage,
    slack_delete_message: deleteMessage,
    slack_schedule_message: scheduleMessage,
    slack_list_scheduled_messages: listScheduledMessages,
    slack_delete_scheduled_message: deleteScheduledMessage,
    slack_add_reaction: addReaction,
    slack_remove_reaction: removeReaction,
    slack_search_messages: searchMessages,
    slack_list_users: listUsers,
    slack_get_user_info: getUserInfo,
    slack_lookup_user_by_email: lookupUserByEmail,
    slack_open_dm: openDm,
    slack_join_channel: joinChannel,
    slack_leave_channel: leaveChannel,
    slack_create_channel: createChannel,
    slack_set_channel_topic: setChannelTopic,
    slack_invite_to_channel: inviteToChannel,
    slack_archive_channel: archiveChannel,
    slack_pin_message: pinMessage,
    slack_unpin_message: unpinMessage,
    slack_list_pins: listPins,
    slack_get_permalink: getPermalink,
    slack_list_files: listFiles,
    slack_upload_file: uploadFile,
    slack_download_file: downloadFile,
  },
});
