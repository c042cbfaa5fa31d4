/**
 * @module plugins/github/src/files
 * Reading a file or folder through the contents API (base64 → UTF-8, in windows of text) and
 * writing one file as a commit (the blob sha looked up when the agent has none).
 */
import { changes, defineTool, fromBase64, reads, segments, textWindow, toBase64, utf8, z } from 'workbench/plugin-sdk';
import { gh, isNotFound, repoPath } from './api.js';
import { repoArgs, SHA, windowArgs } from './args.js';

/** entries the contents API returns for one directory at most */
const DIR_ENTRIES_MAX = 1000;

interface Entry {
  type: string;
  name: string;
  path: string;
  sha: string;
  size: number;
  html_url: string;
  download_url?: string | null;
  encoding?: string;
  content?: string;
  target?: string;
  submodule_git_url?: string;
}

// A decoder puts U+FFFD for each invalid sequence; a byte-order mark is part of the file: kept, as
// GitHub shows it and as writing it back needs.
const utf8Decode = (bytes: Uint8Array): string => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);

export const getFileContents = defineTool({
  description:
    'Reads a file from a repository at a branch, tag or commit and returns its text (decoded UTF-8, in windows of max_chars with `next_offset` to read on) plus its blob `sha` (needed to update it). For a folder it returns the entries (name, path, type, size). Binary files and files over 1 MB return no content but a download_url.',
  input: z.object({
    ...repoArgs,
    path: z
      .string()
      .max(1000)
      .default('')
      .describe('Path inside the repository, e.g. "src/index.ts"; empty for the root folder.'),
    ref: z.string().min(1).max(255).optional().describe('Branch, tag or commit SHA. Default: the default branch.'),
    ...windowArgs,
  }),
  annotations: reads('Read a file or folder', { idempotent: true }),
  handler: async (ctx, a) => {
    const path = a.path ? segments(a.path, 'path') : '';
    const { data } = await gh<Entry | Entry[]>(ctx, 'GET', `${repoPath(a)}/contents/${path}`, {
      query: { ref: a.ref },
      what: `path "${a.path || '/'}"`,
    });
    if (Array.isArray(data)) {
      const dir = {
        type: 'dir',
        path: a.path || '',
        entries: data.map((e) => ({ name: e.name, path: e.path, type: e.type, size: e.size })),
      };
      if (data.length < DIR_ENTRIES_MAX) return dir;
      return {
        ...dir,
        entries_truncated: `GitHub lists at most ${DIR_ENTRIES_MAX} entries of a directory; use github_search_code with path: to find a file in it`,
      };
    }
    const base = { type: data.type, path: data.path, sha: data.sha, size: data.size, html_url: data.html_url };
    if (data.type !== 'file') return { ...base, target: data.target || data.submodule_git_url || null };
    const download_url = data.download_url || null;
    if (data.encoding !== 'base64' || typeof data.content !== 'string' || (data.content === '' && data.size > 0)) {
      return {
        ...base,
        content: null,
        note: 'The file is too large for the contents API (over 1 MB); use download_url.',
        download_url,
      };
    }
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(data.content);
    } catch {
      return {
        ...base,
        content: null,
        note: 'GitHub sent the content in a form that is not valid base64; use download_url.',
        download_url,
      };
    }
    if (bytes.slice(0, 8000).includes(0)) return { ...base, binary: true, content: null, download_url };
    return { ...base, ...textWindow(utf8Decode(bytes), a.offset, a.max_chars) };
  },
});

export const createOrUpdateFile = defineTool({
  description:
    'Writes one file to a branch as a new commit: creates it if it does not exist, otherwise replaces its whole content. Pass the full new text (UTF-8). If sha is omitted, the current blob sha is looked up first. Returns the commit SHA and the file URL. To change several files or open a pull request, create a branch first (github_create_branch) and write to it.',
  input: z.object({
    ...repoArgs,
    path: z.string().min(1).max(1000).describe('File path inside the repository, e.g. "docs/README.md".'),
    content: z.string().max(400000).describe('The complete new file content as text (it replaces the old content).'),
    message: z.string().min(1).max(2000).describe('Commit message.'),
    branch: z.string().min(1).max(255).optional().describe('Branch to commit to. Default: the default branch.'),
    sha: z
      .string()
      .regex(SHA)
      .optional()
      .describe(
        'Blob SHA of the file being replaced (from github_get_file_contents). Optional: looked up when omitted. GitHub answers 409 if it is stale.',
      ),
  }),
  annotations: changes('Create or update a file', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    const path = `${repoPath(a)}/contents/${segments(a.path, 'path')}`;
    let sha = a.sha;
    if (!sha) {
      try {
        const { data } = await gh<Entry | Entry[]>(ctx, 'GET', path, {
          query: { ref: a.branch },
          what: `path "${a.path}"`,
        });
        if (Array.isArray(data) || data.type !== 'file')
          throw new Error(`"${a.path}" is a ${Array.isArray(data) ? 'directory' : data.type}, not a file.`);
        sha = data.sha;
      } catch (err) {
        // no such file yet: it is created
        if (!isNotFound(err)) throw err;
      }
    }
    type Written = {
      content: { path: string; sha: string; html_url: string };
      commit: { sha: string; html_url: string };
    };
    const body = { message: a.message, content: toBase64(utf8(a.content)), branch: a.branch, sha };
    const { status, data } = await gh<Written>(ctx, 'PUT', path, { body, what: `writing "${a.path}"` });
    return {
      created: status === 201,
      path: data.content.path,
      sha: data.content.sha,
      html_url: data.content.html_url,
      commit: { sha: data.commit.sha, html_url: data.commit.html_url },
    };
  },
});
