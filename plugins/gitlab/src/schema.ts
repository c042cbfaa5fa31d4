/**
 * @module plugins/gitlab/src/schema
 * The arguments many GitLab tools share: the project, iids, paging, labels and usernames.
 */
import { z } from 'workbench/plugin-sdk';

/** A numeric id or a full path (validated further by projectRef): JSON Schema's `type` list, which zod has no form for. */
const projectField = z
  .unknown()
  .meta({ type: ['integer', 'string'], minimum: 1, minLength: 1, maxLength: 500 })
  .describe(
    'The project: its numeric id (e.g. 278964) or its full path with namespace (e.g. "gitlab-org/gitlab", "group/subgroup/project"); its gitlab.com web URL works too.',
  );
export const project = { project: projectField };
/** `project` for the lists that also work across projects */
export const optionalProject = { project: projectField.optional() };

export const issueIid = {
  issue_iid: z.int().min(1).describe("The issue's iid: the number shown in the project (#42 → 42), not its global id."),
};
export const mergeRequestIid = {
  merge_request_iid: z
    .int()
    .min(1)
    .describe("The merge request's iid: the number shown in the project (!42 → 42), not its global id."),
};

export const perPage = (byDefault: number, description = 'Results per page (1-100).') =>
  z.int().min(1).max(100).default(byDefault).describe(description);
export const page = z.int().min(1).default(1).describe('Page number: pass the `next` value of the previous result.');
export const paged = { per_page: perPage(20), page };
export const sort = z.enum(['asc', 'desc']).default('desc').describe('Sort direction.');

export const text255 = z.string().min(1).max(255);
export const labels = z.array(text255.regex(/^[^,]+$/)).max(20);
export const username = text255.regex(/^@?[A-Za-z0-9_.][A-Za-z0-9_.-]*$/);
export const usernames = z.array(username).max(10).meta({ uniqueItems: true });
export const markdown = z.string().max(100000);
export const comment = {
  body: z.string().min(1).max(100000).describe('Markdown text of the comment.'),
};
export const sha = z.string().regex(/^[0-9a-fA-F]{7,64}$/);
