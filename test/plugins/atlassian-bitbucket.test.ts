/**
 * @module test/plugins/atlassian-bitbucket.test
 * Every Bitbucket tool runs through the real gateway and sandbox against a loopback stand-in for
 * api.bitbucket.org (reached through the policy's origin mapping). One table states, per tool, the
 * requests it must make (method, /2.0 path, exact query with repeated keys, JSON body, the injected
 * Bearer token) and the slim result; then paging (`next` URL → opaque cursor, never another host),
 * reviewer resolution (nicknames, the author left out), file reads (binary, folders, a branch with
 * "/"), change requests, stopping a pipeline, the member search's paging, clone URLs that never
 * carry a credential, the error mappings (401, 403 scope and permission, 404, 400 fields, 409,
 * 555, 429, 5xx) and bad arguments refused before any request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { RecordedRequest, Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'bitbucket-access-token-0123456789';
const API = 'https://api.bitbucket.org/2.0';
const WEB = 'https://bitbucket.org';
type Gateway = TestGateway;
type Json = Record<string, unknown>;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway(
  'atlassian-bitbucket',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 7200 },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" with the path under /2.0; anything else is a Bitbucket-shaped 404. */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: '/2.0',
    notFound: (m, path) => ({ type: 'error', error: { message: `no route ${m} ${path}` } }),
  });

/** The query as {key: value} with repeated keys as arrays. */
function queryOf(req: RecordedRequest): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(req.query.keys())) {
    const all = req.query.getAll(key);
    out[key] = all.length > 1 ? all : all[0]!;
  }
  return out;
}

type Call = [method: string, path: string, queryOrBody?: unknown];

/** Exactly these calls: GET/DELETE with this query, writes with this JSON body; every one with the Bearer token. */
function assertCalls(calls: Call[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  calls.forEach(([method, path, expected], i) => {
    const req = reqs[i]!;
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`, `request ${i} carries the Bearer token`);
    assert.equal(req.method, method, `request ${i} method`);
    assert.equal(req.path, `/2.0${path}`, `request ${i} path`);
    if (method === 'GET' || method === 'DELETE') {
      assert.deepEqual(queryOf(req), expected ?? {}, `request ${i} query`);
      assert.equal(req.body, '');
    } else {
      assert.deepEqual(queryOf(req), {}, `request ${i} query`);
      if (expected === undefined) assert.equal(req.body, '', `request ${i} has no body`);
      else {
        assert.match(String(req.headers['content-type']), /^application\/json/);
        assert.deepEqual(req.json, expected, `request ${i} JSON body`);
      }
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

// ---------- fixtures: Bitbucket-shaped answers; NOISE marks what a slim result must drop ----------
const T = '2026-03-01T10:00:00.000000+00:00';
const NOISE = { type: 'NOISE', links: { self: { href: 'NOISE' }, avatar: { href: 'NOISE' } } };
const ME_UUID = '{11111111-1111-4111-8111-111111111111}';
const ME_ID = '557058:11111111-1111-4111-8111-111111111111';
const ANA_UUID = '{22222222-2222-4222-8222-222222222222}';
const ANA_ID = '557058:22222222-2222-4222-8222-222222222222';
const BEN_ID = '5b10a2844c20165700ede21f';
const user = (uuid: string, account_id: string, nickname: string, display_name: string) => ({
  ...NOISE,
  type: 'user',
  uuid,
  account_id,
  nickname,
  display_name,
  links: { html: { href: `${WEB}/%7B${uuid.slice(1, -1)}%7D/` }, avatar: { href: 'NOISE' } },
});
const ME = user(ME_UUID, ME_ID, 'me', 'Me Myself');
const ANA = user(ANA_UUID, ANA_ID, 'ana', 'Ana Lopes');
const REPO = {
  ...NOISE,
  type: 'repository',
  uuid: '{33333333-3333-4333-8333-333333333333}',
  full_name: 'acme/api',
  slug: 'api',
  name: 'API',
  description: 'The API',
  is_private: true,
  language: 'python',
  mainbranch: { type: 'branch', name: 'main' },
  project: { type: 'project', key: 'CORE', name: 'Core', uuid: 'NOISE', links: NOISE.links },
  updated_on: T,
  created_on: '2024-01-01T00:00:00+00:00',
  size: 2048,
  has_issues: false,
  website: '',
  fork_policy: 'no_public_forks',
  owner: ME,
  workspace: { slug: 'acme', uuid: 'NOISE' },
  links: {
    html: { href: `${WEB}/acme/api` },
    avatar: { href: 'NOISE' },
    clone: [
      { name: 'https', href: 'https://me@bitbucket.org/acme/api.git' },
      { name: 'ssh', href: 'git@bitbucket.org:acme/api.git' },
    ],
  },
};
const SLIM_REPO = {
  full_name: 'acme/api',
  slug: 'api',
  name: 'API',
  description: 'The API',
  private: true,
  language: 'python',
  main_branch: 'main',
  project: { key: 'CORE', name: 'Core' },
  updated_on: T,
  url: `${WEB}/acme/api`,
};
const end = (branch: string, hash: string) => ({
  branch: { name: branch },
  commit: { hash, type: 'commit', links: NOISE.links },
  repository: { full_name: 'acme/api', uuid: 'NOISE' },
});
const PR = {
  ...NOISE,
  type: 'pullrequest',
  id: 7,
  title: 'Fix login',
  state: 'OPEN',
  draft: false,
  author: ME,
  source: end('feature/login', 'abc123def456'),
  destination: end('main', '0f0f0f0f0f0f'),
  comment_count: 2,
  task_count: 1,
  created_on: T,
  updated_on: T,
  links: { html: { href: `${WEB}/acme/api/pull-requests/7` }, diff: { href: 'NOISE' } },
  description: 'Fixes the login form',
  summary: { raw: 'Fixes the login form', html: '<p>NOISE</p>' },
  merge_commit: null,
  close_source_branch: true,
  closed_by: null,
  reason: '',
  reviewers: [ANA],
  participants: [
    { type: 'participant', user: ANA, role: 'REVIEWER', approved: true, state: 'approved', participated_on: T },
  ],
};
const SLIM_PR = {
  id: 7,
  title: 'Fix login',
  state: 'OPEN',
  draft: false,
  author: 'Me Myself',
  source_branch: 'feature/login',
  destination_branch: 'main',
  comment_count: 2,
  task_count: 1,
  created_on: T,
  updated_on: T,
  url: `${WEB}/acme/api/pull-requests/7`,
};
const DETAIL_PR = {
  ...SLIM_PR,
  description: 'Fixes the login form',
  source_repository: 'acme/api',
  source_commit: 'abc123def456',
  destination_commit: '0f0f0f0f0f0f',
  merge_commit: null,
  close_source_branch: true,
  closed_by: null,
  reason: null,
  reviewers: [{ display_name: 'Ana Lopes', account_id: ANA_ID }],
  participants: [
    { display_name: 'Ana Lopes', account_id: ANA_ID, role: 'REVIEWER', approved: true, state: 'approved' },
  ],
};
const COMMENT = {
  ...NOISE,
  type: 'pullrequest_comment',
  id: 101,
  user: ANA,
  content: { raw: 'Why this?', markup: 'markdown', html: '<p>NOISE</p>' },
  created_on: T,
  updated_on: T,
  deleted: false,
  inline: { path: 'src/login.py', from: null, to: 12 },
  parent: { id: 100 },
  links: { html: { href: `${WEB}/acme/api/pull-requests/7/_/diff#comment-101` } },
};
const SLIM_COMMENT = {
  id: 101,
  author: 'Ana Lopes',
  created_on: T,
  updated_on: T,
  content: 'Why this?',
  deleted: false,
  inline: { path: 'src/login.py', from: null, to: 12 },
  parent_id: 100,
  url: `${WEB}/acme/api/pull-requests/7/_/diff#comment-101`,
};
const COMMIT = {
  ...NOISE,
  type: 'commit',
  hash: 'abc123def4567890',
  date: T,
  message: 'Fix login\n\nLonger text\n',
  author: { type: 'author', raw: 'Ana Lopes <ana@example.com>', user: ANA },
  parents: [{ hash: '0f0f0f0f', type: 'commit' }],
  links: { html: { href: `${WEB}/acme/api/commits/abc123def4567890` } },
  repository: { full_name: 'acme/api' },
};
const SLIM_COMMIT = {
  hash: 'abc123def4567890',
  date: T,
  author: 'Ana Lopes',
  message: 'Fix login\n\nLonger text',
  parents: ['0f0f0f0f'],
  url: `${WEB}/acme/api/commits/abc123def4567890`,
};
const PIPELINE = {
  type: 'pipeline',
  uuid: '{44444444-4444-4444-8444-444444444444}',
  build_number: 42,
  creator: ME,
  repository: { full_name: 'acme/api', uuid: 'NOISE' },
  target: {
    type: 'pipeline_ref_target',
    ref_type: 'branch',
    ref_name: 'main',
    selector: { type: 'custom', pattern: 'deploy' },
    commit: { type: 'commit', hash: 'abc123' },
  },
  trigger: { name: 'MANUAL', type: 'pipeline_trigger_manual' },
  state: {
    name: 'COMPLETED',
    type: 'pipeline_state_completed',
    result: { name: 'FAILED', type: 'pipeline_state_completed_failed' },
  },
  created_on: T,
  completed_on: T,
  duration_in_seconds: 93,
  build_seconds_used: 93,
};
const SLIM_PIPELINE = {
  uuid: '{44444444-4444-4444-8444-444444444444}',
  build_number: 42,
  state: 'COMPLETED',
  result: 'FAILED',
  ref_type: 'branch',
  ref_name: 'main',
  pipeline: 'deploy',
  commit: 'abc123',
  trigger: 'MANUAL',
  creator: 'Me Myself',
  created_on: T,
  completed_on: T,
  duration_seconds: 93,
  url: `${WEB}/acme/api/pipelines/results/42`,
};
const page = (vals: unknown[], extra: Json = {}) => ({ pagelen: 10, page: 1, values: vals, ...extra });
const R = '/repositories/acme/api';
const A = { workspace: 'acme', repo_slug: 'api' };
const NO_CONTENT: UpstreamReply = { status: 204 };
const DIFF = 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n';
const PNG = '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR';

interface Case {
  name?: string;
  tool: string;
  args: Json;
  replies: Record<string, RouteReply>;
  calls: Call[];
  result: unknown;
}

const NEXT_REPOS = `${API}/repositories/acme?q=name+%7E+%22pay%22&sort=-updated_on&pagelen=2&page=2`;
const CASES: Case[] = [
  {
    tool: 'bitbucket_get_current_user',
    args: {},
    replies: { 'GET /user': { json: { ...ME, created_on: T, has_2fa_enabled: null } } },
    calls: [['GET', '/user']],
    result: {
      display_name: 'Me Myself',
      nickname: 'me',
      account_id: ME_ID,
      uuid: ME_UUID,
      created_on: T,
      url: `${WEB}/%7B11111111-1111-4111-8111-111111111111%7D/`,
    },
  },
  {
    tool: 'bitbucket_list_workspaces',
    args: {},
    replies: {
      'GET /user/workspaces': {
        json: page(
          [
            {
              type: 'workspace_access',
              administrator: true,
              workspace: {
                type: 'workspace',
                slug: 'acme',
                name: 'Acme Inc',
                uuid: '{55555555-5555-4555-8555-555555555555}',
                links: { html: { href: `${WEB}/acme/` }, avatar: { href: 'NOISE' } },
              },
            },
            {
              type: 'workspace',
              slug: 'me',
              name: 'Me',
              uuid: '{66666666-6666-4666-8666-666666666666}',
              links: { avatar: { href: 'NOISE' } },
            },
          ],
          { next: `${API}/user/workspaces?pagelen=50&page=2` },
        ),
      },
    },
    calls: [['GET', '/user/workspaces', { pagelen: '50' }]],
    result: {
      workspaces: [
        {
          slug: 'acme',
          name: 'Acme Inc',
          uuid: '{55555555-5555-4555-8555-555555555555}',
          url: `${WEB}/acme/`,
          administrator: true,
        },
        { slug: 'me', name: 'Me', uuid: '{66666666-6666-4666-8666-666666666666}', url: `${WEB}/me/` },
      ],
      next: b64url('pagelen=50&page=2'),
    },
  },
  {
    tool: 'bitbucket_list_repositories',
    args: { workspace: 'acme', name: 'pay', pagelen: 2 },
    replies: { 'GET /repositories/acme': { json: page([REPO], { size: 3, next: NEXT_REPOS }) } },
    calls: [['GET', '/repositories/acme', { q: 'name ~ "pay"', sort: '-updated_on', pagelen: '2' }]],
    result: {
      repositories: [SLIM_REPO],
      total: 3,
      next: b64url('q=name+%7E+%22pay%22&sort=-updated_on&pagelen=2&page=2'),
    },
  },
  {
    name: 'bitbucket_list_repositories (quoting, project, raw query, role)',
    tool: 'bitbucket_list_repositories',
    args: {
      workspace: 'acme',
      name: 'say "hi" \\ o/',
      project_key: 'CORE',
      query: 'language = "go" OR is_private = true',
      role: 'contributor',
      sort: 'name',
    },
    replies: { 'GET /repositories/acme': { json: page([]) } },
    calls: [
      [
        'GET',
        '/repositories/acme',
        {
          q: 'name ~ "say \\"hi\\" \\\\ o/" AND project.key = "CORE" AND (language = "go" OR is_private = true)',
          sort: 'name',
          role: 'contributor',
          pagelen: '25',
        },
      ],
    ],
    result: { repositories: [], total: null, next: null },
  },
  {
    name: 'bitbucket_list_repositories (next page from the cursor)',
    tool: 'bitbucket_list_repositories',
    args: {
      workspace: 'acme',
      name: 'ignored',
      cursor: b64url('q=name+%7E+%22pay%22&sort=-updated_on&pagelen=2&page=2'),
    },
    replies: { 'GET /repositories/acme': { json: page([REPO], { size: 3, page: 2 }) } },
    calls: [['GET', '/repositories/acme', { q: 'name ~ "pay"', sort: '-updated_on', pagelen: '2', page: '2' }]],
    result: { repositories: [SLIM_REPO], total: 3, next: null },
  },
  {
    tool: 'bitbucket_get_repository',
    args: A,
    replies: { [`GET ${R}`]: { json: { ...REPO, parent: { full_name: 'upstream/api' } } } },
    calls: [['GET', R]],
    result: {
      ...SLIM_REPO,
      uuid: '{33333333-3333-4333-8333-333333333333}',
      size: 2048,
      fork_of: 'upstream/api',
      has_issues: false,
      website: null,
      created_on: '2024-01-01T00:00:00+00:00',
      clone: { https: 'https://bitbucket.org/acme/api.git', ssh: 'git@bitbucket.org:acme/api.git' },
    },
  },
  {
    tool: 'bitbucket_list_pull_requests',
    args: {
      ...A,
      state: ['OPEN', 'MERGED'],
      source_branch: 'feature/login',
      destination_branch: 'main',
      query: 'author.account_id = "x"',
      pagelen: 5,
    },
    replies: {
      [`GET ${R}/pullrequests`]: {
        json: page([PR], { next: `${API}${R}/pullrequests?state=OPEN&state=MERGED&pagelen=5&page=Zm9v` }),
      },
    },
    calls: [
      [
        'GET',
        `${R}/pullrequests`,
        {
          state: ['OPEN', 'MERGED'],
          q: 'source.branch.name = "feature/login" AND destination.branch.name = "main" AND (author.account_id = "x")',
          sort: '-updated_on',
          pagelen: '5',
        },
      ],
    ],
    result: { pull_requests: [SLIM_PR], next: b64url('state=OPEN&state=MERGED&pagelen=5&page=Zm9v') },
  },
  {
    name: 'bitbucket_list_pull_requests (defaults)',
    tool: 'bitbucket_list_pull_requests',
    args: A,
    replies: { [`GET ${R}/pullrequests`]: { json: page([]) } },
    calls: [['GET', `${R}/pullrequests`, { state: 'OPEN', sort: '-updated_on', pagelen: '25' }]],
    result: { pull_requests: [], next: null },
  },
  {
    tool: 'bitbucket_get_pull_request',
    args: { ...A, pull_request_id: 7 },
    replies: { [`GET ${R}/pullrequests/7`]: { json: PR } },
    calls: [['GET', `${R}/pullrequests/7`]],
    result: DETAIL_PR,
  },
  {
    tool: 'bitbucket_create_pull_request',
    args: {
      ...A,
      title: 'Fix login',
      source_branch: 'feature/login',
      destination_branch: 'main',
      description: 'Fixes it',
      reviewers: ['ana', BEN_ID, ME_UUID],
      close_source_branch: true,
      draft: true,
    },
    replies: {
      'GET /workspaces/acme/members': {
        json: page([
          { type: 'workspace_membership', user: ME, workspace: { slug: 'acme' } },
          { type: 'workspace_membership', user: ANA, workspace: { slug: 'acme' } },
        ]),
      },
      'GET /user': { json: ME },
      [`POST ${R}/pullrequests`]: {
        status: 201,
        json: {
          ...PR,
          draft: true,
          reviewers: [ANA, user('{77777777-7777-4777-8777-777777777777}', BEN_ID, 'ben', 'Ben')],
        },
      },
    },
    calls: [
      ['GET', '/workspaces/acme/members', { pagelen: '100' }],
      ['GET', '/user'],
      [
        'POST',
        `${R}/pullrequests`,
        {
          title: 'Fix login',
          source: { branch: { name: 'feature/login' } },
          destination: { branch: { name: 'main' } },
          description: 'Fixes it',
          close_source_branch: true,
          draft: true,
          reviewers: [{ account_id: BEN_ID }, { uuid: ANA_UUID }],
        },
      ],
    ],
    result: {
      ...SLIM_PR,
      draft: true,
      reviewers: ['Ana Lopes', 'Ben'],
      reviewers_skipped: [ME_UUID],
      note: 'You are the author, and an author cannot review their own pull request on Bitbucket: left out of the reviewers.',
    },
  },
  {
    name: 'bitbucket_create_pull_request (no reviewers: no look-ups, main branch by default)',
    tool: 'bitbucket_create_pull_request',
    args: { ...A, title: 'Fix login', source_branch: 'feature/login' },
    replies: { [`POST ${R}/pullrequests`]: { status: 201, json: { ...PR, reviewers: [] } } },
    calls: [
      [
        'POST',
        `${R}/pullrequests`,
        { title: 'Fix login', source: { branch: { name: 'feature/login' } }, close_source_branch: false },
      ],
    ],
    result: { ...SLIM_PR, reviewers: [] },
  },
  {
    tool: 'bitbucket_update_pull_request',
    args: { ...A, pull_request_id: 7, description: '' },
    replies: {
      [`GET ${R}/pullrequests/7`]: { json: PR },
      [`PUT ${R}/pullrequests/7`]: { json: { ...PR, description: '' } },
    },
    calls: [
      ['GET', `${R}/pullrequests/7`],
      ['PUT', `${R}/pullrequests/7`, { title: 'Fix login', description: '', reviewers: [{ uuid: ANA_UUID }] }],
    ],
    result: { ...SLIM_PR, updated: ['description'], reviewers: ['Ana Lopes'] },
  },
  {
    name: 'bitbucket_update_pull_request (title, reviewers without the author, retarget)',
    tool: 'bitbucket_update_pull_request',
    args: {
      ...A,
      pull_request_id: 7,
      title: 'Fix login v2',
      reviewers: [ME_ID, BEN_ID],
      destination_branch: 'release/1.2',
    },
    replies: {
      [`GET ${R}/pullrequests/7`]: { json: PR },
      [`PUT ${R}/pullrequests/7`]: { json: { ...PR, title: 'Fix login v2', reviewers: [] } },
    },
    calls: [
      ['GET', `${R}/pullrequests/7`],
      [
        'PUT',
        `${R}/pullrequests/7`,
        {
          title: 'Fix login v2',
          destination: { branch: { name: 'release/1.2' } },
          reviewers: [{ account_id: BEN_ID }],
        },
      ],
    ],
    result: {
      ...SLIM_PR,
      title: 'Fix login v2',
      updated: ['title', 'reviewers', 'destination_branch'],
      reviewers: [],
      reviewers_skipped: [ME_ID],
      note: 'The pull request author cannot review it on Bitbucket: left out of the reviewers.',
    },
  },
  {
    tool: 'bitbucket_approve_pull_request',
    args: { ...A, pull_request_id: 7 },
    replies: {
      [`POST ${R}/pullrequests/7/approve`]: {
        json: { type: 'participant', user: ME, role: 'REVIEWER', approved: true, state: 'approved' },
      },
    },
    calls: [['POST', `${R}/pullrequests/7/approve`]],
    result: { id: 7, approved: true, state: 'approved' },
  },
  {
    name: 'bitbucket_approve_pull_request (unapprove)',
    tool: 'bitbucket_approve_pull_request',
    args: { ...A, pull_request_id: 7, action: 'unapprove' },
    replies: { [`DELETE ${R}/pullrequests/7/approve`]: NO_CONTENT },
    calls: [['DELETE', `${R}/pullrequests/7/approve`]],
    result: { id: 7, approved: false, state: null },
  },
  {
    tool: 'bitbucket_decline_pull_request',
    args: { ...A, pull_request_id: 7 },
    replies: { [`POST ${R}/pullrequests/7/decline`]: { json: { ...PR, state: 'DECLINED', closed_by: ME } } },
    calls: [['POST', `${R}/pullrequests/7/decline`]],
    result: { ...SLIM_PR, state: 'DECLINED', reason: null },
  },
  {
    tool: 'bitbucket_merge_pull_request',
    args: { ...A, pull_request_id: 7, merge_strategy: 'squash', message: 'Fix login (#7)', close_source_branch: false },
    replies: {
      [`POST ${R}/pullrequests/7/merge`]: {
        json: { ...PR, state: 'MERGED', merge_commit: { hash: 'feedface1234', type: 'commit' } },
      },
    },
    calls: [
      [
        'POST',
        `${R}/pullrequests/7/merge`,
        { merge_strategy: 'squash', message: 'Fix login (#7)', close_source_branch: false },
      ],
    ],
    result: { ...SLIM_PR, state: 'MERGED', merged: true, merge_commit: 'feedface1234' },
  },
  {
    name: 'bitbucket_merge_pull_request (still running: 202)',
    tool: 'bitbucket_merge_pull_request',
    args: { ...A, pull_request_id: 7 },
    replies: {
      [`POST ${R}/pullrequests/7/merge`]: {
        status: 202,
        headers: { location: `${API}${R}/pullrequests/7/merge/task-status/abc` },
      },
    },
    calls: [['POST', `${R}/pullrequests/7/merge`, {}]],
    result: {
      id: 7,
      merged: false,
      pending: true,
      note: 'Bitbucket is merging in the background: check bitbucket_get_pull_request in a moment for the MERGED state.',
    },
  },
  {
    tool: 'bitbucket_get_pull_request_diff',
    args: { ...A, pull_request_id: 7 },
    replies: { [`GET ${R}/pullrequests/7/diff`]: { headers: { 'content-type': 'text/plain' }, body: DIFF } },
    calls: [['GET', `${R}/pullrequests/7/diff`]],
    result: { id: 7, total_chars: DIFF.length, offset: 0, content: DIFF, next_offset: null },
  },
  {
    name: 'bitbucket_get_pull_request_diff (a large diff is cut, with a note)',
    tool: 'bitbucket_get_pull_request_diff',
    args: { ...A, pull_request_id: 7, max_chars: 1000, offset: 500 },
    replies: {
      [`GET ${R}/pullrequests/7/diff`]: { headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(3000) },
    },
    calls: [['GET', `${R}/pullrequests/7/diff`]],
    result: {
      id: 7,
      total_chars: 3000,
      offset: 500,
      content: 'x'.repeat(1000),
      next_offset: 1500,
      note: 'Cut at 1000 characters of 3000: call again with offset 1500 for the rest.',
    },
  },
  {
    tool: 'bitbucket_list_pull_request_comments',
    args: { ...A, pull_request_id: 7 },
    replies: {
      [`GET ${R}/pullrequests/7/comments`]: {
        json: page([
          COMMENT,
          { ...COMMENT, id: 102, deleted: true, inline: undefined, parent: undefined, content: { raw: 'gone' } },
        ]),
      },
    },
    calls: [['GET', `${R}/pullrequests/7/comments`, { pagelen: '50', sort: 'created_on' }]],
    result: {
      id: 7,
      comments: [
        SLIM_COMMENT,
        { ...SLIM_COMMENT, id: 102, content: null, deleted: true, inline: null, parent_id: null },
      ],
      next: null,
    },
  },
  {
    tool: 'bitbucket_add_pull_request_comment',
    args: { ...A, pull_request_id: 7, content: 'Why this?', path: 'src/login.py', line: 12, parent_id: 100 },
    replies: { [`POST ${R}/pullrequests/7/comments`]: { status: 201, json: COMMENT } },
    calls: [
      [
        'POST',
        `${R}/pullrequests/7/comments`,
        { content: { raw: 'Why this?' }, inline: { path: 'src/login.py', to: 12 }, parent: { id: 100 } },
      ],
    ],
    result: SLIM_COMMENT,
  },
  {
    name: 'bitbucket_add_pull_request_comment (general)',
    tool: 'bitbucket_add_pull_request_comment',
    args: { ...A, pull_request_id: 7, content: 'LGTM' },
    replies: {
      [`POST ${R}/pullrequests/7/comments`]: {
        status: 201,
        json: { ...COMMENT, content: { raw: 'LGTM' }, inline: undefined, parent: undefined },
      },
    },
    calls: [['POST', `${R}/pullrequests/7/comments`, { content: { raw: 'LGTM' } }]],
    result: { ...SLIM_COMMENT, content: 'LGTM', inline: null, parent_id: null },
  },
  {
    tool: 'bitbucket_list_branches',
    args: { ...A, name: 'feat' },
    replies: {
      [`GET ${R}/refs/branches`]: {
        json: page([
          {
            type: 'branch',
            name: 'feature/login',
            target: COMMIT,
            links: { html: { href: `${WEB}/acme/api/branch/feature/login` } },
            merge_strategies: ['NOISE'],
          },
        ]),
      },
    },
    calls: [['GET', `${R}/refs/branches`, { q: 'name ~ "feat"', sort: '-target.date', pagelen: '25' }]],
    result: {
      branches: [
        {
          name: 'feature/login',
          commit: 'abc123def4567890',
          date: T,
          author: 'Ana Lopes',
          message: 'Fix login',
          url: `${WEB}/acme/api/branch/feature/login`,
        },
      ],
      next: null,
    },
  },
  {
    tool: 'bitbucket_list_commits',
    args: { ...A, branch: 'feature/login', path: 'src/login.py', pagelen: 1 },
    replies: {
      [`GET ${R}/commits`]: {
        json: {
          pagelen: 1,
          values: [
            COMMIT,
            { ...COMMIT, hash: 'ff', author: { raw: 'Robot <ci@example.com>' }, message: 'y'.repeat(600) },
          ],
          next: `${API}${R}/commits?include=feature%2Flogin&path=src%2Flogin.py&pagelen=1&page=abc`,
        },
      },
    },
    calls: [['GET', `${R}/commits`, { include: 'feature/login', path: 'src/login.py', pagelen: '1' }]],
    result: {
      commits: [
        SLIM_COMMIT,
        {
          ...SLIM_COMMIT,
          hash: 'ff',
          author: 'Robot',
          message: `${'y'.repeat(500)}… [truncated, 100 more characters]`,
        },
      ],
      next: b64url('include=feature%2Flogin&path=src%2Flogin.py&pagelen=1&page=abc'),
    },
  },
  {
    tool: 'bitbucket_get_file_content',
    args: { ...A, path: 'src/login.py', ref: 'v1.2' },
    replies: {
      [`GET ${R}/src/v1.2/src/login.py`]: {
        headers: { 'content-type': 'text/x-python' },
        body: '\uFEFFprint("héllo")\n',
      },
    },
    calls: [['GET', `${R}/src/v1.2/src/login.py`, { pagelen: '100' }]],
    result: {
      path: 'src/login.py',
      ref: 'v1.2',
      type: 'file',
      total_chars: 16,
      offset: 0,
      content: '\uFEFFprint("héllo")\n',
      next_offset: null,
    },
  },
  {
    name: 'bitbucket_get_file_content (main branch, folder: 100 entries a page, a cursor for more)',
    tool: 'bitbucket_get_file_content',
    args: A,
    replies: {
      [`GET ${R}`]: { json: REPO },
      [`GET ${R}/src/main/`]: {
        json: page(
          [
            { type: 'commit_directory', path: 'src', links: NOISE.links },
            { type: 'commit_file', path: 'README.md', size: 120, mimetype: null, attributes: [] },
          ],
          { pagelen: 100, next: `${API}${R}/src/0f0f0f0f/?pagelen=100&page=2` },
        ),
      },
    },
    calls: [
      ['GET', R],
      ['GET', `${R}/src/main/`, { pagelen: '100' }],
    ],
    result: {
      path: '',
      ref: 'main',
      type: 'directory',
      entries: [
        { path: 'src', type: 'dir', size: null },
        { path: 'README.md', type: 'file', size: 120 },
      ],
      next: b64url('pagelen=100&page=2'),
      note: 'The folder has more entries: call again with the same path and ref and `next` as cursor.',
    },
  },
  {
    name: 'bitbucket_get_file_content (folder, the next page from the cursor)',
    tool: 'bitbucket_get_file_content',
    args: { ...A, path: 'src/', ref: 'main', cursor: b64url('pagelen=100&page=2') },
    replies: {
      [`GET ${R}/src/main/src`]: {
        json: page([{ type: 'commit_file', path: 'src/z.py', size: 9 }], { page: 2, pagelen: 100 }),
      },
    },
    calls: [['GET', `${R}/src/main/src`, { pagelen: '100', page: '2' }]],
    result: {
      path: 'src/',
      ref: 'main',
      type: 'directory',
      entries: [{ path: 'src/z.py', type: 'file', size: 9 }],
      next: null,
    },
  },
  {
    name: 'bitbucket_get_file_content (a branch with "/" is read at its head commit)',
    tool: 'bitbucket_get_file_content',
    args: { ...A, path: 'docs/a b.md', ref: 'feature/login' },
    replies: {
      [`GET ${R}/refs/branches/feature%2Flogin`]: { json: { name: 'feature/login', target: COMMIT } },
      [`GET ${R}/src/abc123def4567890/docs/a%20b.md`]: { headers: { 'content-type': 'text/markdown' }, body: '# A' },
    },
    calls: [
      ['GET', `${R}/refs/branches/feature%2Flogin`],
      ['GET', `${R}/src/abc123def4567890/docs/a%20b.md`, { pagelen: '100' }],
    ],
    result: {
      path: 'docs/a b.md',
      ref: 'feature/login',
      type: 'file',
      total_chars: 3,
      offset: 0,
      content: '# A',
      next_offset: null,
    },
  },
  {
    name: 'bitbucket_get_file_content (binary)',
    tool: 'bitbucket_get_file_content',
    args: { ...A, path: 'logo.png', ref: 'main' },
    replies: { [`GET ${R}/src/main/logo.png`]: { headers: { 'content-type': 'image/png' }, body: PNG } },
    calls: [['GET', `${R}/src/main/logo.png`, { pagelen: '100' }]],
    result: {
      path: 'logo.png',
      ref: 'main',
      type: 'file',
      binary: true,
      size: Buffer.byteLength(PNG),
      content: null,
      note: 'This is a binary file: its content is not returned as text.',
    },
  },
  {
    tool: 'bitbucket_list_pipelines',
    args: { ...A, pagelen: 1 },
    replies: { [`GET ${R}/pipelines`]: { json: { page: 1, pagelen: 1, size: 3, values: [PIPELINE] } } },
    calls: [['GET', `${R}/pipelines`, { sort: '-created_on', pagelen: '1' }]],
    result: { pipelines: [SLIM_PIPELINE], total: 3, next: b64url('sort=-created_on&pagelen=1&page=2') },
  },
  {
    name: 'bitbucket_list_pipelines (last page)',
    tool: 'bitbucket_list_pipelines',
    args: { ...A, cursor: b64url('sort=-created_on&pagelen=1&page=3') },
    replies: {
      [`GET ${R}/pipelines`]: {
        json: {
          page: 3,
          pagelen: 1,
          size: 3,
          values: [
            {
              ...PIPELINE,
              state: { name: 'IN_PROGRESS', stage: { name: 'RUNNING' } },
              target: { ref_type: 'branch', ref_name: 'dev', commit: { hash: 'dd' } },
              completed_on: undefined,
              duration_in_seconds: undefined,
            },
          ],
        },
      },
    },
    calls: [['GET', `${R}/pipelines`, { sort: '-created_on', pagelen: '1', page: '3' }]],
    result: {
      pipelines: [
        {
          ...SLIM_PIPELINE,
          state: 'IN_PROGRESS',
          result: 'RUNNING',
          ref_name: 'dev',
          pipeline: null,
          commit: 'dd',
          completed_on: null,
          duration_seconds: null,
        },
      ],
      total: 3,
      next: null,
    },
  },
  {
    tool: 'bitbucket_trigger_pipeline',
    args: {
      ...A,
      branch: 'main',
      custom_pipeline: 'deploy',
      variables: [
        { key: 'ENV', value: 'staging' },
        { key: 'TOKEN_X', value: 's3cr3t', secured: true },
      ],
    },
    replies: {
      [`POST ${R}/pipelines/`]: {
        status: 201,
        json: {
          ...PIPELINE,
          state: { name: 'PENDING', type: 'pipeline_state_pending' },
          completed_on: undefined,
          duration_in_seconds: undefined,
        },
      },
    },
    calls: [
      [
        'POST',
        `${R}/pipelines/`,
        {
          target: {
            type: 'pipeline_ref_target',
            ref_type: 'branch',
            ref_name: 'main',
            selector: { type: 'custom', pattern: 'deploy' },
          },
          variables: [
            { key: 'ENV', value: 'staging', secured: false },
            { key: 'TOKEN_X', value: 's3cr3t', secured: true },
          ],
        },
      ],
    ],
    result: { ...SLIM_PIPELINE, state: 'PENDING', result: null, completed_on: null, duration_seconds: null },
  },

  {
    tool: 'bitbucket_request_changes',
    args: { ...A, pull_request_id: 7, comment: 'Please add tests.' },
    replies: {
      [`POST ${R}/pullrequests/7/request-changes`]: {
        json: {
          type: 'participant',
          user: ME,
          role: 'REVIEWER',
          approved: false,
          state: 'changes_requested',
          participated_on: T,
        },
      },
      [`POST ${R}/pullrequests/7/comments`]: { status: 201, json: { ...COMMENT, id: 901 } },
    },
    calls: [
      ['POST', `${R}/pullrequests/7/request-changes`],
      ['POST', `${R}/pullrequests/7/comments`, { content: { raw: 'Please add tests.' } }],
    ],
    result: { id: 7, changes_requested: true, state: 'changes_requested', comment_id: 901 },
  },
  {
    name: 'bitbucket_request_changes (withdraw)',
    tool: 'bitbucket_request_changes',
    args: { ...A, pull_request_id: 7, action: 'withdraw' },
    replies: { [`DELETE ${R}/pullrequests/7/request-changes`]: NO_CONTENT },
    calls: [['DELETE', `${R}/pullrequests/7/request-changes`]],
    result: { id: 7, changes_requested: false, state: null },
  },
  {
    tool: 'bitbucket_list_pull_request_commits',
    args: { ...A, pull_request_id: 7, pagelen: 2 },
    replies: {
      [`GET ${R}/pullrequests/7/commits`]: {
        json: page([COMMIT], { pagelen: 2, next: `${API}${R}/pullrequests/7/commits?pagelen=2&page=2` }),
      },
    },
    calls: [['GET', `${R}/pullrequests/7/commits`, { pagelen: '2' }]],
    result: { id: 7, commits: [SLIM_COMMIT], next: b64url('pagelen=2&page=2') },
  },
  {
    tool: 'bitbucket_list_default_reviewers',
    args: A,
    replies: {
      [`GET ${R}/effective-default-reviewers`]: {
        json: page([
          { type: 'default_reviewer_and_type', reviewer_type: 'project', user: ANA },
          { type: 'default_reviewer_and_type', reviewer_type: 'repository', user: ME },
        ]),
      },
    },
    calls: [['GET', `${R}/effective-default-reviewers`, { pagelen: '50' }]],
    result: {
      reviewers: [
        { display_name: 'Ana Lopes', nickname: 'ana', account_id: ANA_ID, uuid: ANA_UUID, from: 'project' },
        { display_name: 'Me Myself', nickname: 'me', account_id: ME_ID, uuid: ME_UUID, from: 'repository' },
      ],
      next: null,
    },
  },
  {
    tool: 'bitbucket_stop_pipeline',
    args: { ...A, pipeline_uuid: '44444444-4444-4444-8444-444444444444' },
    replies: {
      [`POST ${R}/pipelines/%7B44444444-4444-4444-8444-444444444444%7D/stopPipeline`]: NO_CONTENT,
      [`GET ${R}/pipelines/%7B44444444-4444-4444-8444-444444444444%7D`]: {
        json: { ...PIPELINE, state: { name: 'COMPLETED', result: { name: 'STOPPED' } } },
      },
    },
    calls: [
      ['POST', `${R}/pipelines/%7B44444444-4444-4444-8444-444444444444%7D/stopPipeline`],
      ['GET', `${R}/pipelines/%7B44444444-4444-4444-8444-444444444444%7D`],
    ],
    result: { ...SLIM_PIPELINE, state: 'COMPLETED', result: 'STOPPED', stop_requested: true },
  },
  {
    tool: 'bitbucket_search_workspace_members',
    args: { workspace: 'acme', query: 'LOP' },
    replies: {
      'GET /workspaces/acme/members': (req) =>
        req.query.get('page') === '2'
          ? { json: page([{ type: 'workspace_membership', user: ANA, workspace: NOISE }], { page: 2 }) }
          : {
              json: page([{ type: 'workspace_membership', user: ME, workspace: NOISE }], {
                pagelen: 100,
                next: `${API}/workspaces/acme/members?pagelen=100&page=2`,
              }),
            },
    },
    calls: [
      ['GET', '/workspaces/acme/members', { pagelen: '100' }],
      ['GET', '/workspaces/acme/members', { pagelen: '100', page: '2' }],
    ],
    result: {
      workspace: 'acme',
      members: [{ display_name: 'Ana Lopes', nickname: 'ana', account_id: ANA_ID, uuid: ANA_UUID }],
      next: null,
    },
  },
  {
    tool: 'bitbucket_get_clone_url',
    args: A,
    replies: { [`GET ${R}`]: { json: REPO } },
    calls: [['GET', R]],
    result: {
      repository: 'acme/api',
      https: 'https://bitbucket.org/acme/api.git',
      ssh: 'git@bitbucket.org:acme/api.git',
      main_branch: 'main',
      private: true,
      authenticate: {
        https:
          'Git asks for a username and password: use your Bitbucket username and an API token (or app password) with repository read (write to push) permission as the password, or a credential helper. This gateway never hands out its own token.',
        ssh: 'Use an SSH key added to your Bitbucket account (Personal settings > SSH keys) or as a repository access key.',
      },
    },
  },
];

describe('atlassian-bitbucket tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls);
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('atlassian-bitbucket')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });
});

describe('atlassian-bitbucket paging', () => {
  test('a `next` URL on another host (or scheme) gives no cursor, and a cursor forged from it is refused before any request', async () => {
    for (const next of [
      'https://evil.example/2.0/repositories/acme?page=2',
      'http://api.bitbucket.org/2.0/repositories/acme?page=2',
      'https://api.bitbucket.org.evil.example/2.0/x?page=2',
    ]) {
      route({ 'GET /repositories/acme': { json: page([], { next }) } });
      const r = await ok('bitbucket_list_repositories', { workspace: 'acme' });
      assert.equal(r.next, null, next);
      assert.equal(upstream.requests.length, 1);
      // the only way to page on is a cursor; one carrying the whole URL (or its host) is not a query
      for (const forged of [next, next.replace(/\?.*$/, ''), `page=2&x=${next}`]) {
        route({ 'GET /repositories/acme': { json: page([]) } });
        await fails(
          'bitbucket_list_repositories',
          { workspace: 'acme', cursor: b64url(forged) },
          /is not a `next` value of an earlier result/,
        );
        assert.equal(upstream.requests.length, 0, forged);
      }
    }
  });

  test('a `next` link with a raw "/" in its query (path=src/) gives a cursor that the next call takes', async () => {
    route({
      [`GET ${R}/commits`]: {
        json: page([COMMIT], { next: `${API}${R}/commits?path=src/&include=feature/login&pagelen=1&page=abc` }),
      },
    });
    const first = await ok('bitbucket_list_commits', { ...A, path: 'src/', branch: 'feature/login', pagelen: 1 });
    assert.equal(first.next, b64url('path=src%2F&include=feature%2Flogin&pagelen=1&page=abc'));
    route({ [`GET ${R}/commits`]: { json: page([COMMIT]) } });
    const second = await ok('bitbucket_list_commits', { ...A, cursor: first.next });
    assert.deepEqual(second, { commits: [SLIM_COMMIT], next: null });
    assertCalls([['GET', `${R}/commits`, { path: 'src/', include: 'feature/login', pagelen: '1', page: 'abc' }]]);
  });

  test('a cursor that is not a `next` value is refused before any request', async () => {
    route({});
    await fails(
      'bitbucket_list_pull_requests',
      { ...A, cursor: b64url('page=2#x') },
      /is not a `next` value of an earlier result/,
    );
    await fails(
      'bitbucket_list_pull_requests',
      { ...A, cursor: Buffer.from([0xff, 0xfe]).toString('base64url') },
      /is not a `next` value/,
    );
    await fails(
      'bitbucket_list_pull_requests',
      { ...A, cursor: 'not base64!' },
      /Invalid arguments for bitbucket_list_pull_requests/,
    );
    assert.equal(upstream.requests.length, 0);
  });

  test('nickname look-up follows the members pages and names the ones it cannot find', async () => {
    route({
      'GET /workspaces/acme/members': (req) =>
        req.query.get('page') === '2'
          ? { json: page([{ user: ANA }]) }
          : { json: page([{ user: ME }], { next: `${API}/workspaces/acme/members?pagelen=100&page=2` }) },
    });
    await fails(
      'bitbucket_create_pull_request',
      { ...A, title: 't', source_branch: 'x', reviewers: ['Ana', 'ghost'] },
      /No member of workspace acme has the nickname "ghost": pass their Atlassian account id/,
    );
    assert.deepEqual(
      upstream.requests.map((r) => r.url),
      ['/2.0/workspaces/acme/members?pagelen=100', '/2.0/workspaces/acme/members?pagelen=100&page=2'],
    );
  });
});

describe('atlassian-bitbucket: request changes, stop, members, clone URLs', () => {
  const err = (message: string) => ({ type: 'error', error: { message } });

  test('a comment that fails after the change request is reported with it, not thrown', async () => {
    route({
      [`POST ${R}/pullrequests/7/request-changes`]: { json: { type: 'participant', state: 'changes_requested' } },
      [`POST ${R}/pullrequests/7/comments`]: { status: 403, json: err('No write access') },
    });
    const r = await ok('bitbucket_request_changes', { ...A, pull_request_id: 7, comment: 'x' });
    assert.deepEqual([r.changes_requested, r.comment_id], [true, null]);
    assert.match(r.comment_error, /refused permission to comment on pull request #7 \(403\): No write access/);
  });

  test('a change request on a pull request that is no longer open says how to check', async () => {
    route({ [`POST ${R}/pullrequests/7/request-changes`]: { status: 409, json: err('Pull request is not open') } });
    await fails(
      'bitbucket_request_changes',
      { ...A, pull_request_id: 7 },
      /refused to request changes on pull request #7 \(409\): Pull request is not open\. It may no longer be open.*bitbucket_get_pull_request/,
    );
  });

  test('stopping a pipeline that has finished says so; nothing is read back', async () => {
    const stop = `POST ${R}/pipelines/%7B44444444-4444-4444-8444-444444444444%7D/stopPipeline`;
    route({ [stop]: { status: 400, json: err('Pipeline is already completed') } });
    await fails(
      'bitbucket_stop_pipeline',
      { ...A, pipeline_uuid: '{44444444-4444-4444-8444-444444444444}' },
      /refused to stop pipeline \{44444444-4444-4444-8444-444444444444\} of acme\/api \(400\): Pipeline is already completed\. It may have finished already/,
    );
    assert.equal(upstream.requests.length, 1);
  });

  test('a pipeline uuid that is not a uuid is refused before any request', async () => {
    route({});
    await fails('bitbucket_stop_pipeline', { ...A, pipeline_uuid: '42' }, /pipeline_uuid/);
    assert.equal(upstream.requests.length, 0);
  });

  test('a member search that reads 10 pages without reaching the end says where to go on', async () => {
    route({
      'GET /workspaces/acme/members': (req) => {
        const n = Number(req.query.get('page') ?? 1);
        return {
          json: page([{ user: n === 3 ? ANA : ME }], {
            page: n,
            next: `${API}/workspaces/acme/members?pagelen=100&page=${n + 1}`,
          }),
        };
      },
    });
    const r = await ok('bitbucket_search_workspace_members', { workspace: 'acme', query: 'ana' });
    assert.equal(upstream.requests.length, 10);
    assert.deepEqual(
      r.members.map((m: Json) => m['nickname']),
      ['ana'],
    );
    assert.equal(r.next, b64url('pagelen=100&page=11'));
    const again = await ok('bitbucket_search_workspace_members', { workspace: 'acme', query: 'ana', cursor: r.next });
    assert.equal(upstream.requests[10]!.url, '/2.0/workspaces/acme/members?pagelen=100&page=11');
    assert.deepEqual(again.members, []);
  });

  test('clone URLs never carry a credential: a user:secret part is dropped, the token never appears', async () => {
    const leaky = {
      ...REPO,
      links: {
        clone: [
          { name: 'https', href: 'https://x-token-auth:OTHER-SECRET@bitbucket.org/acme/api.git' },
          { name: 'ssh', href: 'git@bitbucket.org:acme/api.git' },
        ],
      },
    };
    for (const tool of ['bitbucket_get_clone_url', 'bitbucket_get_repository']) {
      route({ [`GET ${R}`]: { json: leaky } });
      const item = await gw.execute(tool, A);
      const text = JSON.stringify(item);
      assert.ok('result' in item, text);
      assert.ok(!text.includes('SECRET') && !text.includes(TOKEN), `${tool}: ${text}`);
      assert.match(text, /"https:\/\/bitbucket\.org\/acme\/api\.git"/);
    }
  });
});

describe('atlassian-bitbucket error mapping', () => {
  const err = (message: string, extra: Json = {}) => ({ type: 'error', error: { message, ...extra } });
  const cases: Array<[string, string, Json, string, UpstreamReply, RegExp]> = [
    [
      '401 token rejected',
      'bitbucket_get_current_user',
      {},
      'GET /user',
      { status: 401, json: err('Access token expired.') },
      /rejected the access token \(401\) while trying to read your Bitbucket account: reconnect atlassian-bitbucket\. Bitbucket said: Access token expired\./,
    ],
    [
      '403 missing scope (detail.required)',
      'bitbucket_merge_pull_request',
      { ...A, pull_request_id: 7 },
      `POST ${R}/pullrequests/7/merge`,
      {
        status: 403,
        json: err('Your credentials lack one or more required privilege scopes.', {
          detail: { required: ['pullrequest:write'], granted: ['account', 'pullrequest'] },
        }),
      },
      /lacks the OAuth scope needed to merge pull request #7 \(403; needs pullrequest:write\) \(the token has: account, pullrequest\): the operator must grant that permission on the Bitbucket OAuth consumer, then reconnect/,
    ],
    [
      '403 permission',
      'bitbucket_decline_pull_request',
      { ...A, pull_request_id: 7 },
      `POST ${R}/pullrequests/7/decline`,
      { status: 403, json: err('You do not have write access to this repository.') },
      /refused permission to decline pull request #7 \(403\): You do not have write access to this repository\./,
    ],
    [
      '404 not found',
      'bitbucket_get_repository',
      A,
      `GET ${R}`,
      { status: 404, json: err('Repository acme/api not found') },
      /found nothing while trying to read repository acme\/api \(404\).*Bitbucket said: Repository acme\/api not found/,
    ],
    [
      '400 with field errors',
      'bitbucket_create_pull_request',
      { ...A, title: 't', source_branch: 'nope' },
      `POST ${R}/pullrequests`,
      { status: 400, json: err('Bad request', { fields: { source: ['Branch not found: nope'] } }) },
      /refused to create a pull request from nope in acme\/api \(400\): Bad request — source: Branch not found: nope\./,
    ],
    [
      '400 merge blocked',
      'bitbucket_merge_pull_request',
      { ...A, pull_request_id: 7 },
      `POST ${R}/pullrequests/7/merge`,
      { status: 400, json: err('Merge checks failed', { detail: 'You need 2 approvals' }) },
      /refused to merge pull request #7 \(400\): Merge checks failed — You need 2 approvals\. Merge checks, unresolved tasks/,
    ],
    [
      '409 merge conflict',
      'bitbucket_merge_pull_request',
      { ...A, pull_request_id: 7 },
      `POST ${R}/pullrequests/7/merge`,
      { status: 409, json: err('Unable to merge: the source branch changed') },
      /refused to merge pull request #7 \(409\): Unable to merge: the source branch changed\. The pull request or a branch changed while merging/,
    ],
    [
      '555 merge timed out',
      'bitbucket_merge_pull_request',
      { ...A, pull_request_id: 7 },
      `POST ${R}/pullrequests/7/merge`,
      { status: 555, json: err('Timeout') },
      /timed out \(555\) while trying to merge pull request #7\. The merge may still finish in the background: check bitbucket_get_pull_request/,
    ],
    [
      '429 rate limit',
      'bitbucket_list_branches',
      A,
      `GET ${R}/refs/branches`,
      { status: 429, headers: { 'retry-after': '30' }, body: 'Rate limit' },
      /rate limited the request to list the branches of acme\/api \(429\): retry after 30 seconds/,
    ],
    [
      '429 without retry-after',
      'bitbucket_list_pipelines',
      A,
      `GET ${R}/pipelines`,
      { status: 429, body: '' },
      /\(429\): wait a minute and retry/,
    ],
    [
      '500 server error (HTML body)',
      'bitbucket_list_commits',
      A,
      `GET ${R}/commits`,
      { status: 502, body: '<html><body>Bad gateway</body></html>' },
      /server error \(502\) while trying to list the commits of acme\/api: retry later\. Bitbucket said: Bad gateway/,
    ],
    [
      '400 pipeline',
      'bitbucket_trigger_pipeline',
      { ...A, branch: 'main', custom_pipeline: 'nope' },
      `POST ${R}/pipelines/`,
      { status: 400, json: err('Not found', { detail: 'Could not find custom pipeline nope' }) },
      /refused to run the custom pipeline "nope" on branch main of acme\/api \(400\): Not found — Could not find custom pipeline nope\. Check that the branch exists/,
    ],
  ];
  for (const [name, tool, args, routeKey, reply, pattern] of cases) {
    test(name, async () => {
      route({ [routeKey]: reply });
      await fails(tool, args, pattern);
    });
  }

  test('argument problems are refused before any request', async () => {
    route({});
    await fails('bitbucket_update_pull_request', { ...A, pull_request_id: 7 }, /Nothing to update/);
    await fails(
      'bitbucket_add_pull_request_comment',
      { ...A, pull_request_id: 7, content: 'x', line: 3 },
      /needs `path`/,
    );
    await fails(
      'bitbucket_add_pull_request_comment',
      { ...A, pull_request_id: 7, content: 'x', path: 'a.py' },
      /needs `line`/,
    );
    await fails(
      'bitbucket_trigger_pipeline',
      {
        ...A,
        branch: 'main',
        variables: [
          { key: 'A', value: '1' },
          { key: 'A', value: '2' },
        ],
      },
      /Variable A is given twice/,
    );
    await fails('bitbucket_get_repository', { workspace: 'acme', repo_slug: '..' }, /Invalid repo_slug/);
    await fails(
      'bitbucket_get_repository',
      { workspace: 'ac/me', repo_slug: 'api' },
      /Invalid arguments for bitbucket_get_repository/,
    );
    await fails('bitbucket_get_pull_request', { ...A, pull_request_id: 0 }, /Invalid arguments/);
    await fails('bitbucket_list_pull_requests', { ...A, state: ['OPEN', 'CLOSED'] }, /Invalid arguments/);
    await fails('bitbucket_list_pull_requests', { ...A, pagelen: 51 }, /Invalid arguments/);
    await fails(
      'bitbucket_merge_pull_request',
      { ...A, pull_request_id: 7, merge_strategy: 'octopus' },
      /Invalid arguments/,
    );
    await fails('bitbucket_list_repositories', { workspace: 'acme', extra: 1 }, /Invalid arguments/);
    assert.equal(upstream.requests.length, 0);
  });

  test('a lone surrogate in a value is sent as U+FFFD', async () => {
    route({ 'GET /repositories/acme': { json: page([]) } });
    await ok('bitbucket_list_repositories', { workspace: 'acme', name: 'web\uD800ops' });
    assert.equal(upstream.requests[0]!.query.get('q'), 'name ~ "web\uFFFDops"');
    assert.match(upstream.requests[0]!.url, /q=name%20~%20%22web%EF%BF%BDops%22/);
  });
});

// ---------- the gateway's own refusals (response cap, timeout) in words, not bare bridge codes ----------
describe('atlassian-bitbucket: an answer over the response cap, or none in time', () => {
  let small: Gateway;
  before(async () => {
    small = await startPluginGateway(
      'atlassian-bitbucket',
      upstream,
      { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 7200 },
      { policy: { http: { maxResponseBytes: 4096, requestTimeoutMs: 200 } } },
    );
  });
  after(async () => small?.close());
  const tooBig: UpstreamReply = { headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(20000) };
  const smallCalls = toolCalls(() => small, [TOKEN]);

  test('a diff over the cap says offset does not help and where to open it', async () => {
    route({ [`GET ${R}/pullrequests/7/diff`]: tooBig });
    await smallCalls.fails(
      'bitbucket_get_pull_request_diff',
      { ...A, pull_request_id: 7 },
      /^Bitbucket's answer is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\) while trying to read the diff of pull request #7: Bitbucket sends the whole diff, so offset and max_chars do not help\. Open it at https:\/\/bitbucket\.org\/acme\/api\/pull-requests\/7\/diff, or read the changed files one at a time/,
    );
  });

  test('a file over the cap says offset does not help and where to open it', async () => {
    route({ [`GET ${R}/src/main/docs/big.txt`]: tooBig });
    await smallCalls.fails(
      'bitbucket_get_file_content',
      { ...A, path: 'docs/big.txt', ref: 'main' },
      /^Bitbucket's answer is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\) while trying to read "docs\/big\.txt" at main: Bitbucket sends the whole file, so offset and max_chars do not help\. Open it at https:\/\/bitbucket\.org\/acme\/api\/src\/main\/docs\/big\.txt\.\s*$/,
    );
  });

  test('a list over the cap says to ask for less', async () => {
    route({ [`GET ${R}/pullrequests`]: { json: page(Array.from({ length: 20 }, () => PR)) } });
    await smallCalls.fails(
      'bitbucket_list_pull_requests',
      A,
      /^Bitbucket's answer is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\) while trying to list .*: ask for less \(a smaller pagelen/,
    );
  });

  test('no answer in time: a read says to try again, a write to check first', async () => {
    const late = (reply: UpstreamReply) => () =>
      new Promise<UpstreamReply>((resolve) => setTimeout(() => resolve(reply), 1000));
    route({
      [`GET ${R}/pullrequests/7`]: late({ json: PR }) as unknown as RouteReply,
      [`POST ${R}/pullrequests/7/approve`]: late({ json: {} }) as unknown as RouteReply,
    });
    await smallCalls.fails(
      'bitbucket_get_pull_request',
      { ...A, pull_request_id: 7 },
      /^Bitbucket did not answer in time \(GW_ERR_BRIDGE_TIMEOUT\) while trying to read pull request #7.*\. Try again in a moment\.\s*$/,
    );
    route({ [`POST ${R}/pullrequests/7/merge`]: late({ json: PR }) as unknown as RouteReply });
    await smallCalls.fails(
      'bitbucket_merge_pull_request',
      { ...A, pull_request_id: 7 },
      /^Bitbucket did not answer in time while merging pull request #7; The merge may still finish in the background/,
    );
    route({ [`POST ${R}/pullrequests/7/approve`]: late({ json: {} }) as unknown as RouteReply });
    await smallCalls.fails(
      'bitbucket_approve_pull_request',
      { ...A, pull_request_id: 7 },
      /^Bitbucket did not answer in time \(GW_ERR_BRIDGE_TIMEOUT\) while trying to .*\. It may still have been done: check before trying again\.\s*$/,
    );
  });
});
