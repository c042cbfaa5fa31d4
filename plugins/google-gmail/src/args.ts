/**
 * @module plugins/google-gmail/src/args
 * The arguments several tools share (ids, the fields of an email to send or save) and the two kinds
 * of tool annotations.
 */
import { z, type ToolAnnotations } from 'workbench/plugin-sdk';

/** a message, thread or label id as Gmail gives it */
export const ID = /^[A-Za-z0-9_-]{1,100}$/;
export const id = (description: string) => z.string().regex(ID).describe(description);

const recipients = (description: string) => z.array(z.string().min(3).max(320)).max(50).optional().describe(description);

/** An email to send or save; the descriptions of bcc and replyToMessageId are the tool's own. */
export const emailArgs = (descriptions: { bcc: string; replyToMessageId: string }) => ({
  to: recipients('Recipients, each "name@example.com" or "Name <name@example.com>".'),
  cc: recipients('Cc recipients.'),
  bcc: recipients(descriptions.bcc),
  subject: z.string().max(998).optional().describe('Subject line; required unless replying.'),
  body: z.string().max(500000).describe('Plain-text body.'),
  replyToMessageId: id(descriptions.replyToMessageId).optional(),
});

/** A tool that only reads the mailbox. */
export const read = (title: string): ToolAnnotations => ({ title, readOnlyHint: true, openWorldHint: true });

/** A tool that changes the mailbox (or sends). */
export const write = (title: string, { destructive, idempotent }: { destructive: boolean; idempotent: boolean }): ToolAnnotations => ({ title, readOnlyHint: false, destructiveHint: destructive, idempotentHint: idempotent, openWorldHint: true });
