/**
 * @module plugins/atlassian-jira/src/boards
 * Jira Software boards (Scrum and Kanban) through the Agile API (/rest/agile/1.0), which needs
 * scopes of its own (read:board-scope:jira-software, read:project:jira).
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { agile, BOARDS, resolveSite } from './api.js';
import { cursor } from './issues.js';

interface RawBoard {
  id: number;
  name?: string;
  type?: string;
  location?: { projectKey?: string; projectName?: string; displayName?: string; projectTypeKey?: string } | null;
}

export const listBoards = defineTool({
  description:
    'List the Jira Software boards (Scrum and Kanban boards) you can see: id, name, type and the project each belongs to, optionally only those of one project, of one type or whose name contains some text. Each row links to the board. When `next` is not null, pass it as `cursor` for the next page.',
  input: z.object({
    projectKeyOrId: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_]{0,99}$/)
      .optional()
      .describe('Only boards of this project (key such as ABC, or numeric id).'),
    type: z.enum(['scrum', 'kanban', 'simple']).optional().describe('Only boards of this type.'),
    name: z.string().min(1).max(200).optional().describe('Only boards whose name contains this.'),
    maxResults: z.int().min(1).max(50).default(50).describe('Boards per page.'),
    cursor,
  }),
  annotations: reads('List boards'),
  async handler(ctx, args) {
    const site = await resolveSite(ctx);
    const startAt = Number(args.cursor || 0);
    const data = await agile<{ values?: RawBoard[]; total?: number; isLast?: boolean }>(ctx, site, 'GET', '/board', {
      query: {
        startAt,
        maxResults: args.maxResults,
        projectKeyOrId: args.projectKeyOrId,
        type: args.type,
        name: args.name,
      },
      action: 'list boards',
      scope: BOARDS,
    });
    const values = Array.isArray(data?.values) ? data.values : [];
    const boards = values.map((b) => ({
      id: b.id,
      name: b.name ?? null,
      type: b.type ?? null,
      project: b.location?.projectKey
        ? { key: b.location.projectKey, name: b.location.projectName ?? b.location.displayName ?? null }
        : null,
      url: `${site.url}/secure/RapidBoard.jspa?rapidView=${b.id}`,
    }));
    const next = data && data.isLast === false && values.length ? String(startAt + values.length) : null;
    return { boards, total: typeof data?.total === 'number' ? data.total : null, next };
  },
});
