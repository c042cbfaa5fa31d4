/**
 * @module test/plugins/gitlab.test
 * Every GitLab tool runs through the real gateway and sandbox against a loopback stand-in for
 * gitlab.com (reached through the policy's origin mapping, as a self-managed instance would be).
 * One table states, per tool, the requests it must make (method, encoded path — a project path
 * as one %2F-encoded segment —, exact query, JSON body, the injected Bearer token) and checks the
 * slim result; then paging through `x-next-page`, file contents (UTF-8, binary, not UTF-8), the
 * merge refusals (405 with the reason read back, 406/422 conflicts, 409 moved head, 401 without
 * merge rights), the approval refusals, clone URLs that never carry a credential, the one error
 * mapping (401, missing scope, 403, 404, 400/422 messages, 429, 5xx) and argument validation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import type { Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'glpat_gitlab_plugin_test_token_0001';
const SHA = 'a'.repeat(40);
const SHA2 = 'b'.repeat(40);
type Gateway = TestGateway;
type Json = Record<string, unknown>;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway('gitlab', { token: TOKEN }, (s) => ({ upstream, gw } = s));

// ---------- fixtures: GitLab-shaped answers; NOISE marks fields a slim result must drop ----------
const NOISE = { _links: { self: 'NOISE_link' }, avatar_url: 'https://gitlab.com/NOISE.png' };
const user = (username: string, id = 7) => ({
  id,
  username,
  name: username.toUpperCase(),
  state: 'active',
  avatar_url: 'NOISE',
  web_url: `https://gitlab.com/${username}`,
});
const T = '2025-03-01T10:00:00.000Z';
const projectJson = {
  ...NOISE,
  id: 42,
  name: 'api',
  path: 'api',
  path_with_namespace: 'acme/platform/api',
  description: 'The API',
  visibility: 'private',
  default_branch: 'main',
  archived: false,
  star_count: 3,
  forks_count: 1,
  open_issues_count: 5,
  last_activity_at: T,
  web_url: 'https://gitlab.com/acme/platform/api',
  namespace: { full_path: 'acme/platform', id: 9, kind: 'group' },
  topics: ['http'],
  empty_repo: false,
  http_url_to_repo: 'https://gitlab.com/acme/platform/api.git',
  created_at: T,
  permissions: {
    project_access: { access_level: 30, notification_level: 3 },
    group_access: { access_level: 40, notification_level: 3 },
  },
  merge_method: 'ff',
  squash_option: 'default_off',
  only_allow_merge_if_pipeline_succeeds: true,
  issues_enabled: true,
  merge_requests_enabled: true,
  runners_token: 'NOISE',
};
const issueJson = (iid: number, extra: Json = {}) => ({
  ...NOISE,
  id: 1000 + iid,
  iid,
  project_id: 42,
  title: `Issue ${iid}`,
  state: 'opened',
  issue_type: 'issue',
  type: 'ISSUE',
  author: user('alice'),
  assignees: [user('bob', 8)],
  assignee: user('bob', 8),
  labels: ['bug'],
  milestone: { id: 3, title: 'v1', description: 'NOISE' },
  due_date: null,
  confidential: false,
  user_notes_count: 2,
  created_at: T,
  updated_at: T,
  closed_at: null,
  closed_by: null,
  web_url: `https://gitlab.com/acme/platform/api/-/issues/${iid}`,
  references: { short: `#${iid}`, relative: `#${iid}`, full: `acme/platform/api#${iid}` },
  description: 'x'.repeat(9000),
  time_stats: { NOISE: 1 },
  task_completion_status: { count: 4, completed_count: 1 },
  merge_requests_count: 1,
  ...extra,
});
const mrJson = (iid: number, extra: Json = {}) => ({
  ...NOISE,
  id: 2000 + iid,
  iid,
  project_id: 42,
  title: `MR ${iid}`,
  state: 'opened',
  draft: false,
  work_in_progress: false,
  author: user('alice'),
  assignees: [],
  reviewers: [user('carol', 9)],
  source_branch: 'feature/x',
  target_branch: 'main',
  labels: ['backend'],
  merge_status: 'can_be_merged',
  detailed_merge_status: 'mergeable',
  has_conflicts: false,
  created_at: T,
  updated_at: T,
  merged_at: null,
  web_url: `https://gitlab.com/acme/platform/api/-/merge_requests/${iid}`,
  references: { full: `acme/platform/api!${iid}` },
  description: 'Closes #1',
  sha: SHA,
  merge_commit_sha: null,
  squash_commit_sha: null,
  squash: false,
  should_remove_source_branch: null,
  force_remove_source_branch: true,
  merge_when_pipeline_succeeds: false,
  user_notes_count: 1,
  changes_count: '3',
  blocking_discussions_resolved: true,
  diverged_commits_count: 0,
  merge_error: null,
  head_pipeline: {
    id: 77,
    status: 'success',
    ref: 'feature/x',
    web_url: 'https://gitlab.com/p/77',
    detailed_status: { NOISE: 1 },
  },
  diff_refs: { base_sha: 'NOISE' },
  ...extra,
});
const noteJson = {
  id: 501,
  body: 'LGTM',
  author: user('bob', 8),
  created_at: T,
  updated_at: T,
  system: false,
  noteable_id: 1001,
  noteable_type: 'Issue',
  internal: false,
  confidential: false,
  NOISE: true,
};
const pipelineJson = (id: number, extra: Json = {}) => ({
  id,
  iid: id - 60,
  project_id: 42,
  status: 'failed',
  source: 'push',
  ref: 'main',
  sha: SHA,
  name: null,
  created_at: T,
  updated_at: T,
  web_url: `https://gitlab.com/acme/platform/api/-/pipelines/${id}`,
  ...extra,
});
const jobJson = (id: number, status = 'success', extra: Json = {}) => ({
  id,
  name: `job ${id}`,
  stage: 'test',
  status,
  allow_failure: false,
  failure_reason: status === 'failed' ? 'script_failure' : undefined,
  duration: 12.6,
  started_at: T,
  finished_at: T,
  web_url: `https://gitlab.com/acme/platform/api/-/jobs/${id}`,
  runner: { NOISE: 1 },
  artifacts: [],
  ...extra,
});
const branchJson = (name: string, extra: Json = {}) => ({
  name,
  merged: false,
  protected: name === 'main',
  default: name === 'main',
  developers_can_push: false,
  can_push: true,
  web_url: `https://gitlab.com/acme/platform/api/-/tree/${name}`,
  commit: {
    id: SHA,
    short_id: 'aaaaaaaa',
    title: 'Fix login',
    author_name: 'Alice',
    authored_date: T,
    committed_date: T,
    parent_ids: ['NOISE'],
  },
  ...extra,
});
const commitJson = (id: string, title: string) => ({
  id,
  short_id: id.slice(0, 8),
  title,
  message: `${title}\n\nNOISE body`,
  author_name: 'Alice',
  author_email: 'alice@example.com',
  authored_date: T,
  committer_name: 'NOISE',
  committed_date: T,
  created_at: T,
  parent_ids: [SHA2],
  trailers: {},
  web_url: `https://gitlab.com/acme/platform/api/-/commit/${id}`,
});
const b64 = (s: string | Buffer) => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('base64');
const fileJson = (content: string, path = 'src/main.py') => ({
  file_name: path.split('/').pop(),
  file_path: path,
  size: Buffer.byteLength(content),
  encoding: 'base64',
  content_sha256: 'NOISE',
  ref: 'main',
  blob_id: 'c'.repeat(40),
  commit_id: SHA,
  last_commit_id: SHA2,
  execute_filemode: false,
  content: b64(content),
});
const next = (page: number) => ({ 'x-next-page': String(page), 'x-page': String(page - 1), 'x-per-page': '20' });
const LAST = { 'x-next-page': '', 'x-page': '1' };

// ---------- the table ----------
interface Expected {
  method: 'GET' | 'POST' | 'PUT' | 'HEAD';
  path: string;
  /** exact query parameters (defaults included); undefined means "not checked" */
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
const V4 = '/api/v4';
const PR = `${V4}/projects/acme%2Fplatform%2Fapi`;
const A = { project: 'acme/platform/api' };
const PAGE = { per_page: '20', page: '1' };

const cases: Case[] = [
  {
    tool: 'gitlab_get_current_user',
    args: {},
    calls: [
      {
        method: 'GET',
        path: `${V4}/user`,
        query: {},
        reply: {
          json: {
            ...user('alice'),
            email: 'alice@example.com',
            bot: false,
            created_at: T,
            two_factor_enabled: 'NOISE',
          },
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        id: 7,
        username: 'alice',
        name: 'ALICE',
        email: 'alice@example.com',
        state: 'active',
        bot: false,
        web_url: 'https://gitlab.com/alice',
        created_at: T,
      }),
  },
  {
    tool: 'gitlab_list_projects',
    args: { search: 'api' },
    calls: [
      {
        method: 'GET',
        path: `${V4}/projects`,
        query: {
          membership: 'true',
          search: 'api',
          archived: 'false',
          order_by: 'last_activity_at',
          sort: 'desc',
          ...PAGE,
        },
        reply: { json: [projectJson], headers: next(2) },
      },
    ],
    check: (r) => {
      assert.equal(r['next'], 2);
      assert.deepEqual((r['projects'] as Json[])[0], {
        id: 42,
        path_with_namespace: 'acme/platform/api',
        name: 'api',
        description: 'The API',
        visibility: 'private',
        default_branch: 'main',
        archived: false,
        stars: 3,
        forks: 1,
        open_issues: 5,
        last_activity_at: T,
        web_url: 'https://gitlab.com/acme/platform/api',
      });
    },
  },
  {
    name: 'gitlab_list_projects: owned, archived included, page 3, last page',
    tool: 'gitlab_list_projects',
    args: {
      owned: true,
      include_archived: true,
      membership: false,
      order_by: 'name',
      sort: 'asc',
      per_page: 50,
      page: 3,
    },
    calls: [
      {
        method: 'GET',
        path: `${V4}/projects`,
        query: { membership: 'false', owned: 'true', order_by: 'name', sort: 'asc', per_page: '50', page: '3' },
        reply: { json: [], headers: LAST },
      },
    ],
    check: (r) => assert.deepEqual(r, { projects: [], next: null }),
  },
  {
    name: 'gitlab_get_project by path (one %2F-encoded segment)',
    tool: 'gitlab_get_project',
    args: A,
    calls: [{ method: 'GET', path: PR, query: { license: 'false' }, reply: { json: projectJson } }],
    check: (r) => {
      assert.deepEqual(
        [
          r['namespace'],
          r['your_role'],
          r['merge_method'],
          r['only_allow_merge_if_pipeline_succeeds'],
          r['http_url_to_repo'],
        ],
        ['acme/platform', 'maintainer', 'ff', true, 'https://gitlab.com/acme/platform/api.git'],
      );
      assert.deepEqual(r['topics'], ['http']);
    },
  },
  {
    name: 'gitlab_get_project by numeric id',
    tool: 'gitlab_get_project',
    args: { project: 42 },
    calls: [
      {
        method: 'GET',
        path: `${V4}/projects/42`,
        query: { license: 'false' },
        reply: { json: { ...projectJson, permissions: { project_access: null, group_access: null } } },
      },
    ],
    check: (r) => assert.equal(r['your_role'], 'none'),
  },
  {
    name: 'gitlab_get_project by web URL',
    tool: 'gitlab_get_project',
    args: { project: 'https://gitlab.com/acme/platform/api/-/merge_requests/7' },
    calls: [{ method: 'GET', path: PR, reply: { json: projectJson } }],
    check: (r) => assert.equal(r['id'], 42),
  },
  {
    tool: 'gitlab_list_issues',
    args: { ...A, labels: ['bug', 'ui'], assignee_username: 'bob', search: 'login' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/issues`,
        query: {
          state: 'opened',
          labels: 'bug,ui',
          assignee_username: 'bob',
          search: 'login',
          order_by: 'updated_at',
          sort: 'desc',
          ...PAGE,
        },
        reply: { json: [issueJson(1)], headers: next(2) },
      },
    ],
    check: (r) => {
      assert.equal(r['next'], 2);
      const i = (r['issues'] as Json[])[0]!;
      assert.deepEqual(
        [i['iid'], i['reference'], i['author'], i['assignees'], i['labels'], i['milestone'], i['notes']],
        [1, 'acme/platform/api#1', 'alice', ['bob'], ['bug'], 'v1', 2],
      );
      assert.ok((i['description'] as string).length < 400, 'descriptions are cut in lists');
    },
  },
  {
    name: 'gitlab_list_issues across projects, assigned to me',
    tool: 'gitlab_list_issues',
    args: { scope: 'assigned_to_me', state: 'all' },
    calls: [
      {
        method: 'GET',
        path: `${V4}/issues`,
        query: { state: 'all', scope: 'assigned_to_me', order_by: 'updated_at', sort: 'desc', ...PAGE },
        reply: { json: [issueJson(3)] },
      },
    ],
    check: (r) => assert.deepEqual([(r['issues'] as Json[]).length, r['next']], [1, null]),
  },
  {
    name: 'gitlab_list_issues across projects by assignee: scope all',
    tool: 'gitlab_list_issues',
    args: { assignee_username: 'bob' },
    calls: [
      {
        method: 'GET',
        path: `${V4}/issues`,
        query: {
          state: 'opened',
          scope: 'all',
          assignee_username: 'bob',
          order_by: 'updated_at',
          sort: 'desc',
          ...PAGE,
        },
        reply: { json: [issueJson(3)] },
      },
    ],
    check: (r) =>
      assert.deepEqual(
        (r['issues'] as Json[]).map((i) => i['assignees']),
        [['bob']],
      ),
  },
  {
    name: 'gitlab_list_issues across projects by author: scope all',
    tool: 'gitlab_list_issues',
    args: { author_username: 'alice' },
    calls: [
      {
        method: 'GET',
        path: `${V4}/issues`,
        query: {
          state: 'opened',
          scope: 'all',
          author_username: 'alice',
          order_by: 'updated_at',
          sort: 'desc',
          ...PAGE,
        },
        reply: { json: [] },
      },
    ],
    check: (r) => assert.deepEqual(r['issues'], []),
  },
  {
    tool: 'gitlab_get_issue',
    args: { ...A, issue_iid: 12 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/issues/12`,
        reply: { json: issueJson(12, { state: 'closed', closed_by: user('bob', 8), closed_at: T }) },
      },
    ],
    check: (r) => {
      assert.deepEqual(
        [r['state'], r['closed_by'], r['tasks'], r['merge_requests_count']],
        ['closed', 'bob', '1/4', 1],
      );
      assert.equal((r['description'] as string).length, 8000 + '… [truncated, 1000 more characters]'.length);
    },
  },
  {
    name: 'gitlab_create_issue resolves assignees by username',
    tool: 'gitlab_create_issue',
    args: {
      ...A,
      title: 'Login fails',
      description: 'Steps…',
      labels: ['bug', 'p1'],
      assignees: ['@bob', 'carol'],
      due_date: '2025-04-01',
      confidential: true,
    },
    calls: [
      { method: 'GET', path: `${V4}/users`, query: { username: 'bob' }, reply: { json: [user('bob', 8)] } },
      { method: 'GET', path: `${V4}/users`, query: { username: 'carol' }, reply: { json: [user('carol', 9)] } },
      {
        method: 'POST',
        path: `${PR}/issues`,
        body: {
          title: 'Login fails',
          description: 'Steps…',
          labels: 'bug,p1',
          assignee_ids: [8, 9],
          due_date: '2025-04-01',
          confidential: true,
        },
        reply: { status: 201, json: issueJson(13, { title: 'Login fails' }) },
      },
    ],
    check: (r) =>
      assert.deepEqual(
        [r['iid'], r['title'], r['web_url']],
        [13, 'Login fails', 'https://gitlab.com/acme/platform/api/-/issues/13'],
      ),
  },
  {
    name: 'gitlab_update_issue closes, relabels and reassigns',
    tool: 'gitlab_update_issue',
    args: {
      ...A,
      issue_iid: 12,
      state_event: 'close',
      add_labels: ['done'],
      remove_labels: ['bug'],
      assignees: ['dave'],
    },
    calls: [
      { method: 'GET', path: `${V4}/users`, query: { username: 'dave' }, reply: { json: [user('dave', 11)] } },
      {
        method: 'PUT',
        path: `${PR}/issues/12`,
        body: { state_event: 'close', add_labels: 'done', remove_labels: 'bug', assignee_ids: [11] },
        reply: { json: issueJson(12, { state: 'closed', labels: ['done'] }) },
      },
    ],
    check: (r) => assert.deepEqual([r['state'], r['labels']], ['closed', ['done']]),
  },
  {
    name: 'gitlab_update_issue: an empty assignee list unassigns, empty labels clear them',
    tool: 'gitlab_update_issue',
    args: { ...A, issue_iid: 12, assignees: [], labels: [], state_event: 'reopen' },
    calls: [
      {
        method: 'PUT',
        path: `${PR}/issues/12`,
        body: { state_event: 'reopen', labels: '', assignee_ids: [0] },
        reply: { json: issueJson(12, { assignees: [], labels: [] }) },
      },
    ],
    check: (r) => assert.deepEqual([r['assignees'], r['labels']], [[], []]),
  },
  {
    tool: 'gitlab_add_issue_note',
    args: { ...A, issue_iid: 12, body: 'LGTM', internal: true },
    calls: [
      {
        method: 'POST',
        path: `${PR}/issues/12/notes`,
        body: { body: 'LGTM', internal: true },
        reply: { status: 201, json: { ...noteJson, internal: true } },
      },
    ],
    check: (r) => assert.deepEqual(r, { id: 501, author: 'bob', created_at: T, internal: true, body: 'LGTM' }),
  },
  {
    tool: 'gitlab_list_merge_requests',
    args: { ...A, reviewer_username: 'carol', target_branch: 'main' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/merge_requests`,
        query: {
          state: 'opened',
          reviewer_username: 'carol',
          target_branch: 'main',
          order_by: 'updated_at',
          sort: 'desc',
          ...PAGE,
        },
        reply: { json: [mrJson(7)], headers: next(2) },
      },
    ],
    check: (r) => {
      assert.equal(r['next'], 2);
      assert.deepEqual((r['merge_requests'] as Json[])[0], {
        iid: 7,
        id: 2007,
        project_id: 42,
        reference: 'acme/platform/api!7',
        title: 'MR 7',
        state: 'opened',
        draft: false,
        author: 'alice',
        assignees: [],
        reviewers: ['carol'],
        source_branch: 'feature/x',
        target_branch: 'main',
        labels: ['backend'],
        detailed_merge_status: 'mergeable',
        has_conflicts: false,
        created_at: T,
        updated_at: T,
        merged_at: null,
        web_url: 'https://gitlab.com/acme/platform/api/-/merge_requests/7',
        description: 'Closes #1',
      });
    },
  },
  {
    name: 'gitlab_list_merge_requests across projects',
    tool: 'gitlab_list_merge_requests',
    args: { scope: 'all', author_username: 'alice', state: 'merged' },
    calls: [
      {
        method: 'GET',
        path: `${V4}/merge_requests`,
        query: {
          state: 'merged',
          scope: 'all',
          author_username: 'alice',
          order_by: 'updated_at',
          sort: 'desc',
          ...PAGE,
        },
        reply: { json: [] },
      },
    ],
    check: (r) => assert.deepEqual(r, { merge_requests: [], next: null }),
  },
  {
    name: "gitlab_list_merge_requests across projects by reviewer: scope all (GitLab's default there is created_by_me)",
    tool: 'gitlab_list_merge_requests',
    args: { reviewer_username: 'carol' },
    calls: [
      {
        method: 'GET',
        path: `${V4}/merge_requests`,
        query: {
          state: 'opened',
          scope: 'all',
          reviewer_username: 'carol',
          order_by: 'updated_at',
          sort: 'desc',
          ...PAGE,
        },
        reply: { json: [mrJson(7)] },
      },
    ],
    check: (r) =>
      assert.deepEqual(
        (r['merge_requests'] as Json[]).map((m) => m['reviewers']),
        [['carol']],
      ),
  },
  {
    name: 'gitlab_list_merge_requests across projects with a scope given: kept',
    tool: 'gitlab_list_merge_requests',
    args: { reviewer_username: 'carol', scope: 'assigned_to_me' },
    calls: [
      {
        method: 'GET',
        path: `${V4}/merge_requests`,
        query: {
          state: 'opened',
          scope: 'assigned_to_me',
          reviewer_username: 'carol',
          order_by: 'updated_at',
          sort: 'desc',
          ...PAGE,
        },
        reply: { json: [] },
      },
    ],
    check: (r) => assert.deepEqual(r['merge_requests'], []),
  },
  {
    name: "gitlab_list_merge_requests across projects without a user filter: GitLab's default scope",
    tool: 'gitlab_list_merge_requests',
    args: { search: 'login' },
    calls: [
      {
        method: 'GET',
        path: `${V4}/merge_requests`,
        query: { state: 'opened', search: 'login', order_by: 'updated_at', sort: 'desc', ...PAGE },
        reply: { json: [] },
      },
    ],
    check: (r) => assert.deepEqual(r['merge_requests'], []),
  },
  {
    tool: 'gitlab_get_merge_request',
    args: { ...A, merge_request_iid: 7 },
    calls: [{ method: 'GET', path: `${PR}/merge_requests/7`, reply: { json: mrJson(7, { merge_user: null }) } }],
    check: (r) => {
      assert.deepEqual(
        [r['sha'], r['remove_source_branch'], r['changes_count'], r['blocking_discussions_resolved'], r['auto_merge']],
        [SHA, true, '3', true, false],
      );
      assert.deepEqual(r['head_pipeline'], {
        id: 77,
        status: 'success',
        ref: 'feature/x',
        web_url: 'https://gitlab.com/p/77',
      });
    },
  },
  {
    name: 'gitlab_create_merge_request into the default branch, as a draft, with reviewers',
    tool: 'gitlab_create_merge_request',
    args: {
      ...A,
      source_branch: 'feature/x',
      title: 'Fix login',
      draft: true,
      reviewers: ['carol'],
      remove_source_branch: true,
      labels: ['backend'],
    },
    calls: [
      { method: 'GET', path: PR, reply: { json: projectJson } },
      { method: 'GET', path: `${V4}/users`, query: { username: 'carol' }, reply: { json: [user('carol', 9)] } },
      {
        method: 'POST',
        path: `${PR}/merge_requests`,
        body: {
          source_branch: 'feature/x',
          target_branch: 'main',
          title: 'Draft: Fix login',
          labels: 'backend',
          reviewer_ids: [9],
          remove_source_branch: true,
        },
        reply: { status: 201, json: mrJson(8, { title: 'Draft: Fix login', draft: true }) },
      },
    ],
    check: (r) => assert.deepEqual([r['iid'], r['draft'], r['reviewers']], [8, true, ['carol']]),
  },
  {
    name: 'gitlab_update_merge_request marks ready (reads the title) and clears reviewers',
    tool: 'gitlab_update_merge_request',
    args: { ...A, merge_request_iid: 8, draft: false, reviewers: [] },
    calls: [
      { method: 'GET', path: `${PR}/merge_requests/8`, reply: { json: mrJson(8, { title: 'Draft: Fix login' }) } },
      {
        method: 'PUT',
        path: `${PR}/merge_requests/8`,
        body: { title: 'Fix login', reviewer_ids: [0] },
        reply: { json: mrJson(8, { title: 'Fix login', reviewers: [] }) },
      },
    ],
    check: (r) => assert.deepEqual([r['title'], r['draft'], r['reviewers']], ['Fix login', false, []]),
  },
  {
    name: 'gitlab_update_merge_request: a new title alone keeps a draft a draft',
    tool: 'gitlab_update_merge_request',
    args: { ...A, merge_request_iid: 8, title: 'Fix login for SSO users' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/merge_requests/8`,
        reply: { json: mrJson(8, { title: 'Draft: Fix login', draft: true, work_in_progress: true }) },
      },
      {
        method: 'PUT',
        path: `${PR}/merge_requests/8`,
        body: { title: 'Draft: Fix login for SSO users' },
        reply: { json: mrJson(8, { title: 'Draft: Fix login for SSO users', draft: true }) },
      },
    ],
    check: (r) => assert.deepEqual([r['title'], r['draft']], ['Draft: Fix login for SSO users', true]),
  },
  {
    name: 'gitlab_update_merge_request: a new title alone on a ready merge request stays as given',
    tool: 'gitlab_update_merge_request',
    args: { ...A, merge_request_iid: 8, title: 'Fix login for SSO users' },
    calls: [
      { method: 'GET', path: `${PR}/merge_requests/8`, reply: { json: mrJson(8, { title: 'Fix login' }) } },
      {
        method: 'PUT',
        path: `${PR}/merge_requests/8`,
        body: { title: 'Fix login for SSO users' },
        reply: { json: mrJson(8, { title: 'Fix login for SSO users' }) },
      },
    ],
    check: (r) => assert.deepEqual([r['title'], r['draft']], ['Fix login for SSO users', false]),
  },
  {
    name: 'gitlab_update_merge_request closes and retargets',
    tool: 'gitlab_update_merge_request',
    args: {
      ...A,
      merge_request_iid: 8,
      state_event: 'close',
      target_branch: 'release/1.x',
      draft: true,
      title: 'Fix login',
    },
    calls: [
      {
        method: 'PUT',
        path: `${PR}/merge_requests/8`,
        body: { title: 'Draft: Fix login', state_event: 'close', target_branch: 'release/1.x' },
        reply: { json: mrJson(8, { state: 'closed' }) },
      },
    ],
    check: (r) => assert.equal(r['state'], 'closed'),
  },
  {
    tool: 'gitlab_merge_merge_request',
    args: { ...A, merge_request_iid: 7, squash: true, remove_source_branch: true, sha: SHA },
    calls: [
      {
        method: 'PUT',
        path: `${PR}/merge_requests/7/merge`,
        body: { squash: true, should_remove_source_branch: true, sha: SHA },
        reply: {
          json: mrJson(7, { state: 'merged', merged_at: T, merge_commit_sha: SHA2, merge_user: user('alice') }),
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        iid: 7,
        state: 'merged',
        merged: true,
        auto_merge: false,
        merge_commit_sha: SHA2,
        squash_commit_sha: null,
        merged_by: 'alice',
        merged_at: T,
        web_url: 'https://gitlab.com/acme/platform/api/-/merge_requests/7',
      }),
  },
  {
    name: 'gitlab_merge_merge_request with auto_merge (when the pipeline succeeds)',
    tool: 'gitlab_merge_merge_request',
    args: { ...A, merge_request_iid: 7, auto_merge: true },
    calls: [
      {
        method: 'PUT',
        path: `${PR}/merge_requests/7/merge`,
        body: { auto_merge: true, merge_when_pipeline_succeeds: true },
        reply: { json: mrJson(7, { merge_when_pipeline_succeeds: true }) },
      },
    ],
    check: (r) => assert.deepEqual([r['merged'], r['auto_merge'], r['state']], [false, true, 'opened']),
  },
  {
    name: 'gitlab_get_merge_request_diffs cuts a large diff with a note',
    tool: 'gitlab_get_merge_request_diffs',
    args: { ...A, merge_request_iid: 7, max_diff_chars: 300 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/merge_requests/7/diffs`,
        query: PAGE,
        reply: {
          json: [
            {
              old_path: 'src/a.py',
              new_path: 'src/a.py',
              a_mode: '100644',
              b_mode: '100644',
              diff: '@@ -1 +1 @@\n-a\n+b\n',
              new_file: false,
              renamed_file: false,
              deleted_file: false,
              generated_file: false,
            },
            {
              old_path: 'big.sql',
              new_path: 'big.sql',
              diff: `@@ -0,0 +1,500 @@\n${'+insert\n'.repeat(500)}`,
              new_file: true,
              renamed_file: false,
              deleted_file: false,
            },
            {
              old_path: 'old.png',
              new_path: 'new.png',
              diff: '',
              new_file: false,
              renamed_file: true,
              deleted_file: false,
            },
          ],
          headers: next(2),
        },
      },
    ],
    check: (r) => {
      const [a, big, png] = r['files'] as Json[];
      assert.deepEqual(a, {
        old_path: 'src/a.py',
        new_path: 'src/a.py',
        change: 'modified',
        diff: '@@ -1 +1 @@\n-a\n+b\n',
      });
      assert.equal(big!['change'], 'added');
      assert.equal((big!['diff'] as string).length, 300);
      assert.match(big!['note'] as string, /^diff cut at 300 of 4018 characters/);
      assert.deepEqual([png!['change'], png!['diff']], ['renamed', '']);
      assert.match(png!['note'] as string, /no textual diff/);
      assert.equal(r['next'], 2);
    },
  },
  {
    tool: 'gitlab_add_merge_request_note',
    args: { ...A, merge_request_iid: 7, body: 'Please add a test.' },
    calls: [
      {
        method: 'POST',
        path: `${PR}/merge_requests/7/notes`,
        body: { body: 'Please add a test.', internal: false },
        reply: { status: 201, json: { ...noteJson, body: 'Please add a test.' } },
      },
    ],
    check: (r) => assert.deepEqual([r['id'], r['body'], r['internal']], [501, 'Please add a test.', false]),
  },
  {
    tool: 'gitlab_list_pipelines',
    args: { ...A, ref: 'main', status: 'failed' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/pipelines`,
        query: { ref: 'main', status: 'failed', order_by: 'id', sort: 'desc', ...PAGE },
        reply: { json: [pipelineJson(101)], headers: next(2) },
      },
    ],
    check: (r) => {
      assert.deepEqual((r['pipelines'] as Json[])[0], {
        id: 101,
        iid: 41,
        status: 'failed',
        ref: 'main',
        sha: SHA,
        source: 'push',
        name: null,
        created_at: T,
        updated_at: T,
        web_url: 'https://gitlab.com/acme/platform/api/-/pipelines/101',
      });
      assert.equal(r['next'], 2);
    },
  },
  {
    name: 'gitlab_get_pipeline follows the job pages',
    tool: 'gitlab_get_pipeline',
    args: { ...A, pipeline_id: 101 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/pipelines/101`,
        reply: {
          json: pipelineJson(101, {
            user: user('alice'),
            started_at: T,
            finished_at: T,
            duration: 95,
            coverage: '81.2',
            yaml_errors: null,
            detailed_status: { NOISE: 1 },
          }),
        },
      },
      {
        method: 'GET',
        path: `${PR}/pipelines/101/jobs`,
        query: { per_page: '100', page: '1' },
        reply: { json: Array.from({ length: 100 }, (_, i) => jobJson(i + 1)), headers: next(2) },
      },
      {
        method: 'GET',
        path: `${PR}/pipelines/101/jobs`,
        query: { per_page: '100', page: '2' },
        reply: { json: [jobJson(101, 'failed')], headers: LAST },
      },
    ],
    check: (r) => {
      const jobs = r['jobs'] as Json[];
      assert.equal(jobs.length, 101);
      assert.deepEqual(r['job_summary'], { success: 100, failed: 1 });
      assert.deepEqual(jobs[100], {
        id: 101,
        name: 'job 101',
        stage: 'test',
        status: 'failed',
        allow_failure: false,
        failure_reason: 'script_failure',
        duration: 13,
        started_at: T,
        finished_at: T,
        web_url: 'https://gitlab.com/acme/platform/api/-/jobs/101',
      });
      assert.deepEqual(
        [r['user'], r['duration'], r['coverage'], r['jobs_truncated']],
        ['alice', 95, '81.2', undefined],
      );
    },
  },
  {
    tool: 'gitlab_create_pipeline',
    args: {
      ...A,
      ref: 'main',
      variables: [
        { key: 'DEPLOY_ENV', value: 'staging' },
        { key: 'CFG', value: 'a=1', variable_type: 'file' },
      ],
    },
    calls: [
      {
        method: 'POST',
        path: `${PR}/pipeline`,
        body: {
          ref: 'main',
          variables: [
            { key: 'DEPLOY_ENV', value: 'staging' },
            { key: 'CFG', value: 'a=1', variable_type: 'file' },
          ],
        },
        reply: { status: 201, json: pipelineJson(102, { status: 'created', source: 'api' }) },
      },
    ],
    check: (r) => assert.deepEqual([r['id'], r['status'], r['source']], [102, 'created', 'api']),
  },
  {
    name: 'gitlab_get_job_log strips colour codes and section markers, keeps the tail',
    tool: 'gitlab_get_job_log',
    args: { ...A, job_id: 101, max_chars: 1000 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/jobs/101`,
        reply: { json: { ...jobJson(101, 'failed'), ref: 'main', pipeline: { id: 101, sha: 'NOISE' } } },
      },
      {
        method: 'GET',
        path: `${PR}/jobs/101/trace`,
        accept: 'text/plain',
        reply: {
          body: `\x1b[0Ksection_start:1700000000:prepare_script\r\x1b[0K\x1b[32;1mPreparing\x1b[0;m\n${'line\n'.repeat(400)}\x1b[31;1mERROR: tests failed\x1b[0;m\nsection_end:1700000001:prepare_script\r\x1b[0K`,
          headers: { 'content-type': 'text/plain' },
        },
      },
    ],
    check: (r) => {
      const log = r['log'] as string;
      assert.equal(r['truncated'], true);
      assert.equal(log.length, 1000);
      assert.ok(log.endsWith('ERROR: tests failed\n'), JSON.stringify(log.slice(-60)));
      assert.ok(!/\x1b|section_/.test(log));
      assert.equal(r['total_chars'], 'Preparing\n'.length + 'line\n'.length * 400 + 'ERROR: tests failed\n'.length);
      assert.match(r['note'] as string, /only the last 1000 of \d+ characters/);
      assert.deepEqual(
        [(r['job'] as Json)['status'], (r['job'] as Json)['pipeline_id'], (r['job'] as Json)['failure_reason']],
        ['failed', 101, 'script_failure'],
      );
    },
  },
  {
    name: 'gitlab_get_file decodes UTF-8, encodes the path as one segment (/ and .) and defaults the ref to HEAD',
    tool: 'gitlab_get_file',
    args: { ...A, path: 'docs/Grüße ü.md', max_chars: 1000 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/repository/files/docs%2FGr%C3%BC%C3%9Fe%20%C3%BC%2Emd`,
        query: { ref: 'HEAD' },
        reply: { json: fileJson('héllo ✓ 😀\n'.repeat(200), 'docs/Grüße ü.md') },
      },
    ],
    check: (r) => {
      assert.equal(r['content'], 'héllo ✓ 😀\n'.repeat(200).slice(0, 1000));
      assert.deepEqual(
        [r['total_chars'], r['next_offset'], r['path'], r['last_commit_id']],
        ['héllo ✓ 😀\n'.repeat(200).length, 1000, 'docs/Grüße ü.md', SHA2],
      );
    },
  },
  {
    name: 'gitlab_get_file: the next window',
    tool: 'gitlab_get_file',
    args: { ...A, path: 'a.txt', ref: 'v1.0', offset: 4, max_chars: 100 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/repository/files/a%2Etxt`,
        query: { ref: 'v1.0' },
        reply: { json: fileJson('0123456789', 'a.txt') },
      },
    ],
    check: (r) => assert.deepEqual([r['content'], r['offset'], r['next_offset']], ['456789', 4, null]),
  },
  {
    name: 'gitlab_get_file answers a binary file with a note',
    tool: 'gitlab_get_file',
    args: { ...A, path: 'logo.png' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/repository/files/logo%2Epng`,
        reply: {
          json: {
            ...fileJson('', 'logo.png'),
            content: b64(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])),
          },
        },
      },
    ],
    check: (r) =>
      assert.deepEqual([r['binary'], r['content'], r['note']], [true, null, 'binary file: its content is not shown']),
  },
  {
    name: 'gitlab_get_file answers text that is not UTF-8 with a note',
    tool: 'gitlab_get_file',
    args: { ...A, path: 'latin1.txt' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/repository/files/latin1%2Etxt`,
        reply: { json: { ...fileJson('', 'latin1.txt'), content: b64(Buffer.from('caf\xe9', 'latin1')) } },
      },
    ],
    check: (r) => assert.deepEqual([r['binary'], r['content']], [true, null]),
  },
  {
    tool: 'gitlab_list_repository_tree',
    args: { ...A, path: 'src', ref: 'main', recursive: true },
    calls: [
      {
        method: 'GET',
        path: `${PR}/repository/tree`,
        query: { path: 'src', ref: 'main', recursive: 'true', per_page: '100', page: '1' },
        reply: {
          json: [
            { id: 'NOISE', name: 'app', type: 'tree', path: 'src/app', mode: '040000' },
            { id: 'NOISE', name: 'main.py', type: 'blob', path: 'src/main.py', mode: '100644' },
            { id: 'NOISE', name: 'vendor', type: 'commit', path: 'src/vendor', mode: '160000' },
          ],
          headers: next(2),
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        entries: [
          { name: 'app', path: 'src/app', type: 'dir' },
          { name: 'main.py', path: 'src/main.py', type: 'file' },
          { name: 'vendor', path: 'src/vendor', type: 'submodule' },
        ],
        next: 2,
      }),
  },
  {
    tool: 'gitlab_list_branches',
    args: { ...A, search: 'feat' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/repository/branches`,
        query: { search: 'feat', ...PAGE },
        reply: { json: [branchJson('feature/x')] },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        branches: [
          {
            name: 'feature/x',
            default: false,
            protected: false,
            merged: false,
            can_push: true,
            commit: { sha: SHA, title: 'Fix login', author: 'Alice', date: T },
            web_url: 'https://gitlab.com/acme/platform/api/-/tree/feature/x',
          },
        ],
        next: null,
      }),
  },
  {
    name: 'gitlab_create_branch from the default branch',
    tool: 'gitlab_create_branch',
    args: { ...A, branch: 'fix/login' },
    calls: [
      { method: 'GET', path: PR, reply: { json: projectJson } },
      {
        method: 'POST',
        path: `${PR}/repository/branches`,
        body: { branch: 'fix/login', ref: 'main' },
        reply: { status: 201, json: branchJson('fix/login') },
      },
    ],
    check: (r) =>
      assert.deepEqual([r['name'], (r['commit'] as Json)['sha'], r['created_from']], ['fix/login', SHA, 'main']),
  },
  {
    name: 'gitlab_create_branch from a given ref',
    tool: 'gitlab_create_branch',
    args: { project: 42, branch: 'hotfix', ref: SHA2 },
    calls: [
      {
        method: 'POST',
        path: `${V4}/projects/42/repository/branches`,
        body: { branch: 'hotfix', ref: SHA2 },
        reply: { status: 201, json: branchJson('hotfix') },
      },
    ],
    check: (r) => assert.equal(r['created_from'], SHA2),
  },
  {
    tool: 'gitlab_search_code',
    args: { ...A, query: 'connect_db extension:py', ref: 'main' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/search`,
        query: { scope: 'blobs', search: 'connect_db extension:py', ref: 'main', ...PAGE },
        reply: {
          json: [
            {
              basename: 'lib/db',
              data: 'def connect_db():\n    pass\n',
              path: 'lib/db.py',
              filename: 'lib/db.py',
              id: null,
              ref: 'main',
              startline: 10,
              project_id: 42,
            },
          ],
          headers: next(2),
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        items: [{ path: 'lib/db.py', ref: 'main', startline: 10, fragment: 'def connect_db():\n    pass\n' }],
        next: 2,
      }),
  },
  // ---------- commits, releases, files, merge request review, pipeline retry/cancel, clone URLs ----------
  {
    tool: 'gitlab_list_commits',
    args: { ...A, ref: 'release/1.x', path: 'src/app.py', since: '2025-03-01', author: 'alice', first_parent: true },
    calls: [
      {
        method: 'GET',
        path: `${PR}/repository/commits`,
        query: {
          ref_name: 'release/1.x',
          path: 'src/app.py',
          since: '2025-03-01',
          author: 'alice',
          first_parent: 'true',
          ...PAGE,
        },
        reply: { json: [commitJson(SHA, 'Fix login')], headers: next(2) },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        commits: [
          {
            sha: SHA,
            short_sha: 'aaaaaaaa',
            title: 'Fix login',
            author: 'Alice',
            authored_at: T,
            committed_at: T,
            parents: 1,
            web_url: `https://gitlab.com/acme/platform/api/-/commit/${SHA}`,
          },
        ],
        next: 2,
      }),
  },
  {
    tool: 'gitlab_list_releases',
    args: { ...A, per_page: 5 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/releases`,
        query: { order_by: 'released_at', sort: 'desc', per_page: '5', page: '1' },
        reply: {
          json: [
            {
              tag_name: 'v1.2.0',
              name: 'v1.2.0 — faster login',
              description: 'r'.repeat(500),
              created_at: T,
              released_at: T,
              upcoming_release: false,
              author: user('alice'),
              commit: { id: SHA, title: 'NOISE', message: 'NOISE' },
              assets: {
                count: 5,
                sources: [{ format: 'zip', url: 'NOISE' }],
                links: [{ id: 1, name: 'linux binary', url: 'https://example.com/bin', link_type: 'other' }],
              },
              evidences: [{ sha: 'NOISE' }],
              _links: { self: 'https://gitlab.com/acme/platform/api/-/releases/v1.2.0', edit_url: 'NOISE' },
            },
          ],
          headers: LAST,
        },
      },
    ],
    check: (r) => {
      assert.equal(r['next'], null);
      const rel = (r['releases'] as Json[])[0]!;
      assert.deepEqual(
        [rel['tag_name'], rel['upcoming'], rel['author'], rel['commit'], rel['asset_links'], rel['web_url']],
        [
          'v1.2.0',
          false,
          'alice',
          SHA,
          [{ name: 'linux binary', url: 'https://example.com/bin' }],
          'https://gitlab.com/acme/platform/api/-/releases/v1.2.0',
        ],
      );
      assert.ok((rel['description'] as string).length < 400, 'release notes are cut in lists');
    },
  },
  {
    name: 'gitlab_create_or_update_file: the file exists on the branch, so it is updated (PUT)',
    tool: 'gitlab_create_or_update_file',
    args: {
      ...A,
      path: 'docs/set up.md',
      branch: 'main',
      content: '# Setup\n',
      commit_message: 'docs: setup',
      last_commit_id: SHA2,
    },
    calls: [
      {
        method: 'HEAD',
        path: `${PR}/repository/files/docs%2Fset%20up%2Emd`,
        query: { ref: 'main' },
        reply: { headers: { 'x-gitlab-file-path': 'docs/set up.md' } },
      },
      {
        method: 'PUT',
        path: `${PR}/repository/files/docs%2Fset%20up%2Emd`,
        query: {},
        body: {
          branch: 'main',
          commit_message: 'docs: setup',
          content: '# Setup\n',
          encoding: 'text',
          last_commit_id: SHA2,
        },
        reply: { json: { file_path: 'docs/set up.md', branch: 'main' } },
      },
    ],
    check: (r) => assert.deepEqual(r, { file_path: 'docs/set up.md', branch: 'main', action: 'updated' }),
  },
  {
    name: 'gitlab_create_or_update_file: absent on the start branch, so it is created (POST, base64)',
    tool: 'gitlab_create_or_update_file',
    args: {
      ...A,
      path: 'assets/logo.png',
      branch: 'feature/logo',
      start_branch: 'main',
      content_base64: 'iVBORw0K\nGgo=',
      commit_message: 'add logo',
      last_commit_id: SHA2,
    },
    calls: [
      {
        method: 'HEAD',
        path: `${PR}/repository/files/assets%2Flogo%2Epng`,
        query: { ref: 'main' },
        reply: { status: 404 },
      },
      {
        method: 'POST',
        path: `${PR}/repository/files/assets%2Flogo%2Epng`,
        body: {
          branch: 'feature/logo',
          start_branch: 'main',
          commit_message: 'add logo',
          content: 'iVBORw0KGgo=',
          encoding: 'base64',
        },
        reply: { status: 201, json: { file_path: 'assets/logo.png', branch: 'feature/logo' } },
      },
    ],
    check: (r) => assert.deepEqual(r, { file_path: 'assets/logo.png', branch: 'feature/logo', action: 'created' }),
  },
  {
    name: 'gitlab_create_or_update_file: action "create" asks nothing first',
    tool: 'gitlab_create_or_update_file',
    args: { ...A, path: 'a.txt', branch: 'main', content: 'x', commit_message: 'm', action: 'create' },
    calls: [
      {
        method: 'POST',
        path: `${PR}/repository/files/a%2Etxt`,
        body: { branch: 'main', commit_message: 'm', content: 'x', encoding: 'text' },
        reply: { status: 201, json: { file_path: 'a.txt', branch: 'main' } },
      },
    ],
    check: (r) => assert.equal(r['action'], 'created'),
  },
  {
    tool: 'gitlab_list_merge_request_commits',
    args: { ...A, merge_request_iid: 7 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/merge_requests/7/commits`,
        query: PAGE,
        reply: { json: [commitJson(SHA2, 'Add tests')], headers: LAST },
      },
    ],
    check: (r) => {
      assert.deepEqual([r['merge_request_iid'], r['next']], [7, null]);
      assert.deepEqual(
        (r['commits'] as Json[]).map((c) => [c['sha'], c['title']]),
        [[SHA2, 'Add tests']],
      );
    },
  },
  {
    tool: 'gitlab_list_merge_request_notes',
    args: { ...A, merge_request_iid: 7 },
    calls: [
      {
        method: 'GET',
        path: `${PR}/merge_requests/7/notes`,
        query: { sort: 'asc', order_by: 'created_at', ...PAGE },
        reply: {
          json: [
            { ...noteJson, id: 601, noteable_type: 'MergeRequest', resolvable: false },
            {
              ...noteJson,
              id: 602,
              body: 'rename this',
              type: 'DiffNote',
              resolvable: true,
              resolved: false,
              position: {
                new_path: 'src/app.py',
                old_path: 'src/app.py',
                new_line: 12,
                old_line: null,
                base_sha: 'NOISE',
              },
            },
            { ...noteJson, id: 603, body: 'added 1 commit', system: true },
          ],
          headers: next(2),
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        merge_request_iid: 7,
        notes: [
          {
            id: 601,
            author: 'bob',
            created_at: T,
            internal: false,
            body: 'LGTM',
            system: false,
            type: null,
            resolvable: false,
            resolved: null,
          },
          {
            id: 602,
            author: 'bob',
            created_at: T,
            internal: false,
            body: 'rename this',
            system: false,
            type: 'DiffNote',
            resolvable: true,
            resolved: false,
            path: 'src/app.py',
            line: 12,
          },
        ],
        system_notes_left_out: 1,
        next: 2,
      }),
  },
  {
    name: 'gitlab_list_merge_request_notes with system notes, newest first',
    tool: 'gitlab_list_merge_request_notes',
    args: { ...A, merge_request_iid: 7, include_system: true, sort: 'desc' },
    calls: [
      {
        method: 'GET',
        path: `${PR}/merge_requests/7/notes`,
        query: { sort: 'desc', order_by: 'created_at', ...PAGE },
        reply: { json: [{ ...noteJson, id: 603, body: 'added 1 commit', system: true }] },
      },
    ],
    check: (r) => {
      assert.equal(r['system_notes_left_out'], 0);
      assert.equal((r['notes'] as Json[])[0]!['system'], true);
    },
  },
  {
    tool: 'gitlab_approve_merge_request',
    args: { ...A, merge_request_iid: 7, sha: SHA },
    calls: [
      {
        method: 'POST',
        path: `${PR}/merge_requests/7/approve`,
        body: { sha: SHA },
        reply: {
          status: 201,
          json: {
            id: 2007,
            iid: 7,
            approved: true,
            approvals_required: 2,
            approvals_left: 1,
            approved_by: [{ user: user('carol', 9) }],
            suggested_approvers: 'NOISE',
          },
        },
      },
    ],
    check: (r) =>
      assert.deepEqual(r, {
        merge_request_iid: 7,
        action: 'approved',
        approved: true,
        approvals_required: 2,
        approvals_left: 1,
        approved_by: ['carol'],
      }),
  },
  {
    name: 'gitlab_approve_merge_request: unapprove',
    tool: 'gitlab_approve_merge_request',
    args: { ...A, merge_request_iid: 7, action: 'unapprove' },
    calls: [{ method: 'POST', path: `${PR}/merge_requests/7/unapprove`, body: {}, reply: { status: 201 } }],
    check: (r) =>
      assert.deepEqual(r, {
        merge_request_iid: 7,
        action: 'unapproved',
        approved: null,
        approvals_required: null,
        approvals_left: null,
        approved_by: [],
      }),
  },
  {
    tool: 'gitlab_retry_pipeline',
    args: { ...A, pipeline_id: 88 },
    calls: [
      {
        method: 'POST',
        path: `${PR}/pipelines/88/retry`,
        body: {},
        reply: { status: 201, json: pipelineJson(88, { status: 'pending', detailed_status: { NOISE: 1 } }) },
      },
    ],
    check: (r) => assert.deepEqual([r['id'], r['status'], r['action']], [88, 'pending', 'retried']),
  },
  {
    tool: 'gitlab_cancel_pipeline',
    args: { ...A, pipeline_id: 88 },
    calls: [
      {
        method: 'POST',
        path: `${PR}/pipelines/88/cancel`,
        body: {},
        reply: { json: pipelineJson(88, { status: 'canceled' }) },
      },
    ],
    check: (r) => assert.deepEqual([r['id'], r['status'], r['action']], [88, 'canceled', 'canceled']),
  },
  {
    tool: 'gitlab_get_clone_url',
    args: A,
    calls: [
      {
        method: 'GET',
        path: PR,
        query: { license: 'false' },
        reply: { json: { ...projectJson, ssh_url_to_repo: 'git@gitlab.com:acme/platform/api.git' } },
      },
    ],
    check: (r) => {
      assert.deepEqual(
        [r['project'], r['https'], r['ssh'], r['default_branch']],
        [
          'acme/platform/api',
          'https://gitlab.com/acme/platform/api.git',
          'git@gitlab.com:acme/platform/api.git',
          'main',
        ],
      );
      assert.match(JSON.stringify(r['authenticate']), /access token with the read_repository scope/);
    },
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
    assert.equal(got.headers.accept, want.accept ?? 'application/json');
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

describe('gitlab tools: request made and result shaped', () => {
  for (const c of cases) {
    test(c.name ?? c.tool, async () => c.check(await runCase(c)));
  }

  test('every tool in the manifest has a case, and every tool is annotated', async () => {
    const manifest = JSON.parse(
      await readFile(new URL('../../../plugins/gitlab/manifest.json', import.meta.url), 'utf8'),
    ) as { tools: { name: string; annotations: Json }[] };
    const covered = new Set(cases.map((c) => c.tool));
    assert.deepEqual(
      manifest.tools.map((t) => t.name).filter((n) => !covered.has(n)),
      [],
    );
    assert.ok(manifest.tools.length >= 20);
    for (const t of manifest.tools) {
      assert.equal(typeof t.annotations['title'], 'string', t.name);
      assert.equal(typeof t.annotations['readOnlyHint'], 'boolean', t.name);
    }
  });
});

// ---------- lone surrogates: U+FFFD (%EF%BF%BD), as URLSearchParams sends them, not a URIError ----------
describe('gitlab tools: a lone surrogate in an argument is sent as U+FFFD', () => {
  test('in a query value and in a project path', async () => {
    const r = await runCase({
      tool: 'gitlab_search_code',
      args: { project: 'acme/a\uD800b', query: 'x \uDC00' },
      calls: [
        {
          method: 'GET',
          path: `${V4}/projects/acme%2Fa%EF%BF%BDb/search`,
          query: { scope: 'blobs', search: 'x \uFFFD', ...PAGE },
          reply: { json: [] },
        },
      ],
      check: () => {},
    });
    assert.deepEqual(r['items'], []);
    assert.match(upstream.last().url, /[?&]search=x%20%EF%BF%BD(&|$)/);
  });
});

// ---------- merge refusals: each says why, in words an agent can act on ----------
describe('gitlab_merge_merge_request: refusals', () => {
  const merge = { ...A, merge_request_iid: 7 };
  async function refusal(replies: UpstreamReply[], args: Json = merge): Promise<string> {
    upstream.requests.length = 0;
    let i = 0;
    upstream.setHandler(() => replies[i++] ?? { status: 599, json: { message: 'unexpected extra request' } });
    const item = (await gw.execute('gitlab_merge_merge_request', args)) as Json;
    assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
    assert.equal(
      upstream.requests.length,
      replies.length,
      upstream.requests.map((r) => `${r.method} ${r.path}`).join(', '),
    );
    assert.ok(!String(item['error']).includes(TOKEN));
    return String(item['error']);
  }

  test('405 while the pipeline must succeed: the reason is read back from detailed_merge_status', async () => {
    const error = await refusal([
      { status: 405, json: { message: '405 Method Not Allowed' } },
      { json: mrJson(7, { detailed_merge_status: 'ci_must_pass' }) },
    ]);
    assert.match(
      error,
      /^GitLab will not merge !7 now \(405 not mergeable\): the pipeline must succeed first \(project setting\) and it has not \(detailed_merge_status: ci_must_pass\)\. To have GitLab merge it when the pipeline succeeds, call again with auto_merge: true\./,
    );
    assert.equal(upstream.requests[1]!.path, `${PR}/merge_requests/7`);
  });

  test('405 on a draft names the draft', async () => {
    const error = await refusal([
      { status: 405, json: { message: '405 Method Not Allowed' } },
      { json: mrJson(7, { detailed_merge_status: 'draft_status', draft: true }) },
    ]);
    assert.match(error, /it is a draft: mark it ready first/);
  });

  test('405 when the merge request cannot be read back still says what may be wrong', async () => {
    const error = await refusal([
      { status: 405, json: { message: '405 Method Not Allowed' } },
      { status: 500, json: { message: 'boom' } },
    ]);
    assert.match(
      error,
      /405 not mergeable\): it is a draft, closed, has unresolved threads, lacks approvals, or its pipeline must succeed first/,
    );
  });

  test('422 with conflicts', async () => {
    const error = await refusal([
      { status: 422, json: { message: 'Branch cannot be merged' } },
      { json: mrJson(7, { has_conflicts: true, detailed_merge_status: 'conflict' }) },
    ]);
    assert.match(
      error,
      /^GitLab could not merge !7 \(422 merge failed\): it has conflicts with the target branch\. Resolve the conflicts or rebase.* GitLab said: Branch cannot be merged$/,
    );
  });

  test('406 (older GitLab) is reported as conflicts', async () => {
    const error = await refusal([
      { status: 406, json: { message: 'Branch cannot be merged' } },
      { json: mrJson(7, { detailed_merge_status: 'need_rebase' }) },
    ]);
    assert.match(error, /\(406 conflicts\): the source branch must be rebased onto the target branch first/);
  });

  test('409: the head moved since the sha was read', async () => {
    const error = await refusal(
      [{ status: 409, json: { message: 'SHA does not match HEAD of source branch: bbbb' } }],
      { ...merge, sha: SHA },
    );
    assert.match(
      error,
      /^The source branch of !7 has moved \(409\): the sha you passed is no longer its HEAD.*GitLab said: SHA does not match HEAD of source branch/,
    );
  });

  test('401 with a valid token: no right to merge into the target branch', async () => {
    const error = await refusal([{ status: 401, json: { message: '401 Unauthorized' } }, { json: user('alice') }]);
    assert.match(error, /^GitLab refused to merge !7 \(401\): you are not allowed to merge into its target branch/);
  });

  test('401 with an invalid token: reconnect', async () => {
    const error = await refusal([
      { status: 401, json: { message: '401 Unauthorized' } },
      { status: 401, json: { message: '401 Unauthorized' } },
    ]);
    assert.match(
      error,
      /^GitLab rejected the credential \(merging !7\) \(401 401 Unauthorized\): .*Reconnect the gitlab integration\.$/,
    );
  });
});

// ---------- approval refusals, file arguments, clone URLs ----------
describe('gitlab_approve_merge_request: refusals', () => {
  async function refused(replies: UpstreamReply[], args: Json): Promise<string> {
    upstream.requests.length = 0;
    let i = 0;
    upstream.setHandler(() => replies[i++] ?? { status: 599, json: { message: 'unexpected extra request' } });
    const item = (await gw.execute('gitlab_approve_merge_request', args)) as Json;
    assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
    assert.equal(upstream.requests.length, replies.length);
    assert.ok(!String(item['error']).includes(TOKEN));
    return String(item['error']);
  }
  const approve = { ...A, merge_request_iid: 7 };

  test('401 with a valid token: already approved, or not allowed to approve', async () => {
    const error = await refused(
      [{ status: 401, json: { message: '401 Unauthorized' } }, { json: user('alice') }],
      approve,
    );
    assert.match(
      error,
      /^GitLab refused to approve !7 \(401\): you have already approved it, or you may not approve it/,
    );
    assert.equal(upstream.requests[1]!.path, `${V4}/user`);
  });

  test('401 on unapprove with a valid token: you had not approved it', async () => {
    const error = await refused([{ status: 401, json: { message: '401 Unauthorized' } }, { json: user('alice') }], {
      ...approve,
      action: 'unapprove',
    });
    assert.match(error, /withdraw an approval of !7 \(401\): you have not approved it/);
  });

  test('401 with an invalid token: reconnect', async () => {
    const error = await refused(
      [
        { status: 401, json: { message: '401 Unauthorized' } },
        { status: 401, json: { message: '401 Unauthorized' } },
      ],
      approve,
    );
    assert.match(error, /Reconnect the gitlab integration\.$/);
  });

  test('409: the head moved since the sha was read', async () => {
    const error = await refused([{ status: 409, json: { message: 'SHA does not match HEAD of source branch' } }], {
      ...approve,
      sha: SHA,
    });
    assert.match(error, /^The source branch of !7 has moved \(409\).*approve with the new sha/);
  });
});

describe('gitlab_create_or_update_file: content arguments', () => {
  for (const [name, extra] of [
    ['neither content nor content_base64', {}],
    ['both content and content_base64', { content: 'x', content_base64: 'eA==' }],
  ] as const) {
    test(`${name} is refused before any request`, async () => {
      upstream.requests.length = 0;
      const item = (await gw.execute('gitlab_create_or_update_file', {
        ...A,
        path: 'a.txt',
        branch: 'main',
        commit_message: 'm',
        ...extra,
      })) as Json;
      assert.match(String(item['error']), /pass exactly one of `content` \(text\) or `content_base64`/);
      assert.equal(upstream.requests.length, 0);
    });
  }

  test("a file on a branch that does not exist: GitLab's refusal is worded", async () => {
    upstream.requests.length = 0;
    let i = 0;
    const replies: UpstreamReply[] = [
      { status: 404, json: { message: '404 File Not Found' } },
      { status: 400, json: { message: 'You can only create or edit files when you are on a branch' } },
    ];
    upstream.setHandler(() => replies[i++] ?? { status: 599 });
    const item = (await gw.execute('gitlab_create_or_update_file', {
      ...A,
      path: 'a.txt',
      branch: 'nope',
      content: 'x',
      commit_message: 'm',
    })) as Json;
    assert.match(
      String(item['error']),
      /GitLab rejected the input \(creating "a\.txt" on nope\) \(400\): You can only create or edit files when you are on a branch/,
    );
  });
});

describe('gitlab clone URLs never carry a credential', () => {
  test('a clone URL with a user:secret part is answered without it, and the token never appears', async () => {
    const leaky = {
      ...projectJson,
      http_url_to_repo: 'https://oauth2:glpat-OTHER-SECRET@gitlab.com/acme/platform/api.git',
      ssh_url_to_repo: 'ssh://git:ssh-SECRET@gitlab.com:2222/acme/platform/api.git',
    };
    for (const tool of ['gitlab_get_clone_url', 'gitlab_get_project']) {
      upstream.requests.length = 0;
      upstream.setHandler(() => ({ json: leaky }));
      const item = (await gw.execute(tool, A)) as Json;
      const text = JSON.stringify(item);
      assert.ok('result' in item, text);
      assert.ok(!text.includes('SECRET'), `${tool}: ${text}`);
      assert.ok(!text.includes(TOKEN), tool);
      assert.match(text, /"https:\/\/gitlab\.com\/acme\/platform\/api\.git"/);
    }
    upstream.setHandler(() => ({ json: leaky }));
    const r = (await gw.execute('gitlab_get_clone_url', A)) as Json;
    assert.equal((r['result'] as Json)['ssh'], 'ssh://git@gitlab.com:2222/acme/platform/api.git');
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
const errorCases: ErrorCase[] = [
  {
    name: '401: invalid or expired token',
    reply: {
      status: 401,
      json: {
        error: 'invalid_token',
        error_description: 'Token is expired. You can either do re-authorization or token refresh.',
      },
    },
    error:
      /^GitLab rejected the credential \(issue #7\) \(401 Token is expired\. .*\): the token is invalid, expired or revoked\. Reconnect the gitlab integration\.$/,
  },
  {
    name: '403: missing scope is named',
    reply: {
      status: 403,
      json: {
        error: 'insufficient_scope',
        error_description: 'The request requires higher privileges than provided by the access token.',
        scope: 'api',
      },
    },
    error:
      /^GitLab refused \(issue #7\) \(403\): the token lacks the OAuth scope this needs \(api\)\. Reconnect gitlab and grant the api scope\.$/,
  },
  {
    name: '403: role too low',
    tool: 'gitlab_create_branch',
    args: { ...A, branch: 'x', ref: 'main' },
    reply: { status: 403, json: { message: '403 Forbidden' } },
    error:
      /^GitLab refused \(creating branch x from main\) \(403\): your role in this project or group does not allow it.* GitLab said: 403 Forbidden$/,
  },
  {
    name: "404: not found or no access, with GitLab's words",
    reply: { status: 404, json: { message: '404 Project Not Found' } },
    error:
      /^Not found or no access \(issue #7\): GitLab answers 404 both when it does not exist and when you may not see it\. .* GitLab said: 404 Project Not Found$/,
  },
  {
    name: '400: field messages',
    tool: 'gitlab_create_issue',
    args: { ...A, title: 'x' },
    reply: {
      status: 400,
      json: { message: { title: ['is too long (maximum is 255 characters)'], labels: ['is invalid'] } },
    },
    error:
      /^GitLab rejected the input \(creating the issue\) \(400\): title is too long \(maximum is 255 characters\); labels is invalid$/,
  },
  {
    name: '400: pipeline refused with a base message',
    tool: 'gitlab_create_pipeline',
    args: { ...A, ref: 'nope' },
    reply: { status: 400, json: { message: { base: ['Reference not found'] } } },
    error: /^GitLab rejected the input \(creating a pipeline on nope\) \(400\): Reference not found$/,
  },
  {
    name: '400: a plain error string',
    tool: 'gitlab_create_branch',
    args: { ...A, branch: 'main', ref: 'main' },
    reply: { status: 400, json: { message: 'Branch already exists' } },
    error: /\(400\): Branch already exists$/,
  },
  {
    name: '409: an open merge request already exists',
    tool: 'gitlab_create_merge_request',
    args: { ...A, source_branch: 'feature/x', target_branch: 'main', title: 't' },
    reply: { status: 409, json: { message: ['Another open merge request already exists for this source branch: !7'] } },
    error:
      /^GitLab reported a conflict \(creating the merge request\) \(409\): Another open merge request already exists for this source branch: !7$/,
  },
  {
    name: '429 with retry-after',
    reply: { status: 429, headers: { 'retry-after': '30' }, body: 'Retry later' },
    error: /rate limited, retry after 30 s\. GitLab said: Retry later/,
  },
  {
    name: '429 with only RateLimit-Reset',
    reply: {
      status: 429,
      headers: { 'ratelimit-reset': String(Math.floor(Date.now() / 1000) + 90) },
      json: { message: 'Too many requests' },
    },
    error: /rate limited, retry after (8\d|9\d) s/,
  },
  {
    name: '502: server error',
    reply: { status: 502, body: 'Bad gateway' },
    error: /^GitLab server error 502 \(issue #7\): Bad gateway\. Try again later\.$/,
  },
  { name: '200 with a body that is not JSON', reply: { status: 200, body: '<html>' }, error: /not JSON/ },
];

describe('gitlab tools: error mappings', () => {
  for (const c of errorCases) {
    test(c.name, async () => {
      upstream.requests.length = 0;
      upstream.setHandler(() => c.reply);
      const item = (await gw.execute(c.tool ?? 'gitlab_get_issue', c.args ?? { ...A, issue_iid: 7 })) as Json;
      assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
      assert.match(String(item['error']), c.error);
      assert.ok(!JSON.stringify(item).includes(TOKEN), 'the token never appears in an error');
      assert.equal(upstream.requests.length, 1);
    });
  }

  test('an unknown username is refused before anything is created', async () => {
    upstream.requests.length = 0;
    upstream.setHandler(() => ({ json: [] }));
    const item = (await gw.execute('gitlab_create_issue', { ...A, title: 't', assignees: ['ghost'] })) as Json;
    assert.match(String(item['error']), /^No GitLab user with the username "ghost" \(assignee\)/);
    assert.deepEqual(
      upstream.requests.map((r) => r.method),
      ['GET'],
    );
  });

  const invalid: [string, string, Json][] = [
    ['a project without a namespace', 'gitlab_get_project', { project: 'api' }],
    ['a project path with a dot-dot segment', 'gitlab_get_issue', { project: 'acme/../api', issue_iid: 1 }],
    ['a project path with an empty segment', 'gitlab_get_project', { project: 'acme//api' }],
    ['a project id of 0', 'gitlab_get_project', { project: 0 }],
    ['an iid of 0', 'gitlab_get_issue', { ...A, issue_iid: 0 }],
    ['per_page over 100', 'gitlab_list_issues', { ...A, per_page: 500 }],
    ['an unknown argument', 'gitlab_get_current_user', { verbose: true }],
    ['a label with a comma', 'gitlab_create_issue', { ...A, title: 't', labels: ['a,b'] }],
    ['a username with a space', 'gitlab_update_issue', { ...A, issue_iid: 1, assignees: ['bob smith'] }],
    ['a branch name with ".."', 'gitlab_create_branch', { ...A, branch: 'a..b', ref: 'main' }],
    ['a branch name with a space', 'gitlab_create_branch', { ...A, branch: 'a b', ref: 'main' }],
    [
      'a variable key with a dash',
      'gitlab_create_pipeline',
      { ...A, ref: 'main', variables: [{ key: 'A-B', value: '1' }] },
    ],
    ['a variable without a value', 'gitlab_create_pipeline', { ...A, ref: 'main', variables: [{ key: 'A' }] }],
    ['a sha that is not hex', 'gitlab_merge_merge_request', { ...A, merge_request_iid: 1, sha: 'main' }],
    ['a file path with a dot-dot segment', 'gitlab_get_file', { ...A, path: '../etc/passwd' }],
    ['a state_event that is not close or reopen', 'gitlab_update_issue', { ...A, issue_iid: 1, state_event: 'delete' }],
  ];
  for (const [what, tool, args] of invalid) {
    test(`rejects ${what} before any request`, async () => {
      upstream.requests.length = 0;
      const item = (await gw.execute(tool, args)) as Json;
      assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
      assert.equal(upstream.requests.length, 0);
    });
  }

  test('nothing to change is refused without a request', async () => {
    upstream.requests.length = 0;
    for (const [tool, args] of [
      ['gitlab_update_issue', { ...A, issue_iid: 1 }],
      ['gitlab_update_merge_request', { ...A, merge_request_iid: 1 }],
    ] as const) {
      const item = (await gw.execute(tool, args)) as Json;
      assert.match(String(item['error']), /^Nothing to change: pass at least one of/);
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('a project URL on another host is refused, naming the host, before any request', async () => {
    for (const [url, host] of [
      ['https://github.com/acme/api', 'github.com'],
      ['https://gitlab.example.com/acme/api/-/issues/3', 'gitlab.example.com'],
      ['http://user@evil.example:8443/acme/api', 'evil.example:8443'],
      ['https://gitlab.com.evil.example/acme/api', 'gitlab.com.evil.example'],
    ] as const) {
      upstream.requests.length = 0;
      const item = (await gw.execute('gitlab_get_project', { project: url })) as Json;
      assert.ok(!('result' in item), `should fail: ${JSON.stringify(item)}`);
      assert.match(
        String(item['error']),
        new RegExp(`^Invalid project ".*": that URL is on ${host.replace(/\./g, '\\.')}, not gitlab\\.com`),
      );
      assert.equal(upstream.requests.length, 0, url);
    }
  });

  test('a project URL on gitlab.com (any case, with www) is taken', async () => {
    for (const url of ['https://GitLab.com/acme/platform/api', 'https://www.gitlab.com/acme/platform/api.git']) {
      upstream.setHandler(() => ({ json: projectJson }));
      upstream.requests.length = 0;
      const item = (await gw.execute('gitlab_get_project', { project: url })) as Json;
      assert.ok('result' in item, JSON.stringify(item));
      assert.equal(upstream.last().path, PR);
    }
  });

  test('a project path names the numeric id and full path forms when refused', async () => {
    const item = (await gw.execute('gitlab_get_project', { project: 'api' })) as Json;
    assert.match(
      String(item['error']),
      /Invalid project "api": pass its numeric id .* or its full path with namespace/,
    );
  });
});

// ---------- a file or job log larger than the gateway accepts: where to see it, not "ask for less" ----------
describe('gitlab tools: an answer over the response cap', () => {
  let small: Gateway;
  before(async () => {
    small = await startPluginGateway(
      'gitlab',
      upstream,
      { token: TOKEN },
      { policy: { http: { maxResponseBytes: 4096 } } },
    );
  });
  after(async () => small?.close());

  test("gitlab_get_file says offset and max_chars do not help, and gives the file's web page", async () => {
    upstream.setHandler((req) =>
      req.path === PR ? { json: projectJson } : { json: fileJson('x'.repeat(20000), 'docs/big file.txt') },
    );
    const item = (await small.execute('gitlab_get_file', { ...A, path: 'docs/big file.txt' })) as Json;
    assert.ok(!('result' in item), JSON.stringify(item));
    assert.match(
      String(item['error']),
      /^File "docs\/big file\.txt" at HEAD is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\), so it cannot be read here \(offset and max_chars do not help/,
    );
    assert.match(
      String(item['error']),
      / Open it in GitLab: https:\/\/gitlab\.com\/acme\/platform\/api\/-\/blob\/main\/docs\/big%20file\.txt$/,
    );
    assert.ok(!/ask for less/.test(String(item['error'])));
  });

  test("gitlab_get_job_log says max_chars does not help, and gives the job's web page", async () => {
    upstream.setHandler((req) =>
      req.path.endsWith('/trace')
        ? { body: 'x'.repeat(20000), headers: { 'content-type': 'text/plain' } }
        : { json: { ...jobJson(101, 'failed'), pipeline: { id: 101 } } },
    );
    const item = (await small.execute('gitlab_get_job_log', { ...A, job_id: 101, max_chars: 1000 })) as Json;
    assert.ok(!('result' in item), JSON.stringify(item));
    assert.match(
      String(item['error']),
      /^The log of job 101 is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\).*a smaller max_chars does not help.*Open it in GitLab: https:\/\/gitlab\.com\/acme\/platform\/api\/-\/jobs\/101 \(raw text: https:\/\/gitlab\.com\/acme\/platform\/api\/-\/jobs\/101\/raw\)\.$/,
    );
  });

  test('a list over the cap still says to ask for less', async () => {
    upstream.setHandler(() => ({ json: Array.from({ length: 50 }, (_, i) => issueJson(i + 1)) }));
    const item = (await small.execute('gitlab_list_issues', A)) as Json;
    assert.match(
      String(item['error']),
      /^GitLab's answer for issues is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\): ask for less/,
    );
  });
});

// ---------- upstream strings that are names on Object.prototype: plain data, not prototype lookups ----------
describe('gitlab tools: upstream values named like Object.prototype members', () => {
  test('a tree entry of type "constructor" or "__proto__" keeps its type as given', async () => {
    const r = await runCase({
      tool: 'gitlab_list_repository_tree',
      args: A,
      calls: [
        {
          method: 'GET',
          path: `${PR}/repository/tree`,
          reply: {
            json: [
              { name: 'a', path: 'a', type: 'constructor' },
              { name: 'b', path: 'b', type: '__proto__' },
              { name: 'c', path: 'c', type: 'toString' },
              { name: 'd', path: 'd', type: 'blob' },
            ],
          },
        },
      ],
      check: () => {},
    });
    assert.deepEqual(r['entries'], [
      { name: 'a', path: 'a', type: 'constructor' },
      { name: 'b', path: 'b', type: '__proto__' },
      { name: 'c', path: 'c', type: 'toString' },
      { name: 'd', path: 'd', type: 'file' },
    ]);
  });

  test('job statuses "__proto__" and "constructor" are counted like any other', async () => {
    const r = await runCase({
      tool: 'gitlab_get_pipeline',
      args: { ...A, pipeline_id: 101 },
      calls: [
        { method: 'GET', path: `${PR}/pipelines/101`, reply: { json: pipelineJson(101) } },
        {
          method: 'GET',
          path: `${PR}/pipelines/101/jobs`,
          reply: {
            json: [jobJson(1, '__proto__'), jobJson(2, '__proto__'), jobJson(3, 'constructor'), jobJson(4, 'failed')],
            headers: LAST,
          },
        },
      ],
      check: () => {},
    });
    assert.deepEqual(Object.entries(r['job_summary'] as Json), [
      ['__proto__', 2],
      ['constructor', 1],
      ['failed', 1],
    ]);
  });

  test('a merge refusal with detailed_merge_status "constructor" names the status, not a function', async () => {
    upstream.requests.length = 0;
    const replies: UpstreamReply[] = [
      { status: 405, json: { message: '405 Method Not Allowed' } },
      { json: mrJson(7, { detailed_merge_status: 'constructor' }) },
    ];
    let i = 0;
    upstream.setHandler(() => replies[i++] ?? { status: 599, json: {} });
    const item = (await gw.execute('gitlab_merge_merge_request', { ...A, merge_request_iid: 7 })) as Json;
    assert.match(String(item['error']), /\(405 not mergeable\): detailed_merge_status is constructor\./);
  });
});

// ---------- job logs built to make the cleaning regexes backtrack: still answered ----------
describe('gitlab_get_job_log: a log shaped to make the cleaning slow is still answered', () => {
  async function jobLog(log: string, maxChars = 20000): Promise<Json> {
    upstream.requests.length = 0;
    upstream.setHandler((req) =>
      req.path.endsWith('/trace')
        ? { body: log, headers: { 'content-type': 'text/plain' } }
        : { json: { ...jobJson(101, 'failed'), ref: 'main', pipeline: { id: 101 } } },
    );
    const item = (await gw.execute('gitlab_get_job_log', { ...A, job_id: 101, max_chars: maxChars })) as Json;
    assert.ok('result' in item, `gitlab_get_job_log failed: ${JSON.stringify(item).slice(0, 500)}`);
    return item['result'] as Json;
  }

  test('a 200 KB log on one line, without a carriage return', async () => {
    const r = await jobLog(`${'x'.repeat(200000)}\nERROR: done\n`, 500000);
    assert.equal(r['truncated'], false);
    assert.equal(r['log'], `${'x'.repeat(200000)}\nERROR: done\n`);
  });

  test('a 200 KB line with one carriage return keeps what follows it', async () => {
    const r = await jobLog(`progress 1%\r${'y'.repeat(200000)}\nERROR: done\n`, 500000);
    assert.equal(r['log'], `${'y'.repeat(200000)}\nERROR: done\n`);
  });

  test('16,000 section markers whose name bracket is never closed', async () => {
    const r = await jobLog(
      `${'section_start:1700000000:step[collapsed=true\n'.repeat(16000)}ERROR: tests failed\n`,
      500000,
    );
    assert.ok((r['log'] as string).endsWith('ERROR: tests failed\n'));
    assert.ok(!(r['log'] as string).includes('section_start'));
  });

  test('a log longer than 4 × max_chars: only its tail is cleaned, from a line start', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `\x1b[32mline ${String(i).padStart(4, '0')}\x1b[0m\n`).join(
      '',
    );
    const log = `section_start:1700000000:build[collapsed=true]\r\x1b[0K${lines}\x1b[31;1mERROR: tests failed\x1b[0;m\n`;
    const r = await jobLog(log, 1000);
    assert.deepEqual([r['truncated'], r['total_chars'], r['raw_chars']], [true, null, log.length]);
    assert.equal((r['log'] as string).length, 1000);
    assert.ok((r['log'] as string).endsWith('line 2999\nERROR: tests failed\n'));
    assert.ok(!/\x1b|section_/.test(r['log'] as string));
    assert.match(
      r['note'] as string,
      new RegExp(`^only the last 1000 characters of a log of ${log.length} characters \\(counted before colour codes`),
    );
  });

  test('a section marker with its options is removed whole', async () => {
    const r = await jobLog(
      'section_start:1700000000:build[collapsed=true]\r\x1b[0KBuilding\nsection_end:1700000001:build\r\x1b[0KERROR: x\n',
    );
    assert.equal(r['log'], 'Building\nERROR: x\n');
  });
});
