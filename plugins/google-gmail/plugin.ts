/**
 * @module plugins/google-gmail/plugin
 * Gmail API v1 tools acting as the connected Google user's mailbox (users/me): search, read a
 * message or a whole thread, send or draft (new or as a threaded reply), change labels, trash. The
 * tool table only: handlers are in src/, one file per area, with the MIME reader and writer apart.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import { createDraft, sendEmail } from './src/compose.js';
import { listLabels, modifyLabels, trashEmail } from './src/labels.js';
import { getEmail, getThread, searchEmails } from './src/messages.js';

export default definePlugin({
  name: 'google-gmail',
  version: '1.0.0',
  displayName: 'Gmail (Google)',
  description:
    "Search, read, send, reply to and draft Gmail email, read whole conversation threads, and archive, mark read or unread, star, label or trash messages. Acts as the connected Google account's mailbox.",
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    authorizationParams: { access_type: 'offline', prompt: 'consent' },
    tokenUrl: 'https://oauth2.googleapis.com/token',
    revocationUrl: 'https://oauth2.googleapis.com/revoke',
    scopes: ['https://www.googleapis.com/auth/gmail.modify'],
    inject: { header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['gmail.googleapis.com'],
  tools: {
    gmail_search_emails: searchEmails,
    gmail_get_email: getEmail,
    gmail_get_thread: getThread,
    gmail_send_email: sendEmail,
    gmail_create_draft: createDraft,
    gmail_modify_labels: modifyLabels,
    gmail_list_labels: listLabels,
    gmail_trash_email: trashEmail,
  },
});
