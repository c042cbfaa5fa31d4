/**
 * @module plugins/gitlab/src/history
 * What a repository's history holds: its commits (on a ref, a path, a time range), the commits of
 * one merge request, and its releases.
 */
import { clip, defineTool, reads, z } from 'workbench/plugin-sdk';
import { list, paging, projectPath } from './api.js';
import { LIST_TEXT_CHARS, who, type Who } from './shape.js';
import { mergeRequestIid, paged, project, text255 } from './schema.js';

interface Commit {
  id: string;
  short_id?: string;
  title?: string;
  message?: string;
  author_name?: string;
  author_email?: string;
  authored_date?: string;
  committed_date?: string;
  created_at?: string;
  parent_ids?: string[];
  web_url?: string;
}

function slimCommit(c: Commit) {
  return {
    sha: c.id,
    short_sha: c.short_id || (typeof c.id === 'string' ? c.id.slice(0, 8) : null),
    title: c.title || null,
    author: c.author_name || null,
    authored_at: c.authored_date || null,
    committed_at: c.committed_date || c.created_at || null,
    parents: Array.isArray(c.parent_ids) ? c.parent_ids.length : null,
    web_url: c.web_url || null,
  };
}

interface Release {
  tag_name: string;
  name?: string | null;
  description?: string | null;
  created_at?: string;
  released_at?: string;
  upcoming_release?: boolean;
  author?: Who;
  commit?: { id?: string } | null;
  assets?: { count?: number; links?: Array<{ name?: string; url?: string }> | null } | null;
  _links?: { self?: string } | null;
}

function slimRelease(r: Release) {
  const links = Array.isArray(r.assets?.links) ? r.assets.links : [];
  return {
    tag_name: r.tag_name,
    name: r.name || null,
    released_at: r.released_at || null,
    created_at: r.created_at || null,
    upcoming: !!r.upcoming_release,
    author: who(r.author),
    commit: r.commit?.id || null,
    asset_links: links.slice(0, 20).map((l) => ({ name: l.name || null, url: l.url || null })),
    web_url: r._links?.self || null,
    description: clip(r.description || '', LIST_TEXT_CHARS),
  };
}

const isoTime = (what: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/)
    .optional()
    .describe(`${what}, an ISO 8601 date or time (e.g. 2025-03-01 or 2025-03-01T09:00:00Z).`);

export const listCommits = defineTool({
  description:
    'Lists the commit history of a GitLab repository, newest first: sha, title, author, dates and web URL. `ref` picks a branch, tag or commit (default: the default branch); `path` keeps only commits touching a file or folder; `since`/`until` bound the time; `author` matches a name or email. When `next` is not null, pass it as `page`.',
  input: z.object({
    ...project,
    ref: text255.optional().describe('Branch, tag or commit sha to list history from; default the default branch.'),
    path: z.string().min(1).max(1000).optional().describe('Only commits that touch this file or folder.'),
    since: isoTime('Only commits after this time'),
    until: isoTime('Only commits before this time'),
    author: text255.optional().describe("Only commits whose author's name or email contains this."),
    first_parent: z.boolean().default(false).describe('Follow only the first parent of merge commits.'),
    ...paged,
  }),
  annotations: reads('List commits', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = {
      ref_name: a.ref,
      path: a.path,
      since: a.since,
      until: a.until,
      author: a.author,
      first_parent: a.first_parent || undefined,
      ...paging(a),
    };
    const { rows, next } = await list<Commit>(ctx, `${projectPath(ctx, a)}/repository/commits`, {
      query,
      action: `commits${a.ref ? ` of ${a.ref}` : ''}`,
    });
    return { commits: rows.map(slimCommit), next };
  },
});

export const listMergeRequestCommits = defineTool({
  description:
    "Lists the commits of a GitLab merge request (what it would merge), oldest last as GitLab gives them: sha, title, author, dates and web URL. Cheaper than the diffs for seeing an MR's shape. When `next` is not null, pass it as `page`.",
  input: z.object({ ...project, ...mergeRequestIid, ...paged }),
  annotations: reads('List merge request commits', { idempotent: true }),
  handler: async (ctx, a) => {
    const { rows, next } = await list<Commit>(
      ctx,
      `${projectPath(ctx, a)}/merge_requests/${a.merge_request_iid}/commits`,
      {
        query: paging(a),
        action: `commits of !${a.merge_request_iid}`,
      },
    );
    return { merge_request_iid: a.merge_request_iid, commits: rows.map(slimCommit), next };
  },
});

export const listReleases = defineTool({
  description:
    'Lists the releases of a GitLab project, newest first: tag, name, release date, whether it is upcoming, author, commit, asset links, web URL and the start of the release notes. When `next` is not null, pass it as `page`.',
  input: z.object({
    ...project,
    order_by: z.enum(['released_at', 'created_at']).default('released_at'),
    sort: z.enum(['asc', 'desc']).default('desc').describe('Sort direction.'),
    ...paged,
  }),
  annotations: reads('List releases', { idempotent: true }),
  handler: async (ctx, a) => {
    const { rows, next } = await list<Release>(ctx, `${projectPath(ctx, a)}/releases`, {
      query: { order_by: a.order_by, sort: a.sort, ...paging(a) },
      action: 'releases',
    });
    return { releases: rows.map(slimRelease), next };
  },
});
