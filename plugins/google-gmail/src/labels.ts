/**
 * @module plugins/google-gmail/src/labels
 * Labels, which are how Gmail files mail: archive (INBOX), read (UNREAD), star (STARRED) and the
 * user's own labels by name or id; listing them; and the Trash, where a message goes to be deleted.
 */
import { changes, defineTool, path, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { gmail } from './api.js';
import { ID, id } from './args.js';
import { labelsOf, type GmailMessage } from './mime-read.js';

type Label = { id: string; name?: string; type?: string };

const SYSTEM_LABEL =
  /^(INBOX|SPAM|TRASH|UNREAD|STARRED|IMPORTANT|SENT|DRAFT|CHAT|CATEGORY_(PERSONAL|SOCIAL|PROMOTIONS|UPDATES|FORUMS))$/i;

async function allLabels(ctx: PluginContext): Promise<Label[]> {
  const data = await gmail<{ labels?: unknown }>(ctx, 'GET', '/labels', { action: 'list labels' });
  return Array.isArray(data.labels) ? (data.labels as Label[]) : [];
}

/** Label ids for names or ids: system labels by name, Label_… ids as they are, user labels looked up by name (one request for all). */
async function labelIds(ctx: PluginContext, wanted: string[]): Promise<string[]> {
  const out: string[] = [];
  let all: Label[] | undefined;
  for (const w of wanted) {
    const v = w.trim();
    if (SYSTEM_LABEL.test(v)) out.push(v.toUpperCase());
    else if (/^Label_[0-9]+$/.test(v)) out.push(v);
    else {
      all ??= await allLabels(ctx);
      const hit = all.find((l) => String(l.name || '').toLowerCase() === v.toLowerCase());
      if (!hit) {
        const names =
          all
            .filter((l) => l.type === 'user')
            .map((l) => `"${l.name}"`)
            .slice(0, 20)
            .join(', ') || 'none';
        throw new Error(
          `No Gmail label is named "${v}". User labels: ${names}. System labels: INBOX, STARRED, IMPORTANT, UNREAD, SPAM, TRASH, CATEGORY_*.`,
        );
      }
      out.push(hit.id);
    }
  }
  return out;
}

const labelNames = (description: string) =>
  z.array(z.string().min(1).max(225)).max(20).optional().describe(description);

export const modifyLabels = defineTool({
  description:
    'Change the labels of one or more Gmail emails: archive them (remove from the inbox) or move them back to the inbox, mark emails as read or unread, star or unstar them, and add or remove labels by name or id. Give only what changes. Returns the labels added and removed. Use gmail_list_labels to see the label names; use gmail_trash_email to delete.',
  input: z.object({
    messageIds: z.array(z.string().regex(ID)).min(1).max(100).describe('Message ids to change.'),
    archive: z.boolean().optional().describe('true: archive (remove INBOX); false: move back to the inbox.'),
    read: z.boolean().optional().describe('true: mark as read; false: mark as unread.'),
    starred: z.boolean().optional().describe('true: star; false: unstar.'),
    addLabels: labelNames('Label names or ids to add (e.g. "Clients", IMPORTANT, Label_12).'),
    removeLabels: labelNames('Label names or ids to remove.'),
  }),
  annotations: changes('Archive, mark read, star or label email', { idempotent: true }),
  handler: async (ctx, a) => {
    const add: string[] = [];
    const remove: string[] = [];
    // archive and read take a label away (INBOX, UNREAD), starred adds one; false does the opposite
    if (a.archive !== undefined) (a.archive ? remove : add).push('INBOX');
    if (a.read !== undefined) (a.read ? remove : add).push('UNREAD');
    if (a.starred !== undefined) (a.starred ? add : remove).push('STARRED');
    add.push(...(await labelIds(ctx, a.addLabels || [])));
    remove.push(...(await labelIds(ctx, a.removeLabels || [])));
    const added = [...new Set(add)];
    const removed = [...new Set(remove)];
    const both = added.filter((l) => removed.includes(l));
    if (both.length) throw new Error(`Label ${both.join(', ')} is both added and removed: pick one.`);
    if (!added.length && !removed.length)
      throw new Error('Nothing to change: give archive, read, starred, addLabels or removeLabels.');
    const ids = [...new Set(a.messageIds)];
    if (ids.length === 1) {
      const m = await gmail<GmailMessage>(ctx, 'POST', path`/messages/${ids[0]}/modify`, {
        body: { addLabelIds: added, removeLabelIds: removed },
        action: `change the labels of message ${ids[0]}`,
      });
      return { messageIds: ids, added, removed, labels: labelsOf(m) };
    }
    await gmail(ctx, 'POST', '/messages/batchModify', {
      body: { ids, addLabelIds: added, removeLabelIds: removed },
      action: `change the labels of ${ids.length} messages`,
    });
    return { messageIds: ids, added, removed };
  },
});

export const listLabels = defineTool({
  description:
    "List the Gmail labels (folders) of the mailbox: system labels (INBOX, SENT, STARRED, UNREAD, …) and the user's own labels, each with id, name and type. Use the names or ids with gmail_modify_labels or in gmail_search_emails (label:name).",
  input: z.object({}),
  annotations: reads('List email labels'),
  handler: async (ctx) => {
    const labels = (await allLabels(ctx)).map((l) => ({ id: l.id, name: l.name, type: l.type ?? null }));
    labels.sort((x, y) =>
      x.type === y.type ? String(x.name).localeCompare(String(y.name)) : x.type === 'system' ? -1 : 1,
    );
    return { labels };
  },
});

export const trashEmail = defineTool({
  description:
    'Delete a Gmail email (spam, junk, unwanted mail) by moving it to the Trash (Gmail empties the Trash after 30 days; until then it can be restored from Gmail). Returns its labels afterwards. To only hide it from the inbox, archive it with gmail_modify_labels instead.',
  input: z.object({ messageId: id('Message id.') }),
  annotations: changes('Trash email', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    const m = await gmail<GmailMessage>(ctx, 'POST', path`/messages/${a.messageId}/trash`, {
      action: `move message ${a.messageId} to the trash`,
    });
    return { id: m.id, threadId: m.threadId ?? null, labels: labelsOf(m), trashed: labelsOf(m).includes('TRASH') };
  },
});
