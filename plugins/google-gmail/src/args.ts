/**
 * @module plugins/google-gmail/src/args
 * The arguments several tools share (ids, the fields of an email to send or save).
 */
import { z } from 'workbench/plugin-sdk';

/** a message, thread or label id as Gmail gives it */
export const ID = /^[A-Za-z0-9_-]{1,100}$/;
export const id = (description: string) => z.string().regex(ID).describe(description);

const recipients = (description: string) =>
  z.array(z.string().min(3).max(320)).max(50).optional().describe(description);

/** An email to send or save; the descriptions of bcc and replyToMessageId are the tool's own. */
export const emailArgs = (descriptions: { bcc: string; replyToMessageId: string }) => ({
  to: recipients('Recipients, each "name@example.com" or "Name <name@example.com>".'),
  cc: recipients('Cc recipients.'),
  bcc: recipients(descriptions.bcc),
  subject: z.string().max(998).optional().describe('Subject line; required unless replying.'),
  body: z.string().max(500000).describe('Plain-text body.'),
  replyToMessageId: id(descriptions.replyToMessageId).optional(),
});
