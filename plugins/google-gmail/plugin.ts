/**
 * @module plugins/google-gmail/plugin
 * Gmail API v1 tools acting as the connected Google user's mailbox (users/me): search, read a
 * message or a whole thread, send or draft (new or as a threaded reply), change labels, trash, and
 * read the mailbox's profile (its address and totals). The
 * tool table only: handlers are in src/, one file per area, with the MIME reader and writer apart.
 */
import { definePlugin, googleOAuth } from 'workbench/plugin-sdk';
import { createDraft, sendEmail } from './src/compose.js';
import { listLabels, modifyLabels, trashEmail } from './src/labels.js';
import { getEmail, getThread, searchEmails } from './src/messages.js';
import { getProfile } from './src/profile.js';

export default definePlugin({
  name: 'google-gmail',
  version: '1.0.0',
  displayName: 'Gmail (Google)',
  description:
    "Search, read, send, reply to and draft Gmail email, read whole conversation threads, archive, mark read or unread, star, label or trash messages, and read the mailbox's address and totals. Acts as the connected Google account's mailbox.",
  auth: googleOAuth(['https://www.googleapis.com/auth/gmail.modify'], ['gmail.googleapis.com']),
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
    gmail_get_profile: getProfile,
  },
});
