/**
 * @module test/plugins/github.test
 * Every GitHub tool runs through the real gateway and sandbox against a loopback stand-in for
 * api.github.com (reached through the policy's origin mapping). One table states, per tool, the
 * requests it must make (method, encoded path, exact query, JSON body, the injected Bearer token)
 * and checks the slim result; a lone surrogate in a query or path value goes out as U+FFFD; a
 * second table covers the error mappings (401, missing scope, SSO, rate limits, 404, 405, 409,
 * 422, 5xx) and argument validation, including a `page` cursor with a malformed percent-escape.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { usePluginGateway } from '../helpers/plugin-gateway.js';
import type { Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'gho_github_plugin_test_token_0001';
const SHA = 'a'.repeat(40);
const SHA2 = 'b'.repeat(40);
type Gateway = TestGateway;
type Json = Record<string, unknown>;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway('github', { token: TOKEN }, (s) => ({ upstream, gw } = s));

// ---------- fixtures: GitHub-shaped answers; NOISE marks fields a slim result must drop ----------
const NOISE = { node_id: 'NOISE_node', _links: { self: 'NOISE_link' }, url: 'https://api.github.com/NOISE' };
const user = (login: string) => ({
  login,
  id: 7,
  avatar_url: 'https://avatars.example/NOISE',
  type: 'User',
  gravatar_id: 'NOISE',
});
const T = '2025-03-01T10:00:00Z';
const repoJson = {
  ...NOISE,
  id: 1,
  name: 'api',
  full_name: 'acme/api',
  owner: user('acme'),
  private: true,
  visibility: 'private',
  description: 'The API',
  default_branch: 'main',
  language: 'TypeScript',
  stargazers_count: 12,
  forks_count: 3,
  open_issues_count: 4,
  archived: false,
  fork: false,
  topics: ['http'],
  pushed_at: T,
  updated_at: T,
  created_at: T,
  html_url: 'https://github.com/acme/api',
  license: { spdx_id: 'MIT', node_id: 'NOISE' },
  permissions: { admin: false, push: true, pull: true },
};
const issueJson = (n: number, extra: Json = {}) => ({
  ...NOISE,
  number: n,
  title: `Issue ${n}`,
  state: 'open',
  state_reason: null,
  user: user('alice'),
  labels: [{ name: 'bug', color: 'f00', node_id: 'NOISE' }],
  assignees: [user('bob')],
  milestone: null,
  comments: 2,
  created_at: T,
  updated_at: T,
  closed_at: null,
  html_url: `https://github.com/acme/api/issues/${n}`,
  body: 'x'.repeat(9000),
  reactions: { url: 'NOISE' },
  ...extra,
});
const pullJson = (n: number, extra: Json = {}) => ({
  ...NOISE,
  number: n,
  title: `PR ${n}`,
  state: 'open',
  draft: false,
  user: user('alice'),
  head: { ref: 'feature/x', sha: SHA, repo: { full_name: 'acme/api', node_id: 'NOISE' } },
  base: { ref: 'main', sha: SHA2, repo: { full_name: 'acme/api' } },
  labels: [],
  assignees: [],
  requested_reviewers: [user('carol')],
  requested_teams: [{ slug: 'core', name: 'Core' }],
  created_at: T,
  updated_at: T,
  closed_at: null,
  merged_at: null,
  html_url: `https://github.com/acme/api/pull/${n}`,
  body: 'Fixes #1',
  ...extra,
});
const commitJson = (sha: string) => ({
  ...NOISE,
  sha,
  commit: { message: 'Fix login\n\nLonger text', author: { name: 'Alice', date: T }, tree: { sha: 'NOISE' } },
  author: user('alice'),
  committer: user('web-flow'),
  html_url: `https://github.com/acme/api/commit/${sha}`,
  parents: [{ sha: SHA2, url: 'NOISE' }],
});
const fileJson = {
  sha: 'NOISE',
  filename: 'src/a.ts',
  status: 'modified',
  additions: 3,
  deletions: 1,
  changes: 4,
  blob_url: 'NOISE',
  patch: '@@ -1 +1 @@\n-a\n+b',
};
const runJson = {
  ...NOISE,
  id: 99,
  name: 'CI',
  display_title: 'Fix login',
  workflow_id: 5,
  run_number: 41,
  run_attempt: 1,
  event: 'push',
  status: 'completed',
  conclusion: 'failure',
  head_branch: 'main',
  head_sha: SHA,
  actor: user('alice'),
  created_at: T,
  updated_at: T,
  html_url: 'https://github.com/acme/api/actions/runs/99',
  jobs_url: 'NOISE',
};
const releaseJson = {
  ...NOISE,
  id: 3,
  tag_name: 'v1.0.0',
  name: 'One',
  draft: false,
  prerelease: false,
  author: user('alice'),
  target_commitish: 'main',
  created_at: T,
  published_at: T,
  html_url: 'https://github.com/acme/api/releases/tag/v1.0.0',
  body: 'Notes',
  assets: [
    {
      name: 'app.tgz',
      size: 10,
      download_count: 2,
      browser_download_url: 'https://github.com/dl/app.tgz',
      node_id: 'NOISE',
    },
  ],
};
const commentJson = {
  ...NOISE,
  id: 11,
  user: user('bob'),
  created_at: T,
  updated_at: T,
  html_url: 'https://github.com/acme/api/issues/1#issuecomment-11',
  body: 'LGTM',
  author_association: 'NOISE',
};
const reviewCommentJson = {
  ...commentJson,
  id: 21,
  path: 'src/a.ts',
  line: 3,
  side: 'RIGHT',
  diff_hunk: '@@ -1 +1 @@',
  pull_request_review_id: 5,
  in_reply_to_id: undefined,
};
const linkTo = (page: number) => ({
  link: `<https://api.github.com/repositories/1/x?per_page=30&page=${page}>; rel="next", <https://api.github.com/repositories/1/x?page=9>; rel="last"`,
});
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

// ---------- the table ----------
interface Expected {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** exact query parameters (defaults included) */
  query?: Record<string, string>;
  /** exact JSON body; undefined means "no body" */
  body?: unknown;
  accept?: string;
  reply: UpstreamReply;
}
interface Case {
  name?: string;
  tool: string;
  args: Json;
  calls: Expected[];
  check: (result: Json) => void;
}
const PAGE = { per_page: '30', page: '1' };
const JOB = (id: number, conclusion = 'success') => ({
  id,
  name: `job ${id}`,
  status: 'completed',
  conclusion,
  started_at: T,
  completed_at: T,
  html_url: 'h',
  steps: [],
});
const R = '/repos/acme/api';
const A = { owner: 'acme', repo: 'api' };

const cases: Case[] = [
  {
    tool: 'github_get_me',
    args: {},
    calls: [
      {
        method: 'GET',
        path: '/user',
        reply: {
          json: {
            ...user('alice'),
            name: 'Alice',
            email: null,
            public_repos: 3,
            followers: 1,
            html_url: 'https://github.com/alice',
            created_at: T,
          },
        },
      },
    ],
    check: (r) => assert.deepEqual([r['login'], r['name'], r['public_repos']], ['alice', 'Alice', 3]),
  },
  {
    tool: 'github_search_repositories',
    args: { query: 'topic:cli language:go', sort: 'stars' },
    calls: [
      {
        method: 'GET',
        path: '/search/repositories',
        query: { q: 'topic:cli language:go', sort: 'stars', ...PAGE },
        reply: { json: { total_count: 1, incomplete_results: false, items: [repoJson] }, headers: linkTo(2) },
      },
    ],
    check: (r) => {
      assert.equal(r['total_count'], 1);
      assert.equal(r['next'], 2);
      assert.deepEqual((r['repositories'] as Json[])[0], {
        full_name: 'acme/api',
        description: 'The API',
        private: true,
        visibility: 'private',
        default_branch: 'main',
        language: 'TypeScript',
        stars: 12,
        forks: 3,
        open_issues: 4,
        archived: false,
        fork: false,
        topics: ['http'],
        pushed_at: T,
        updated_at: T,
        html_url: 'https://github.com/acme/api',
      });
    },
  },
  {
    tool: 'github_list_my_repositories',
    args: { per_page: 5 },
    calls: [
      {
        method: 'GET',
        path: '/user/repos',
        query: {
          visibility: 'all',
          affiliation: 'owner,collaborator,organization_member',
          sort: 'pushed',
          per_page: '5',
          page: '1',
        },
        reply: { json: [repoJson] },
      },
    ],
    check: (r) => {
      assert.equal((r['repositories'] as Json[]).length, 1);
      assert.equal(r['next'], null);
    },
  },
  {
    tool: 'github_get_repository',
    args: A,
    calls: [{ method: 'GET', path: R, reply: { json: repoJson } }],
    check: (r) =>
      assert.deepEqual(
        [r['default_branch'], r['license'], r['owner'], (r['permissions'] as Json)['push']],
        ['main', 'MIT', 'acme', true],
      ),
  },
  {
    tool: 'github_get_clone_url',
    args: A,
    calls: [
      {
        method: 'GET',
        path: R,
        reply: {
          json: {
            ...repoJson,
            clone_url: 'https://github.com/acme/api.git',
            ssh_url: 'git@github.com:acme/api.git',
            git_url: 'NOISE',
            svn_url: 'NOISE',
          },
        },
      },
    ],
    check: (r) => {
      assert.deepEqual(
        [r['repository'], r['https'], r['ssh'], r['default_branch'], r['visibility']],
        ['acme/api', 'https://github.com/acme/api.git', 'git@github.com:acme/api.git', 'main', 'private'],
      );
      assert.match(JSON.stringify(r['authenticate']), /personal access token/);
    },
  },
  {
    tool: 'github_list_branches',
    args: { ...A, protected: true },
    calls: [
      {
        method: 'GET',
        path: `${R}/branches`,
        query: { protected: 'true', ...PAGE },
        reply: { json: [{ name: 'main', commit: { sha: SHA, url: 'NOISE' }, protected: true }] },
      },
    ],
    check: (r) => assert.deepEqual(r['branches'], [{ name: 'main', sha: SHA, protected: true }]),
  },
  {
    name: 'github_create_branch from the default branch',
    tool: 'github_create_branch',
    args: { ...A, branch: 'fix/login' },
    calls: [
      { method: 'GET', path: R, reply: { json: repoJson } },
      {
        method: 'GET',
        path: `${R}/git/ref/heads/main`,
        reply: { json: { ref: 'refs/heads/main', object: { sha: SHA, type: 'commit' } } },
      },
      {
        method: 'POST',
        path: `${R}/git/refs`,
        body: { ref: 'refs/heads/fix/login', sha: SHA },
        reply: { status: 201, json: { ref: 'refs/heads/fix/login', object: { sha: SHA } } },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, { branch: 'fix/login', ref: 'refs/heads/fix/login', sha: SHA, created_from: 'main' }),
  },
  {
    name: 'github_create_branch from a named branch with a slash',
    tool: 'github_create_branch',
    args: { ...A, branch: 'hotfix', from_branch: 'release/1.x' },
    calls: [
      { method: 'GET', path: `${R}/git/ref/heads/release/1.x`, reply: { json: { object: { sha: SHA2 } } } },
      {
        method: 'POST',
        path: `${R}/git/refs`,
        body: { ref: 'refs/heads/hotfix', sha: SHA2 },
        reply: { status: 201, json: { ref: 'refs/heads/hotfix', object: { sha: SHA2 } } },
      },
    ],
    check: (r) => assert.equal(r['created_from'], 'release/1.x'),
  },
  {
    name: 'github_get_file_contents decodes UTF-8 and encodes the path',
    tool: 'github_get_file_contents',
    args: { ...A, path: 'docs/My File ü.md', ref: 'dev', max_chars: 1000 },
    calls: [
      {
        method: 'GET',
        path: `${R}/contents/docs/My%20File%20%C3%BC.md`,
        query: { ref: 'dev' },
        reply: {
          json: {
            ...NOISE,
            type: 'file',
            encoding: 'base64',
            path: 'docs/My File ü.md',
            sha: SHA,
            size: 20,
            html_url: 'https://github.com/x',
            content: b64('héllo ✓ 😀\n'.repeat(200)).replace(/(.{60})/g, '$1\n'),
          },
        },
      },
    ],
    check: (r) => {
      assert.equal(r['type'], 'file');
      assert.equal(r['sha'], SHA);
      assert.equal(r['content'], 'héllo ✓ 😀\n'.repeat(200).slice(0, 1000));
      assert.equal(r['total_chars'], 'héllo ✓ 😀\n'.repeat(200).length);
      assert.equal(r['next_offset'], 1000);
    },
  },
  {
    name: 'github_get_file_contents lists a folder',
    tool: 'github_get_file_contents',
    args: A,
    calls: [
      {
        method: 'GET',
        path: `${R}/contents/`,
        query: {},
        reply: { json: [{ ...NOISE, name: 'src', path: 'src', type: 'dir', size: 0, sha: 'NOISE' }] },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, { type: 'dir', path: '', entries: [{ name: 'src', path: 'src', type: 'dir', size: 0 }] }),
  },
  {
    name: 'github_get_file_contents on a folder of 1,000 entries says the list is cut',
    tool: 'github_get_file_contents',
    args: { ...A, path: 'big' },
    calls: [
      {
        method: 'GET',
        path: `${R}/contents/big`,
        query: {},
        reply: {
          json: Array.from({ length: 1000 }, (_, i) => ({ name: `f${i}`, path: `big/f${i}`, type: 'file', size: 1 })),
        },
      },
    ],
    check: (r) => {
      assert.equal((r['entries'] as Json[]).length, 1000);
      assert.match(r['entries_truncated'] as string, /at most 1000 entries/);
    },
  },
  {
    name: 'github_create_or_update_file looks up the sha of an existing file',
    tool: 'github_create_or_update_file',
    args: { ...A, path: 'docs/a b.md', content: 'Grüße 👋\n', message: 'Update docs', branch: 'fix/login' },
    calls: [
      {
        method: 'GET',
        path: `${R}/contents/docs/a%20b.md`,
        query: { ref: 'fix/login' },
        reply: { json: { type: 'file', sha: SHA2, encoding: 'base64', content: '' } },
      },
      {
        method: 'PUT',
        path: `${R}/contents/docs/a%20b.md`,
        body: { message: 'Update docs', content: b64('Grüße 👋\n'), branch: 'fix/login', sha: SHA2 },
        reply: {
          json: {
            content: { path: 'docs/a b.md', sha: SHA, html_url: 'https://github.com/f' },
            commit: { sha: SHA, html_url: 'https://github.com/c', tree: 'NOISE' },
          },
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        created: false,
        path: 'docs/a b.md',
        sha: SHA,
        html_url: 'https://github.com/f',
        commit: { sha: SHA, html_url: 'https://github.com/c' },
      }),
  },
  {
    name: 'github_create_or_update_file creates a new file',
    tool: 'github_create_or_update_file',
    args: { ...A, path: 'new.txt', content: 'hi', message: 'Add' },
    calls: [
      {
        method: 'GET',
        path: `${R}/contents/new.txt`,
        query: {},
        reply: { status: 404, json: { message: 'Not Found' } },
      },
      {
        method: 'PUT',
        path: `${R}/contents/new.txt`,
        body: { message: 'Add', content: 'aGk=' },
        reply: {
          status: 201,
          json: { content: { path: 'new.txt', sha: SHA, html_url: 'h' }, commit: { sha: SHA2, html_url: 'c' } },
        },
      },
    ],
    check: (r) => assert.equal(r['created'], true),
  },
  {
    tool: 'github_list_commits',
    args: { ...A, ref: 'main', path: 'src', since: '2025-01-01T00:00:00Z' },
    calls: [
      {
        method: 'GET',
        path: `${R}/commits`,
        query: { sha: 'main', path: 'src', since: '2025-01-01T00:00:00Z', ...PAGE },
        reply: { json: [commitJson(SHA)], headers: linkTo(2) },
      },
    ],
    check: (r) => {
      assert.deepEqual((r['commits'] as Json[])[0], {
        sha: SHA,
        message: 'Fix login\n\nLonger text',
        author: 'alice',
        date: T,
        html_url: `https://github.com/acme/api/commit/${SHA}`,
      });
      assert.equal(r['next'], 2);
    },
  },
  {
    name: 'github_get_commit with more files than max_files says so',
    tool: 'github_get_commit',
    args: { ...A, ref: SHA, max_files: 1 },
    calls: [
      {
        method: 'GET',
        path: `${R}/commits/${SHA}`,
        query: { per_page: '1' },
        reply: { json: { ...commitJson(SHA), files: [fileJson] }, headers: linkTo(2) },
      },
    ],
    check: (r) => {
      assert.equal((r['files'] as Json[]).length, 1);
      assert.match(r['files_truncated'] as string, /more than 1 files changed; pass a larger max_files/);
    },
  },
  {
    tool: 'github_get_commit',
    args: { ...A, ref: SHA },
    calls: [
      {
        method: 'GET',
        path: `${R}/commits/${SHA}`,
        query: { per_page: '30' },
        reply: {
          json: {
            ...commitJson(SHA),
            stats: { additions: 3, deletions: 1, total: 4 },
            files: [{ ...fileJson, patch: 'p'.repeat(5000) }],
          },
        },
      },
    ],
    check: (r) => {
      assert.deepEqual(r['parents'], [SHA2]);
      const f = (r['files'] as Json[])[0]!;
      assert.equal(f['filename'], 'src/a.ts');
      assert.ok((f['patch'] as string).length < 1300, 'patches are truncated');
    },
  },
  {
    tool: 'github_search_code',
    args: { query: 'connect_db org:acme' },
    calls: [
      {
        method: 'GET',
        path: '/search/code',
        query: { q: 'connect_db org:acme', per_page: '20', page: '1' },
        accept: 'application/vnd.github.text-match+json',
        reply: {
          json: {
            total_count: 1,
            incomplete_results: false,
            items: [
              {
                ...NOISE,
                name: 'db.py',
                path: 'lib/db.py',
                sha: SHA,
                html_url: 'https://github.com/acme/api/blob/main/lib/db.py',
                repository: { ...repoJson },
                score: 1,
                text_matches: [{ fragment: 'def connect_db():', object_url: 'NOISE' }],
              },
            ],
          },
        },
      },
    ],
    check: (r) =>
      assert.deepEqual((r['items'] as Json[])[0], {
        repository: 'acme/api',
        path: 'lib/db.py',
        sha: SHA,
        html_url: 'https://github.com/acme/api/blob/main/lib/db.py',
        fragments: ['def connect_db():'],
      }),
  },
  {
    tool: 'github_list_issues',
    args: { ...A, labels: 'bug,ui', assignee: 'bob', state: 'all' },
    calls: [
      {
        method: 'GET',
        path: `${R}/issues`,
        query: { state: 'all', labels: 'bug,ui', assignee: 'bob', sort: 'created', ...PAGE },
        reply: { json: [issueJson(1), issueJson(2, { pull_request: { url: 'x' } })], headers: linkTo(3) },
      },
    ],
    check: (r) => {
      const issues = r['issues'] as Json[];
      assert.equal(issues.length, 1, 'pull requests are left out');
      assert.equal(r['skipped_pull_requests'], 1);
      assert.equal(r['next'], 3);
      assert.deepEqual(
        [issues[0]!['number'], issues[0]!['author'], issues[0]!['labels'], issues[0]!['assignees']],
        [1, 'alice', ['bug'], ['bob']],
      );
      assert.ok((issues[0]!['body'] as string).length < 400, 'list bodies are snippets');
    },
  },
  {
    name: 'github_list_issues paged by cursor (large repositories): next carries the cursor, and takes it back',
    tool: 'github_list_issues',
    args: { ...A },
    calls: [
      {
        method: 'GET',
        path: `${R}/issues`,
        query: { state: 'open', sort: 'created', ...PAGE },
        reply: {
          json: [issueJson(1)],
          headers: {
            link: '<https://api.github.com/repositories/1/issues?per_page=30&after=Y3Vyc29yOjE%3D>; rel="next"',
          },
        },
      },
    ],
    check: (r) => assert.equal(r['next'], 'after=Y3Vyc29yOjE%3D'),
  },
  {
    tool: 'github_list_issues',
    args: { ...A, page: 'after=Y3Vyc29yOjE%3D' },
    calls: [
      {
        method: 'GET',
        path: `${R}/issues`,
        query: { state: 'open', sort: 'created', per_page: '30', after: 'Y3Vyc29yOjE=' },
        reply: { json: [issueJson(2)] },
      },
    ],
    check: (r) => assert.equal(r['next'], null),
  },
  {
    tool: 'github_get_issue',
    args: { ...A, issue_number: 7 },
    calls: [{ method: 'GET', path: `${R}/issues/7`, reply: { json: issueJson(7) } }],
    check: (r) => {
      assert.equal(r['number'], 7);
      assert.match(r['body'] as string, /^x{8000}… \[truncated, 1000 more characters\]$/);
    },
  },
  {
    tool: 'github_create_issue',
    args: { ...A, title: 'Login times out', body: 'Steps…', labels: ['bug'], assignees: ['bob'] },
    calls: [
      {
        method: 'POST',
        path: `${R}/issues`,
        body: { title: 'Login times out', body: 'Steps…', labels: ['bug'], assignees: ['bob'] },
        reply: { status: 201, json: issueJson(8, { title: 'Login times out' }) },
      },
    ],
    check: (r) => assert.deepEqual([r['number'], r['html_url']], [8, 'https://github.com/acme/api/issues/8']),
  },
  {
    name: 'github_update_issue closes as not planned and adds a label',
    tool: 'github_update_issue',
    args: { ...A, issue_number: 8, state: 'closed', state_reason: 'not_planned', add_labels: ['wontfix'] },
    calls: [
      {
        method: 'PATCH',
        path: `${R}/issues/8`,
        body: { state: 'closed', state_reason: 'not_planned' },
        reply: { json: issueJson(8, { state: 'closed', state_reason: 'not_planned' }) },
      },
      {
        method: 'POST',
        path: `${R}/issues/8/labels`,
        body: { labels: ['wontfix'] },
        reply: { json: [{ name: 'bug' }, { name: 'wontfix' }] },
      },
    ],
    check: (r) =>
      assert.deepEqual([r['state'], r['state_reason'], r['labels']], ['closed', 'not_planned', ['bug', 'wontfix']]),
  },
  {
    name: 'github_update_issue reopens and clears the milestone',
    tool: 'github_update_issue',
    args: { ...A, issue_number: 8, state: 'open', milestone: null, assignees: [] },
    calls: [
      {
        method: 'PATCH',
        path: `${R}/issues/8`,
        body: { state: 'open', assignees: [], milestone: null },
        reply: { json: issueJson(8, { assignees: [] }) },
      },
    ],
    check: (r) => assert.deepEqual(r['assignees'], []),
  },
  {
    tool: 'github_add_issue_comment',
    args: { ...A, issue_number: 1, body: 'On it' },
    calls: [
      {
        method: 'POST',
        path: `${R}/issues/1/comments`,
        body: { body: 'On it' },
        reply: { status: 201, json: { ...commentJson, body: 'On it' } },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        id: 11,
        author: 'bob',
        created_at: T,
        updated_at: T,
        html_url: 'https://github.com/acme/api/issues/1#issuecomment-11',
        body: 'On it',
      }),
  },
  {
    tool: 'github_list_issue_comments',
    args: { ...A, issue_number: 1, page: 2 },
    calls: [
      {
        method: 'GET',
        path: `${R}/issues/1/comments`,
        query: { per_page: '30', page: '2' },
        reply: { json: [commentJson] },
      },
    ],
    check: (r) => assert.deepEqual([(r['comments'] as Json[])[0]!['body'], r['next']], ['LGTM', null]),
  },
  {
    tool: 'github_search_issues',
    args: { query: 'review-requested:@me is:open', type: 'pr', sort: 'updated' },
    calls: [
      {
        method: 'GET',
        path: '/search/issues',
        query: { q: 'review-requested:@me is:open is:pr', sort: 'updated', advanced_search: 'true', ...PAGE },
        reply: {
          json: {
            total_count: 1,
            incomplete_results: false,
            items: [issueJson(4, { repository_url: 'https://api.github.com/repos/acme/web', pull_request: {} })],
          },
        },
      },
    ],
    check: (r) => {
      const item = (r['items'] as Json[])[0]!;
      assert.deepEqual([item['repository'], item['number'], item['is_pull_request']], ['acme/web', 4, true]);
    },
  },
  {
    name: 'github_search_issues keeps a type qualifier the query already has',
    tool: 'github_search_issues',
    args: { query: 'repo:acme/api is:issue label:bug' },
    calls: [
      {
        method: 'GET',
        path: '/search/issues',
        query: { q: 'repo:acme/api is:issue label:bug', advanced_search: 'true', ...PAGE },
        reply: { json: { total_count: 0, items: [] } },
      },
    ],
    check: (r) => assert.deepEqual(r['items'], []),
  },
  {
    tool: 'github_list_labels',
    args: A,
    calls: [
      {
        method: 'GET',
        path: `${R}/labels`,
        query: { per_page: '100', page: '1' },
        reply: { json: [{ ...NOISE, id: 1, name: 'bug', color: 'f00', description: 'Broken', default: true }] },
      },
    ],
    check: (r) => assert.deepEqual(r['labels'], [{ name: 'bug', color: 'f00', description: 'Broken' }]),
  },
  {
    tool: 'github_list_pull_requests',
    args: { ...A, base: 'main', head: 'acme:feature/x' },
    calls: [
      {
        method: 'GET',
        path: `${R}/pulls`,
        query: { state: 'open', head: 'acme:feature/x', base: 'main', sort: 'created', ...PAGE },
        reply: { json: [pullJson(5)], headers: linkTo(2) },
      },
    ],
    check: (r) => {
      const p = (r['pull_requests'] as Json[])[0]!;
      assert.deepEqual(
        [p['number'], p['head'], p['base'], p['requested_reviewers']],
        [5, 'feature/x', 'main', ['carol', 'team:core']],
      );
      assert.equal(r['next'], 2);
    },
  },
  {
    tool: 'github_get_pull_request',
    args: { ...A, pull_number: 5 },
    calls: [
      {
        method: 'GET',
        path: `${R}/pulls/5`,
        reply: {
          json: pullJson(5, {
            merged: false,
            mergeable: true,
            mergeable_state: 'clean',
            merged_by: null,
            commits: 2,
            additions: 10,
            deletions: 2,
            changed_files: 1,
            comments: 0,
            review_comments: 1,
          }),
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(
        [r['mergeable'], r['mergeable_state'], r['head_sha'], r['changed_files']],
        [true, 'clean', SHA, 1],
      ),
  },
  {
    name: 'github_create_pull_request into the default branch, skipping the author as reviewer',
    tool: 'github_create_pull_request',
    args: { ...A, title: 'Fix login', head: 'fix/login', body: 'Closes #8', reviewers: ['Alice', 'carol'] },
    calls: [
      { method: 'GET', path: R, reply: { json: repoJson } },
      {
        method: 'POST',
        path: `${R}/pulls`,
        body: { title: 'Fix login', head: 'fix/login', base: 'main', body: 'Closes #8', draft: false },
        reply: { status: 201, json: pullJson(9, { requested_reviewers: [], requested_teams: [] }) },
      },
      {
        method: 'POST',
        path: `${R}/pulls/9/requested_reviewers`,
        body: { reviewers: ['carol'] },
        reply: { status: 201, json: pullJson(9, { requested_reviewers: [user('carol')], requested_teams: [] }) },
      },
    ],
    check: (r) =>
      assert.deepEqual([r['number'], r['reviewers_requested'], r['reviewers_skipped']], [9, ['carol'], ['Alice']]),
  },
  {
    tool: 'github_update_pull_request',
    args: { ...A, pull_number: 9, state: 'closed', title: 'Obsolete' },
    calls: [
      {
        method: 'PATCH',
        path: `${R}/pulls/9`,
        body: { title: 'Obsolete', state: 'closed' },
        reply: { json: pullJson(9, { state: 'closed', title: 'Obsolete' }) },
      },
    ],
    check: (r) => assert.deepEqual([r['state'], r['title']], ['closed', 'Obsolete']),
  },
  {
    tool: 'github_merge_pull_request',
    args: { ...A, pull_number: 9, merge_method: 'squash', sha: SHA },
    calls: [
      {
        method: 'PUT',
        path: `${R}/pulls/9/merge`,
        body: { merge_method: 'squash', sha: SHA },
        reply: { json: { sha: SHA2, merged: true, message: 'Pull Request successfully merged' } },
      },
    ],
    check: (r) => assert.deepEqual(r, { merged: true, sha: SHA2, message: 'Pull Request successfully merged' }),
  },
  {
    tool: 'github_list_pull_request_files',
    args: { ...A, pull_number: 9 },
    calls: [
      {
        method: 'GET',
        path: `${R}/pulls/9/files`,
        query: PAGE,
        reply: {
          json: [
            fileJson,
            { ...fileJson, filename: 'b.ts', status: 'renamed', previous_filename: 'a.ts', patch: undefined },
          ],
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r['files'], [
        { filename: 'src/a.ts', status: 'modified', additions: 3, deletions: 1, patch: '@@ -1 +1 @@\n-a\n+b' },
        { filename: 'b.ts', status: 'renamed', additions: 3, deletions: 1, previous_filename: 'a.ts', patch: null },
      ]),
  },
  {
    tool: 'github_get_pull_request_diff',
    args: { ...A, pull_number: 9, max_chars: 1000, offset: 500 },
    calls: [
      {
        method: 'GET',
        path: `${R}/pulls/9`,
        accept: 'application/vnd.github.diff',
        reply: { body: 'd'.repeat(3000), headers: { 'content-type': 'text/plain; charset=utf-8' } },
      },
    ],
    check: (r) => assert.deepEqual(r, { total_chars: 3000, offset: 500, content: 'd'.repeat(1000), next_offset: 1500 }),
  },
  {
    tool: 'github_list_pull_request_reviews',
    args: { ...A, pull_number: 9 },
    calls: [
      {
        method: 'GET',
        path: `${R}/pulls/9/reviews`,
        query: PAGE,
        reply: {
          json: [
            {
              ...NOISE,
              id: 5,
              user: user('carol'),
              state: 'APPROVED',
              body: '',
              submitted_at: T,
              commit_id: SHA,
              html_url: 'h',
            },
          ],
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r['reviews'], [
        { id: 5, author: 'carol', state: 'APPROVED', submitted_at: T, commit_id: SHA, html_url: 'h', body: '' },
      ]),
  },
  {
    tool: 'github_create_pull_request_review',
    args: {
      ...A,
      pull_number: 9,
      event: 'REQUEST_CHANGES',
      body: 'See inline',
      comments: [{ path: 'src/a.ts', line: 12, start_line: 10, body: 'Handle null' }],
    },
    calls: [
      {
        method: 'POST',
        path: `${R}/pulls/9/reviews`,
        body: {
          event: 'REQUEST_CHANGES',
          body: 'See inline',
          comments: [
            { path: 'src/a.ts', body: 'Handle null', line: 12, side: 'RIGHT', start_line: 10, start_side: 'RIGHT' },
          ],
        },
        reply: {
          json: {
            id: 6,
            user: user('carol'),
            state: 'CHANGES_REQUESTED',
            body: 'See inline',
            submitted_at: T,
            commit_id: SHA,
            html_url: 'h',
          },
        },
      },
    ],
    check: (r) => assert.deepEqual([r['id'], r['state']], [6, 'CHANGES_REQUESTED']),
  },
  {
    tool: 'github_request_reviewers',
    args: { ...A, pull_number: 9, reviewers: ['dave'], team_reviewers: ['core'] },
    calls: [
      { method: 'GET', path: `${R}/pulls/9`, reply: { json: pullJson(9) } },
      {
        method: 'POST',
        path: `${R}/pulls/9/requested_reviewers`,
        body: { reviewers: ['dave'], team_reviewers: ['core'] },
        reply: { status: 201, json: pullJson(9, { requested_reviewers: [user('carol'), user('dave')] }) },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, { number: 9, reviewers_requested: ['carol', 'dave', 'team:core'], reviewers_skipped: [] }),
  },
  {
    name: 'github_request_reviewers makes no request when only the author was named',
    tool: 'github_request_reviewers',
    args: { ...A, pull_number: 9, reviewers: ['alice'] },
    calls: [{ method: 'GET', path: `${R}/pulls/9`, reply: { json: pullJson(9) } }],
    check: (r) => assert.deepEqual([r['reviewers_requested'], r['reviewers_skipped']], [[], ['alice']]),
  },
  {
    tool: 'github_list_pull_request_comments',
    args: { ...A, pull_number: 9 },
    calls: [{ method: 'GET', path: `${R}/pulls/9/comments`, query: PAGE, reply: { json: [reviewCommentJson] } }],
    check: (r) =>
      assert.deepEqual((r['comments'] as Json[])[0], {
        id: 21,
        author: 'bob',
        path: 'src/a.ts',
        line: 3,
        start_line: null,
        side: 'RIGHT',
        in_reply_to_id: null,
        created_at: T,
        html_url: commentJson.html_url,
        body: 'LGTM',
        diff_hunk: '@@ -1 +1 @@',
      }),
  },
  {
    tool: 'github_reply_to_review_comment',
    args: { ...A, pull_number: 9, comment_id: 21, body: 'Fixed' },
    calls: [
      {
        method: 'POST',
        path: `${R}/pulls/9/comments/21/replies`,
        body: { body: 'Fixed' },
        reply: { status: 201, json: { ...reviewCommentJson, id: 22, body: 'Fixed', in_reply_to_id: 21 } },
      },
    ],
    check: (r) => assert.deepEqual([r['id'], r['in_reply_to_id'], r['body']], [22, 21, 'Fixed']),
  },
  {
    name: 'github_list_check_runs for a pull request head',
    tool: 'github_list_check_runs',
    args: { ...A, pull_number: 9 },
    calls: [
      { method: 'GET', path: `${R}/pulls/9`, reply: { json: pullJson(9) } },
      {
        method: 'GET',
        path: `${R}/commits/${SHA}/check-runs`,
        query: { filter: 'latest', ...PAGE },
        reply: {
          json: {
            total_count: 2,
            check_runs: [
              {
                ...NOISE,
                id: 1,
                name: 'test',
                app: { slug: 'github-actions' },
                status: 'completed',
                conclusion: 'failure',
                started_at: T,
                completed_at: T,
                html_url: 'h',
                output: { title: '2 failed', summary: 'NOISE long' },
              },
              { id: 2, name: 'lint', status: 'in_progress', conclusion: null },
            ],
          },
        },
      },
    ],
    check: (r) => {
      assert.deepEqual(r['summary'], { failure: 1, in_progress: 1 });
      assert.equal(r['ref'], SHA);
      assert.deepEqual((r['check_runs'] as Json[])[0], {
        id: 1,
        name: 'test',
        app: 'github-actions',
        status: 'completed',
        conclusion: 'failure',
        started_at: T,
        completed_at: T,
        html_url: 'h',
        summary: '2 failed',
      });
    },
  },
  {
    tool: 'github_list_workflows',
    args: A,
    calls: [
      {
        method: 'GET',
        path: `${R}/actions/workflows`,
        query: PAGE,
        reply: {
          json: {
            total_count: 1,
            workflows: [
              {
                ...NOISE,
                id: 5,
                name: 'CI',
                path: '.github/workflows/ci.yml',
                state: 'active',
                html_url: 'h',
                badge_url: 'NOISE',
              },
            ],
          },
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r['workflows'], [
        { id: 5, name: 'CI', path: '.github/workflows/ci.yml', state: 'active', html_url: 'h' },
      ]),
  },
  {
    tool: 'github_list_workflow_runs',
    args: { ...A, workflow: 'ci.yml', branch: 'main', status: 'failure' },
    calls: [
      {
        method: 'GET',
        path: `${R}/actions/workflows/ci.yml/runs`,
        query: { branch: 'main', status: 'failure', per_page: '20', page: '1' },
        reply: { json: { total_count: 1, workflow_runs: [runJson] }, headers: linkTo(2) },
      },
    ],
    check: (r) => {
      assert.deepEqual((r['runs'] as Json[])[0], {
        id: 99,
        name: 'CI',
        title: 'Fix login',
        workflow_id: 5,
        run_number: 41,
        attempt: 1,
        event: 'push',
        status: 'completed',
        conclusion: 'failure',
        branch: 'main',
        head_sha: SHA,
        actor: 'alice',
        created_at: T,
        updated_at: T,
        html_url: 'https://github.com/acme/api/actions/runs/99',
      });
      assert.equal(r['next'], 2);
    },
  },
  {
    tool: 'github_get_workflow_run',
    args: { ...A, run_id: 99 },
    calls: [
      { method: 'GET', path: `${R}/actions/runs/99`, reply: { json: runJson } },
      {
        method: 'GET',
        path: `${R}/actions/runs/99/jobs`,
        query: { filter: 'latest', per_page: '100', page: '1' },
        reply: {
          json: {
            total_count: 1,
            jobs: [
              {
                ...NOISE,
                id: 1,
                name: 'test',
                status: 'completed',
                conclusion: 'failure',
                started_at: T,
                completed_at: T,
                html_url: 'h',
                steps: [
                  { name: 'checkout', conclusion: 'success' },
                  { name: 'npm test', conclusion: 'failure' },
                ],
              },
            ],
          },
        },
      },
    ],
    check: (r) => {
      assert.deepEqual(
        [r['conclusion'], (r['jobs'] as Json[])[0]!['failed_steps'], r['total_jobs']],
        ['failure', ['npm test'], 1],
      );
      assert.equal(r['jobs_truncated'], undefined);
    },
  },
  {
    name: 'github_get_workflow_run with 150 jobs: the second page is read, the failure on it kept',
    tool: 'github_get_workflow_run',
    args: { ...A, run_id: 99 },
    calls: [
      { method: 'GET', path: `${R}/actions/runs/99`, reply: { json: runJson } },
      {
        method: 'GET',
        path: `${R}/actions/runs/99/jobs`,
        query: { filter: 'latest', per_page: '100', page: '1' },
        reply: {
          json: { total_count: 150, jobs: Array.from({ length: 100 }, (_, i) => JOB(i + 1)) },
          headers: linkTo(2),
        },
      },
      {
        method: 'GET',
        path: `${R}/actions/runs/99/jobs`,
        query: { filter: 'latest', per_page: '100', page: '2' },
        reply: {
          json: {
            total_count: 150,
            jobs: Array.from({ length: 50 }, (_, i) => JOB(i + 101, i === 49 ? 'failure' : 'success')),
          },
        },
      },
    ],
    check: (r) => {
      const jobs = r['jobs'] as Json[];
      assert.equal(jobs.length, 150);
      assert.equal(jobs[149]!['conclusion'], 'failure');
      assert.equal(r['jobs_truncated'], undefined);
    },
  },
  {
    tool: 'github_trigger_workflow',
    args: { ...A, workflow: 'deploy.yml', ref: 'main', inputs: { environment: 'staging' } },
    calls: [
      {
        method: 'POST',
        path: `${R}/actions/workflows/deploy.yml/dispatches`,
        body: { ref: 'main', inputs: { environment: 'staging' }, return_run_details: true },
        reply: {
          json: {
            workflow_run_id: 123,
            run_url: 'https://api.github.com/repos/acme/api/actions/runs/123',
            html_url: 'https://github.com/acme/api/actions/runs/123',
          },
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        dispatched: true,
        run_id: 123,
        run_url: 'https://api.github.com/repos/acme/api/actions/runs/123',
        html_url: 'https://github.com/acme/api/actions/runs/123',
      }),
  },
  {
    name: 'github_trigger_workflow when GitHub answers 204 without run details',
    tool: 'github_trigger_workflow',
    args: { ...A, workflow: '5', ref: 'v1' },
    calls: [
      {
        method: 'POST',
        path: `${R}/actions/workflows/5/dispatches`,
        body: { ref: 'v1', return_run_details: true },
        reply: { status: 204 },
      },
    ],
    check: (r) => assert.deepEqual([r['dispatched'], r['run_id']], [true, null]),
  },
  {
    tool: 'github_rerun_workflow',
    args: { ...A, run_id: 99, failed_only: true },
    calls: [
      {
        method: 'POST',
        path: `${R}/actions/runs/99/rerun-failed-jobs`,
        body: { enable_debug_logging: false },
        reply: { status: 201, json: {} },
      },
    ],
    check: (r) => assert.deepEqual(r, { rerun_requested: true, run_id: 99, failed_only: true }),
  },
  {
    tool: 'github_cancel_workflow_run',
    args: { ...A, run_id: 99 },
    calls: [{ method: 'POST', path: `${R}/actions/runs/99/cancel`, reply: { status: 202, json: {} } }],
    check: (r) => assert.deepEqual(r, { cancel_requested: true, run_id: 99 }),
  },
  {
    tool: 'github_list_releases',
    args: A,
    calls: [
      { method: 'GET', path: `${R}/releases`, query: { per_page: '10', page: '1' }, reply: { json: [releaseJson] } },
    ],
    check: (r) =>
      assert.deepEqual((r['releases'] as Json[])[0]!['assets'], [
        { name: 'app.tgz', size: 10, download_count: 2, url: 'https://github.com/dl/app.tgz' },
      ]),
  },
  {
    tool: 'github_create_release',
    args: { ...A, tag_name: 'v1.1.0', generate_release_notes: true, make_latest: 'true' },
    calls: [
      {
        method: 'POST',
        path: `${R}/releases`,
        body: {
          tag_name: 'v1.1.0',
          draft: false,
          prerelease: false,
          generate_release_notes: true,
          make_latest: 'true',
        },
        reply: { status: 201, json: { ...releaseJson, tag_name: 'v1.1.0' } },
      },
    ],
    check: (r) => assert.deepEqual([r['tag_name'], r['body']], ['v1.1.0', 'Notes']),
  },
  {
    tool: 'github_list_notifications',
    args: { participating: true },
    calls: [
      {
        method: 'GET',
        path: '/notifications',
        query: { all: 'false', participating: 'true', ...PAGE },
        reply: {
          json: [
            {
              id: '1001',
              unread: true,
              reason: 'review_requested',
              updated_at: T,
              repository: repoJson,
              subject: {
                title: 'Fix login',
                type: 'PullRequest',
                url: 'https://api.github.com/repos/acme/api/pulls/9',
                latest_comment_url: 'NOISE',
              },
              subscription_url: 'NOISE',
            },
          ],
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r['notifications'], [
        {
          thread_id: '1001',
          unread: true,
          reason: 'review_requested',
          updated_at: T,
          repository: 'acme/api',
          type: 'PullRequest',
          title: 'Fix login',
          number: 9,
        },
      ]),
  },
  {
    name: 'github_mark_notifications_read for one thread',
    tool: 'github_mark_notifications_read',
    args: { thread_id: '1001' },
    calls: [{ method: 'PATCH', path: '/notifications/threads/1001', reply: { status: 205 } }],
    check: (r) => assert.deepEqual(r, { marked_read: 'thread', thread_id: '1001' }),
  },
  {
    name: 'github_mark_notifications_read for one repository',
    tool: 'github_mark_notifications_read',
    args: { ...A, last_read_at: '2025-03-01T00:00:00Z' },
    calls: [
      {
        method: 'PUT',
        path: `${R}/notifications`,
        body: { last_read_at: '2025-03-01T00:00:00Z', read: true },
        reply: { status: 202, json: { message: 'queued' } },
      },
    ],
    check: (r) => assert.deepEqual(r, { marked_read: 'acme/api', pending: true }),
  },
];

/** Serves the expected replies in order and records what the tool sent. */
async function runCase(c: Case): Promise<Json> {
  upstream.requests.length = 0;
  let i = 0;
  upstream.setHandler(() => c.calls[i++]?.reply ?? { status: 599, json: { message: 'unexpected extra request' } });
  const item = (await gw.execute(c.tool, c.args)) as Json;
  assert.ok('result' in item, `${c.tool} failed: ${JSON.stringify(item)}`);
  assert.equal(
    upstream.requests.length,
    c.calls.length,
    `requests made: ${upstream.requests.map((r) => `${r.method} ${r.url}`).join(', ')}`,
  );
  c.calls.forEach((want, n) => {
    const got = upstream.requests[n]!;
    assert.equal(`${got.method} ${got.path}`, `${want.method} ${want.path}`, `request ${n}`);
    assert.equal(got.headers.authorization, `Bearer ${TOKEN}`, `request ${n} carries the user's token`);
    assert.equal(got.headers['x-github-api-version'], '2022-11-28');
    assert.equal(got.headers.accept, want.accept ?? 'application/vnd.github+json');
    if (want.query) assert.deepEqual(Object.fromEntries(got.query), want.query, `request ${n} query`);
    if (want.body === undefined) assert.equal(got.body, '', `request ${n} has no body`);
    else {
      assert.equal(got.headers['content-type'], 'application/json', `request ${n} is JSON`);
      assert.deepEqual(got.json, want.body, `request ${n} body`);
    }
  });
  const result = item['result'] as Json;
  assert.ok(!JSON.stringify(result).includes('NOISE'), `the result is slim: ${JSON.stringify(result)}`);
  return result;
}

describe('github tools: request made and result shaped', () => {
  for (const c of cases) {
    test(c.name ?? c.tool, async () => c.check(await runCase(c)));
  }

  test('every tool in the manifest has a case', async () => {
    const { readFile } = await import('node:fs/promises');
    const manifest = JSON.parse(
      await readFile(new URL('../../../plugins/github/manifest.json', import.meta.url), 'utf8'),
    ) as { tools: { name: string }[] };
    const covered = new Set(cases.map((c) => c.tool));
    assert.deepEqual(
      manifest.tools.map((t) => t.name).filter((n) => !covered.has(n)),
      [],
    );
    assert.ok(manifest.tools.length >= 28);
  });
});

// ---------- lone surrogates: U+FFFD (%EF%BF%BD), as URLSearchParams sends them, not a URIError ----------
describe('github tools: a lone surrogate in an argument is sent as U+FFFD', () => {
  test('in the query string: github_search_issues with "\\uD800" in the query', async () => {
    const r = await runCase({
      tool: 'github_search_issues',
      args: { query: 'crash \uD800 label:bug' },
      calls: [
        {
          method: 'GET',
          path: '/search/issues',
          query: { q: 'crash \uFFFD label:bug is:issue', advanced_search: 'true', ...PAGE },
          reply: { json: { total_count: 0, items: [] } },
        },
      ],
      check: () => {},
    });
    assert.deepEqual(r['items'], []);
    assert.match(upstream.last().url, /[?&]q=crash%20%EF%BF%BD%20label%3Abug%20is%3Aissue(&|$)/);
  });

  test('in a path segment: github_get_file_contents with "\\uDC00" in the path', async () => {
    const r = await runCase({
      tool: 'github_get_file_contents',
      args: { ...A, path: 'docs/a\uDC00b.md' },
      calls: [
        {
          method: 'GET',
          path: `${R}/contents/docs/a%EF%BF%BDb.md`,
          query: {},
          reply: {
            json: {
              ...NOISE,
              type: 'file',
              encoding: 'base64',
              path: 'docs/a\uFFFDb.md',
              sha: SHA,
              size: 2,
              html_url: 'https://github.com/x',
              content: b64('hi'),
            },
          },
        },
      ],
      check: () => {},
    });
    assert.equal(r['content'], 'hi');
  });
});

// ---------- error mappings ----------
interface ErrorCase {
  name: string;
  tool?: string;
  args?: Json;
  reply: UpstreamReply;
  error: RegExp;
}
const soon = () => String(Math.floor(Date.now() / 1000) + 120);
const errorCases: ErrorCase[] = [
  {
    name: '401: invalid or expired token',
    reply: { status: 401, json: { message: 'Bad credentials' } },
    error: /401 Bad credentials\): the token is invalid, expired or revoked\. Reconnect/,
  },
  {
    name: '403: missing scope is named',
    reply: {
      status: 403,
      headers: { 'x-accepted-oauth-scopes': 'repo', 'x-oauth-scopes': 'read:user, read:org' },
      json: { message: 'Resource not accessible' },
    },
    error: /missing the OAuth scope this needs \(one of: repo; the token has: read:user, read:org\)/,
  },
  {
    name: '404 with a missing scope names the scope',
    reply: {
      status: 404,
      headers: { 'x-accepted-oauth-scopes': 'repo', 'x-oauth-scopes': '' },
      json: { message: 'Not Found' },
    },
    error:
      /GitHub 404 \(issue #7\): the token is missing the OAuth scope this needs \(one of: repo; the token has: none\)/,
  },
  {
    name: '403: a broader granted scope is not reported as missing',
    reply: {
      status: 403,
      headers: { 'x-accepted-oauth-scopes': 'read:org', 'x-oauth-scopes': 'admin:org, repo' },
      json: { message: 'Must be an organization member' },
    },
    error: /GitHub refused the request \(issue #7\) \(403\): Must be an organization member/,
  },
  {
    name: '403: SAML SSO authorisation needed',
    reply: {
      status: 403,
      headers: { 'x-github-sso': 'required; url=https://github.com/orgs/acme/sso?authorization_request=XYZ' },
      json: { message: 'Resource protected by organization SAML enforcement.' },
    },
    error: /single sign-on.*Authorise it at https:\/\/github\.com\/orgs\/acme\/sso\?authorization_request=XYZ/,
  },
  {
    name: '403: primary rate limit with x-ratelimit-reset',
    reply: {
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': soon() },
      json: { message: 'API rate limit exceeded for user ID 1.' },
    },
    error: /rate limited, retry after 1[12]\d s/,
  },
  {
    name: '403: secondary rate limit with retry-after',
    reply: {
      status: 403,
      headers: { 'retry-after': '60' },
      json: { message: 'You have exceeded a secondary rate limit.' },
    },
    error: /rate limited, retry after 60 s\. You have exceeded a secondary rate limit/,
  },
  {
    name: '429 with retry-after',
    reply: { status: 429, headers: { 'retry-after': '30' }, json: { message: 'Too many requests' } },
    error: /rate limited, retry after 30 s/,
  },
  {
    name: '404: not found or no access (a bare "Not Found" adds nothing)',
    reply: { status: 404, json: { message: 'Not Found' } },
    error: /^Not found or no access \(issue #7\): .*branch or path\.$/,
  },
  {
    name: "404: GitHub's own message is kept",
    tool: 'github_get_file_contents',
    args: { ...A, path: 'a.txt', ref: 'foo' },
    reply: {
      status: 404,
      json: {
        message: 'No commit found for the ref foo',
        documentation_url: 'https://docs.github.com/rest/repos/contents#get-repository-content',
      },
    },
    error:
      /^Not found or no access \(path "a\.txt"\): GitHub answers 404 .* GitHub said: No commit found for the ref foo$/,
  },
  {
    name: '422: GitHub message and errors[] details',
    tool: 'github_create_issue',
    args: { ...A, title: 'x', labels: ['nope'] },
    reply: {
      status: 422,
      json: {
        message: 'Validation Failed',
        errors: [{ resource: 'Issue', field: 'labels', code: 'invalid' }, { message: 'Label nope does not exist' }],
      },
    },
    error:
      /GitHub rejected the input \(creating the issue\) \(422\): Validation Failed\. Details: Issue\.labels invalid; Label nope does not exist\./,
  },
  {
    name: '405: pull request not mergeable',
    tool: 'github_merge_pull_request',
    args: { ...A, pull_number: 9 },
    reply: { status: 405, json: { message: 'Pull Request is not mergeable' } },
    error: /GitHub does not allow this \(merging #9\) \(405\): Pull Request is not mergeable/,
  },
  {
    name: '409: stale sha on a file update',
    tool: 'github_create_or_update_file',
    args: { ...A, path: 'a.txt', content: 'x', message: 'm', sha: SHA },
    reply: { status: 409, json: { message: `a.txt does not match ${SHA2}` } },
    error: /conflict \(writing "a\.txt"\) \(409\): a\.txt does not match/,
  },
  {
    name: '502: server error',
    reply: { status: 502, body: 'Bad gateway' },
    error: /GitHub server error 502 \(issue #7\): Bad gateway\. Try again later/,
  },
  { name: '200 with a body that is not JSON', reply: { status: 200, body: '<html>' }, error: /not JSON/ },
];

describe('github_get_clone_url: never a credential in a clone URL', () => {
  test('a user:secret part in the answer is dropped, and the token never appears', async () => {
    upstream.requests.length = 0;
    upstream.setHandler(() => ({
      json: {
        ...repoJson,
        clone_url: 'https://x-access-token:ghs_OTHER_SECRET@github.com/acme/api.git',
        ssh_url: 'git@github.com:acme/api.git',
      },
    }));
    const item = (await gw.execute('github_get_clone_url', A)) as Json;
    const text = JSON.stringify(item);
    assert.ok('result' in item, text);
    assert.ok(!text.includes('SECRET') && !text.includes(TOKEN), text);
    assert.equal((item['result'] as Json)['https'], 'https://github.com/acme/api.git');
    assert.equal(upstream.requests[0]!.headers.authorization, `Bearer ${TOKEN}`);
  });
});

describe('github tools: error mappings', () => {
  for (const c of errorCases) {
    test(c.name, async () => {
      upstream.requests.length = 0;
      upstream.setHandler(() => c.reply);
      const item = (await gw.execute(c.tool ?? 'github_get_issue', c.args ?? { ...A, issue_number: 7 })) as Json;
      assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
      assert.match(String(item['error']), c.error);
      assert.ok(!JSON.stringify(item).includes(TOKEN), 'the token never appears in an error');
      assert.equal(upstream.requests.length, 1);
    });
  }

  const invalid: [string, string, Json][] = [
    ['an owner with a slash', 'github_get_repository', { owner: 'acme/evil', repo: 'api' }],
    ['a repo that is a dot-dot segment', 'github_get_issue', { owner: 'acme', repo: '..', issue_number: 1 }],
    ['per_page over 100', 'github_list_issues', { ...A, per_page: 500 }],
    ['an unknown argument', 'github_get_me', { verbose: true }],
    ['a branch name with ".."', 'github_create_branch', { ...A, branch: 'a..b' }],
  ];
  for (const [what, tool, args] of invalid) {
    test(`rejects ${what} before any request`, async () => {
      upstream.requests.length = 0;
      const item = (await gw.execute(tool, args)) as Json;
      assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
      assert.equal(upstream.requests.length, 0);
    });
  }

  test("per_page over 50 for notifications (GitHub's maximum there) is an argument error, before any request", async () => {
    upstream.requests.length = 0;
    const item = (await gw.execute('github_list_notifications', { per_page: 51 })) as Json;
    assert.equal(item['code'], 'GW_ERR_VALIDATION_INVALID_ARGS', JSON.stringify(item));
    assert.match(String(item['error']), /Invalid arguments for github_list_notifications: per_page: .*<=50/);
    assert.equal(upstream.requests.length, 0);
    upstream.setHandler(() => ({ json: [] }));
    assert.deepEqual((await gw.execute('github_list_notifications', { per_page: 50 })).result, {
      notifications: [],
      next: null,
    });
    assert.equal(upstream.last().query.get('per_page'), '50');
  });

  // GitHub requires body for REQUEST_CHANGES and COMMENT (422 "You need to leave a comment …")
  const bodiless: [string, Json][] = [
    ['COMMENT, the default event', { ...A, pull_number: 9 }],
    [
      'REQUEST_CHANGES with line comments',
      {
        ...A,
        pull_number: 9,
        event: 'REQUEST_CHANGES',
        comments: [{ path: 'src/a.ts', line: 3, body: 'Handle null' }],
      },
    ],
    [
      'COMMENT with a blank body',
      { ...A, pull_number: 9, event: 'COMMENT', body: '  \n ', comments: [{ path: 'src/a.ts', line: 3, body: 'nit' }] },
    ],
  ];
  for (const [what, args] of bodiless) {
    test(`a review without a body is refused before any request: ${what}`, async () => {
      upstream.requests.length = 0;
      const item = (await gw.execute('github_create_pull_request_review', args)) as Json;
      assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
      assert.match(
        String(item['error']),
        /^A (COMMENT|REQUEST_CHANGES) review needs a body: .*Pass body.*or use event APPROVE/,
      );
      assert.equal(upstream.requests.length, 0);
    });
  }

  test('an approval needs no body', async () => {
    upstream.requests.length = 0;
    upstream.setHandler(() => ({
      json: { id: 7, user: user('carol'), state: 'APPROVED', body: '', submitted_at: T, commit_id: SHA, html_url: 'h' },
    }));
    const item = (await gw.execute('github_create_pull_request_review', {
      ...A,
      pull_number: 9,
      event: 'APPROVE',
    })) as Json;
    assert.equal((item['result'] as Json)['state'], 'APPROVED', JSON.stringify(item));
    assert.deepEqual(upstream.last().json, { event: 'APPROVE' });
  });

  test('nothing to change is refused without a request', async () => {
    upstream.requests.length = 0;
    const item = (await gw.execute('github_update_issue', { ...A, issue_number: 1 })) as Json;
    assert.match(String(item['error']), /Nothing to change/);
    assert.equal(upstream.requests.length, 0);
  });

  // a `page` string that is not a `next` this tool returned: one argument error naming it, never
  // the bare "URIError: URI malformed" decodeURIComponent throws on a broken percent-escape
  const notNext: [string, string][] = [
    ['a truncated UTF-8 escape', 'after=%E0'],
    ['an escape that is not hex', 'after=%ZZ'],
    ['a lone "%" at the end of a cursor', 'cursor=Y3Vy%'],
    ['a good cursor parameter next to a broken one', 'after=Y3Vyc29yOjE%3D&before=%C0'],
  ];
  for (const [what, page] of notNext) {
    test(`a page cursor with ${what} (${page}) is refused as not a \`next\` value, before any request`, async () => {
      upstream.requests.length = 0;
      const item = (await gw.execute('github_list_issues', { ...A, page })) as Json;
      assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
      assert.equal(
        item['error'],
        `page "${page}" is neither a page number nor a \`next\` value of an earlier result: pass the \`next\` value as it was returned.`,
      );
      assert.equal(upstream.requests.length, 0);
    });
  }

  test('a pull request created with failing reviewer requests still reports the pull request', async () => {
    upstream.requests.length = 0;
    upstream.setHandler((req) =>
      req.path.endsWith('/requested_reviewers')
        ? { status: 422, json: { message: 'Reviews may only be requested from collaborators.' } }
        : { status: 201, json: pullJson(10) },
    );
    const item = (await gw.execute('github_create_pull_request', {
      ...A,
      title: 't',
      head: 'h',
      base: 'main',
      reviewers: ['zed'],
    })) as Json;
    const result = item['result'] as Json;
    assert.equal(result['number'], 10);
    assert.match(
      String(result['reviewers_warning']),
      /created, but requesting reviewers failed: .*422.*only be requested from collaborators/,
    );
  });
});
