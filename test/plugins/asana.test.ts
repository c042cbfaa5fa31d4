/**
 * @module test/plugins/asana.test
 * Every Asana tool runs through the real gateway and sandbox against a loopback stand-in for
 * app.asana.com (reached through the policy's origin mapping): the request each tool makes (method,
 * /api/1.0 path, query with opt_fields, `{data: …}` JSON body, Bearer token) and its slim result come
 * from one table; then the offset-token pagination, the workspace default, the error mappings
 * (Asana's `errors[].message`, 400/401/402/403/404/429/5xx), argument refusals, and a lone
 * surrogate in a query value (sent as U+FFFD, not a failure).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { RecordedRequest, Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'asana-access-token-0123456789';
const BASE = '/api/1.0';

type Gateway = TestGateway;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway(
  'asana',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" (path under /api/1.0); anything else is a 404 in Asana's error shape. */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, path) => ({ errors: [{ message: `no route ${m} ${path}` }] }),
  });

type Call = [method: string, path: string, query?: Record<string, string>, body?: unknown];

/** Exactly these calls, in order: path under /api/1.0, the whole query, and the JSON body of writes. */
function assertCalls(calls: Call[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  for (const r of reqs)
    assert.equal(r.headers.authorization, `Bearer ${TOKEN}`, 'every request carries the Bearer token');
  calls.forEach(([method, path, query, body], i) => {
    const req = reqs[i]!;
    assert.equal(req.method, method, `request ${i} method`);
    assert.equal(req.path, `${BASE}${path}`, `request ${i} path`);
    assert.deepEqual(Object.fromEntries(req.query), query ?? {}, `request ${i} query`);
    if (body === undefined) {
      assert.equal(req.body, '', `request ${i} has no body`);
    } else {
      assert.match(String(req.headers['content-type']), /^application\/json/);
      assert.deepEqual(req.json, body, `request ${i} JSON body`);
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

// ---------- fixtures ----------

const TASK_ROW_FIELDS = 'name,completed,assignee.name,due_on,due_at,permalink_url';
const TASK_DETAIL_FIELDS =
  'name,resource_subtype,completed,completed_at,assignee.name,assignee.email,due_on,due_at,start_on,notes,created_at,modified_at,created_by.name,' +
  'memberships.project.name,memberships.section.name,parent.name,tags.name,custom_fields.name,custom_fields.display_value,num_subtasks,workspace.name,permalink_url';
const PROJECT_ROW_FIELDS = 'name,archived,owner.name,team.name,due_on,permalink_url';
const PROJECT_DETAIL_FIELDS =
  'name,archived,completed,notes,owner.name,team.name,workspace.name,start_on,due_on,created_at,modified_at,privacy_setting,' +
  'current_status_update.title,current_status_update.status_type,permalink_url';
const STORY_FIELDS = 'type,text,created_at,created_by.name';
const url = (gid: string) => `https://app.asana.com/0/0/${gid}`;

const WS = { gid: '1001', name: 'Acme', resource_type: 'workspace' };
const WS2 = { gid: '1002', name: 'Side project', resource_type: 'workspace' };
const ONE_WORKSPACE: UpstreamReply = { json: { data: [WS], next_page: null } };
const WS_LOOKUP: Call = ['GET', '/workspaces', { limit: '100', opt_fields: 'name' }];

const RAW_ROW = {
  gid: '3001',
  resource_type: 'task',
  name: 'Write launch post',
  completed: false,
  assignee: { gid: '2001', name: 'Ada', resource_type: 'user' },
  due_on: '2026-03-01',
  due_at: null,
  permalink_url: url('3001'),
};
const ROW = {
  gid: '3001',
  name: 'Write launch post',
  completed: false,
  assignee: 'Ada',
  due: '2026-03-01',
  url: url('3001'),
};
const RAW_ROW_TIMED = {
  ...RAW_ROW,
  gid: '3002',
  name: 'Call vendor',
  assignee: null,
  due_on: '2026-03-02',
  due_at: '2026-03-02T15:00:00.000Z',
  permalink_url: url('3002'),
};
const ROW_TIMED = {
  gid: '3002',
  name: 'Call vendor',
  completed: false,
  assignee: null,
  due: '2026-03-02T15:00:00.000Z',
  url: url('3002'),
};

const RAW_DETAIL = {
  ...RAW_ROW,
  resource_subtype: 'default_task',
  completed_at: null,
  assignee: { gid: '2001', name: 'Ada', email: 'ada@example.com', resource_type: 'user' },
  start_on: '2026-02-20',
  notes: 'Draft, review, publish.',
  created_at: '2026-02-01T10:00:00.000Z',
  modified_at: '2026-02-10T09:00:00.000Z',
  created_by: { gid: '2002', name: 'Bob', resource_type: 'user' },
  memberships: [
    {
      project: { gid: '4001', name: 'Launch', resource_type: 'project' },
      section: { gid: '5001', name: 'Doing', resource_type: 'section' },
    },
    { project: { gid: '4002', name: 'Marketing', resource_type: 'project' } },
  ],
  parent: { gid: '3000', name: 'Launch checklist', resource_type: 'task' },
  tags: [
    { gid: '6001', name: 'blog' },
    { gid: '6002', name: 'q1' },
  ],
  custom_fields: [
    {
      gid: '7001',
      name: 'Priority',
      display_value: 'High',
      type: 'enum',
      enum_value: { gid: '7101', name: 'High', color: 'red' },
    },
    { gid: '7002', name: 'Estimate', display_value: '3', type: 'number', number_value: 3 },
    { gid: '7003', name: 'Priority', display_value: null, type: 'text' },
  ],
  num_subtasks: 2,
  workspace: { gid: '1001', name: 'Acme', resource_type: 'workspace' },
};
const DETAIL = {
  gid: '3001',
  name: 'Write launch post',
  type: 'default_task',
  completed: false,
  completedAt: null,
  assignee: { gid: '2001', name: 'Ada', email: 'ada@example.com' },
  dueOn: '2026-03-01',
  dueAt: null,
  startOn: '2026-02-20',
  projects: [
    { gid: '4001', name: 'Launch', section: 'Doing', sectionGid: '5001' },
    { gid: '4002', name: 'Marketing', section: null, sectionGid: null },
  ],
  parent: { gid: '3000', name: 'Launch checklist' },
  tags: ['blog', 'q1'],
  customFields: { Priority: 'High', Estimate: '3', 'Priority (7003)': null },
  subtasks: 2,
  createdBy: 'Bob',
  createdAt: '2026-02-01T10:00:00.000Z',
  modifiedAt: '2026-02-10T09:00:00.000Z',
  workspace: { gid: '1001', name: 'Acme' },
  url: url('3001'),
  notes: 'Draft, review, publish.',
};

const RAW_PROJECT = {
  gid: '4001',
  resource_type: 'project',
  name: 'Launch',
  archived: false,
  owner: { gid: '2001', name: 'Ada' },
  team: { gid: '8001', name: 'Marketing' },
  due_on: '2026-04-01',
  permalink_url: url('4001'),
};
const PROJECT_ROW = {
  gid: '4001',
  name: 'Launch',
  archived: false,
  owner: 'Ada',
  team: 'Marketing',
  dueOn: '2026-04-01',
  url: url('4001'),
};

const story = (gid: string, type: 'comment' | 'system', text: string) => ({
  gid,
  resource_type: 'story',
  type,
  resource_subtype: type === 'comment' ? 'comment_added' : 'assigned',
  text,
  created_at: `2026-02-0${gid.slice(-1)}T12:00:00.000Z`,
  created_by: { gid: '2002', name: 'Bob', resource_type: 'user' },
});
const comment = (gid: string, text: string) => ({
  gid,
  author: 'Bob',
  createdAt: `2026-02-0${gid.slice(-1)}T12:00:00.000Z`,
  text,
});
const PAGE1 = [
  story('9001', 'system', 'Ada assigned to Bob'),
  story('9002', 'comment', 'First!'),
  story('9003', 'comment', 'Second'),
  story('9004', 'system', 'moved'),
];
const PAGE2 = [story('9005', 'comment', 'Third'), story('9006', 'system', 'completed')];
const storiesReply = (req: RecordedRequest): UpstreamReply =>
  req.query.get('offset') === 'tok-s2'
    ? { json: { data: PAGE2, next_page: null } }
    : {
        json: {
          data: PAGE1,
          next_page: { offset: 'tok-s2', path: '/tasks/3001/stories?limit=100&offset=tok-s2', uri: 'x' },
        },
      };

interface Case {
  name?: string;
  tool: string;
  args: Record<string, unknown>;
  replies: Record<string, RouteReply>;
  calls: Call[];
  result: unknown;
}

const CASES: Case[] = [
  {
    tool: 'asana_whoami',
    args: {},
    replies: {
      'GET /users/me': {
        json: {
          data: {
            gid: '2001',
            name: 'Ada',
            email: 'ada@example.com',
            resource_type: 'user',
            photo: null,
            workspaces: [WS, WS2],
          },
        },
      },
    },
    calls: [['GET', '/users/me', { opt_fields: 'name,email,workspaces.name' }]],
    result: {
      gid: '2001',
      name: 'Ada',
      email: 'ada@example.com',
      workspaces: [
        { gid: '1001', name: 'Acme' },
        { gid: '1002', name: 'Side project' },
      ],
    },
  },
  {
    tool: 'asana_list_workspaces',
    args: { limit: 1 },
    replies: {
      'GET /workspaces': {
        json: {
          data: [{ ...WS, is_organization: true }],
          next_page: { offset: 'tok-w2', path: '/workspaces?limit=1&offset=tok-w2', uri: 'x' },
        },
      },
    },
    calls: [['GET', '/workspaces', { limit: '1', opt_fields: 'name,is_organization' }]],
    result: { workspaces: [{ gid: '1001', name: 'Acme', isOrganization: true }], next: 'tok-w2' },
  },
  {
    name: 'asana_list_workspaces (next page)',
    tool: 'asana_list_workspaces',
    args: { cursor: 'tok-w2' },
    replies: { 'GET /workspaces': { json: { data: [WS2], next_page: null } } },
    calls: [['GET', '/workspaces', { limit: '50', offset: 'tok-w2', opt_fields: 'name,is_organization' }]],
    result: { workspaces: [{ gid: '1002', name: 'Side project', isOrganization: false }], next: null },
  },
  {
    tool: 'asana_list_teams',
    args: { workspace: '1001', limit: 2 },
    replies: {
      'GET /workspaces/1001/teams': {
        json: {
          data: [
            {
              gid: '6001',
              name: 'Platform',
              description: 'd'.repeat(600),
              permalink_url: 'https://app.asana.com/0/team/6001',
              resource_type: 'team',
            },
            { gid: '6002', name: 'Design', resource_type: 'team' },
          ],
          next_page: { offset: 'tok-t2', path: 'x', uri: 'x' },
        },
      },
    },
    calls: [['GET', '/workspaces/1001/teams', { limit: '2', opt_fields: 'name,description,permalink_url' }]],
    result: {
      workspace: '1001',
      teams: [
        {
          gid: '6001',
          name: 'Platform',
          description: `${'d'.repeat(500)}… [truncated, 100 more characters]`,
          url: 'https://app.asana.com/0/team/6001',
        },
        { gid: '6002', name: 'Design', description: null, url: null },
      ],
      next: 'tok-t2',
    },
  },
  {
    name: 'asana_list_teams (mine, the only workspace by default)',
    tool: 'asana_list_teams',
    args: { mine: true, cursor: 'tok-t2' },
    replies: {
      'GET /workspaces': ONE_WORKSPACE,
      'GET /users/me/teams': { json: { data: [{ gid: '6001', name: 'Platform' }], next_page: null } },
    },
    calls: [
      WS_LOOKUP,
      [
        'GET',
        '/users/me/teams',
        { workspace: '1001', limit: '50', offset: 'tok-t2', opt_fields: 'name,description,permalink_url' },
      ],
    ],
    result: { workspace: '1001', teams: [{ gid: '6001', name: 'Platform', description: null, url: null }], next: null },
  },
  {
    tool: 'asana_list_projects',
    args: { workspace: '1002', limit: 2 },
    replies: {
      'GET /workspaces/1002/projects': {
        json: { data: [RAW_PROJECT], next_page: { offset: 'tok-p2', path: 'x', uri: 'x' } },
      },
    },
    calls: [['GET', '/workspaces/1002/projects', { archived: 'false', limit: '2', opt_fields: PROJECT_ROW_FIELDS }]],
    result: { workspace: '1002', projects: [PROJECT_ROW], next: 'tok-p2' },
  },
  {
    name: 'asana_list_projects (archived, the only workspace by default)',
    tool: 'asana_list_projects',
    args: { archived: true, cursor: 'tok-p2' },
    replies: {
      'GET /workspaces': ONE_WORKSPACE,
      'GET /workspaces/1001/projects': {
        json: { data: [{ ...RAW_PROJECT, archived: true, owner: null, team: null, due_on: null }], next_page: null },
      },
    },
    calls: [
      WS_LOOKUP,
      [
        'GET',
        '/workspaces/1001/projects',
        { archived: 'true', limit: '50', offset: 'tok-p2', opt_fields: PROJECT_ROW_FIELDS },
      ],
    ],
    result: {
      workspace: '1001',
      projects: [{ ...PROJECT_ROW, archived: true, owner: null, team: null, dueOn: null }],
      next: null,
    },
  },
  {
    tool: 'asana_get_project',
    args: { project: '4001' },
    replies: {
      'GET /projects/4001': {
        json: {
          data: {
            ...RAW_PROJECT,
            completed: false,
            notes: 'Ship v2.',
            workspace: { gid: '1001', name: 'Acme' },
            start_on: '2026-01-15',
            created_at: '2026-01-01T00:00:00.000Z',
            modified_at: '2026-02-01T00:00:00.000Z',
            privacy_setting: 'public_to_workspace',
            current_status_update: { gid: '1', title: 'Week 6', status_type: 'on_track' },
          },
        },
      },
    },
    calls: [['GET', '/projects/4001', { opt_fields: PROJECT_DETAIL_FIELDS }]],
    result: {
      ...PROJECT_ROW,
      completed: false,
      startOn: '2026-01-15',
      workspace: { gid: '1001', name: 'Acme' },
      privacy: 'public_to_workspace',
      createdAt: '2026-01-01T00:00:00.000Z',
      modifiedAt: '2026-02-01T00:00:00.000Z',
      status: { title: 'Week 6', type: 'on_track' },
      notes: 'Ship v2.',
    },
  },
  {
    tool: 'asana_list_sections',
    args: { project: '4001', cursor: 'tok-s' },
    replies: {
      'GET /projects/4001/sections': {
        json: {
          data: [
            { gid: '5000', name: 'To do', resource_type: 'section' },
            { gid: '5001', name: 'Doing', resource_type: 'section' },
          ],
          next_page: null,
        },
      },
    },
    calls: [['GET', '/projects/4001/sections', { limit: '100', offset: 'tok-s', opt_fields: 'name' }]],
    result: {
      project: '4001',
      sections: [
        { gid: '5000', name: 'To do' },
        { gid: '5001', name: 'Doing' },
      ],
      next: null,
    },
  },
  {
    tool: 'asana_list_tasks',
    args: { project: '4001', limit: 2 },
    replies: {
      'GET /tasks': { json: { data: [RAW_ROW, RAW_ROW_TIMED], next_page: { offset: 'tok-t2', path: 'x', uri: 'x' } } },
    },
    calls: [['GET', '/tasks', { project: '4001', limit: '2', opt_fields: TASK_ROW_FIELDS }]],
    result: { tasks: [ROW, ROW_TIMED], next: 'tok-t2' },
  },
  {
    name: 'asana_list_tasks (section, next page)',
    tool: 'asana_list_tasks',
    args: { section: '5001', cursor: 'tok-t2' },
    replies: { 'GET /tasks': { json: { data: [RAW_ROW], next_page: null } } },
    calls: [['GET', '/tasks', { section: '5001', limit: '50', offset: 'tok-t2', opt_fields: TASK_ROW_FIELDS }]],
    result: { tasks: [ROW], next: null },
  },
  {
    name: 'asana_list_tasks (my open tasks in the only workspace)',
    tool: 'asana_list_tasks',
    args: { assignee: 'me', completedSince: 'now' },
    replies: { 'GET /workspaces': ONE_WORKSPACE, 'GET /tasks': { json: { data: [RAW_ROW], next_page: null } } },
    calls: [
      WS_LOOKUP,
      [
        'GET',
        '/tasks',
        { assignee: 'me', workspace: '1001', completed_since: 'now', limit: '50', opt_fields: TASK_ROW_FIELDS },
      ],
    ],
    result: { tasks: [ROW], next: null },
  },
  {
    name: 'asana_list_tasks (assignee by email, given workspace)',
    tool: 'asana_list_tasks',
    args: { assignee: 'ada@example.com', workspace: '1002', completedSince: '2026-02-01T00:00:00Z' },
    replies: { 'GET /tasks': { json: { data: [], next_page: null } } },
    calls: [
      [
        'GET',
        '/tasks',
        {
          assignee: 'ada@example.com',
          workspace: '1002',
          completed_since: '2026-02-01T00:00:00Z',
          limit: '50',
          opt_fields: TASK_ROW_FIELDS,
        },
      ],
    ],
    result: { tasks: [], next: null },
  },
  {
    tool: 'asana_get_task',
    args: { task: '3001' },
    replies: { 'GET /tasks/3001': { json: { data: RAW_DETAIL } } },
    calls: [['GET', '/tasks/3001', { opt_fields: TASK_DETAIL_FIELDS }]],
    result: DETAIL,
  },
  {
    tool: 'asana_create_task',
    args: {
      name: 'Write launch post',
      notes: 'Draft first',
      assignee: 'ada@example.com',
      dueOn: '2026-03-01',
      projects: ['4001'],
      section: '5001',
    },
    replies: { 'POST /tasks': { status: 201, json: { data: RAW_ROW } } },
    calls: [
      [
        'POST',
        '/tasks',
        { opt_fields: TASK_ROW_FIELDS },
        {
          data: {
            name: 'Write launch post',
            notes: 'Draft first',
            assignee: 'ada@example.com',
            due_on: '2026-03-01',
            memberships: [{ project: '4001', section: '5001' }],
          },
        },
      ],
    ],
    result: ROW,
  },
  {
    name: 'asana_create_task (subtask, due time)',
    tool: 'asana_create_task',
    args: { name: 'Call vendor', parent: '3000', dueAt: '2026-03-02T15:00:00Z', assignee: 'me' },
    replies: { 'POST /tasks': { status: 201, json: { data: RAW_ROW_TIMED } } },
    calls: [
      [
        'POST',
        '/tasks',
        { opt_fields: TASK_ROW_FIELDS },
        { data: { name: 'Call vendor', assignee: 'me', due_at: '2026-03-02T15:00:00Z', parent: '3000' } },
      ],
    ],
    result: ROW_TIMED,
  },
  {
    name: 'asana_create_task (several projects)',
    tool: 'asana_create_task',
    args: { name: 'Write launch post', projects: ['4001', '4002'] },
    replies: { 'POST /tasks': { status: 201, json: { data: RAW_ROW } } },
    calls: [
      [
        'POST',
        '/tasks',
        { opt_fields: TASK_ROW_FIELDS },
        { data: { name: 'Write launch post', projects: ['4001', '4002'] } },
      ],
    ],
    result: ROW,
  },
  {
    name: 'asana_create_task (in the only workspace)',
    tool: 'asana_create_task',
    args: { name: 'Write launch post' },
    replies: { 'GET /workspaces': ONE_WORKSPACE, 'POST /tasks': { status: 201, json: { data: RAW_ROW } } },
    calls: [
      WS_LOOKUP,
      ['POST', '/tasks', { opt_fields: TASK_ROW_FIELDS }, { data: { name: 'Write launch post', workspace: '1001' } }],
    ],
    result: ROW,
  },
  {
    tool: 'asana_update_task',
    args: { task: '3001', completed: true, assignee: '', dueOn: '', notes: '' },
    replies: { 'PUT /tasks/3001': { json: { data: { ...RAW_ROW, completed: true, assignee: null, due_on: null } } } },
    calls: [
      [
        'PUT',
        '/tasks/3001',
        { opt_fields: TASK_ROW_FIELDS },
        { data: { notes: '', completed: true, assignee: null, due_on: null } },
      ],
    ],
    result: {
      ...ROW,
      completed: true,
      assignee: null,
      due: null,
      updated: ['notes', 'completed', 'assignee', 'due_on'],
    },
  },
  {
    name: 'asana_update_task (rename, reassign, due time)',
    tool: 'asana_update_task',
    args: { task: '3001', name: 'Publish launch post', assignee: '2002', dueAt: '2026-03-01T09:30:00+01:00' },
    replies: { 'PUT /tasks/3001': { json: { data: RAW_ROW } } },
    calls: [
      [
        'PUT',
        '/tasks/3001',
        { opt_fields: TASK_ROW_FIELDS },
        { data: { name: 'Publish launch post', assignee: '2002', due_at: '2026-03-01T09:30:00+01:00' } },
      ],
    ],
    result: { ...ROW, updated: ['name', 'assignee', 'due_at'] },
  },
  {
    tool: 'asana_add_comment',
    args: { task: '3001', text: 'Looks good\n\nShip it' },
    replies: {
      'POST /tasks/3001/stories': { status: 201, json: { data: story('9007', 'comment', 'Looks good\n\nShip it') } },
    },
    calls: [['POST', '/tasks/3001/stories', { opt_fields: STORY_FIELDS }, { data: { text: 'Looks good\n\nShip it' } }]],
    result: { task: '3001', ...comment('9007', 'Looks good\n\nShip it') },
  },
  {
    tool: 'asana_list_comments',
    args: { task: '3001' },
    replies: { 'GET /tasks/3001/stories': storiesReply },
    calls: [
      ['GET', '/tasks/3001/stories', { limit: '100', opt_fields: STORY_FIELDS }],
      ['GET', '/tasks/3001/stories', { limit: '100', offset: 'tok-s2', opt_fields: STORY_FIELDS }],
    ],
    result: {
      task: '3001',
      comments: [comment('9002', 'First!'), comment('9003', 'Second'), comment('9005', 'Third')],
      next: null,
    },
  },
  {
    name: 'asana_list_comments (a limit inside a page)',
    tool: 'asana_list_comments',
    args: { task: '3001', limit: 1 },
    replies: { 'GET /tasks/3001/stories': storiesReply },
    calls: [['GET', '/tasks/3001/stories', { limit: '100', opt_fields: STORY_FIELDS }]],
    result: { task: '3001', comments: [comment('9002', 'First!')], next: '~1' },
  },
  {
    name: 'asana_list_comments (from a cursor inside a page)',
    tool: 'asana_list_comments',
    args: { task: '3001', limit: 1, cursor: '~1' },
    replies: { 'GET /tasks/3001/stories': storiesReply },
    calls: [['GET', '/tasks/3001/stories', { limit: '100', opt_fields: STORY_FIELDS }]],
    result: { task: '3001', comments: [comment('9003', 'Second')], next: 'tok-s2~0' },
  },
  {
    name: 'asana_list_comments (from a cursor on a later page)',
    tool: 'asana_list_comments',
    args: { task: '3001', cursor: 'tok-s2~0' },
    replies: { 'GET /tasks/3001/stories': storiesReply },
    calls: [['GET', '/tasks/3001/stories', { limit: '100', offset: 'tok-s2', opt_fields: STORY_FIELDS }]],
    result: { task: '3001', comments: [comment('9005', 'Third')], next: null },
  },
  {
    tool: 'asana_search_tasks',
    args: {
      workspace: '1001',
      text: 'launch',
      assignee: 'me',
      project: '4001',
      completed: false,
      dueBefore: '2026-04-01',
      dueAfter: '2026-02-01',
      modifiedAfter: '2026-01-01',
      sortBy: 'due_date',
      limit: 2,
    },
    replies: {
      'GET /workspaces/1001/tasks/search': {
        json: {
          data: [
            { ...RAW_ROW, modified_at: '2026-02-10T09:00:00.000Z' },
            { ...RAW_ROW_TIMED, modified_at: null },
          ],
        },
      },
    },
    calls: [
      [
        'GET',
        '/workspaces/1001/tasks/search',
        {
          text: 'launch',
          'assignee.any': 'me',
          'projects.any': '4001',
          completed: 'false',
          'due_on.before': '2026-04-01',
          'due_on.after': '2026-02-01',
          'modified_at.after': '2026-01-01',
          sort_by: 'due_date',
          limit: '2',
          opt_fields: `${TASK_ROW_FIELDS},modified_at`,
        },
      ],
    ],
    result: {
      workspace: '1001',
      tasks: [
        { ...ROW, modifiedAt: '2026-02-10T09:00:00.000Z' },
        { ...ROW_TIMED, modifiedAt: null },
      ],
      count: 2,
      more: true,
    },
  },
  {
    name: 'asana_search_tasks (text only, the only workspace)',
    tool: 'asana_search_tasks',
    args: { text: 'invoice' },
    replies: { 'GET /workspaces': ONE_WORKSPACE, 'GET /workspaces/1001/tasks/search': { json: { data: [] } } },
    calls: [
      WS_LOOKUP,
      [
        'GET',
        '/workspaces/1001/tasks/search',
        { text: 'invoice', sort_by: 'modified_at', limit: '25', opt_fields: `${TASK_ROW_FIELDS},modified_at` },
      ],
    ],
    result: { workspace: '1001', tasks: [], count: 0, more: false },
  },
  {
    tool: 'asana_find_users',
    args: { query: 'ada', workspace: '1001', limit: 5 },
    replies: {
      'GET /workspaces/1001/typeahead': {
        json: {
          data: [
            { gid: '2001', name: 'Ada', email: 'ada@example.com', resource_type: 'user' },
            { gid: '2003', name: 'Adam', resource_type: 'user' },
          ],
        },
      },
    },
    calls: [
      [
        'GET',
        '/workspaces/1001/typeahead',
        { resource_type: 'user', query: 'ada', count: '5', opt_fields: 'name,email' },
      ],
    ],
    result: {
      workspace: '1001',
      users: [
        { gid: '2001', name: 'Ada', email: 'ada@example.com' },
        { gid: '2003', name: 'Adam', email: null },
      ],
    },
  },
  {
    tool: 'asana_add_task_to_project',
    args: { task: '3001', project: '4002', section: '5002' },
    replies: { 'POST /tasks/3001/addProject': { json: { data: {} } } },
    calls: [['POST', '/tasks/3001/addProject', {}, { data: { project: '4002', section: '5002' } }]],
    result: { task: '3001', project: '4002', section: '5002' },
  },
  {
    name: 'asana_add_task_to_project (no section)',
    tool: 'asana_add_task_to_project',
    args: { task: '3001', project: '4002' },
    replies: { 'POST /tasks/3001/addProject': { json: { data: {} } } },
    calls: [['POST', '/tasks/3001/addProject', {}, { data: { project: '4002' } }]],
    result: { task: '3001', project: '4002', section: null },
  },
];

describe('asana tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls);
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('asana')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });

  test('custom fields named "__proto__" or "constructor" are listed like any other', async () => {
    const fields = [
      { gid: '7001', name: '__proto__', display_value: 'x', type: 'text' },
      { gid: '7002', name: 'constructor', display_value: 'y', type: 'text' },
      { gid: '7003', name: '__proto__', display_value: 'z', type: 'text' },
    ];
    route({ 'GET /tasks/3001': { json: { data: { ...RAW_DETAIL, custom_fields: fields } } } });
    const r = (await ok('asana_get_task', { task: '3001' })) as { customFields: Record<string, unknown> };
    assert.deepEqual(Object.entries(r.customFields), [
      ['__proto__', 'x'],
      ['constructor', 'y'],
      ['__proto__ (7003)', 'z'],
    ]);
  });

  test('following `next` through the comments reads each comment once', async () => {
    route({ 'GET /tasks/3001/stories': storiesReply });
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 5; i++) {
      const r = (await ok('asana_list_comments', { task: '3001', limit: 1, ...(cursor ? { cursor } : {}) })) as {
        comments: Array<{ gid: string }>;
        next: string | null;
      };
      seen.push(...r.comments.map((c) => c.gid));
      cursor = r.next;
      if (!cursor) break;
    }
    assert.deepEqual(seen, ['9002', '9003', '9005']);
    assert.equal(cursor, null);
  });
});

describe('asana workspace default', () => {
  test('with several workspaces and none given, the tool names them and asks for one', async () => {
    route({ 'GET /workspaces': { json: { data: [WS, WS2], next_page: null } } });
    await fails(
      'asana_list_projects',
      {},
      /several Asana workspaces: Acme \(1001\), Side project \(1002\)\. Pass `workspace`/,
    );
    assertCalls([WS_LOOKUP]);
  });

  test('with no workspace at all, it says so', async () => {
    route({ 'GET /workspaces': { json: { data: [], next_page: null } } });
    await fails('asana_find_users', { query: 'ada' }, /belongs to no workspace/);
  });
});

describe('asana error mapping', () => {
  const cases: Array<[string, string, Record<string, unknown>, string, UpstreamReply, RegExp]> = [
    [
      '401 invalid token',
      'asana_whoami',
      {},
      'GET /users/me',
      { status: 401, json: { errors: [{ message: 'Not Authorized' }] } },
      /rejected the access token \(401\) while trying to read your Asana profile: reconnect asana\. Asana said: Not Authorized\./,
    ],
    [
      '402 search on a free plan',
      'asana_search_tasks',
      { workspace: '1001', text: 'x' },
      'GET /workspaces/1001/tasks/search',
      {
        status: 402,
        json: {
          errors: [
            { message: 'Search is only available to premium users.', help: 'https://developers.asana.com/docs/errors' },
          ],
        },
      },
      /\(402 Payment Required\): task search is only available on paid Asana plans.*Use asana_list_tasks by project, section or assignee instead\. Asana said: Search is only available to premium users\./,
    ],
    [
      '402 elsewhere',
      'asana_get_project',
      { project: '4001' },
      'GET /projects/4001',
      { status: 402, json: { errors: [{ message: 'Premium feature' }] } },
      /refused to read project 4001 \(402 Payment Required\): this needs a paid \(premium\) Asana plan/,
    ],
    [
      '403 permission',
      'asana_add_comment',
      { task: '3001', text: 'x' },
      'POST /tasks/3001/stories',
      { status: 403, json: { errors: [{ message: 'You do not have access to this task.' }] } },
      /refused permission to comment on task 3001 \(403\): You do not have access to this task\./,
    ],
    [
      '403 missing scope',
      'asana_list_sections',
      { project: '4001' },
      'GET /projects/4001/sections',
      { status: 403, json: { errors: [{ message: 'This request requires the default scope; the token lacks it.' }] } },
      /lacks the OAuth permission needed to list the sections of project 4001 \(403\): reconnect asana/,
    ],
    [
      '404 unknown gid',
      'asana_get_task',
      { task: '3999' },
      'GET /tasks/3999',
      { status: 404, json: { errors: [{ message: 'task: Unknown object: 3999' }] } },
      /found nothing while trying to read task 3999 \(404\): task: Unknown object: 3999\./,
    ],
    [
      '400 with several messages',
      'asana_create_task',
      { name: 'x', projects: ['4001'], dueOn: '2026-02-30' },
      'POST /tasks',
      {
        status: 400,
        json: { errors: [{ message: 'due_on: Invalid date' }, { message: 'assignee: Not a user in this workspace' }] },
      },
      /refused to create the task "x" \(400\): due_on: Invalid date; assignee: Not a user in this workspace\./,
    ],
    [
      '429 rate limit',
      'asana_list_tasks',
      { project: '4001' },
      'GET /tasks',
      {
        status: 429,
        headers: { 'retry-after': '30' },
        json: { errors: [{ message: 'You have made too many requests recently.' }] },
      },
      /rate limited the request to list the tasks of project 4001 \(429\): retry after 30 seconds/,
    ],
    [
      '500 with a phrase',
      'asana_update_task',
      { task: '3001', completed: true },
      'PUT /tasks/3001',
      { status: 500, json: { errors: [{ message: 'Server Error', phrase: '6 sad squid snuggle softly' }] } },
      /server error \(500\) while trying to update task 3001: retry later\. Error phrase: 6 sad squid snuggle softly\./,
    ],
    [
      '502 not JSON',
      'asana_list_workspaces',
      {},
      'GET /workspaces',
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

  test('argument problems the schema catches are refused before any request', async () => {
    route({});
    await fails('asana_get_task', { task: 'ABC-1' }, /Invalid arguments for asana_get_task/);
    await fails('asana_list_tasks', { project: '4001', limit: 500 }, /Invalid arguments for asana_list_tasks/);
    await fails('asana_create_task', { name: 'x', dueOn: '1 March' }, /Invalid arguments for asana_create_task/);
    await fails(
      'asana_create_task',
      { name: 'x', assignee: 'Ada Lovelace' },
      /Invalid arguments for asana_create_task/,
    );
    await fails('asana_update_task', { task: '3001', priority: 'high' }, /Invalid arguments for asana_update_task/);
    await fails('asana_search_tasks', { sortBy: 'name' }, /Invalid arguments for asana_search_tasks/);
    assert.equal(upstream.requests.length, 0);
  });

  test('argument problems the plugin catches are refused before any request', async () => {
    route({});
    await fails('asana_list_tasks', {}, /exactly one of project, section or assignee/);
    await fails('asana_list_tasks', { project: '4001', assignee: 'me' }, /exactly one of project, section or assignee/);
    await fails('asana_list_tasks', { project: '4001', workspace: '1001' }, /`workspace` goes with `assignee` only/);
    await fails('asana_update_task', { task: '3001' }, /Nothing to update/);
    await fails(
      'asana_update_task',
      { task: '3001', dueOn: '2026-03-01', dueAt: '2026-03-01T10:00:00Z' },
      /dueOn \(a date\) or dueAt \(a date and time\), not both/,
    );
    await fails(
      'asana_create_task',
      { name: 'x', section: '5001' },
      /give `projects` with exactly that project's gid beside `section`/,
    );
    await fails(
      'asana_create_task',
      { name: 'x', section: '5001', projects: ['4001', '4002'] },
      /exactly that project's gid/,
    );
    await fails('asana_list_comments', { task: '3001', cursor: 'tok-s2' }, /not a `next` value of asana_list_comments/);
    await fails('asana_list_comments', { task: '3001', cursor: 'tok~x' }, /not a `next` value of asana_list_comments/);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('asana: a lone surrogate is sent as U+FFFD (%EF%BF%BD), as URLSearchParams sends it', () => {
  test('in a query-string argument: asana_find_users with a query holding "\\uD800"', async () => {
    route({ 'GET /workspaces/1001/typeahead': { json: { data: [] } } });
    assert.deepEqual(await ok('asana_find_users', { query: 'ad\uD800a', workspace: '1001' }), {
      workspace: '1001',
      users: [],
    });
    assertCalls([
      [
        'GET',
        '/workspaces/1001/typeahead',
        { resource_type: 'user', query: 'ad\uFFFDa', count: '10', opt_fields: 'name,email' },
      ],
    ]);
    assert.match(upstream.requests[0]!.url, /[?&]query=ad%EF%BF%BDa(&|$)/);
  });
});

// ---------- the gateway's own refusals (response cap, timeout) in words, not bare bridge codes ----------
describe('asana: an answer over the response cap, or none in time', () => {
  let small: Gateway;
  before(async () => {
    small = await startPluginGateway(
      'asana',
      upstream,
      { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
      { policy: { http: { maxResponseBytes: 4096, requestTimeoutMs: 200 } } },
    );
  });
  after(async () => small?.close());
  const smallCalls = toolCalls(() => small, [TOKEN]);

  test('a list over the cap says to ask for less', async () => {
    route({ 'GET /workspaces/1002/projects': { json: { data: Array.from({ length: 40 }, () => RAW_PROJECT) } } });
    await smallCalls.fails(
      'asana_list_projects',
      { workspace: '1002' },
      /^Asana's answer is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\) while trying to .*: ask for less \(a smaller limit/,
    );
  });

  test('no answer in time: a read says to try again, a write to check first', async () => {
    const late = (reply: UpstreamReply) => () =>
      new Promise<UpstreamReply>((resolve) => setTimeout(() => resolve(reply), 1000));
    route({
      'GET /tasks/3001': late({ json: { data: RAW_DETAIL } }) as unknown as RouteReply,
      'POST /tasks': late({ status: 201, json: { data: RAW_ROW } }) as unknown as RouteReply,
    });
    await smallCalls.fails(
      'asana_get_task',
      { task: '3001' },
      /^Asana did not answer in time \(GW_ERR_BRIDGE_TIMEOUT\) while trying to read task 3001\. Try again in a moment\./,
    );
    await smallCalls.fails(
      'asana_create_task',
      { name: 'x', workspace: '1001' },
      /^Asana did not answer in time \(GW_ERR_BRIDGE_TIMEOUT\) while trying to .*\. It may still have been done: check before trying again\./,
    );
  });
});
