/**
 * @module plugins/gitlab/src/projects
 * Who the connection acts as, the projects the user can see, one project's details, and how to
 * clone it (without a credential in the URL).
 */
import { clip, defineTool, plainCloneUrl, reads, z } from 'workbench/plugin-sdk';
import { get, list, paging, projectPath } from './api.js';
import { flag, FULL_TEXT_CHARS, slimProject, type Project, type User } from './shape.js';
import { paged, project, sort } from './schema.js';

/** GitLab role names by access level */
const ROLES = new Map([
  [0, 'none'],
  [5, 'minimal_access'],
  [10, 'guest'],
  [15, 'planner'],
  [20, 'reporter'],
  [30, 'developer'],
  [40, 'maintainer'],
  [50, 'owner'],
]);

export const getCurrentUser = defineTool({
  description:
    'Returns the GitLab account the connection acts as: username, name, email, state and profile URL. Use it to learn "my" username before filtering issues or merge requests by author, assignee or reviewer.',
  input: z.object({}).meta({ required: [] }),
  annotations: reads('Who am I on GitLab', { idempotent: true }),
  handler: async (ctx) => {
    const u = await get<User>(ctx, '/user', { action: 'the authenticated user' });
    return {
      id: u.id,
      username: u.username,
      name: u.name || null,
      email: u.email || u.public_email || null,
      state: u.state || null,
      bot: !!u.bot,
      web_url: u.web_url,
      created_at: u.created_at || null,
    };
  },
});

export const listProjects = defineTool({
  description:
    "Lists GitLab projects (repositories) the user is a member of, most recently active first, optionally filtered by a search term in the name or path; each row has the numeric id, full path (group/subgroup/project), description, visibility, default branch, stars and web URL. Use the id or path as `project` in the other gitlab tools. When `next` is not null, pass it as `page` for more. Use gitlab_get_project for one project's details.",
  input: z
    .object({
      search: z.string().min(1).max(255).optional().describe('Only projects whose name or path contains this.'),
      membership: z
        .boolean()
        .default(true)
        .describe(
          'Only projects you are a member of (false: every project you can see, which on gitlab.com is all public projects).',
        ),
      owned: z.boolean().default(false).describe('Only projects you own.'),
      starred: z.boolean().default(false).describe('Only projects you starred.'),
      include_archived: z.boolean().default(false).describe('Include archived projects.'),
      order_by: z
        .enum(['last_activity_at', 'name', 'path', 'created_at', 'updated_at', 'star_count'])
        .default('last_activity_at'),
      sort,
      ...paged,
    })
    .meta({ required: [] }),
  annotations: reads('List my projects', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = {
      membership: a.membership,
      owned: a.owned || undefined,
      starred: a.starred || undefined,
      search: a.search,
      archived: a.include_archived ? undefined : false,
      order_by: a.order_by,
      sort: a.sort,
      ...paging(a),
    };
    const { rows, next } = await list<Project>(ctx, '/projects', { query, action: 'projects' });
    return { projects: rows.map(slimProject), next };
  },
});

export const getProject = defineTool({
  description:
    'Reads one GitLab project (repository): full path, description, visibility, default branch, topics, clone URL, your role in it (guest … owner), merge settings (merge method, squash option, whether the pipeline must succeed before merging) and whether issues and merge requests are enabled.',
  input: z.object({ ...project }),
  annotations: reads('Get project', { idempotent: true }),
  handler: async (ctx, a) => {
    const p = await get<Project>(ctx, projectPath(ctx, a), {
      query: { license: false },
      action: `project ${String(a.project)}`,
    });
    const perms = p.permissions || {};
    const level = Math.max(perms.project_access?.access_level || 0, perms.group_access?.access_level || 0);
    return {
      ...slimProject(p),
      description: clip(p.description || '', FULL_TEXT_CHARS) || null,
      namespace: p.namespace ? p.namespace.full_path : null,
      topics: p.topics || p.tag_list || [],
      empty_repo: !!p.empty_repo,
      http_url_to_repo: plainCloneUrl(p.http_url_to_repo),
      created_at: p.created_at || null,
      your_role: ROLES.get(level) || String(level),
      merge_method: p.merge_method || null,
      squash_option: p.squash_option || null,
      only_allow_merge_if_pipeline_succeeds: flag(p.only_allow_merge_if_pipeline_succeeds),
      issues_enabled: flag(p.issues_enabled),
      merge_requests_enabled: flag(p.merge_requests_enabled),
    };
  },
});

/** How to authenticate a clone of a GitLab repository: the agent's own credential, never the connection's token. */
const CLONE_AUTH = {
  https:
    'Git asks for a username and password: use your GitLab username and a personal, project or group access token with the read_repository scope (write_repository to push) as the password, or a credential helper (git-credential-manager, glab auth login). This gateway never hands out its own token.',
  ssh: 'Use an SSH key added to your GitLab account (User settings > SSH Keys).',
};

export const getCloneUrl = defineTool({
  description:
    'The clone URL of a GitLab project (HTTPS, and SSH) to git clone it, with its default branch, and how to authenticate: the URLs never carry a token (use your own GitLab access token or SSH key; the gateway keeps its credential to itself).',
  input: z.object({ ...project }),
  annotations: reads('Get clone URL', { idempotent: true }),
  handler: async (ctx, a) => {
    const p = await get<Project & { ssh_url_to_repo?: string }>(ctx, projectPath(ctx, a), {
      query: { license: false },
      action: `project ${String(a.project)}`,
    });
    return {
      project: p.path_with_namespace || String(a.project),
      https: plainCloneUrl(p.http_url_to_repo),
      ssh: plainCloneUrl(p.ssh_url_to_repo),
      default_branch: p.default_branch || null,
      visibility: p.visibility || null,
      authenticate: CLONE_AUTH,
    };
  },
});
