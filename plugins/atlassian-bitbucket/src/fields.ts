/**
 * @module plugins/atlassian-bitbucket/src/fields
 * The arguments many tools share (workspace, repository, pull request, paging, branch names).
 */
import { z } from 'workbench/plugin-sdk';

export const workspace = z
  .string()
  .regex(/^(\{[0-9A-Fa-f-]{36}\}|[A-Za-z0-9_][A-Za-z0-9_.-]{0,99})$/)
  .describe(
    'Workspace ID (slug) as in bitbucket.org/<workspace>/…, or its UUID in braces. bitbucket_list_workspaces lists them.',
  );
export const repo = {
  workspace,
  repo_slug: z
    .string()
    .regex(/^(\{[0-9A-Fa-f-]{36}\}|[A-Za-z0-9_.-]{1,100})$/)
    .describe('Repository slug as in bitbucket.org/<workspace>/<repo_slug>, or its UUID in braces.'),
};
export const pr = {
  ...repo,
  pull_request_id: z.int().min(1).max(2147483647).describe('Pull request id (the number in …/pull-requests/<id>).'),
};
const CURSOR = z
  .string()
  .min(1)
  .max(4000)
  .regex(/^[A-Za-z0-9_-]+$/)
  .optional();
export const cursor = CURSOR.describe(
  'The `next` value of the previous page; omit for the first page. It carries the filters of the first call, which are then ignored.',
);
export const folderCursor = CURSOR.describe(
  'For a folder: the `next` value of the previous call (same path and ref); omit for the first page of entries.',
);
export const pagelen = (max: number, dflt: number, what: string) =>
  z.int().min(1).max(max).default(dflt).describe(`${what} per page (at most ${max}).`);
// eslint-disable-next-line no-useless-escape -- an escaped [ in a class keeps the JSON Schema pattern portable to clients' regex dialects
export const branchName = z.string().regex(/^[^\s~^:?*\[\\]{1,255}$/);
export const reviewers = z.array(z.string().min(1).max(128).regex(/^\S+$/)).max(25).meta({ uniqueItems: true });
export const maxChars = (what: string) =>
  z.int().min(1000).max(200000).default(50000).describe(`Characters of ${what} to return.`);
export const offset = z
  .int()
  .min(0)
  .max(100000000)
  .default(0)
  .describe('Where to start reading (the `next_offset` of the previous call).');
export const bbqlFilter = (example: string) =>
  z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe(
      `Raw Bitbucket query language (BBQL) filter, e.g. ${example}. String values go in double quotes. Combined with the other filters by AND.`,
    );
