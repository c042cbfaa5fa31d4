/**
 * @module plugins/google-gmail/src/compose
 * Sending an email and saving a draft, new or as a reply: a reply reads the original first (its
 * thread, Message-ID and References, subject, and whom to answer: its Reply-To or From, or, for a
 * message one sent, its To), and every recipient is checked before anything is sent.
 */
import { changes, defineTool, path, z, type PluginContext } from 'workbench/plugin-sdk';
import { gmail } from './api.js';
import { emailArgs } from './args.js';
import { decodeWords, headerMap, labelsOf, type GmailMessage } from './mime-read.js';
import { formatAddress, parseAddressList, toRaw, usableAddress, type Parsed } from './mime-write.js';

const REPLY_HEADERS = ['Subject', 'Message-ID', 'References', 'From', 'Reply-To', 'To'];
/** A reply's References: the thread's first id and the last ones (RFC 5322 §3.6.4), one per folded line. */
const MAX_REFERENCES = 21;

/** The message being answered: its thread, Message-ID, References, subject, and who a reply goes to by default. */
async function replyContext(ctx: PluginContext, messageId: string) {
  const query = { format: 'metadata', metadataHeaders: REPLY_HEADERS };
  const m = await gmail<GmailMessage>(ctx, 'GET', path`/messages/${messageId}`, {
    query,
    action: `read message ${messageId} to reply to it`,
  });
  const h = headerMap(m.payload?.headers);
  const mid = (h['message-id'] || '').trim();
  const ids: string[] = (h['references'] || '').match(/<[^<>\s]+>/g) ?? [];
  if (mid && !ids.includes(mid)) ids.push(mid);
  const subject = decodeWords(h['subject'] || '').trim();
  // one's own sent message: a reply goes to its recipients (as Gmail's Reply does), not to oneself
  const sent = labelsOf(m).includes('SENT');
  const header = sent ? 'To' : h['reply-to'] ? 'Reply-To' : 'From';
  const references = ids.length > MAX_REFERENCES ? [ids[0], ...ids.slice(-(MAX_REFERENCES - 1))] : ids;
  const recipients = parseAddressList(h[header.toLowerCase()] || '');
  return {
    threadId: m.threadId,
    inReplyTo: mid || undefined,
    references,
    subject: /^re:/i.test(subject) ? subject : `Re: ${subject}`.trim(),
    sent,
    header,
    recipients,
  };
}

const input = (descriptions: { bcc: string; replyToMessageId: string }) => z.object(emailArgs(descriptions));
type EmailArgs = z.output<ReturnType<typeof input>>;

/** The message to send or save, as `raw`: a new one, or a reply threaded on the original. */
async function composed(ctx: PluginContext, args: EmailArgs) {
  let to: Array<string | Parsed> = args.to || [];
  let subject = args.subject;
  let thread: Awaited<ReturnType<typeof replyContext>> | undefined;
  const notes: string[] = [];
  if (args.replyToMessageId) {
    thread = await replyContext(ctx, args.replyToMessageId);
    if (subject === undefined) subject = thread.subject;
    if (!to.length) {
      const { recipients, header } = thread;
      to = recipients.filter((a) => usableAddress(a.address));
      const bad = recipients.filter((a) => !usableAddress(a.address)).map((a) => a.address.slice(0, 100));
      if (bad.length)
        notes.push(`left out of to, not being email addresses (from the original's ${header}): ${bad.join(', ')}`);
      if (!to.length) throw new Error(`The original message's ${header} header has no address to reply to: give to.`);
      if (thread.sent)
        notes.push(
          `message ${args.replyToMessageId} is one you sent, so to defaults to its recipients (its To), not to you`,
        );
    }
  }
  if (subject === undefined)
    throw new Error('subject is required for a new email (it may be omitted only with replyToMessageId).');
  if (!to.length && !(args.cc || []).length && !(args.bcc || []).length)
    throw new Error('Give at least one recipient in to, cc or bcc.');
  const lists = {
    to: to.map((a) => formatAddress('to', a)),
    cc: (args.cc || []).map((a) => formatAddress('cc', a)),
    bcc: (args.bcc || []).map((a) => formatAddress('bcc', a)),
  };
  const raw = toRaw({
    ...lists,
    subject,
    body: args.body,
    inReplyTo: thread?.inReplyTo,
    references: thread?.references,
  });
  return {
    // Gmail's message: a reply names its thread
    message: thread?.threadId ? { raw, threadId: thread.threadId } : { raw },
    // who the email goes to, as addresses: the agent sees exactly whom it wrote to
    recipients: {
      to: lists.to.map((a) => a.address),
      cc: lists.cc.map((a) => a.address),
      bcc: lists.bcc.map((a) => a.address),
    },
    note: notes.length ? `${notes.join('; ')}.` : undefined,
  };
}

export const sendEmail = defineTool({
  description:
    'Send an email from the connected Gmail account, or reply to one: to, cc, bcc, subject and a plain-text body (any language; non-ASCII subjects and names are encoded for you). To reply in the same conversation, set replyToMessageId to the message being answered: the reply joins its thread, carries In-Reply-To and References, and subject ("Re: …") and to (the original sender; for a message you sent, its recipients) default from it. Returns the to, cc and bcc addresses it went to. This sends immediately; use gmail_create_draft to prepare an email for the user to review.',
  input: input({
    bcc: 'Bcc recipients (not shown to the others).',
    replyToMessageId: 'Id of the message this answers (reply in its thread).',
  }),
  annotations: changes('Send email'),
  handler: async (ctx, a) => {
    const { message, recipients, note } = await composed(ctx, a);
    const action = a.replyToMessageId ? `send a reply to message ${a.replyToMessageId}` : 'send the email';
    const sent = await gmail<GmailMessage>(ctx, 'POST', '/messages/send', { body: message, action });
    return {
      id: sent.id,
      threadId: sent.threadId ?? null,
      labels: labelsOf(sent),
      reply: Boolean(a.replyToMessageId),
      ...recipients,
      note,
    };
  },
});

export const createDraft = defineTool({
  description:
    "Save an email as a Gmail draft without sending it, so the user can review and send it from Gmail: to, cc, bcc, subject and a plain-text body; with replyToMessageId it is a draft reply in that message's thread (subject and to default from it). Returns the draft id and its to, cc and bcc addresses. Use gmail_send_email to send right away.",
  input: input({ bcc: 'Bcc recipients.', replyToMessageId: 'Id of the message this draft answers.' }),
  annotations: changes('Create email draft'),
  handler: async (ctx, a) => {
    const { message, recipients, note } = await composed(ctx, a);
    const draft = await gmail<{ id?: string; message?: GmailMessage }>(ctx, 'POST', '/drafts', {
      body: { message },
      action: 'create the draft',
    });
    const m = draft.message;
    return {
      draftId: draft.id,
      messageId: m?.id ?? null,
      threadId: m?.threadId ?? null,
      reply: Boolean(a.replyToMessageId),
      ...recipients,
      note,
    };
  },
});
