/**
 * @module plugins/github/src/repos
 * The account, repositories (and the URLs to clone one, without a credential), branches, commits
 * and code search.
 */
import { changes, clip, defineTool, plainCloneUrl, reads, segments, z } from 'workbench/plugin-sdk';
import { defaultBranch, gh, paging, repoPath } from './api.js';
import { direction, page, perPage, repoArgs, SHA, since } from './args.js';
import {
  login,
  slimCommit,
  slimFile,
  slimRepo,
  type Commit,
  type File,
  type Repo,
  type Search,
  type User,
} from './shape.js';

export const getMe = defineTool({
  description:
    'Returns the GitHub account the connection acts as: login, name, email (if public), company, public repo and follower counts. Use it to learn "my" login before filtering issues or pull requests by author, assignee or reviewer.',
  // `required: []` as the hand-written manifest had it
  input: z.object({}).meta({ required: [] }),
  annotations: reads('Who am I on GitHub', { idempotent: true }),
  handler: async (ctx) => {
    type Me = User & {
      id: number;
      email?: string | null;
      company?: string | null;
      bio?: string | null;
      public_repos: number;
      followers: number;
      html_url: string;
      created_at: string;
    };
    const { data: u } = await gh<Me>(ctx, 'GET', '/user', { what: 'the authenticated user' });
    return {
      login: u.login,
      id: u.id,
      name: u.name || null,
      email: u.email || null,
      company: u.company || null,
      bio: clip(u.bio || '', 500),
      public_repos: u.public_repos,
      followers: u.followers,
      html_url: u.html_url,
      created_at: u.created_at,
    };
  },
});

export const searchRepositories = defineTool({
  description:
    'Searches all repositories visible to the user with GitHub search syntax (e.g. "language:go stars:>1000 topic:cli", "org:acme payments", "user:octocat"). Returns slim rows (full_name, description, visibility, default branch, language, stars, forks, open issues, topics, html_url) and `next` for paging. Use github_list_my_repositories for the user\'s own repositories.',
  input: z.object({
    query: z
      .string()
      .min(1)
      .max(256)
      .describe(
        'GitHub repository search query: keywords plus qualifiers such as org:, user:, language:, topic:, stars:>N, archived:false, in:name.',
      ),
    sort: z
      .enum(['stars', 'forks', 'help-wanted-issues', 'updated'])
      .optional()
      .describe('Sort field. Default: best match.'),
    order: direction,
    per_page: perPage(30),
    page,
  }),
  annotations: reads('Search repositories', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = { q: a.query, sort: a.sort, order: a.order, ...paging(a) };
    const { data, next } = await gh<Search<Repo>>(ctx, 'GET', '/search/repositories', {
      query,
      what: 'repository search',
    });
    return {
      total_count: data.total_count,
      incomplete_results: !!data.incomplete_results,
      repositories: (data.items || []).map(slimRepo),
      next,
    };
  },
});

export const listMyRepositories = defineTool({
  description:
    'Lists repositories the authenticated user can access: owned, collaborator and organisation-member repositories, newest activity first by default. Returns slim rows and `next` for paging.',
  input: z
    .object({
      visibility: z.enum(['all', 'public', 'private']).default('all').describe('Which visibility to include.'),
      affiliation: z
        .string()
        .regex(/^(owner|collaborator|organization_member)(,(owner|collaborator|organization_member))*$/)
        .default('owner,collaborator,organization_member')
        .describe('Comma-separated relations to include: owner, collaborator, organization_member.'),
      sort: z.enum(['created', 'updated', 'pushed', 'full_name']).default('pushed').describe('Sort field.'),
      direction,
      per_page: perPage(30),
      page,
    })
    .meta({ required: [] }),
  annotations: reads('List my repositories', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = {
      visibility: a.visibility,
      affiliation: a.affiliation,
      sort: a.sort,
      direction: a.direction,
      ...paging(a),
    };
    const { data, next } = await gh<Repo[]>(ctx, 'GET', '/user/repos', { query, what: 'your repositories' });
    return { repositories: data.map(slimRepo), next };
  },
});

export const getRepository = defineTool({
  description:
    "Returns one repository's details: description, visibility, default branch, language, stars, forks, open issue count, topics, license, homepage, archived flag and the user's permissions on it. Use it to find the default branch before creating branches or pull requests.",
  input: z.object(repoArgs),
  annotations: reads('Get a repository', { idempotent: true }),
  handler: async (ctx, a) => {
    type Full = Repo & {
      owner?: User;
      license?: { spdx_id: string } | null;
      homepage?: string | null;
      subscribers_count: number;
      created_at: string;
      permissions?: Record<string, boolean>;
    };
    const { data } = await gh<Full>(ctx, 'GET', repoPath(a), { what: `repository ${a.owner}/${a.repo}` });
    return {
      ...slimRepo(data),
      owner: login(data.owner),
      license: data.license ? data.license.spdx_id : null,
      homepage: data.homepage || null,
      watchers: data.subscribers_count,
      created_at: data.created_at,
      permissions: data.permissions || null,
    };
  },
});

/** How to authenticate a clone of a GitHub repository: the agent's own credential, never the connection's token. */
const CLONE_AUTH = {
  https:
    'Git asks for a username and password: use your GitHub login and a personal access token (fine-grained, with Contents read access; write to push) as the password, or a credential helper (gh auth login, git-credential-manager). This gateway never hands out its own token.',
  ssh: 'Use an SSH key added to your GitHub account (Settings > SSH and GPG keys) or as a deploy key of the repository.',
};

export const getCloneUrl = defineTool({
  description:
    'The clone URL of a GitHub repository (HTTPS, and SSH) to git clone it, with its default branch and visibility, and how to authenticate: the URLs never carry a token (use your own GitHub personal access token or SSH key; the gateway keeps its credential to itself).',
  input: z.object(repoArgs),
  annotations: reads('Get clone URL', { idempotent: true }),
  handler: async (ctx, a) => {
    type Cloneable = Repo & { clone_url?: string; ssh_url?: string };
    const { data } = await gh<Cloneable>(ctx, 'GET', repoPath(a), { what: `repository ${a.owner}/${a.repo}` });
    return {
      repository: data.full_name || `${a.owner}/${a.repo}`,
      https: plainCloneUrl(data.clone_url),
      ssh: plainCloneUrl(data.ssh_url),
      default_branch: data.default_branch || null,
      visibility: data.visibility || (data.private === undefined ? null : data.private ? 'private' : 'public'),
      authenticate: CLONE_AUTH,
    };
  },
});

export const listBranches = defineTool({
  description:
    'Lists the branches of a repository with the head commit SHA and whether each is protected. Returns `next` for paging.',
  input: z.object({
    ...repoArgs,
    protected: z.boolean().optional().describe('true: only protected branches; false: only unprotected; omit for all.'),
    per_page: perPage(30),
    page,
  }),
  annotations: reads('List branches', { idempotent: true }),
  handler: async (ctx, a) => {
    type Branch = { name: string; commit?: { sha: string }; protected?: boolean };
    const { data, next } = await gh<Branch[]>(ctx, 'GET', `${repoPath(a)}/branches`, {
      query: { protected: a.protected, ...paging(a) },
      what: 'branches',
    });
    return {
      branches: data.map((b) => ({ name: b.name, sha: b.commit ? b.commit.sha : null, protected: !!b.protected })),
      next,
    };
  },
});

export const createBranch = defineTool({
  description:
    "Creates a new branch in a repository, starting from another branch (default: the repository's default branch) or from an exact commit SHA. Returns the new branch name and the commit it points to. Fails with 422 if the branch already exists.",
  input: z.object({
    ...repoArgs,
    branch: z
      .string()
      .min(1)
      .max(200)
      // eslint-disable-next-line no-useless-escape -- an escaped [ in a class keeps the JSON Schema pattern portable to clients' regex dialects
      .regex(/^[^\s~^:?*\[\\/.][^\s~^:?*\[\\]*$/)
      .describe('Name of the new branch, e.g. "fix/login-timeout" (without "refs/heads/").'),
    from_branch: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe("Branch to start from. Default: the repository's default branch."),
    from_sha: z.string().regex(SHA).optional().describe('Exact commit SHA to start from (overrides from_branch).'),
  }),
  annotations: changes('Create a branch'),
  handler: async (ctx, a) => {
    // Git ref rules the schema's pattern cannot express without lookahead.
    if (/\.\.|\/\/|@\{|\.lock$|\/$|\.$/.test(a.branch))
      throw new Error(
        `Invalid arguments: "${a.branch}" is not a valid branch name (no "..", "//", "@{", and no trailing "/", "." or ".lock")`,
      );
    type Ref = { ref: string; object?: { sha: string } };
    let sha = a.from_sha;
    let from = a.from_sha ? undefined : a.from_branch;
    if (!sha) {
      from = from || (await defaultBranch(ctx, a));
      const { data } = await gh<Required<Ref>>(
        ctx,
        'GET',
        `${repoPath(a)}/git/ref/heads/${segments(from, 'from_branch')}`,
        { what: `branch ${from}` },
      );
      sha = data.object.sha;
    }
    const { data } = await gh<Ref>(ctx, 'POST', `${repoPath(a)}/git/refs`, {
      body: { ref: `refs/heads/${a.branch}`, sha },
      what: `creating branch ${a.branch}`,
    });
    return { branch: a.branch, ref: data.ref, sha: data.object ? data.object.sha : sha, created_from: from || sha };
  },
});

export const listCommits = defineTool({
  description:
    'Lists commits on a branch (or from any ref), newest first, optionally only those touching a path, by an author, or within a time range. Returns sha, first lines of the message, author, date, html_url, and `next`.',
  input: z.object({
    ...repoArgs,
    ref: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Branch, tag or SHA to list from. Default: the default branch.'),
    path: z.string().max(1000).optional().describe('Only commits that touch this file or folder.'),
    author: z.string().max(200).optional().describe('GitHub login or email address of the author.'),
    since,
    until: z.string().meta({ format: 'date-time' }).optional().describe('Only commits before this time (ISO 8601).'),
    per_page: perPage(30),
    page,
  }),
  annotations: reads('List commits', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = { sha: a.ref, path: a.path, author: a.author, since: a.since, until: a.until, ...paging(a) };
    const { data, next } = await gh<Commit[]>(ctx, 'GET', `${repoPath(a)}/commits`, { query, what: 'commits' });
    return { commits: data.map(slimCommit), next };
  },
});

export const getCommit = defineTool({
  description:
    'Returns one commit: full message, author, date, parent SHAs, addition/deletion stats and the changed files with their (truncated) patches (files_truncated says when more files changed than max_files). Use github_list_commits to find SHAs.',
  input: z.object({
    ...repoArgs,
    ref: z.string().min(1).max(255).describe('Commit SHA, branch or tag.'),
    max_files: z.int().min(1).max(100).default(30).describe('Largest number of changed files to include.'),
  }),
  annotations: reads('Get a commit', { idempotent: true }),
  handler: async (ctx, a) => {
    type Full = Commit & { parents?: Array<{ sha: string }>; stats?: unknown; files?: File[] };
    const { data, next } = await gh<Full>(ctx, 'GET', `${repoPath(a)}/commits/${segments(a.ref, 'ref')}`, {
      query: { per_page: a.max_files },
      what: `commit ${a.ref}`,
    });
    const files = data.files || [];
    const commit = {
      ...slimCommit(data),
      message: clip(data.commit?.message || '', 4000),
      parents: (data.parents || []).map((p) => p.sha),
      stats: data.stats || null,
      files: files.map(slimFile),
    };
    // GitHub pages a commit's files: say when there are more than were asked for
    if (next === null) return commit;
    return {
      ...commit,
      files_truncated: `more than ${files.length} files changed; pass a larger max_files (up to 100), or see the whole commit at its html_url`,
    };
  },
});

export const searchCode = defineTool({
  description:
    'Searches file contents across GitHub with code search syntax (e.g. "useState repo:facebook/react", "org:acme path:src/ language:python connect_db", "filename:Dockerfile"). Returns repository, path, html_url and matching text fragments, plus `next`. Narrow with repo: or org: for useful results; GitHub limits code search to 10 requests a minute.',
  input: z.object({
    query: z
      .string()
      .min(1)
      .max(256)
      .describe(
        'Code search query: terms plus qualifiers such as repo:OWNER/NAME, org:, user:, path:, language:, extension:, filename:.',
      ),
    per_page: perPage(20),
    page,
  }),
  annotations: reads('Search code', { idempotent: true }),
  handler: async (ctx, a) => {
    type Hit = {
      repository?: { full_name: string };
      path: string;
      sha: string;
      html_url: string;
      text_matches?: Array<{ fragment?: string }>;
    };
    const accept = 'application/vnd.github.text-match+json';
    const { data, next } = await gh<Search<Hit>>(ctx, 'GET', '/search/code', {
      query: { q: a.query, ...paging(a) },
      accept,
      what: 'code search',
    });
    const items = (data.items || []).map((i) => ({
      repository: i.repository ? i.repository.full_name : null,
      path: i.path,
      sha: i.sha,
      html_url: i.html_url,
      fragments: (i.text_matches || []).map((m) => clip(m.fragment || '', 400)),
    }));
    return { total_count: data.total_count, incomplete_results: !!data.incomplete_results, items, next };
  },
});
