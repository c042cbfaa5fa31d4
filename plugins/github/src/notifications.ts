/**
 * @module plugins/github/src/notifications
 * The user's notifications inbox: list it, and mark a thread, a repository or everything read.
 */
import { changes, defineTool, reads, segment, z } from 'workbench/plugin-sdk';
import { gh, paging, repoPath } from './api.js';
import { LOGIN, page, REPO_NAME, since } from './args.js';

/** `/notifications`, or one repository's when both owner and repo are given (`what` words the refusal of one without the other) */
function notificationsPath(a: { owner?: string | undefined; repo?: string | undefined }, what: string): string {
  if (!!a.owner !== !!a.repo) throw new Error(`Pass both owner and repo to ${what}, or neither.`);
  return a.owner && a.repo ? `${repoPath({ owner: a.owner, repo: a.repo })}/notifications` : '/notifications';
}

export const listNotifications = defineTool({
  description:
    "Lists the user's GitHub notifications (inbox): unread by default, optionally only where the user participates or only one repository. Each has a thread_id, reason (review_requested, mention, assign, ci_activity, …), type, title, repository and issue/PR number, plus `next`.",
  input: z
    .object({
      owner: z.string().regex(LOGIN).optional().describe('With repo: only notifications of this repository.'),
      repo: z.string().regex(REPO_NAME).optional().describe('With owner: only notifications of this repository.'),
      all: z.boolean().default(false).describe('Include notifications already read.'),
      participating: z.boolean().default(false).describe('Only threads the user participates in or is mentioned in.'),
      since,
      per_page: z
        .int()
        .min(1)
        .max(50)
        .default(30)
        .describe("Results per page (1-50: GitHub's maximum for notifications)."),
      page,
    })
    .meta({ required: [] }),
  annotations: reads('List my notifications', { idempotent: true }),
  handler: async (ctx, a) => {
    type Notification = {
      id: string;
      unread?: boolean;
      reason: string;
      updated_at: string;
      repository?: { full_name: string } | null;
      subject?: { type?: string; title?: string; url?: string | null };
    };
    const path = notificationsPath(a, 'limit notifications to one repository');
    const query = { all: a.all, participating: a.participating, since: a.since, ...paging(a) };
    const { data, next } = await gh<Notification[]>(ctx, 'GET', path, { query, what: 'notifications' });
    const notifications = data.map((n) => {
      const subject = n.subject || {};
      const number = /\/(?:issues|pulls)\/(\d+)$/.exec(subject.url || '');
      return {
        thread_id: n.id,
        unread: !!n.unread,
        reason: n.reason,
        updated_at: n.updated_at,
        repository: n.repository ? n.repository.full_name : null,
        type: subject.type,
        title: subject.title,
        number: number ? Number(number[1]) : null,
      };
    });
    return { notifications, next };
  },
});

export const markNotificationsRead = defineTool({
  description:
    'Marks one notification thread as read (thread_id), or every notification (optionally only those of one repository, up to last_read_at). Returns what was marked.',
  input: z
    .object({
      thread_id: z
        .string()
        .regex(/^[0-9]{1,20}$/)
        .optional()
        .describe('Notification thread id from github_list_notifications.'),
      owner: z.string().regex(LOGIN).optional().describe("With repo: mark only this repository's notifications."),
      repo: z.string().regex(REPO_NAME).optional().describe("With owner: mark only this repository's notifications."),
      last_read_at: z
        .string()
        .meta({ format: 'date-time' })
        .optional()
        .describe('Mark notifications updated up to this time (ISO 8601). Default: now.'),
    })
    .meta({ required: [] }),
  annotations: changes('Mark notifications as read', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    if (a.thread_id) {
      await gh(ctx, 'PATCH', `/notifications/threads/${segment(a.thread_id, 'thread_id')}`, {
        what: `notification thread ${a.thread_id}`,
      });
      return { marked_read: 'thread', thread_id: a.thread_id };
    }
    const path = notificationsPath(a, 'mark one repository read');
    const { status } = await gh(ctx, 'PUT', path, {
      body: { last_read_at: a.last_read_at, read: true },
      what: 'marking notifications read',
    });
    return { marked_read: a.owner ? `${a.owner}/${a.repo}` : 'all', pending: status === 202 };
  },
});
