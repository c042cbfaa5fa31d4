/**
 * @module plugins/google-gmail/src/messages
 * Finding and reading email: search (a page of slim rows, as long as the call's requests allow),
 * one message in full, and a whole thread (its newest messages in full, within the request budget).
 * A message too large for the gateway, or a text part that cannot be fetched, is left out with a
 * note instead of failing the call.
 */
import { defineTool, path, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { gmail, isNotFound, skipReason, SKIPPABLE } from './api.js';
import { ID, id } from './args.js';
import {
  attachmentRow,
  attachmentsOf,
  bodyOf,
  decodeEntities,
  decodeWords,
  headerMap,
  labelsOf,
  textPartsToFetch,
  type GmailMessage,
  type MessagePart,
} from './mime-read.js';

const LIST_HEADERS = ['From', 'To', 'Subject', 'Date'];
const THREAD_HEADERS = ['From', 'To', 'Cc', 'Subject', 'Date'];
/** A thread's messages read in full (newest first); older ones come with their headers only. */
const THREAD_FULL_MESSAGES = 20;
/** Text parts of one message whose body Gmail left out (body.attachmentId only) fetched at most. */
const MAX_TEXT_PART_FETCHES = 4;

/** Requests a call may still make, shared by the reads of one call. */
type Budget = { left: number };

/** A message's text parts fetched apart (fetchTextParts), and those that could not be, with why. */
type TextParts = { fetched: Map<MessagePart, string>; skipped: Array<{ part: MessagePart; reason: string }> };

/** The fields every shape of a message starts with. */
function heads(m: GmailMessage) {
  const h = headerMap(m.payload?.headers);
  const top = {
    id: m.id,
    threadId: m.threadId ?? null,
    date: h['date'] || null,
    from: decodeWords(h['from']) || null,
    to: decodeWords(h['to']) || null,
  };
  return { h, labels: labelsOf(m), top };
}

/** One row of a search result (format=metadata). */
function slimMessage(m: GmailMessage) {
  const { h, labels, top } = heads(m);
  return {
    ...top,
    subject: decodeWords(h['subject']) || '',
    snippet: decodeEntities(m.snippet || ''),
    labels,
    unread: labels.includes('UNREAD'),
  };
}

/**
 * A whole message (format=full): headers, the body as text (cut at maxChars), attachments listed
 * but not downloaded. Text parts it could not fetch are listed with the attachments, and said so.
 */
function fullMessage(m: GmailMessage, maxChars: number, parts: TextParts = { fetched: new Map(), skipped: [] }) {
  const { h, labels, top } = heads(m);
  const notes: string[] = [];
  const found = bodyOf(m.payload, notes, parts.fetched);
  const text = found ? found.text : '';
  const truncated = text.length > maxChars;
  const attachments = attachmentsOf(m.payload);
  const said = notes.length
    ? [`charset ${notes.join(', ')} is not supported: decoded as UTF-8, some characters may be wrong`]
    : [];
  for (const { part, reason } of parts.skipped) {
    const row = attachmentRow(part, null);
    attachments.push(row);
    said.push(
      `a ${part.mimeType} part of the body (partId ${part.partId ?? '?'}${row.size === null ? '' : `, ${row.size} bytes`}) was not read (${reason}): it is listed in attachments`,
    );
  }
  const bodyFormat = found ? (found.html ? 'text from html' : 'text') : 'none';
  const more = {
    cc: decodeWords(h['cc']) || null,
    subject: decodeWords(h['subject']) || '',
    messageId: h['message-id'] || null,
    labels,
    unread: labels.includes('UNREAD'),
  };
  return {
    ...top,
    ...more,
    body: truncated ? `${text.slice(0, maxChars)}…` : text,
    bodyFormat,
    truncated,
    attachments,
    ...(said.length ? { note: `${said.join('; ')}.` } : {}),
  };
}

/** A message as gmail_get_thread gives it. */
function threadMessage(full: ReturnType<typeof fullMessage>) {
  const { id, date, from, to, cc, subject, unread, body, truncated, note } = full;
  const attachments = full.attachments.map(({ filename, mimeType, size }) => ({ filename, mimeType, size }));
  return { id, date, from, to, cc, subject, unread, body, truncated, attachments, ...(note ? { note } : {}) };
}

const messages = (list: { messages?: unknown }): GmailMessage[] =>
  Array.isArray(list.messages) ? (list.messages as GmailMessage[]) : [];

/** Fetches the text parts Gmail gave by attachmentId only while `budget.left` allows; fullMessage lists and names the others. */
async function fetchTextParts(ctx: PluginContext, m: GmailMessage, budget: Budget): Promise<TextParts> {
  const fetched = new Map<MessagePart, string>();
  const skipped: TextParts['skipped'] = [];
  await Promise.all(
    textPartsToFetch(m.payload).map(async (part, k) => {
      if (k >= MAX_TEXT_PART_FETCHES || budget.left <= 0) {
        skipped.push({ part, reason: 'over the requests one call may make' });
        return;
      }
      budget.left--;
      try {
        const a = await gmail<{ data?: unknown }>(
          ctx,
          'GET',
          path`/messages/${m.id}/attachments/${part.body!.attachmentId!}`,
          { action: `read part ${part.partId ?? ''} of message ${m.id}` },
        );
        if (typeof a.data === 'string') fetched.set(part, a.data);
        else skipped.push({ part, reason: 'Gmail gave no data' });
      } catch (err) {
        skipped.push({ part, reason: skipReason(err) || String((err as Error | null)?.message || err).slice(0, 200) });
      }
    }),
  );
  return { fetched, skipped };
}

export const searchEmails = defineTool({
  description:
    'Search the Gmail mailbox (inbox, sent, archived email) for emails received or sent — did I get an email from someone or about a topic, unread mail, messages with attachments — with Gmail search syntax, and get one page of slim rows: id, threadId, date, from, to, subject, snippet, labels, unread. Examples of query: `is:unread in:inbox`, `from:alice@example.com newer_than:7d`, `subject:invoice has:attachment`, `to:me after:2026/01/31 before:2026/03/01`, `label:clients "quarterly report"`. Leave query empty for the latest messages. When `next` is not null, call again with `cursor` set to it. Use gmail_get_email for the body of one message and gmail_get_thread for a whole conversation.',
  input: z.object({
    query: z
      .string()
      .max(2000)
      .optional()
      .describe(
        "Gmail search query, as typed in Gmail's search box (from:, to:, subject:, is:unread, has:attachment, newer_than:2d, after:YYYY/MM/DD, label:, in:sent, …).",
      ),
    maxResults: z.int().min(1).max(20).default(10).describe('Messages per page.'),
    labelIds: z
      .array(z.string().regex(ID))
      .max(10)
      .optional()
      .describe('Only messages carrying all these label ids (INBOX, UNREAD, STARRED, Label_123, …).'),
    includeSpamTrash: z.boolean().default(false).describe('Also search Spam and Trash.'),
    cursor: z.string().max(2000).optional().describe('The `next` value of the previous page; omit for the first page.'),
  }),
  annotations: reads('Search email'),
  handler: async (ctx, a) => {
    // each row costs a metadata request after the list's own: a page is as long as the call's requests allow
    const perPage = Math.max(1, Math.min(a.maxResults, ctx.limits.requestsLeft() - 1));
    const query = {
      q: a.query,
      maxResults: perPage,
      pageToken: a.cursor,
      labelIds: a.labelIds,
      includeSpamTrash: a.includeSpamTrash ? 'true' : undefined,
    };
    const list = await gmail<{ messages?: unknown; resultSizeEstimate?: unknown; nextPageToken?: string }>(
      ctx,
      'GET',
      '/messages',
      { query, action: 'search messages' },
    );
    const rows = await Promise.all(
      messages(list)
        .slice(0, perPage)
        .map(async ({ id }) => {
          const query = { format: 'metadata', metadataHeaders: LIST_HEADERS };
          // a message deleted between the list and the read is left out; any other failure counts
          const m = await gmail<GmailMessage>(ctx, 'GET', path`/messages/${id}`, {
            query,
            action: `read message ${id}`,
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on what the read threw, unchanged
          }).catch((err: unknown) => (isNotFound(err) ? null : Promise.reject(err)));
          return m && slimMessage(m);
        }),
    );
    const found = rows.filter((r) => r !== null);
    return {
      messages: found,
      count: found.length,
      resultSizeEstimate: typeof list.resultSizeEstimate === 'number' ? list.resultSizeEstimate : null,
      next: list.nextPageToken || null,
      ...(perPage < a.maxResults
        ? {
            note: `Pages are ${perPage} messages here (a call may make ${ctx.limits.maxRequests} requests, one per message): pass next for more.`,
          }
        : {}),
    };
  },
});

export const getEmail = defineTool({
  description:
    'Read one Gmail email: from, to, cc, date, subject, labels, its Message-ID and the body as plain text (an HTML-only email is converted to text), plus its attachments listed by filename, type, size and attachmentId (not downloaded). Use it after gmail_search_emails; use gmail_get_thread to read the whole conversation.',
  input: z.object({
    messageId: id('Message id from gmail_search_emails.'),
    maxBodyChars: z
      .int()
      .min(200)
      .max(200000)
      .default(20000)
      .describe('Longest body returned; a longer one is cut and marked truncated.'),
  }),
  annotations: reads('Read email'),
  handler: async (ctx, a) => {
    const at = path`/messages/${a.messageId}`;
    let m: GmailMessage;
    try {
      m = await gmail<GmailMessage>(ctx, 'GET', at, {
        query: { format: 'full' },
        action: `read message ${a.messageId}`,
      });
    } catch (err) {
      const why = skipReason(err);
      if (!why) throw err;
      // the whole message cannot come through: its headers can, with a note saying what is missing
      const meta = await gmail<GmailMessage>(ctx, 'GET', at, {
        query: { format: 'metadata' },
        action: `read the headers of message ${a.messageId}`,
      });
      const note = `The body and attachments of message ${a.messageId} could not be read (${why}): only its headers are here; open it in Gmail to read the rest.`;
      return { ...fullMessage(meta, a.maxBodyChars), body: null, bodyFormat: 'none', attachments: null, note };
    }
    return fullMessage(m, a.maxBodyChars, await fetchTextParts(ctx, m, { left: ctx.limits.requestsLeft() }));
  },
});

export const getThread = defineTool({
  description:
    'Read a whole Gmail conversation (thread): every message oldest first, each with from, to, cc, date, subject, unread, the body as plain text (cut per message) and attachment names. The newest 20 messages are read in full; older ones come with headers only (listed in notRead: read them with gmail_get_email). Use it to catch up on an email discussion before replying; the threadId comes from gmail_search_emails or gmail_get_email.',
  input: z.object({
    threadId: id('Thread id.'),
    maxBodyCharsPerMessage: z
      .int()
      .min(200)
      .max(50000)
      .default(4000)
      .describe('Longest body returned for each message.'),
  }),
  annotations: reads('Read email thread'),
  /**
   * The messages' headers in one request (format=metadata), then the newest THREAD_FULL_MESSAGES in
   * full, five at a time, within the call's request budget (a thread in format=full can be larger
   * than the response cap). Messages not read in full keep their headers, with body null and the
   * reason, and are named in `notRead`.
   */
  handler: async (ctx, a) => {
    const query = { format: 'metadata', metadataHeaders: THREAD_HEADERS };
    const t = await gmail<{ id?: string; messages?: unknown }>(ctx, 'GET', path`/threads/${a.threadId}`, {
      query,
      action: `read thread ${a.threadId}`,
    });
    const all = messages(t).sort((x, y) => Number(x.internalDate || 0) - Number(y.internalDate || 0));
    const per = a.maxBodyCharsPerMessage;
    const budget: Budget = { left: ctx.limits.requestsLeft() };
    const full = new Map<string, GmailMessage>();
    const gone = new Set<string>();
    /** message id → why it is given with its headers only */
    const notRead = new Map(
      all
        .slice(0, -THREAD_FULL_MESSAGES)
        .map((m) => [m.id, `only the newest ${THREAD_FULL_MESSAGES} messages of a thread are read in full`]),
    );
    const newest = all.slice(-THREAD_FULL_MESSAGES).reverse();
    for (let k = 0; k < newest.length; k += 5) {
      await Promise.all(
        newest.slice(k, k + 5).map(async (meta) => {
          if (budget.left <= 0) {
            notRead.set(meta.id, SKIPPABLE['GW_ERR_BRIDGE_TOO_MANY_REQUESTS']);
            return;
          }
          budget.left--;
          try {
            full.set(
              meta.id,
              await gmail<GmailMessage>(ctx, 'GET', path`/messages/${meta.id}`, {
                query: { format: 'full' },
                action: `read message ${meta.id} of thread ${a.threadId}`,
              }),
            );
          } catch (err) {
            const why = skipReason(err);
            if (isNotFound(err)) gone.add(meta.id);
            else if (why) notRead.set(meta.id, why);
            else throw err;
          }
        }),
      );
    }
    // the text parts Gmail gave apart, newest message first, while the budget lasts
    const inFull = new Map<string, ReturnType<typeof threadMessage>>();
    for (const meta of newest) {
      const m = full.get(meta.id);
      if (m) inFull.set(meta.id, threadMessage(fullMessage(m, per, await fetchTextParts(ctx, m, budget))));
    }
    const shown = all
      .filter((meta) => !gone.has(meta.id))
      .map((meta) => {
        const done = inFull.get(meta.id);
        if (done) return done;
        const slim = fullMessage({ ...meta, payload: { headers: meta.payload?.headers } }, per);
        return {
          ...threadMessage(slim),
          body: null,
          attachments: null,
          note: `not read in full (${notRead.get(meta.id)}): read it with gmail_get_email`,
        };
      });
    const out = {
      threadId: t.id,
      subject: shown.length ? shown[0].subject : '',
      messageCount: shown.length,
      messages: shown,
    };
    if (notRead.size === 0) return out;
    const ids = shown.filter((m) => notRead.has(m.id)).map((m) => m.id);
    return {
      ...out,
      notRead: ids,
      note: `${ids.length} of the ${shown.length} messages are given with their headers only (body null): read them with gmail_get_email.`,
    };
  },
});
