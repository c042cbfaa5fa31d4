/**
 * @module plugins/gitlab/src/repository
 * The repository: read a file (UTF-8 text in windows; binary answered with a note), commit one
 * (created or updated), list a folder, list and create branches, search code.
 */
import {
  changes,
  checkUpload,
  clip,
  defineTool,
  fromBase64,
  reads,
  segments,
  textWindow,
  utf8,
  z,
  type PluginContext,
} from 'workbench/plugin-sdk';
import { api, defaultBranch, filePath, get, GitLabError, list, paging, projectPath, send, whole } from './api.js';
import { orNull, slimBranch, type Branch, type Project } from './shape.js';
import { page, paged, perPage, project, text255 } from './schema.js';

const SEARCH_DATA_CHARS = 600;
const TREE_TYPES = new Map([
  ['tree', 'dir'],
  ['blob', 'file'],
  ['commit', 'submodule'],
]);

interface RepositoryFile {
  file_path: string;
  ref?: string;
  size: number;
  blob_id?: string;
  last_commit_id?: string;
  encoding?: string;
  content?: string;
}

export const getFile = defineTool({
  description:
    "Reads a file from a GitLab repository at a branch, tag or commit (default: the default branch's HEAD) and returns its text, decoded as UTF-8, in windows of max_chars (pass next_offset as offset for the rest); binary files are answered with a note instead of content. Use gitlab_list_repository_tree to see what is in a folder.",
  input: z.object({
    ...project,
    path: z.string().min(1).max(1000).describe('File path in the repository, e.g. "src/app/main.py".'),
    ref: text255.optional().describe('Branch, tag or commit sha; default HEAD of the default branch.'),
    offset: z.int().min(0).default(0),
    max_chars: z.int().min(100).max(200000).default(50000),
  }),
  annotations: reads('Get file contents', { idempotent: true }),
  handler: async (ctx, a) => {
    const ref = a.ref || 'HEAD';
    const tooLarge = async () => {
      // GitLab sends a file whole (base64 in JSON): offset and max_chars cannot make it smaller
      let at = '';
      try {
        const p = await get<Project>(ctx, projectPath(ctx, a), { action: `project ${String(a.project)}` });
        const shown = ref === 'HEAD' ? p.default_branch || ref : ref;
        if (p.web_url) at = ` Open it in GitLab: ${p.web_url}/-/blob/${segments(shown)}/${segments(a.path)}`;
      } catch {
        at = '';
      }
      return `File "${a.path}" at ${ref} is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE), so it cannot be read here (offset and max_chars do not help: GitLab sends the whole file).${at || ' Open it in the project on GitLab.'}`;
    };
    const path = `${projectPath(ctx, a)}/repository/files/${filePath(a.path)}`;
    const data = await whole(
      get<RepositoryFile>(ctx, path, { query: { ref }, action: `file "${a.path}" at ${ref}` }),
      tooLarge,
    );
    const base = {
      path: data.file_path,
      ref: data.ref || ref,
      size: data.size,
      blob_id: data.blob_id || null,
      last_commit_id: data.last_commit_id || null,
    };
    if (data.encoding && data.encoding !== 'base64')
      return { ...base, ...textWindow(String(data.content || ''), a.offset, a.max_chars) };
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(String(data.content || ''));
    } catch {
      return { ...base, content: null, note: 'GitLab sent the content in a form that is not valid base64.' };
    }
    if (bytes.subarray(0, 8000).includes(0))
      return { ...base, binary: true, content: null, note: 'binary file: its content is not shown' };
    let text: string;
    try {
      // a byte-order mark is part of the file: kept
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      return { ...base, binary: true, content: null, note: 'the file is not UTF-8 text: its content is not shown' };
    }
    return { ...base, ...textWindow(text, a.offset, a.max_chars) };
  },
});

/** Whether a file exists at a ref (`HEAD …/repository/files/:file_path`: 200, or 404 when it does not). */
async function fileExists(ctx: PluginContext, path: string, ref: string, shown: string): Promise<boolean> {
  try {
    await api.request(ctx, 'HEAD', path, {
      query: { ref },
      expect: 'text',
      action: `looking for "${shown}" on ${ref}`,
    });
    return true;
  } catch (err) {
    if (err instanceof GitLabError && err.status === 404) return false;
    throw err;
  }
}

export const createOrUpdateFile = defineTool({
  description:
    'Commits one file to a GitLab repository branch: creates it, or replaces its content when it exists (action "auto", the default, looks first; "create" or "update" say which). Give the content as text (`content`) or as base64 (`content_base64`, for binary files) and a commit message; `start_branch` creates `branch` from it first. Pass `last_commit_id` (from gitlab_get_file) so that an update fails instead of overwriting a change made meanwhile. Returns the file path, branch and whether it was created or updated.',
  input: z.object({
    ...project,
    path: z.string().min(1).max(1000).describe('File path in the repository, e.g. "docs/setup.md".'),
    branch: text255.describe('Branch to commit to.'),
    commit_message: z.string().min(1).max(10000),
    content: z.string().max(10000000).optional().describe('The whole new content, as text.'),
    content_base64: z
      .string()
      .max(14000000)
      .regex(/^[A-Za-z0-9+/=\s]*$/)
      .optional()
      .describe('The whole new content, base64-encoded (instead of `content`).'),
    action: z.enum(['auto', 'create', 'update']).default('auto'),
    start_branch: text255.optional().describe('Create `branch` from this branch first.'),
    last_commit_id: z
      .string()
      .regex(/^[0-9a-fA-F]{7,64}$/)
      .optional()
      .describe("Update only if the file's last commit is still this one."),
  }),
  annotations: changes('Create or update file (commit)', { destructive: true }),
  handler: async (ctx, a) => {
    if ((a.content === undefined) === (a.content_base64 === undefined))
      throw new Error('Invalid arguments: pass exactly one of `content` (text) or `content_base64`.');
    const path = `${projectPath(ctx, a)}/repository/files/${filePath(a.path)}`;
    const at = a.start_branch || a.branch;
    const exists = a.action === 'auto' ? await fileExists(ctx, path, at, a.path) : a.action === 'update';
    const body = {
      branch: a.branch,
      start_branch: a.start_branch,
      commit_message: a.commit_message,
      content: a.content ?? a.content_base64?.replace(/\s+/g, ''),
      encoding: a.content === undefined ? 'base64' : 'text',
      last_commit_id: exists ? a.last_commit_id : undefined,
    };
    checkUpload(ctx, utf8(JSON.stringify(body)).length, `the commit of "${a.path}"`);
    const verb = exists ? 'updating' : 'creating';
    const done = await send<{ file_path?: string; branch?: string }>(
      ctx,
      exists ? 'PUT' : 'POST',
      path,
      body,
      `${verb} "${a.path}" on ${a.branch}`,
    );
    return {
      file_path: done.file_path || a.path,
      branch: done.branch || a.branch,
      action: exists ? 'updated' : 'created',
    };
  },
});

export const listRepositoryTree = defineTool({
  description:
    'Lists the files and folders of a GitLab repository at a path and ref (default: the root of the default branch), optionally recursively; each entry has name, path and type (file, dir, submodule). When `next` is not null, pass it as `page`. Use gitlab_get_file to read a file.',
  input: z.object({
    ...project,
    path: z.string().min(1).max(1000).optional().describe('Folder path; default the root.'),
    ref: text255.optional().describe('Branch, tag or commit sha; default the default branch.'),
    recursive: z.boolean().default(false),
    per_page: perPage(100),
    page,
  }),
  annotations: reads('List repository files', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = { path: a.path, ref: a.ref, recursive: a.recursive || undefined, ...paging(a) };
    const { rows, next } = await list<{ name: string; path: string; type: string }>(
      ctx,
      `${projectPath(ctx, a)}/repository/tree`,
      { query, action: `tree of "${a.path || '/'}"` },
    );
    return { entries: rows.map((e) => ({ name: e.name, path: e.path, type: TREE_TYPES.get(e.type) || e.type })), next };
  },
});

export const listBranches = defineTool({
  description:
    'Lists the branches of a GitLab repository, optionally those whose name contains a search term, with whether each is the default, protected or merged, and its last commit. When `next` is not null, pass it as `page`.',
  input: z.object({
    ...project,
    search: text255.optional().describe('Only branches whose name contains this (^abc: starts with; abc$: ends with).'),
    ...paged,
  }),
  annotations: reads('List branches', { idempotent: true }),
  handler: async (ctx, a) => {
    const { rows, next } = await list<Branch>(ctx, `${projectPath(ctx, a)}/repository/branches`, {
      query: { search: a.search, ...paging(a) },
      action: 'branches',
    });
    return { branches: rows.map(slimBranch), next };
  },
});

export const createBranch = defineTool({
  description:
    "Creates a new branch in a GitLab repository from a branch, tag or commit (default: the project's default branch). Returns the branch and its commit.",
  input: z.object({
    ...project,
    // eslint-disable-next-line no-useless-escape -- an escaped [ in a class keeps the JSON Schema pattern portable to clients' regex dialects
    branch: text255.regex(/^[^\s~^:?*\[\\]+$/).describe('Name of the new branch, e.g. "fix/login-timeout".'),
    ref: text255.optional().describe("Branch, tag or commit sha to start from; default the project's default branch."),
  }),
  annotations: changes('Create branch'),
  handler: async (ctx, a) => {
    // git ref rules the schema's pattern cannot express without lookahead
    if (/\.\.|\/\/|@\{|\.lock$|\/$|\.$|^\/|^-/.test(a.branch)) {
      throw new Error(
        `Invalid arguments: "${a.branch}" is not a valid branch name (no "..", "//", "@{", no leading "/" or "-", and no trailing "/", "." or ".lock").`,
      );
    }
    const from = a.ref || (await defaultBranch(ctx, a));
    const branch = await send<Branch>(
      ctx,
      'POST',
      `${projectPath(ctx, a)}/repository/branches`,
      { branch: a.branch, ref: from },
      `creating branch ${a.branch} from ${from}`,
    );
    return { ...slimBranch(branch), created_from: from };
  },
});

export const searchCode = defineTool({
  description:
    "Searches the code (file contents) of one GitLab project's repository for a text, on the default branch or a given ref, and returns matching files with the line number and a fragment around the match. When `next` is not null, pass it as `page`.",
  input: z.object({
    ...project,
    query: z
      .string()
      .min(1)
      .max(1000)
      .describe(
        'Text to search for; filename:, path: and extension: filters are understood by GitLab (e.g. "connect_db extension:py").',
      ),
    ref: text255.optional().describe('Branch, tag or commit to search; default the default branch.'),
    ...paged,
  }),
  annotations: reads('Search code in a project', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = { scope: 'blobs', search: a.query, ref: a.ref, ...paging(a) };
    const { rows, next } = await list<{ path: string; ref?: string; startline?: number; data?: string }>(
      ctx,
      `${projectPath(ctx, a)}/search`,
      { query, action: 'code search' },
    );
    const items = rows.map((b) => ({
      path: b.path,
      ref: b.ref || null,
      startline: orNull(b.startline),
      fragment: clip(b.data || '', SEARCH_DATA_CHARS),
    }));
    return { items, next };
  },
});
