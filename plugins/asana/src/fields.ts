/**
 * @module plugins/asana/src/fields
 * The arguments several tools share (gids, assignees, dates, paging).
 */
import { z } from 'workbench/plugin-sdk';

export const gid = z.string().regex(/^[0-9]{1,30}$/);
export const task = gid.describe('Task gid.');
export const project = gid.describe('Project gid.');
export const workspace = gid
  .optional()
  .describe('Workspace gid; may be omitted when you belong to only one workspace.');
export const assignee = z.string().regex(/^(me|[0-9]{1,30}|[^\s@]{1,200}@[^\s@]{1,200})$/);
export const date = z.string().regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/);
export const limit = (max: number, dflt: number, what: string) => z.int().min(1).max(max).default(dflt).describe(what);
const CURSOR = z.string().min(1).max(2000).optional();
export const cursor = (of = 'previous page') => CURSOR.describe(`The \`next\` value of the ${of}.`);
