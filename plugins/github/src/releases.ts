/**
 * @module plugins/github/src/releases
 * Releases: list them, and publish one for a tag.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { gh, paging, repoPath } from './api.js';
import { page, perPage, repoArgs } from './args.js';
import { FULL_BODY_CHARS, LIST_BODY_CHARS, slimRelease, type Release } from './shape.js';

export const listReleases = defineTool({
  description:
    "Lists a repository's releases, newest first: tag, name, draft/prerelease flags, author, dates, notes snippet and downloadable assets, plus `next`.",
  input: z.object({ ...repoArgs, per_page: perPage(10), page }),
  annotations: reads('List releases', { idempotent: true }),
  handler: async (ctx, a) => {
    const { data, next } = await gh<Release[]>(ctx, 'GET', `${repoPath(a)}/releases`, {
      query: paging(a),
      what: 'releases',
    });
    return { releases: data.map((r) => slimRelease(r, LIST_BODY_CHARS)), next };
  },
});

export const createRelease = defineTool({
  description:
    'Publishes a release for a tag (the tag is created from target_commitish when it does not exist), optionally as a draft or prerelease, with written or auto-generated release notes. Returns the release id, html_url and notes.',
  input: z.object({
    ...repoArgs,
    tag_name: z.string().min(1).max(200).describe('Tag to release, e.g. "v1.4.0".'),
    target_commitish: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Branch or commit SHA to tag when the tag does not exist yet. Default: the default branch.'),
    name: z.string().max(256).optional().describe('Release title. Default: the tag name.'),
    body: z.string().max(125000).optional().describe('Release notes in Markdown.'),
    draft: z.boolean().default(false).describe('Create as an unpublished draft.'),
    prerelease: z.boolean().default(false).describe('Mark as a prerelease.'),
    generate_release_notes: z
      .boolean()
      .default(false)
      .describe('Let GitHub write notes from merged pull requests (appended to body).'),
    make_latest: z.enum(['true', 'false', 'legacy']).optional().describe('Whether this becomes the "latest" release.'),
  }),
  annotations: changes('Create a release'),
  handler: async (ctx, a) => {
    const { tag_name, target_commitish, name, body: notes, draft, prerelease, generate_release_notes, make_latest } = a;
    const body = {
      tag_name,
      target_commitish,
      name,
      body: notes,
      draft,
      prerelease,
      generate_release_notes,
      make_latest,
    };
    const { data } = await gh<Release>(ctx, 'POST', `${repoPath(a)}/releases`, {
      body,
      what: `creating release ${a.tag_name}`,
    });
    return slimRelease(data, FULL_BODY_CHARS);
  },
});
