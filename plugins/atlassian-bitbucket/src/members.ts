/**
 * @module plugins/atlassian-bitbucket/src/members
 * Finding people in a workspace by name. Bitbucket's members list filters by nothing but email (and
 * that for administrators only), so the tool reads its pages and matches names here, within the
 * call's request budget, saying where to go on when it stops before the end.
 */
import { collectPages, defineTool, query, reads, segment, z } from 'workbench/plugin-sdk';
import { bb, cursorOf, queryOfCursor, values, type Page } from './api.js';
import { cursor, workspace } from './fields.js';
import { slimUser, type User } from './shape.js';

/** pages of 100 members one call reads at most */
const MAX_PAGES = 10;

export const searchWorkspaceMembers = defineTool({
  description:
    'Search the members (users, people, teammates) of a Bitbucket workspace by part of their display name or nickname, to get their account_id or uuid (e.g. for pull request reviewers). Reads the member list 100 at a time, up to 10 pages a call: when `next` is not null, the list was not read to its end; pass it as `cursor` to search on.',
  input: z.object({
    workspace,
    query: z.string().min(1).max(100).describe('Part of a display name or nickname (case does not matter).'),
    limit: z.int().min(1).max(100).default(20).describe('Matches to return at most.'),
    cursor,
  }),
  annotations: reads('Search workspace members', { idempotent: true }),
  async handler(ctx, a) {
    const wanted = a.query.toLowerCase();
    const base = `/workspaces/${segment(a.workspace, 'workspace')}/members`;
    const fetchPage = async (c: string | null) => {
      const q = c ? queryOfCursor(c) : query({ pagelen: 100 });
      const data = await bb<Page<{ user?: User }>>(ctx, 'GET', `${base}${q}`, {
        action: `list the members of workspace ${a.workspace}`,
        scope: 'account',
      });
      const items = values(data)
        .map((m) => m.user || {})
        .filter((u) =>
          [u.display_name, u.nickname].some((n) => typeof n === 'string' && n.toLowerCase().includes(wanted)),
        );
      return { items, next: cursorOf(data) };
    };
    const got = await collectPages(ctx, a.cursor ?? null, fetchPage, { limit: a.limit, maxPages: MAX_PAGES });
    return { workspace: a.workspace, members: got.items.map(slimUser), next: got.next };
  },
});
