/**
 * @module plugins/atlassian-bitbucket/src/repos
 * The account and repository tools: who am I, workspaces, repositories, branches, commits, file
 * content (a file's text, a folder's entries) and Pipelines.
 */
import {
  changes,
  clip,
  defineTool,
  enc,
  plainCloneUrl,
  reads,
  segment,
  z,
  type PluginContext,
} from 'workbench/plugin-sdk';
import {
  bb,
  bbql,
  bbqlString,
  call,
  cursorOf,
  cursorOfQuery,
  filePath,
  pageQuery,
  repoPath,
  values,
  WEB,
  webRepo,
  type Page,
  type RepoArgs,
} from './api.js';
import { branchName, cursor, folderCursor, maxChars, offset, pagelen, bbqlFilter, repo, workspace } from './fields.js';
import {
  href,
  noteWindow,
  slimBranch,
  slimCommit,
  slimPipeline,
  slimRepo,
  slimUser,
  type Branch,
  type Commit,
  type Pipeline,
  type Repo,
  type User,
} from './shape.js';

export const getCurrentUser = defineTool({
  description:
    'My Bitbucket account: the Bitbucket Cloud user this connection acts as, with display name, nickname, account_id and uuid. Use it to learn your account_id, e.g. to filter Bitbucket pull requests by author or reviewer with BBQL.',
  input: z.object({}).meta({ required: [] }),
  annotations: reads('Who am I on Bitbucket', { idempotent: true }),
  async handler(ctx) {
    const u = (await bb<User>(ctx, 'GET', '/user', { action: 'read your Bitbucket account', scope: 'account' }))!;
    return { ...slimUser(u), created_on: u.created_on ?? null, url: href(u) };
  },
});

type WorkspaceRow = { slug?: string; name?: string; uuid?: string; links?: Record<string, { href?: unknown }> };

// GET /user/workspaces replaces GET /workspaces and /user/permissions/workspaces, which Bitbucket
// retired (changelog CHANGE-2770 and CHANGE-3022). Its rows may carry the workspace under
// `workspace` with the caller's access beside it, or be the workspace itself: both are read.
export const listWorkspaces = defineTool({
  description:
    'List the Bitbucket Cloud workspaces (teams, organisations: the <workspace> in bitbucket.org/<workspace>/…) the connected user can access, with slug, name and uuid. Start here when the workspace slug is unknown. When `next` is not null, pass it as `cursor` for more.',
  input: z.object({ pagelen: pagelen(100, 50, 'Workspaces'), cursor }).meta({ required: [] }),
  annotations: reads('List workspaces', { idempotent: true }),
  async handler(ctx, a) {
    type Row = WorkspaceRow & { workspace?: WorkspaceRow; administrator?: unknown; permission?: unknown };
    const data = await bb<Page<Row>>(ctx, 'GET', `/user/workspaces${pageQuery(a, { pagelen: a.pagelen })}`, {
      action: 'list your workspaces',
      scope: 'account',
    });
    const workspaces = values(data).map((v) => {
      const w = v.workspace && typeof v.workspace === 'object' ? v.workspace : v;
      return {
        slug: w.slug ?? null,
        name: w.name ?? null,
        uuid: w.uuid ?? null,
        url: href(w) || (w.slug ? `${WEB}/${enc(w.slug)}/` : null),
        ...(typeof v.administrator === 'boolean' ? { administrator: v.administrator } : {}),
        ...(typeof v.permission === 'string' ? { permission: v.permission } : {}),
      };
    });
    return { workspaces, next: cursorOf(data) };
  },
});

export const listRepositories = defineTool({
  description:
    'List or search the Bitbucket repositories (repos) of one workspace: slim rows with full_name, slug, description, private, language, main branch, project, last update and url. Filter by `name` (contains, case-insensitive), by `project_key`, or with a raw BBQL `query` such as `language = "python" AND updated_on > 2025-01-01`; `sort` by a field (prefix - for descending). When `next` is not null, pass it as `cursor`. Use bitbucket_get_repository for one repository\'s details and clone URLs.',
  input: z.object({
    workspace,
    name: z.string().min(1).max(200).optional().describe('Only repositories whose name contains this text.'),
    project_key: z
      .string()
      .regex(/^[A-Za-z0-9_]{1,100}$/)
      .optional()
      .describe('Only repositories in this project (its key, e.g. PROJ).'),
    query: bbqlFilter('`is_private = true` or `language = "go"`'),
    role: z
      .enum(['member', 'contributor', 'admin', 'owner'])
      .optional()
      .describe('Only repositories where you have at least this role.'),
    sort: z
      .enum(['-updated_on', 'updated_on', 'name', '-name', '-created_on', 'created_on', 'size', '-size'])
      .default('-updated_on')
      .describe('Sort order (- means descending).'),
    pagelen: pagelen(100, 25, 'Repositories'),
    cursor,
  }),
  annotations: reads('List repositories', { idempotent: true }),
  async handler(ctx, a) {
    const q = bbql(
      [a.name && `name ~ ${bbqlString(a.name)}`, a.project_key && `project.key = ${bbqlString(a.project_key)}`],
      a.query,
    );
    const data = await bb<Page<Repo>>(
      ctx,
      'GET',
      `/repositories/${segment(a.workspace, 'workspace')}${pageQuery(a, { q, sort: a.sort, role: a.role, pagelen: a.pagelen })}`,
      {
        action: `list the repositories of workspace ${a.workspace}`,
        scope: 'repository',
      },
    );
    return {
      repositories: values(data).map(slimRepo),
      total: data && typeof data.size === 'number' ? data.size : null,
      next: cursorOf(data),
    };
  },
});

const readRepo = async (ctx: PluginContext, a: RepoArgs) =>
  bb<Repo>(ctx, 'GET', repoPath(a), { action: `read repository ${a.workspace}/${a.repo_slug}`, scope: 'repository' });

export const getRepository = defineTool({
  description:
    'Read one Bitbucket repository: description, visibility, main branch, language, size, project, fork parent, created/updated dates, web url and the HTTPS and SSH clone URLs.',
  input: z.object(repo),
  annotations: reads('Get repository', { idempotent: true }),
  async handler(ctx, a) {
    const r = (await readRepo(ctx, a))!;
    const clone: Record<string, string> = {};
    const links = r.links?.['clone'];
    for (const c of Array.isArray(links) ? links : []) if (c && c.name && c.href) clone[c.name] = c.href;
    return {
      ...slimRepo(r),
      description: clip(r.description || '', 4000),
      uuid: r.uuid ?? null,
      size: r.size ?? null,
      fork_of: r.parent?.full_name ?? null,
      has_issues: r.has_issues ?? null,
      website: r.website || null,
      created_on: r.created_on ?? null,
      clone: { https: plainCloneUrl(clone['https']), ssh: plainCloneUrl(clone['ssh']) },
    };
  },
});

export const listBranches = defineTool({
  description:
    'List the branches of a Bitbucket repository with each head commit (hash, date, author, message), most recently updated first. Filter by `name` (contains). When `next` is not null, pass it as `cursor`.',
  input: z.object({
    ...repo,
    name: z.string().min(1).max(255).optional().describe('Only branches whose name contains this text.'),
    sort: z
      .enum(['-target.date', 'target.date', 'name', '-name'])
      .default('-target.date')
      .describe('Sort order (- means descending).'),
    pagelen: pagelen(100, 25, 'Branches'),
    cursor,
  }),
  annotations: reads('List branches', { idempotent: true }),
  async handler(ctx, a) {
    const q = a.name ? `name ~ ${bbqlString(a.name)}` : undefined;
    const data = await bb<Page<Branch>>(
      ctx,
      'GET',
      `${repoPath(a)}/refs/branches${pageQuery(a, { q, sort: a.sort, pagelen: a.pagelen })}`,
      {
        action: `list the branches of ${a.workspace}/${a.repo_slug}`,
        scope: 'repository',
      },
    );
    return { branches: values(data).map(slimBranch), next: cursorOf(data) };
  },
});

export const listCommits = defineTool({
  description:
    'List the commit history of a Bitbucket repository, newest first: hash, date, author, message. `branch` picks a branch, tag or commit to start from (default: every branch); `path` limits it to commits touching a file or folder. When `next` is not null, pass it as `cursor`.',
  input: z.object({
    ...repo,
    branch: branchName.optional().describe('Branch, tag or commit hash to list history from.'),
    path: z.string().min(1).max(1000).optional().describe('Only commits that touch this file or folder.'),
    pagelen: pagelen(100, 20, 'Commits'),
    cursor,
  }),
  annotations: reads('List commits', { idempotent: true }),
  async handler(ctx, a) {
    // `include` rather than /commits/{revision}: a branch name may hold "/"
    const data = await bb<Page<Commit>>(
      ctx,
      'GET',
      `${repoPath(a)}/commits${pageQuery(a, { include: a.branch, path: a.path, pagelen: a.pagelen })}`,
      {
        action: `list the commits of ${a.workspace}/${a.repo_slug}${a.branch ? ` on ${a.branch}` : ''}`,
        scope: 'repository',
      },
    );
    return { commits: values(data).map(slimCommit), next: cursorOf(data) };
  },
});

/** The commit to read files at: a hash as it is; a branch or tag name without "/" as it is; else its head hash. */
async function fileRef(ctx: PluginContext, a: RepoArgs & { ref?: string | undefined }): Promise<string> {
  const ref = a.ref || (await readRepo(ctx, a))?.mainbranch?.name;
  if (!ref)
    throw new Error(
      `Repository ${a.workspace}/${a.repo_slug} has no main branch yet (it is empty): there are no files to read.`,
    );
  if (!ref.includes('/')) return ref;
  // in /src/{commit}/{path} a "/" in the ref would be read as part of the path
  const b = await bb<Branch>(ctx, 'GET', `${repoPath(a)}/refs/branches/${segment(ref, 'ref')}`, {
    action: `find branch ${ref}`,
    scope: 'repository',
  });
  if (!b?.target?.hash) throw new Error(`Bitbucket gave no head commit for branch ${ref}.`);
  return b.target.hash;
}

type Entry = { type?: string; path?: string; size?: number };

export const getFileContent = defineTool({
  description:
    "Read a file from a Bitbucket repository at a branch, tag or commit (default: the main branch), as text; or list a folder's entries when `path` is a directory (or empty for the root), 100 at a time: when `next` is not null, pass it as `cursor` for more. Binary files are not returned (a note says so). Long files are cut at `max_chars` with a `next_offset` to read on.",
  input: z.object({
    ...repo,
    path: z
      .string()
      .max(1000)
      .default('')
      .describe('File or folder path from the repository root, e.g. src/app.py; empty for the root folder.'),
    ref: branchName.optional().describe('Branch, tag or commit hash; default: the main branch.'),
    max_chars: maxChars('text'),
    offset,
    cursor: folderCursor,
  }),
  annotations: reads('Get file content', { idempotent: true }),
  async handler(ctx, a) {
    const ref = await fileRef(ctx, a);
    const at = `${segment(ref, 'ref')}/${filePath(a.path)}`;
    // a folder answers a page of entries: 100 at once (a file read ignores pagelen), the rest by cursor
    const res = await call<Uint8Array>(ctx, 'GET', `${repoPath(a)}/src/${at}${pageQuery(a, { pagelen: 100 })}`, {
      accept: '*/*',
      expect: 'bytes',
      tooLarge: `Bitbucket sends the whole file, so offset and max_chars do not help. Open it at ${webRepo(a)}/src/${at}`,
      action: `read "${a.path || '/'}" at ${a.ref || ref}`,
      scope: 'repository',
    });
    const base = { path: a.path || '', ref: a.ref || ref };
    const bytes = res.data;
    if (/^application\/json/i.test(String(res.headers.get('content-type') || ''))) {
      let page: Page<Entry> | null;
      try {
        page = JSON.parse(new TextDecoder().decode(bytes)) as Page<Entry>;
      } catch {
        page = null;
      }
      const entries = values(page);
      if (
        page &&
        Array.isArray(page.values) &&
        entries.every((e) => e && (e.type === 'commit_file' || e.type === 'commit_directory'))
      ) {
        const next = cursorOf(page);
        const listing = {
          ...base,
          type: 'directory',
          entries: entries.map((e) => ({
            path: e.path,
            type: e.type === 'commit_directory' ? 'dir' : 'file',
            size: e.size ?? null,
          })),
          next,
        };
        return next
          ? {
              ...listing,
              note: 'The folder has more entries: call again with the same path and ref and `next` as cursor.',
            }
          : listing;
      }
    }
    if (bytes.subarray(0, 8000).includes(0)) {
      return {
        ...base,
        type: 'file',
        binary: true,
        size: bytes.length,
        content: null,
        note: 'This is a binary file: its content is not returned as text.',
      };
    }
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    return { ...base, type: 'file', ...noteWindow(text, a.offset, a.max_chars) };
  },
});

export const listPipelines = defineTool({
  description:
    'List recent Bitbucket Pipelines (CI/CD builds) of a repository, newest first: build number, state (PENDING, IN_PROGRESS, COMPLETED) and result (SUCCESSFUL, FAILED, STOPPED, ERROR), branch or tag, commit, trigger, who started it, duration and url. When `next` is not null, pass it as `cursor`.',
  input: z.object({ ...repo, pagelen: pagelen(100, 20, 'Pipelines'), cursor }),
  annotations: reads('List pipelines', { idempotent: true }),
  async handler(ctx, a) {
    const data = await bb<Page<Pipeline>>(
      ctx,
      'GET',
      `${repoPath(a)}/pipelines${pageQuery(a, { sort: '-created_on', pagelen: a.pagelen })}`,
      {
        action: `list the pipelines of ${a.workspace}/${a.repo_slug}`,
        scope: 'pipeline',
      },
    );
    let next = cursorOf(data);
    // the pipelines list may page by number without a `next` link
    if (
      !next &&
      data &&
      typeof data.size === 'number' &&
      typeof data.page === 'number' &&
      typeof data.pagelen === 'number' &&
      data.page * data.pagelen < data.size
    ) {
      next = cursorOfQuery(`sort=-created_on&pagelen=${data.pagelen}&page=${data.page + 1}`);
    }
    return {
      pipelines: values(data).map((p) => slimPipeline(p, a)),
      total: data && typeof data.size === 'number' ? data.size : null,
      next,
    };
  },
});

export const triggerPipeline = defineTool({
  description:
    "Run (trigger, start) a Bitbucket Pipelines build on the head of a branch: the branch's default pipeline, or a custom pipeline named in bitbucket-pipelines.yml (`custom_pipeline`), with optional variables (secured ones are hidden in the logs). Returns the new pipeline's build number, state and url; follow it with bitbucket_list_pipelines.",
  input: z.object({
    ...repo,
    branch: branchName.describe('Branch to build.'),
    custom_pipeline: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Name of a custom pipeline under `pipelines: custom:` in bitbucket-pipelines.yml.'),
    variables: z
      .array(
        z.strictObject({
          key: z
            .string()
            .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/)
            .describe('Variable name.'),
          value: z.string().max(10000).describe('Variable value.'),
          secured: z.boolean().default(false).describe('Hide the value in logs and the UI.'),
        }),
      )
      .max(50)
      .optional()
      .describe('Pipeline variables.'),
  }),
  annotations: changes('Trigger pipeline'),
  async handler(ctx, a) {
    const keys = new Set<string>();
    for (const v of a.variables ?? []) {
      if (keys.has(v.key)) throw new Error(`Variable ${v.key} is given twice.`);
      keys.add(v.key);
    }
    const selector = a.custom_pipeline ? { selector: { type: 'custom', pattern: a.custom_pipeline } } : {};
    const body = {
      target: { type: 'pipeline_ref_target', ref_type: 'branch', ref_name: a.branch, ...selector },
      ...(a.variables?.length
        ? { variables: a.variables.map((v) => ({ key: v.key, value: v.value, secured: !!v.secured })) }
        : {}),
    };
    const data = await bb<Pipeline>(ctx, 'POST', `${repoPath(a)}/pipelines/`, {
      body,
      action: `run ${a.custom_pipeline ? `the custom pipeline "${a.custom_pipeline}"` : 'the pipeline'} on branch ${a.branch} of ${a.workspace}/${a.repo_slug}`,
      scope: 'pipeline:write',
      hints: {
        400: 'Check that the branch exists, that bitbucket-pipelines.yml defines this pipeline for it, and that Pipelines is enabled on the repository.',
      },
    });
    return slimPipeline(data!, a);
  },
});
