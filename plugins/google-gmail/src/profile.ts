/**
 * @module plugins/google-gmail/src/profile
 * The connected mailbox itself: its address and how much it holds (users/me/profile).
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { gmail } from './api.js';

type Profile = { emailAddress?: string; messagesTotal?: number; threadsTotal?: number; historyId?: string };

export const getProfile = defineTool({
  description:
    "Get the connected Gmail account's profile: its email address (who am I in Gmail, which mailbox is connected), the total number of messages and threads in the mailbox, and its current history id.",
  input: z.object({}),
  annotations: reads('Get Gmail profile'),
  handler: async (ctx) => {
    const p = await gmail<Profile>(ctx, 'GET', '/profile', { action: 'read the mailbox profile' });
    return {
      emailAddress: p.emailAddress ?? null,
      messagesTotal: p.messagesTotal ?? null,
      threadsTotal: p.threadsTotal ?? null,
      historyId: p.historyId ?? null,
    };
  },
});
