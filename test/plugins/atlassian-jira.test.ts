/**
 * @module test/plugins/atlassian-jira.test
 * Every Jira tool runs through the real gateway and sandbox against a loopback stand-in for
 * api.atlassian.com (reached through the policy's origin mapping): the cloud-id resolution, the
 * request each tool makes (method, /ex/jira/{cloudId}/rest/api/3 path, query, JSON body, Bearer
 * token) and its slim result come from one table; then site selection, the error mappings, and a
 * lone surrogate in a query or path value (sent as U+FFFD, not a failure).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { RecordedRequest, Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'jira-access-token-0123456789';
const RESOURCES = '/oauth/token/accessible-resources';
const BASE = '/ex/jira/cloud-beta/rest/api/3';
/** the Jira Software (Agile) API's base, where boards are */
const AGILE = '/ex/jira/cloud-beta/rest/agile/1.0';
const SITE = 'https://beta.atlassian.net';
const JIRA_SCOPES = ['read:jira-work', 'write:jira-work', 'read:jira-user'];
const SITES = [
  { id: 'cloud-wiki', url: 'https://wiki.atlassian.net', name: 'wiki', scopes: ['read:confluence-content.all'] },
  { id: 'cloud-alpha', url: 'https://alpha.atlassian.net', name: 'alpha', scopes: JIRA_SCOPES },
  { id: 'cloud-beta', url: 'https://beta.atlassian.net/', name: 'beta', scopes: JIRA_SCOPES },
];

type Gateway = TestGateway;
let upstream: Upstream;
let gw: Gateway;
let sites: unknown = SITES;

usePluginGateway(
  'atlassian-jira',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600, config: { site: 'beta.atlassian.net' } },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" (path under the Jira REST base, or absolute when it starts with /oauth or /ex). */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, path) => ({ errorMessages: [`no route ${m} ${path}`] }),
    first: (req) => (req.path === RESOURCES ? { json: sites } : undefined),
  });

type Call = [method: string, path: string, queryOrBody?: unknown];

/** The cloud-id look-up, then exactly these calls: GET with this query, writes with this JSON body. */
function assertCalls(calls: Call[], base = BASE): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length + 1, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  assert.equal(reqs[0]!.method, 'GET');
  assert.equal(reqs[0]!.path, RESOURCES);
  for (const r of reqs)
    assert.equal(r.headers.authorization, `Bearer ${TOKEN}`, 'every request carries the Bearer token');
  calls.forEach(([method, path, expected], i) => {
    const req = reqs[i + 1]!;
    assert.equal(req.method, method, `request ${i + 1} method`);
    assert.equal(req.path, `${base}${path}`, `request ${i + 1} path`);
    if (method === 'GET') {
      assert.deepEqual(Object.fromEntries(req.query), expected ?? {}, `request ${i + 1} query`);
      assert.equal(req.body, '');
    } else {
      assert.match(String(req.headers['content-type']), /^application\/json/);
      assert.deepEqual(req.json, expected, `request ${i + 1} JSON body`);
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

// ---------- fixtures ----------

const adf = (...paras: string[]) => ({
  type: 'doc',
  version: 1,
  content: paras.map((p) => ({ type: 'paragraph', content: [{ type: 'text', text: p }] })),
});
const RICH_ADF = {
  type: 'doc',
  version: 1,
  content: [
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Steps' }] },
    {
      type: 'orderedList',
      content: [
        { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Open /login' }] }] },
        { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Type password' }] }] },
      ],
    },
    {
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Ping ' },
        { type: 'mention', attrs: { id: 'acc-b', text: '@Bob' } },
        { type: 'text', text: ' please', marks: [{ type: 'strong' }] },
        { type: 'hardBreak' },
        { type: 'text', text: 'thanks' },
      ],
    },
    { type: 'codeBlock', attrs: { language: 'js' }, content: [{ type: 'text', text: 'x()' }] },
    {
      type: 'bulletList',
      content: [
        {
          type: 'listItem',
          content: [
            { type: 'paragraph', content: [{ type: 'text', text: 'a' }] },
            {
              type: 'bulletList',
              content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'b' }] }] }],
            },
          ],
        },
      ],
    },
  ],
};
const RICH_TEXT =
  '## Steps\n\n1. Open /login\n2. Type password\n\nPing @Bob please\nthanks\n\n```js\nx()\n```\n\n- a\n  - b';
const avatar = { '48x48': 'https://avatar.example/48.png' };
const RAW_ISSUE = {
  id: '10001',
  key: 'ABC-1',
  self: 'https://api.atlassian.com/ex/jira/cloud-beta/rest/api/3/issue/10001',
  fields: {
    summary: 'Login fails',
    status: { name: 'In Progress', statusCategory: { name: 'In Progress' } },
    assignee: { accountId: 'acc-1', displayName: 'Alice', avatarUrls: avatar },
    priority: { name: 'High', iconUrl: 'x' },
    issuetype: { name: 'Bug', iconUrl: 'x' },
    updated: '2026-01-02T03:04:05.000+0000',
  },
};
const SLIM = {
  key: 'ABC-1',
  summary: 'Login fails',
  status: 'In Progress',
  assignee: 'Alice',
  priority: 'High',
  issuetype: 'Bug',
  updated: '2026-01-02T03:04:05.000+0000',
  url: `${SITE}/browse/ABC-1`,
};
const RAW_DETAIL = {
  ...RAW_ISSUE,
  fields: {
    ...RAW_ISSUE.fields,
    reporter: { displayName: 'Rita', avatarUrls: avatar },
    created: '2026-01-01T00:00:00.000+0000',
    duedate: '2026-02-01',
    resolution: null,
    labels: ['auth'],
    components: [{ id: '5', name: 'Web' }],
    project: { key: 'ABC', name: 'Alpha Beta' },
    parent: { key: 'ABC-0', fields: { summary: 'Epic' } },
    subtasks: [{ key: 'ABC-3', fields: { summary: 'Sub', status: { name: 'To Do' } } }],
    issuelinks: [
      {
        type: { name: 'Blocks', inward: 'is blocked by', outward: 'blocks' },
        outwardIssue: { key: 'ABC-7', fields: { summary: 'Deploy', status: { name: 'Done' } } },
      },
      {
        type: { name: 'Blocks', inward: 'is blocked by', outward: 'blocks' },
        inwardIssue: { key: 'OPS-2', fields: { summary: 'Infra', status: { name: 'To Do' } } },
      },
    ],
    comment: { total: 3, comments: [] },
    description: RICH_ADF,
  },
};
const DETAIL = {
  ...SLIM,
  project: 'ABC',
  reporter: 'Rita',
  created: '2026-01-01T00:00:00.000+0000',
  dueDate: '2026-02-01',
  resolution: null,
  labels: ['auth'],
  components: ['Web'],
  parent: { key: 'ABC-0', summary: 'Epic' },
  subtasks: [{ key: 'ABC-3', summary: 'Sub', status: 'To Do' }],
  links: [
    { relation: 'blocks', key: 'ABC-7', summary: 'Deploy', status: 'Done' },
    { relation: 'is blocked by', key: 'OPS-2', summary: 'Infra', status: 'To Do' },
  ],
  commentCount: 3,
  description: RICH_TEXT,
};
const DETAIL_FIELDS =
  'summary,status,assignee,reporter,priority,issuetype,created,updated,duedate,resolution,labels,components,parent,subtasks,issuelinks,description,project,comment';
const TRANSITIONS = {
  transitions: [
    {
      id: '11',
      name: 'Start Progress',
      hasScreen: false,
      to: { name: 'In Progress', statusCategory: { name: 'In Progress' } },
    },
    { id: '31', name: 'Done', hasScreen: true, to: { name: 'Done', statusCategory: { name: 'Done' } } },
  ],
};
const RAW_COMMENT = {
  id: '100',
  author: { displayName: 'Bob', avatarUrls: avatar },
  body: adf('Looks good', 'Ship it'),
  created: '2026-01-03T00:00:00.000+0000',
  updated: '2026-01-03T00:00:00.000+0000',
  jsdPublic: true,
};
const COMMENT = {
  id: '100',
  author: 'Bob',
  created: '2026-01-03T00:00:00.000+0000',
  updated: '2026-01-03T00:00:00.000+0000',
  body: 'Looks good\n\nShip it',
  url: `${SITE}/browse/ABC-1?focusedCommentId=100`,
};
const BOB = {
  accountId: 'acc-b',
  displayName: 'Bob',
  emailAddress: 'bob@example.com',
  active: true,
  accountType: 'atlassian',
  avatarUrls: avatar,
};
const BOBBY = { accountId: 'acc-bb', displayName: 'Bobby', active: true, accountType: 'atlassian', avatarUrls: avatar };
const ME = {
  accountId: 'acc-me',
  displayName: 'Me',
  emailAddress: 'me@example.com',
  active: true,
  accountType: 'atlassian',
  timeZone: 'Europe/Paris',
  locale: 'en_US',
  groups: { size: 3 },
};
const NO_CONTENT: UpstreamReply = { status: 204 };

interface Case {
  name?: string;
  tool: string;
  args: Record<string, unknown>;
  replies: Record<string, UpstreamReply | ((req: RecordedRequest) => UpstreamReply)>;
  calls: Call[];
  result: unknown;
  /** the REST base the calls' paths are under (default: the platform API's, BASE) */
  base?: string;
}

const CASES: Case[] = [
  {
    tool: 'jira_search_issues',
    args: { jql: 'project = ABC ORDER BY updated DESC', maxResults: 2 },
    replies: { 'POST /search/jql': { json: { issues: [RAW_ISSUE], nextPageToken: 'tok-2', isLast: false } } },
    calls: [
      [
        'POST',
        '/search/jql',
        {
          jql: 'project = ABC ORDER BY updated DESC',
          maxResults: 2,
          fields: ['summary', 'status', 'assignee', 'priority', 'issuetype', 'updated'],
        },
      ],
    ],
    result: { issues: [SLIM], count: 1, next: 'tok-2' },
  },
  {
    name: 'jira_search_issues (next page)',
    tool: 'jira_search_issues',
    args: { jql: 'assignee = currentUser()', cursor: 'tok-2' },
    replies: { 'POST /search/jql': { json: { issues: [], isLast: true } } },
    calls: [
      [
        'POST',
        '/search/jql',
        {
          jql: 'assignee = currentUser()',
          maxResults: 25,
          fields: ['summary', 'status', 'assignee', 'priority', 'issuetype', 'updated'],
          nextPageToken: 'tok-2',
        },
      ],
    ],
    result: { issues: [], count: 0, next: null },
  },
  {
    tool: 'jira_get_issue',
    args: { issueKey: 'ABC-1' },
    replies: { 'GET /issue/ABC-1': { json: RAW_DETAIL } },
    calls: [['GET', '/issue/ABC-1', { fields: DETAIL_FIELDS }]],
    result: DETAIL,
  },
  {
    tool: 'jira_create_issue',
    args: {
      projectKey: 'abc',
      summary: 'New bug',
      issueType: 'Bug',
      description: 'Line one\nline two\n\nSecond para',
      labels: ['ui'],
      priority: 'High',
      assigneeAccountId: 'acc-1',
      parentKey: 'ABC-9',
      dueDate: '2026-02-01',
    },
    replies: { 'POST /issue': { status: 201, json: { id: '10002', key: 'ABC-2', self: 'x' } } },
    calls: [
      [
        'POST',
        '/issue',
        {
          fields: {
            project: { key: 'ABC' },
            summary: 'New bug',
            issuetype: { name: 'Bug' },
            description: {
              type: 'doc',
              version: 1,
              content: [
                {
                  type: 'paragraph',
                  content: [
                    { type: 'text', text: 'Line one' },
                    { type: 'hardBreak' },
                    { type: 'text', text: 'line two' },
                  ],
                },
                { type: 'paragraph', content: [{ type: 'text', text: 'Second para' }] },
              ],
            },
            labels: ['ui'],
            priority: { name: 'High' },
            assignee: { accountId: 'acc-1' },
            parent: { key: 'ABC-9' },
            duedate: '2026-02-01',
          },
        },
      ],
    ],
    result: { key: 'ABC-2', id: '10002', url: `${SITE}/browse/ABC-2` },
  },
  {
    name: 'jira_create_issue (defaults, type by id)',
    tool: 'jira_create_issue',
    args: { projectKey: 'ABC', summary: 'Chore', issueType: '10004' },
    replies: { 'POST /issue': { status: 201, json: { id: '10003', key: 'ABC-3', self: 'x' } } },
    calls: [['POST', '/issue', { fields: { project: { key: 'ABC' }, summary: 'Chore', issuetype: { id: '10004' } } }]],
    result: { key: 'ABC-3', id: '10003', url: `${SITE}/browse/ABC-3` },
  },
  {
    tool: 'jira_update_issue',
    args: {
      issueKey: 'ABC-1',
      summary: 'Login fails on Safari',
      description: '',
      dueDate: '',
      addLabels: ['safari'],
      removeLabels: ['auth'],
    },
    replies: { 'PUT /issue/ABC-1': NO_CONTENT },
    calls: [
      [
        'PUT',
        '/issue/ABC-1',
        {
          fields: { summary: 'Login fails on Safari', description: null, duedate: null },
          update: { labels: [{ add: 'safari' }, { remove: 'auth' }] },
        },
      ],
    ],
    result: { key: 'ABC-1', updated: ['summary', 'description', 'duedate', 'labels'], url: `${SITE}/browse/ABC-1` },
  },
  {
    tool: 'jira_add_comment',
    args: { issueKey: 'ABC-1', body: 'Looks good\n\nShip it' },
    replies: { 'POST /issue/ABC-1/comment': { status: 201, json: RAW_COMMENT } },
    calls: [['POST', '/issue/ABC-1/comment', { body: adf('Looks good', 'Ship it') }]],
    result: { key: 'ABC-1', id: '100', created: RAW_COMMENT.created, url: COMMENT.url },
  },
  {
    tool: 'jira_list_comments',
    args: { issueKey: 'ABC-1', maxResults: 1 },
    replies: { 'GET /issue/ABC-1/comment': { json: { comments: [RAW_COMMENT], startAt: 0, maxResults: 1, total: 3 } } },
    calls: [['GET', '/issue/ABC-1/comment', { startAt: '0', maxResults: '1', orderBy: '-created' }]],
    result: { key: 'ABC-1', comments: [COMMENT], total: 3, next: '1' },
  },
  {
    name: 'jira_list_comments (last page, oldest first)',
    tool: 'jira_list_comments',
    args: { issueKey: 'ABC-1', order: 'oldest', cursor: '2' },
    replies: {
      'GET /issue/ABC-1/comment': { json: { comments: [RAW_COMMENT], startAt: 2, maxResults: 20, total: 3 } },
    },
    calls: [['GET', '/issue/ABC-1/comment', { startAt: '2', maxResults: '20', orderBy: 'created' }]],
    result: { key: 'ABC-1', comments: [COMMENT], total: 3, next: null },
  },
  {
    tool: 'jira_list_transitions',
    args: { issueKey: 'ABC-1' },
    replies: { 'GET /issue/ABC-1/transitions': { json: TRANSITIONS } },
    calls: [['GET', '/issue/ABC-1/transitions']],
    result: {
      key: 'ABC-1',
      transitions: [
        { id: '11', name: 'Start Progress', to: 'In Progress', toCategory: 'In Progress' },
        { id: '31', name: 'Done', to: 'Done', toCategory: 'Done' },
      ],
    },
  },
  {
    tool: 'jira_transition_issue',
    args: { issueKey: 'ABC-1', transition: 'done', comment: 'Fixed in 1.2', resolution: 'Fixed' },
    replies: { 'GET /issue/ABC-1/transitions': { json: TRANSITIONS }, 'POST /issue/ABC-1/transitions': NO_CONTENT },
    calls: [
      ['GET', '/issue/ABC-1/transitions'],
      [
        'POST',
        '/issue/ABC-1/transitions',
        {
          transition: { id: '31' },
          fields: { resolution: { name: 'Fixed' } },
          update: { comment: [{ add: { body: adf('Fixed in 1.2') } }] },
        },
      ],
    ],
    result: { key: 'ABC-1', transition: 'Done', status: 'Done', url: `${SITE}/browse/ABC-1` },
  },
  {
    name: 'jira_transition_issue (by target status)',
    tool: 'jira_transition_issue',
    args: { issueKey: 'ABC-1', transition: 'In progress' },
    replies: { 'GET /issue/ABC-1/transitions': { json: TRANSITIONS }, 'POST /issue/ABC-1/transitions': NO_CONTENT },
    calls: [
      ['GET', '/issue/ABC-1/transitions'],
      ['POST', '/issue/ABC-1/transitions', { transition: { id: '11' } }],
    ],
    result: { key: 'ABC-1', transition: 'Start Progress', status: 'In Progress', url: `${SITE}/browse/ABC-1` },
  },
  {
    tool: 'jira_assign_issue',
    args: { issueKey: 'ABC-1', accountId: 'acc-2' },
    replies: { 'PUT /issue/ABC-1/assignee': NO_CONTENT },
    calls: [['PUT', '/issue/ABC-1/assignee', { accountId: 'acc-2' }]],
    result: { key: 'ABC-1', assigneeAccountId: 'acc-2', assignee: null, url: `${SITE}/browse/ABC-1` },
  },
  {
    name: 'jira_assign_issue (by email)',
    tool: 'jira_assign_issue',
    args: { issueKey: 'ABC-1', user: 'bob@example.com' },
    replies: { 'GET /user/search': { json: [BOB, BOBBY] }, 'PUT /issue/ABC-1/assignee': NO_CONTENT },
    calls: [
      ['GET', '/user/search', { query: 'bob@example.com', maxResults: '10' }],
      ['PUT', '/issue/ABC-1/assignee', { accountId: 'acc-b' }],
    ],
    result: { key: 'ABC-1', assigneeAccountId: 'acc-b', assignee: 'Bob', url: `${SITE}/browse/ABC-1` },
  },
  {
    name: 'jira_assign_issue (unassign)',
    tool: 'jira_assign_issue',
    args: { issueKey: 'ABC-1', unassign: true },
    replies: { 'PUT /issue/ABC-1/assignee': NO_CONTENT },
    calls: [['PUT', '/issue/ABC-1/assignee', { accountId: null }]],
    result: { key: 'ABC-1', assigneeAccountId: null, assignee: null, url: `${SITE}/browse/ABC-1` },
  },
  {
    tool: 'jira_list_projects',
    args: { query: 'web', maxResults: 2 },
    replies: {
      'GET /project/search': {
        json: {
          values: [
            { id: '1', key: 'WEB', name: 'Website', projectTypeKey: 'software', avatarUrls: avatar, simplified: false },
            { id: '2', key: 'WEBOPS', name: 'Web Ops', projectTypeKey: 'business', avatarUrls: avatar },
          ],
          startAt: 0,
          maxResults: 2,
          total: 5,
          isLast: false,
        },
      },
    },
    calls: [['GET', '/project/search', { startAt: '0', maxResults: '2', query: 'web' }]],
    result: {
      projects: [
        { key: 'WEB', name: 'Website', id: '1', type: 'software', url: `${SITE}/browse/WEB` },
        { key: 'WEBOPS', name: 'Web Ops', id: '2', type: 'business', url: `${SITE}/browse/WEBOPS` },
      ],
      total: 5,
      next: '2',
    },
  },
  {
    tool: 'jira_get_project',
    args: { projectKey: 'WEB' },
    replies: {
      'GET /project/WEB': {
        json: {
          id: '1',
          key: 'WEB',
          name: 'Website',
          description: 'The site',
          lead: { displayName: 'Lee', avatarUrls: avatar },
          projectTypeKey: 'software',
          issueTypes: [
            { id: '1', name: 'Bug', subtask: false, iconUrl: 'x' },
            { id: '5', name: 'Subtask', subtask: true },
          ],
        },
      },
    },
    calls: [['GET', '/project/WEB', { expand: 'description,lead,issueTypes' }]],
    result: {
      key: 'WEB',
      id: '1',
      name: 'Website',
      description: 'The site',
      lead: 'Lee',
      type: 'software',
      issueTypes: [
        { id: '1', name: 'Bug', subtask: false },
        { id: '5', name: 'Subtask', subtask: true },
      ],
      url: `${SITE}/browse/WEB`,
    },
  },
  {
    tool: 'jira_list_issue_types',
    args: { projectKey: 'WEB' },
    replies: {
      'GET /issue/createmeta/WEB/issuetypes': {
        json: {
          issueTypes: [
            { id: '1', name: 'Bug', subtask: false, description: 'A problem', iconUrl: 'x' },
            { id: '3', name: 'Task', subtask: false },
          ],
          maxResults: 100,
          startAt: 0,
          total: 2,
        },
      },
    },
    calls: [['GET', '/issue/createmeta/WEB/issuetypes', { startAt: '0', maxResults: '100' }]],
    result: {
      project: 'WEB',
      issueTypes: [
        { id: '1', name: 'Bug', subtask: false, description: 'A problem' },
        { id: '3', name: 'Task', subtask: false, description: '' },
      ],
    },
  },
  {
    name: 'jira_list_issue_types reads every page',
    tool: 'jira_list_issue_types',
    args: { projectKey: 'WEB' },
    replies: {
      'GET /issue/createmeta/WEB/issuetypes': (req: RecordedRequest) => ({
        json:
          req.query.get('startAt') === '0'
            ? { issueTypes: [{ id: '1', name: 'Bug' }], startAt: 0, maxResults: 1, total: 2 }
            : { issueTypes: [{ id: '3', name: 'Task' }], startAt: 1, maxResults: 1, total: 2 },
      }),
    },
    calls: [
      ['GET', '/issue/createmeta/WEB/issuetypes', { startAt: '0', maxResults: '100' }],
      ['GET', '/issue/createmeta/WEB/issuetypes', { startAt: '1', maxResults: '100' }],
    ],
    result: {
      project: 'WEB',
      issueTypes: [
        { id: '1', name: 'Bug', subtask: false, description: '' },
        { id: '3', name: 'Task', subtask: false, description: '' },
      ],
    },
  },
  {
    name: 'jira_get_issue keeps the address of a hyperlink',
    tool: 'jira_get_issue',
    args: { issueKey: 'ABC-1' },
    replies: {
      'GET /issue/ABC-1': {
        json: {
          ...RAW_DETAIL,
          fields: {
            ...RAW_DETAIL.fields,
            description: {
              type: 'doc',
              version: 1,
              content: [
                {
                  type: 'paragraph',
                  content: [
                    { type: 'text', text: 'See ' },
                    {
                      type: 'text',
                      text: 'the runbook',
                      marks: [{ type: 'link', attrs: { href: 'https://wiki.example/runbook' } }],
                    },
                  ],
                },
              ],
            },
          },
        },
      },
    },
    calls: [['GET', '/issue/ABC-1', { fields: DETAIL_FIELDS }]],
    result: { ...DETAIL, description: 'See the runbook (https://wiki.example/runbook)' },
  },
  {
    tool: 'jira_search_users',
    args: { query: 'bob', maxResults: 5 },
    replies: { 'GET /user/search': { json: [BOB, BOBBY] } },
    calls: [['GET', '/user/search', { query: 'bob', maxResults: '5' }]],
    result: {
      users: [
        { accountId: 'acc-b', displayName: 'Bob', email: 'bob@example.com', active: true, accountType: 'atlassian' },
        { accountId: 'acc-bb', displayName: 'Bobby', email: null, active: true, accountType: 'atlassian' },
      ],
    },
  },
  {
    tool: 'jira_get_myself',
    args: {},
    replies: { 'GET /myself': { json: ME } },
    calls: [['GET', '/myself']],
    result: {
      accountId: 'acc-me',
      displayName: 'Me',
      email: 'me@example.com',
      active: true,
      accountType: 'atlassian',
      timeZone: 'Europe/Paris',
      site: { name: 'beta', url: SITE },
    },
  },
  {
    tool: 'jira_add_watcher',
    args: { issueKey: 'ABC-1', accountId: 'acc-2' },
    replies: { 'POST /issue/ABC-1/watchers': NO_CONTENT },
    calls: [['POST', '/issue/ABC-1/watchers', 'acc-2']],
    result: { key: 'ABC-1', watcherAccountId: 'acc-2', url: `${SITE}/browse/ABC-1` },
  },
  {
    name: 'jira_add_watcher (myself)',
    tool: 'jira_add_watcher',
    args: { issueKey: 'ABC-1' },
    replies: { 'GET /myself': { json: ME }, 'POST /issue/ABC-1/watchers': NO_CONTENT },
    calls: [
      ['GET', '/myself'],
      ['POST', '/issue/ABC-1/watchers', 'acc-me'],
    ],
    result: { key: 'ABC-1', watcherAccountId: 'acc-me', url: `${SITE}/browse/ABC-1` },
  },
  {
    tool: 'jira_link_issues',
    args: { issueKey: 'ABC-1', targetIssueKey: 'ABC-2', linkType: 'Blocks', comment: 'Needs the fix first' },
    replies: { 'POST /issueLink': { status: 201 } },
    calls: [
      [
        'POST',
        '/issueLink',
        {
          type: { name: 'Blocks' },
          inwardIssue: { key: 'ABC-1' },
          outwardIssue: { key: 'ABC-2' },
          comment: { body: adf('Needs the fix first') },
        },
      ],
    ],
    result: { issueKey: 'ABC-1', targetIssueKey: 'ABC-2', linkType: 'Blocks', url: `${SITE}/browse/ABC-1` },
  },
  {
    tool: 'jira_list_link_types',
    args: {},
    replies: {
      'GET /issueLinkType': {
        json: {
          issueLinkTypes: [{ id: '10000', name: 'Blocks', inward: 'is blocked by', outward: 'blocks', self: 'x' }],
        },
      },
    },
    calls: [['GET', '/issueLinkType']],
    result: { linkTypes: [{ id: '10000', name: 'Blocks', outward: 'blocks', inward: 'is blocked by' }] },
  },
  {
    tool: 'jira_list_boards',
    args: { projectKeyOrId: 'ABC', type: 'scrum', maxResults: 2 },
    base: AGILE,
    replies: {
      [`GET ${AGILE}/board`]: {
        json: {
          maxResults: 2,
          startAt: 0,
          total: 3,
          isLast: false,
          values: [
            {
              id: 84,
              self: 'https://api.atlassian.com/NOISE',
              name: 'ABC board',
              type: 'scrum',
              location: {
                projectId: 10000,
                displayName: 'Alpha Beta (ABC)',
                projectName: 'Alpha Beta',
                projectKey: 'ABC',
                projectTypeKey: 'software',
                avatarURI: 'NOISE',
                name: 'Alpha Beta (ABC)',
              },
            },
            { id: 85, self: 'x', name: 'Personal board', type: 'scrum' },
          ],
        },
      },
    },
    calls: [['GET', '/board', { startAt: '0', maxResults: '2', projectKeyOrId: 'ABC', type: 'scrum' }]],
    result: {
      boards: [
        {
          id: 84,
          name: 'ABC board',
          type: 'scrum',
          project: { key: 'ABC', name: 'Alpha Beta' },
          url: `${SITE}/secure/RapidBoard.jspa?rapidView=84`,
        },
        {
          id: 85,
          name: 'Personal board',
          type: 'scrum',
          project: null,
          url: `${SITE}/secure/RapidBoard.jspa?rapidView=85`,
        },
      ],
      total: 3,
      next: '2',
    },
  },
  {
    name: 'jira_list_boards (next page, by name)',
    tool: 'jira_list_boards',
    args: { name: 'team', cursor: '2' },
    base: AGILE,
    replies: { [`GET ${AGILE}/board`]: { json: { startAt: 2, total: 3, isLast: true, values: [] } } },
    calls: [['GET', '/board', { startAt: '2', maxResults: '50', name: 'team' }]],
    result: { boards: [], total: 3, next: null },
  },
  {
    tool: 'jira_list_project_types',
    args: {},
    replies: {
      'GET /project/type': {
        json: [
          {
            key: 'software',
            formattedKey: 'Software',
            descriptionI18nKey: 'jira.project.type.software.description',
            icon: 'PHN2ZyBOTk9JU0U=',
            color: '#F5A623',
          },
          { key: 'business', formattedKey: 'Business', icon: 'NOISE', color: '#FFBC00' },
        ],
      },
    },
    calls: [['GET', '/project/type']],
    result: {
      projectTypes: [
        { key: 'software', name: 'Software', color: '#F5A623' },
        { key: 'business', name: 'Business', color: '#FFBC00' },
      ],
    },
  },
  {
    name: 'jira_list_project_types (licensed only: the accessible ones)',
    tool: 'jira_list_project_types',
    args: { licensedOnly: true },
    replies: { 'GET /project/type/accessible': { json: [{ key: 'software', formattedKey: 'Software' }] } },
    calls: [['GET', '/project/type/accessible']],
    result: { projectTypes: [{ key: 'software', name: 'Software', color: null }] },
  },
];

describe('atlassian-jira tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls, c.base);
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('atlassian-jira')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });
});

describe('atlassian-jira site resolution', () => {
  async function userWith(config?: Record<string, unknown>): Promise<string> {
    const n = Math.random().toString(36).slice(2, 8);
    const { user, apiKey } = await gw.createUser(`jira-${n}@example.com`);
    await gw.connect('atlassian-jira', { token: TOKEN, ...(config ? { config } : {}) }, user);
    return apiKey;
  }
  const myself = { 'GET /ex/jira/cloud-alpha/rest/api/3/myself': { json: ME } };

  test('without a configured site, the first Jira site (not a Confluence-only one) is used', async () => {
    const key = await userWith();
    route(myself);
    const r = (await ok('jira_get_myself', {}, key)) as { site: unknown };
    assert.deepEqual(r.site, { name: 'alpha', url: 'https://alpha.atlassian.net' });
    assertCalls([['GET', '/myself']], '/ex/jira/cloud-alpha/rest/api/3');
  });

  for (const site of ['https://ALPHA.atlassian.net/', 'alpha', 'cloud-alpha']) {
    test(`the configured site "${site}" selects its cloud id`, async () => {
      const key = await userWith({ site });
      route(myself);
      await ok('jira_get_myself', {}, key);
      assertCalls([['GET', '/myself']], '/ex/jira/cloud-alpha/rest/api/3');
    });
  }

  test('a configured site that is not reachable is named with the reachable ones', async () => {
    const key = await userWith({ site: 'gamma.atlassian.net' });
    route({});
    await fails(
      'jira_get_myself',
      {},
      /No Jira site matching "gamma\.atlassian\.net".*alpha\.atlassian\.net.*beta\.atlassian\.net/,
      key,
    );
    assert.equal(upstream.requests.length, 1);
  });

  test('a token that reaches no site says so', async () => {
    sites = [];
    try {
      route({});
      await fails('jira_get_myself', {}, /can reach no Jira site: reconnect/);
    } finally {
      sites = SITES;
    }
  });
});

describe('atlassian-jira error mapping', () => {
  const cases: Array<[string, string, Record<string, unknown>, string, UpstreamReply, RegExp]> = [
    [
      '401 invalid token',
      'jira_search_issues',
      { jql: 'project = ABC' },
      'POST /search/jql',
      { status: 401, json: { code: 401, message: 'Unauthorized' } },
      /rejected the access token \(401\).*reconnect atlassian-jira/,
    ],
    [
      '401 scope mismatch',
      'jira_create_issue',
      { projectKey: 'ABC', summary: 'x' },
      'POST /issue',
      { status: 401, json: { code: 401, message: 'Unauthorized; scope does not match' } },
      /lacks the OAuth scope needed to create an issue in project ABC \(401; needs write:jira-work\)/,
    ],
    [
      '401 scope mismatch on the Agile API: the Jira Software scopes are named',
      'jira_list_boards',
      {},
      `GET ${AGILE}/board`,
      { status: 401, json: { code: 401, message: 'Unauthorized; scope does not match' } },
      /lacks the OAuth scope needed to list boards \(401; needs read:board-scope:jira-software and read:project:jira\): reconnect atlassian-jira/,
    ],
    [
      '403 permission',
      'jira_add_comment',
      { issueKey: 'ABC-1', body: 'x' },
      'POST /issue/ABC-1/comment',
      { status: 403, json: { errorMessages: ['You do not have permission to comment.'], errors: {} } },
      /refused permission to comment on issue ABC-1 \(403\): You do not have permission to comment\..*write:jira-work/,
    ],
    [
      '404 not found',
      'jira_get_issue',
      { issueKey: 'ABC-404' },
      'GET /issue/ABC-404',
      {
        status: 404,
        json: { errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} },
      },
      /found nothing while trying to read issue ABC-404 \(404\): Issue does not exist/,
    ],
    [
      '400 JQL',
      'jira_search_issues',
      { jql: 'order by created' },
      'POST /search/jql',
      {
        status: 400,
        json: {
          errorMessages: ['Unbounded JQL queries are not allowed here. Please add a search restriction to your query.'],
          errors: {},
        },
      },
      /refused to search issues \(400\): Unbounded JQL/,
    ],
    [
      '400 field errors',
      'jira_create_issue',
      { projectKey: 'ABC', summary: 'x', priority: 'Urgent' },
      'POST /issue',
      {
        status: 400,
        json: {
          errorMessages: [],
          errors: { priority: 'Priority name "Urgent" is not valid.', issuetype: 'Specify an issue type' },
        },
      },
      /\(400\): priority: Priority name "Urgent" is not valid\.; issuetype: Specify an issue type/,
    ],
    [
      '429 rate limit',
      'jira_list_projects',
      {},
      'GET /project/search',
      { status: 429, headers: { 'retry-after': '17' }, json: { message: 'Rate limit exceeded' } },
      /rate limited the request to list projects \(429\): retry after 17 seconds/,
    ],
    [
      '500 server error',
      'jira_get_myself',
      {},
      'GET /myself',
      { status: 502, body: '<html>Bad gateway</html>' },
      /server error \(502\).*retry later/,
    ],
  ];
  for (const [name, tool, args, routeKey, reply, pattern] of cases) {
    test(name, async () => {
      route({ [routeKey]: reply });
      await fails(tool, args, pattern);
    });
  }

  test('the cloud-id look-up maps its own failures', async () => {
    upstream.setHandler(() => ({ status: 401, json: { code: 401, message: 'Unauthorized' } }));
    upstream.requests.length = 0;
    await fails('jira_get_myself', {}, /rejected the access token \(401\) while trying to list the Jira sites/);
    assert.equal(upstream.requests.length, 1);
  });

  test('an unknown transition lists the available ones and changes nothing', async () => {
    route({ 'GET /issue/ABC-1/transitions': { json: TRANSITIONS } });
    await fails(
      'jira_transition_issue',
      { issueKey: 'ABC-1', transition: 'Archive' },
      /no transition matching "Archive".*"Start Progress" \(id 11 → In Progress\), "Done" \(id 31 → Done\)/,
    );
    assert.ok(upstream.requests.every((r) => r.method === 'GET'));
  });

  test('an ambiguous assignee is named, not guessed', async () => {
    route({ 'GET /user/search': { json: [BOB, BOBBY] } });
    await fails(
      'jira_assign_issue',
      { issueKey: 'ABC-1', user: 'bo' },
      /"bo" matches several Jira users: Bob \(acc-b\), Bobby \(acc-bb\)/,
    );
    assert.ok(upstream.requests.every((r) => r.method === 'GET'));
  });

  test('argument problems are refused before any request', async () => {
    route({});
    await fails('jira_update_issue', { issueKey: 'ABC-1' }, /Nothing to update/);
    await fails(
      'jira_assign_issue',
      { issueKey: 'ABC-1', accountId: 'a', unassign: true },
      /exactly one of accountId, user or unassign/,
    );
    await fails('jira_get_issue', { issueKey: 'not a key' }, /Invalid arguments for jira_get_issue/);
    await fails(
      'jira_search_issues',
      { jql: 'project = A', maxResults: 500 },
      /Invalid arguments for jira_search_issues/,
    );
    assert.equal(upstream.requests.length, 0);
  });
});

describe('atlassian-jira: a lone surrogate is sent as U+FFFD (%EF%BF%BD), as URLSearchParams sends it', () => {
  test('in a query-string argument: jira_list_projects with a query holding "\\uD800"', async () => {
    route({ 'GET /project/search': { json: { values: [], startAt: 0, maxResults: 50, total: 0, isLast: true } } });
    assert.deepEqual(await ok('jira_list_projects', { query: 'web\uD800ops' }), { projects: [], total: 0, next: null });
    assertCalls([['GET', '/project/search', { startAt: '0', maxResults: '50', query: 'web\uFFFDops' }]]);
    assert.match(upstream.requests[1]!.url, /[?&]query=web%EF%BF%BDops(&|$)/);
  });

  test('in a path segment: a cloud id holding "\\uDC00" from the accessible resources', async () => {
    const { user, apiKey } = await gw.createUser('jira-surrogate@example.com');
    await gw.connect('atlassian-jira', { token: TOKEN }, user);
    sites = [{ id: 'cloud-\uDC00', url: 'https://gamma.atlassian.net', name: 'gamma', scopes: JIRA_SCOPES }];
    try {
      route({ 'GET /ex/jira/cloud-%EF%BF%BD/rest/api/3/myself': { json: ME } });
      const r = (await ok('jira_get_myself', {}, apiKey)) as { site: unknown };
      assert.deepEqual(r.site, { name: 'gamma', url: 'https://gamma.atlassian.net' });
      assertCalls([['GET', '/myself']], '/ex/jira/cloud-%EF%BF%BD/rest/api/3');
    } finally {
      sites = SITES;
    }
  });
});
