/**
 * @module plugins/github/src/args
 * The arguments many tools share (repository, numbers, paging, windows of text, logins, labels),
 * so each tool's schema lists only what is its own.
 */
import { z } from 'workbench/plugin-sdk';

/** a GitHub login (user or organisation) */
export const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
/** a full commit or blob SHA */
export const SHA = /^[0-9a-fA-F]{40}$/;
export const REPO_NAME = /^[A-Za-z0-9._-]{1,100}$/;

export const repoArgs = {
  owner: z.string().regex(LOGIN).describe('Repository owner: the user or organisation login, e.g. "octocat".'),
  repo: z.string().regex(REPO_NAME).describe('Repository name without the owner, e.g. "hello-world".'),
};

export const issueNumber = z
  .int()
  .min(1)
  .describe('Issue number as shown in the repository (e.g. 42 for #42). Pull request numbers work too.');
export const pullNumber = z.int().min(1).describe('Pull request number (e.g. 17 for #17).');
export const runId = z
  .int()
  .min(1)
  .describe(
    'Workflow run id (the `id` from github_list_workflow_runs, or the number in a run URL .../actions/runs/<id>).',
  );

export const perPage = (size: number) => z.int().min(1).max(100).default(size).describe('Results per page (1-100).');

/**
 * An integer without bounds of its own: zod writes a union of such bare types as one `type` list
 * (`["integer", "string"]`), with the bounds of the whole union beside it, as the manifest has it.
 */
export const bareInt = z.number().meta({ type: 'integer' });

/** A page number or a `next` cursor string. */
export const page = z
  .union([bareInt, z.string()])
  .meta({ minimum: 1, minLength: 1, maxLength: 500 })
  .default(1)
  .describe(
    'Page to fetch. Pass the `next` value of the previous result to continue (a page number, or a cursor where GitHub pages by cursor); `next` is null on the last page.',
  );

export const since = z
  .string()
  .meta({ format: 'date-time' })
  .optional()
  .describe('Only items updated at or after this time (ISO 8601, e.g. "2025-01-31T00:00:00Z").');

export const direction = z.enum(['asc', 'desc']).optional().describe('Sort direction. Default: desc.');

/** offset and max_chars of a text read in windows */
export const windowArgs = {
  offset: z
    .int()
    .min(0)
    .default(0)
    .describe('Character offset to start from: pass `next_offset` of the previous result to read on.'),
  max_chars: z
    .int()
    .min(1000)
    .max(50000)
    .default(20000)
    .describe('Largest number of characters to return; longer text comes back in windows.'),
};

export const logins = z.array(z.string().min(1).max(39).regex(LOGIN)).max(15).meta({ uniqueItems: true });
export const labelNames = z.array(z.string().min(1).max(50)).max(50).meta({ uniqueItems: true });
export const teamSlugs = z.array(z.string().min(1).max(100)).max(15);
