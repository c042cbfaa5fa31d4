/**
 * @module test/plugins/linear.test
 * Every Linear tool runs through the real gateway and sandbox against a loopback stand-in for
 * api.linear.app: each GraphQL request (POST /graphql, Bearer token, the operation it names and
 * its `variables`, never values spliced into the query text) and the slim result; then name
 * resolution (team key, state, labels, assignee), cursor paging, the error mapping (HTTP status
 * and `errors[].extensions.type`), and refused arguments.
 */
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import type { Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'linear-access-token-0123456789';
type Gateway = TestGateway;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway(
  'linear',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 86400 },
  (s) => ({ upstream, gw } = s),
);

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

/** Replies in order, one per GraphQL request. */
function replies(...list: UpstreamReply[]): void {
  upstream.requests.length = 0;
  let i = 0;
  upstream.setHandler(() => list[i++] ?? { status: 500, json: { errors: [{ message: 'unexpected request' }] } });
}
const data = (d: unknown): UpstreamReply => ({ json: { data: d } });

type Expect = [snippet: string, variables: Record<string, unknown>];
/** Exactly these GraphQL requests: the query names `snippet`, the variables are these. */
function assertCalls(calls: Expect[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => JSON.stringify(r.json)).join('\n')}`);
  calls.forEach(([snippet, variables], i) => {
    const r = reqs[i]!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/graphql');
    assert.equal(r.headers.authorization, `Bearer ${TOKEN}`);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const body = r.json as { query: string; variables: Record<string, unknown> };
    assert.ok(body.query.includes(snippet), `request ${i} query names ${snippet}: ${body.query}`);
    assert.deepEqual(body.variables, variables, `request ${i} variables`);
  });
}
/** No caller value is ever part of a query text. */
function assertNoSplice(...values: string[]): void {
  for (const r of upstream.requests)
    for (const v of values)
      assert.ok(!(r.json as { query: string }).query.includes(v), `"${v}" spliced into the query`);
}

const PAGE_END = { hasNextPage: false, endCursor: 'c-last' };
const ROW = {
  id: 'u-1',
  identifier: 'ENG-123',
  title: 'Fix login',
  priority: 2,
  url: 'https://linear.app/acme/issue/ENG-123',
  updatedAt: '2026-03-01T10:00:00.000Z',
  state: { name: 'In Progress', type: 'started' },
  assignee: { name: 'Ada' },
  team: { key: 'ENG' },
};
const SLIM_ROW = {
  id: 'u-1',
  identifier: 'ENG-123',
  title: 'Fix login',
  state: 'In Progress',
  stateType: 'started',
  assignee: 'Ada',
  priority: 'High',
  team: 'ENG',
  updatedAt: '2026-03-01T10:00:00.000Z',
  url: 'https://linear.app/acme/issue/ENG-123',
};
const TEAM = { id: 'team-1', key: 'ENG', name: 'Engineering' };
/** The label lookup's filter: the names, limited on the server to the team or the workspace, no groups. */
const labelFilter = (teamId: string, ...names: string[]) => ({
  filter: {
    and: [
      { or: names.map((n) => ({ name: { eqIgnoreCase: n } })) },
      { or: [{ team: { id: { eq: teamId } } }, { team: { null: true } }] },
      { isGroup: { eq: false } },
    ],
  },
});
const ISSUE_WRITE = {
  success: true,
  issue: {
    id: 'u-9',
    identifier: 'ENG-200',
    title: 'New bug',
    url: 'https://linear.app/acme/issue/ENG-200',
    state: { name: 'Todo' },
    assignee: { name: 'Ada' },
    priority: 1,
  },
};
const WRITE_RESULT = {
  id: 'u-9',
  identifier: 'ENG-200',
  title: 'New bug',
  state: 'Todo',
  assignee: 'Ada',
  priority: 'Urgent',
  url: 'https://linear.app/acme/issue/ENG-200',
};

describe('linear reads', () => {
  test('linear_whoami', async () => {
    replies(
      data({
        viewer: {
          id: 'user-1',
          name: 'Ada Lovelace',
          displayName: 'ada',
          email: 'ada@acme.test',
          admin: false,
          url: 'https://linear.app/acme/profiles/ada',
          organization: { id: 'org-1', name: 'Acme', urlKey: 'acme' },
        },
      }),
    );
    const r = await ok('linear_whoami', {});
    assertCalls([['viewer {', {}]]);
    assert.deepEqual(r, {
      id: 'user-1',
      name: 'Ada Lovelace',
      displayName: 'ada',
      email: 'ada@acme.test',
      admin: false,
      url: 'https://linear.app/acme/profiles/ada',
      organization: { id: 'org-1', name: 'Acme', urlKey: 'acme' },
    });
  });

  test('linear_list_teams pages with endCursor', async () => {
    replies(
      data({ teams: { nodes: [{ ...TEAM, description: null }], pageInfo: { hasNextPage: true, endCursor: 'c-1' } } }),
    );
    const r = await ok('linear_list_teams', { limit: 1 });
    assertCalls([['teams(first: $first, after: $after)', { first: 1, after: null }]]);
    assert.deepEqual(r, { teams: [{ ...TEAM, description: null }], next: 'c-1' });
    replies(data({ teams: { nodes: [], pageInfo: PAGE_END } }));
    const r2 = await ok('linear_list_teams', { cursor: 'c-1' });
    assertCalls([['teams(', { first: 50, after: 'c-1' }]]);
    assert.equal(r2.next, null, 'no next page: next is null even though endCursor is set');
  });

  test('linear_list_issues builds the filter in variables', async () => {
    replies(data({ issues: { nodes: [ROW], pageInfo: PAGE_END } }));
    const r = await ok('linear_list_issues', {
      team: 'ENG',
      assignee: 'me',
      open: true,
      label: 'Bug',
      project: 'Q3 "launch"',
    });
    assertCalls([
      [
        'issues(filter: $filter, first: $first, after: $after, orderBy: updatedAt)',
        {
          first: 25,
          after: null,
          filter: {
            team: { key: { eqIgnoreCase: 'ENG' } },
            assignee: { isMe: { eq: true } },
            state: { type: { nin: ['completed', 'canceled'] } },
            labels: { some: { name: { eqIgnoreCase: 'Bug' } } },
            project: { name: { eqIgnoreCase: 'Q3 "launch"' } },
          },
        },
      ],
    ]);
    assertNoSplice('Q3', 'Bug');
    assert.deepEqual(r, { issues: [SLIM_ROW], next: null });

    replies(data({ issues: { nodes: [], pageInfo: PAGE_END } }));
    await ok('linear_list_issues', { assignee: 'grace@acme.test', state: 'In Review', stateType: 'started' });
    assertCalls([
      [
        'issues(',
        {
          first: 25,
          after: null,
          filter: {
            assignee: { email: { eqIgnoreCase: 'grace@acme.test' } },
            state: { name: { eqIgnoreCase: 'In Review' }, type: { eq: 'started' } },
          },
        },
      ],
    ]);

    replies(data({ issues: { nodes: [], pageInfo: PAGE_END } }));
    await ok('linear_list_issues', { assignee: 'none' });
    assertCalls([['issues(', { first: 25, after: null, filter: { assignee: { null: true } } }]]);
  });

  test('linear_list_issues with query uses searchIssues', async () => {
    replies(data({ searchIssues: { nodes: [ROW], pageInfo: { hasNextPage: true, endCursor: 'c-2' } } }));
    const r = await ok('linear_list_issues', { query: 'login } mutation', team: 'ENG', limit: 5 });
    assertCalls([
      [
        'searchIssues(term: $term, filter: $filter, first: $first, after: $after)',
        { term: 'login } mutation', first: 5, after: null, filter: { team: { key: { eqIgnoreCase: 'ENG' } } } },
      ],
    ]);
    assertNoSplice('login }');
    assert.deepEqual(r, { issues: [SLIM_ROW], next: 'c-2' });
  });

  test('linear_get_issue', async () => {
    replies(
      data({
        issue: {
          id: 'u-1',
          identifier: 'ENG-123',
          title: 'Fix login',
          description: '## Steps\n1. open',
          priority: 2,
          priorityLabel: 'High',
          url: 'https://linear.app/acme/issue/ENG-123',
          createdAt: '2026-02-01T00:00:00.000Z',
          updatedAt: '2026-03-01T10:00:00.000Z',
          completedAt: null,
          canceledAt: null,
          dueDate: '2026-03-10',
          estimate: 3,
          state: { id: 's-2', name: 'In Progress', type: 'started' },
          assignee: { id: 'user-1', name: 'Ada', email: 'ada@acme.test' },
          creator: { name: 'Grace' },
          team: TEAM,
          labels: { nodes: [{ id: 'l-1', name: 'Bug' }] },
          project: { id: 'p-1', name: 'Auth' },
          cycle: { id: 'cy-1', number: 7, name: null },
          parent: null,
          comments: { nodes: [{ id: 'c1' }, { id: 'c2' }], pageInfo: { hasNextPage: false } },
        },
      }),
    );
    const r = await ok('linear_get_issue', { issue: 'ENG-123' });
    assertCalls([['issue(id: $id)', { id: 'ENG-123' }]]);
    assert.deepEqual(r, {
      id: 'u-1',
      identifier: 'ENG-123',
      title: 'Fix login',
      state: { id: 's-2', name: 'In Progress', type: 'started' },
      assignee: { id: 'user-1', name: 'Ada', email: 'ada@acme.test' },
      creator: 'Grace',
      priority: 2,
      priorityLabel: 'High',
      team: TEAM,
      labels: ['Bug'],
      project: { id: 'p-1', name: 'Auth' },
      cycle: { id: 'cy-1', number: 7, name: null },
      parent: null,
      dueDate: '2026-03-10',
      estimate: 3,
      comments: 2,
      createdAt: '2026-02-01T00:00:00.000Z',
      updatedAt: '2026-03-01T10:00:00.000Z',
      completedAt: null,
      canceledAt: null,
      url: 'https://linear.app/acme/issue/ENG-123',
      description: '## Steps\n1. open',
    });
  });

  test('linear_list_comments', async () => {
    replies(
      data({
        issue: {
          identifier: 'ENG-123',
          comments: {
            nodes: [
              {
                id: 'c1',
                body: 'LGTM',
                createdAt: '2026-03-02T00:00:00.000Z',
                editedAt: null,
                url: 'https://linear.app/c1',
                user: { name: 'Ada' },
              },
            ],
            pageInfo: { hasNextPage: true, endCursor: 'c-3' },
          },
        },
      }),
    );
    const r = await ok('linear_list_comments', { issue: 'ENG-123', limit: 1 });
    assertCalls([
      ['comments(first: $first, after: $after, orderBy: createdAt)', { id: 'ENG-123', first: 1, after: null }],
    ]);
    assert.deepEqual(r, {
      issue: 'ENG-123',
      comments: [
        {
          id: 'c1',
          author: 'Ada',
          createdAt: '2026-03-02T00:00:00.000Z',
          editedAt: null,
          url: 'https://linear.app/c1',
          body: 'LGTM',
        },
      ],
      next: 'c-3',
    });
  });

  test('linear_list_comments: newest first, as the manifest and README say', async () => {
    const c = (id: string, at: string) => ({ id, body: id, createdAt: at, editedAt: null, url: null, user: null });
    replies(
      data({
        issue: {
          identifier: 'ENG-123',
          comments: {
            nodes: [c('c2', '2026-03-02T00:00:00.000Z'), c('c1', '2026-03-01T00:00:00.000Z')],
            pageInfo: PAGE_END,
          },
        },
      }),
    );
    const r = await ok('linear_list_comments', { issue: 'ENG-123' });
    assert.deepEqual(
      r.comments.map((x: { id: string }) => x.id),
      ['c2', 'c1'],
      "Linear's order (newest first) is kept",
    );
    const manifest = JSON.parse(
      await readFile(new URL('../../../plugins/linear/manifest.json', import.meta.url), 'utf8'),
    ) as { tools: { name: string; description: string }[] };
    const readme = await readFile(new URL('../../../plugins/linear/README.md', import.meta.url), 'utf8');
    assert.match(manifest.tools.find((t) => t.name === 'linear_list_comments')!.description, /newest first/);
    assert.match(readme, /newest first/);
    for (const text of [JSON.stringify(manifest), readme]) assert.doesNotMatch(text, /oldest first/);
  });

  test('node lists: non-objects dropped, cut to the limit asked for; a null viewer is refused', async () => {
    const many = <T>(row: T) => [null, 7, 'x', [], ...Array.from({ length: 300 }, () => row)];
    replies(data({ issues: { nodes: many(ROW), pageInfo: PAGE_END } }));
    assert.deepEqual(await ok('linear_list_issues', { limit: 1 }), { issues: [SLIM_ROW], next: null });
    replies(data({ teams: { nodes: many({ ...TEAM, description: null }), pageInfo: PAGE_END } }));
    assert.deepEqual((await ok('linear_list_teams', { limit: 1 })).teams, [{ ...TEAM, description: null }]);
    replies(
      data({
        issue: {
          identifier: 'ENG-1',
          comments: {
            nodes: many({ id: 'c1', body: 'b', createdAt: null, editedAt: null, url: null, user: null }),
            pageInfo: PAGE_END,
          },
        },
      }),
    );
    assert.equal((await ok('linear_list_comments', { issue: 'ENG-1', limit: 1 })).comments.length, 1);
    replies(data({ projects: { nodes: many({ id: 'p-1', name: 'Auth' }), pageInfo: PAGE_END } }));
    assert.equal((await ok('linear_list_projects', { limit: 1 })).projects.length, 1);
    replies(
      data({
        workflowStates: {
          nodes: [null, { id: 's-1', name: 'Todo', type: 'unstarted', position: 1, description: null }],
        },
      }),
    );
    assert.deepEqual(
      (await ok('linear_list_workflow_states', { team: 'ENG' })).states.map((x: { id: string }) => x.id),
      ['s-1'],
    );
    replies(data({ viewer: null }));
    await fails('linear_whoami', {}, /did not say who you are/);
    replies(data({ teams: { nodes: [null, TEAM] } }), data({ viewer: null }));
    await fails('linear_create_issue', { team: 'ENG', title: 't', assignee: 'me' }, /did not say who you are/);
    assert.equal(upstream.requests.length, 2, 'no issueCreate without the viewer');
  });

  test('linear_list_workflow_states sorted by position; unknown team refused', async () => {
    replies(
      data({
        workflowStates: {
          nodes: [
            { id: 's-3', name: 'Done', type: 'completed', position: 3, description: null },
            { id: 's-1', name: 'Todo', type: 'unstarted', position: 1, description: null },
          ],
        },
      }),
    );
    const r = await ok('linear_list_workflow_states', { team: 'eng' });
    assertCalls([['workflowStates(first: 100, filter: { team: { key: { eqIgnoreCase: $key } } })', { key: 'eng' }]]);
    assert.deepEqual(
      r.states.map((s: { name: string }) => s.name),
      ['Todo', 'Done'],
    );
    assert.equal(r.team, 'ENG');
    replies(data({ workflowStates: { nodes: [] } }));
    await fails('linear_list_workflow_states', { team: 'NOPE' }, /no team with key "NOPE".*linear_list_teams/);
  });

  test('linear_list_projects', async () => {
    replies(
      data({
        projects: {
          nodes: [
            {
              id: 'p-1',
              name: 'Auth',
              status: { name: 'In Progress', type: 'started' },
              lead: { name: 'Ada' },
              startDate: '2026-01-01',
              targetDate: null,
              progress: 0.4,
              url: 'https://linear.app/p-1',
            },
          ],
          pageInfo: PAGE_END,
        },
      }),
    );
    const r = await ok('linear_list_projects', { team: 'ENG', name: 'auth' });
    assertCalls([
      [
        'projects(filter: $filter, first: $first, after: $after, orderBy: updatedAt)',
        {
          first: 25,
          after: null,
          filter: { accessibleTeams: { some: { key: { eqIgnoreCase: 'ENG' } } }, name: { containsIgnoreCase: 'auth' } },
        },
      ],
    ]);
    assert.deepEqual(r, {
      projects: [
        {
          id: 'p-1',
          name: 'Auth',
          status: 'In Progress',
          statusType: 'started',
          lead: 'Ada',
          startDate: '2026-01-01',
          targetDate: null,
          progress: 0.4,
          url: 'https://linear.app/p-1',
        },
      ],
      next: null,
    });
  });
});

describe('linear writes', () => {
  test('linear_create_issue resolves team, state, labels, assignee and parent', async () => {
    replies(
      data({ teams: { nodes: [TEAM] } }),
      data({ workflowStates: { nodes: [{ id: 's-1', name: 'Todo', type: 'unstarted' }] } }),
      data({
        issueLabels: {
          nodes: [
            { id: 'l-ws', name: 'Bug', team: null },
            { id: 'l-team', name: 'bug', team: { id: 'team-1' } },
            { id: 'l-other', name: 'Backend', team: { id: 'team-2' } },
            { id: 'l-be', name: 'Backend', team: { id: 'team-1' } },
          ],
        },
      }),
      data({ users: { nodes: [{ id: 'user-2' }] } }),
      data({ issue: { id: 'u-1', identifier: 'ENG-123', team: { id: 'team-1', key: 'ENG' } } }),
      data({ issueCreate: ISSUE_WRITE }),
    );
    const r = await ok('linear_create_issue', {
      team: 'ENG',
      title: 'New bug',
      description: '**bold**',
      priority: 1,
      state: 'todo',
      labels: ['Bug', 'backend'],
      assignee: 'grace@acme.test',
      parent: 'ENG-123',
    });
    assertCalls([
      ['teams(first: 2, filter: { key: { eqIgnoreCase: $key } })', { key: 'ENG' }],
      ['workflowStates(', { teamId: 'team-1', name: 'todo' }],
      ['issueLabels(first: 100, filter: $filter)', labelFilter('team-1', 'Bug', 'backend')],
      ['users(first: 2', { email: 'grace@acme.test' }],
      ['issue(id: $id)', { id: 'ENG-123' }],
      [
        'issueCreate(input: $input)',
        {
          input: {
            teamId: 'team-1',
            title: 'New bug',
            description: '**bold**',
            priority: 1,
            stateId: 's-1',
            labelIds: ['l-team', 'l-be'],
            assigneeId: 'user-2',
            parentId: 'u-1',
          },
        },
      ],
    ]);
    assertNoSplice('New bug', 'todo', 'grace@');
    assert.deepEqual(r, WRITE_RESULT);
  });

  test('linear_create_issue minimal, with "me"', async () => {
    replies(data({ teams: { nodes: [TEAM] } }), data({ viewer: { id: 'user-1' } }), data({ issueCreate: ISSUE_WRITE }));
    await ok('linear_create_issue', { team: 'ENG', title: 'New bug', assignee: 'me' });
    assertCalls([
      ['teams(', { key: 'ENG' }],
      ['viewer { id }', {}],
      ['issueCreate(', { input: { teamId: 'team-1', title: 'New bug', assigneeId: 'user-1' } }],
    ]);
  });

  test('assignee: a UUID is an id, anything else a display name looked up', async () => {
    const uuid = '0b9e2c1a-1111-4222-8333-444455556666';
    const byName = (n: string) => ({ or: [{ displayName: { eqIgnoreCase: n } }, { name: { eqIgnoreCase: n } }] });
    replies(data({ issueUpdate: ISSUE_WRITE }));
    await ok('linear_update_issue', { issue: 'ENG-1', assignee: uuid });
    assertCalls([['issueUpdate(', { id: 'ENG-1', input: { assigneeId: uuid } }]]);
    replies(
      data({ users: { nodes: [{ id: 'user-3', name: 'Grace Hopper', displayName: 'grace' }] } }),
      data({ issueUpdate: ISSUE_WRITE }),
    );
    await ok('linear_update_issue', { issue: 'ENG-1', assignee: 'Grace' });
    assertCalls([
      ['users(first: 3, filter: $filter)', { filter: byName('Grace') }],
      ['issueUpdate(', { id: 'ENG-1', input: { assigneeId: 'user-3' } }],
    ]);
    replies(data({ users: { nodes: [] } }));
    await fails(
      'linear_update_issue',
      { issue: 'ENG-1', assignee: 'nobody' },
      /no Linear user .*"nobody".*email, a user id/i,
    );
    replies(
      data({
        users: {
          nodes: [
            { id: 'a', displayName: 'sam' },
            { id: 'b', displayName: 'Sam' },
          ],
        },
      }),
    );
    await fails(
      'linear_update_issue',
      { issue: 'ENG-1', assignee: 'sam' },
      /More than one Linear user is called "sam".*email/,
    );
    assert.equal(upstream.requests.length, 1, 'no issueUpdate after an unresolved assignee');
    replies(data({ issues: { nodes: [], pageInfo: PAGE_END } }));
    await ok('linear_list_issues', { assignee: 'grace' });
    assertCalls([['issues(', { first: 25, after: null, filter: { assignee: byName('grace') } }]]);
    replies(data({ issues: { nodes: [], pageInfo: PAGE_END } }));
    await ok('linear_list_issues', { assignee: uuid });
    assertCalls([['issues(', { first: 25, after: null, filter: { assignee: { id: { eq: uuid } } } }]]);
  });

  test('linear_create_issue refuses unknown team, state and label', async () => {
    replies(data({ teams: { nodes: [] } }));
    await fails('linear_create_issue', { team: 'XX', title: 't' }, /no team with key "XX"/);
    replies(data({ teams: { nodes: [TEAM] } }), data({ workflowStates: { nodes: [] } }));
    await fails(
      'linear_create_issue',
      { team: 'ENG', title: 't', state: 'Doing' },
      /no workflow state named "Doing".*linear_list_workflow_states/,
    );
    replies(
      data({ teams: { nodes: [TEAM] } }),
      data({ issueLabels: { nodes: [{ id: 'l-x', name: 'Ops', team: { id: 'team-2' } }] } }),
    );
    await fails('linear_create_issue', { team: 'ENG', title: 't', labels: ['Ops'] }, /no label named "Ops"/);
    assert.equal(upstream.requests.length, 2, 'no issueCreate after a failed resolution');
  });

  test('linear_update_issue: state, labels add/remove, unassign', async () => {
    replies(
      data({ issue: { id: 'u-1', identifier: 'ENG-123', team: { id: 'team-1', key: 'ENG' } } }),
      data({ workflowStates: { nodes: [{ id: 's-3', name: 'Done', type: 'completed' }] } }),
      data({ issueLabels: { nodes: [{ id: 'l-1', name: 'Bug', team: null }] } }),
      data({ issueLabels: { nodes: [{ id: 'l-2', name: 'Triage', team: { id: 'team-1' } }] } }),
      data({ issueUpdate: ISSUE_WRITE }),
    );
    const r = await ok('linear_update_issue', {
      issue: 'ENG-123',
      state: 'Done',
      addLabels: ['Bug'],
      removeLabels: ['Triage'],
      assignee: 'none',
      priority: 0,
    });
    assertCalls([
      ['issue(id: $id)', { id: 'ENG-123' }],
      ['workflowStates(', { teamId: 'team-1', name: 'Done' }],
      ['issueLabels(', labelFilter('team-1', 'Bug')],
      ['issueLabels(', labelFilter('team-1', 'Triage')],
      [
        'issueUpdate(id: $id, input: $input)',
        {
          id: 'u-1',
          input: { priority: 0, assigneeId: null, stateId: 's-3', addedLabelIds: ['l-1'], removedLabelIds: ['l-2'] },
        },
      ],
    ]);
    assert.deepEqual(r, WRITE_RESULT);
  });

  test('linear_update_issue: title only is one request; nothing to change is refused', async () => {
    replies(data({ issueUpdate: ISSUE_WRITE }));
    await ok('linear_update_issue', { issue: 'ENG-123', title: 'Renamed' });
    assertCalls([['issueUpdate(', { id: 'ENG-123', input: { title: 'Renamed' } }]]);
    replies();
    await fails('linear_update_issue', { issue: 'ENG-123' }, /Nothing to change/);
    await fails(
      'linear_update_issue',
      { issue: 'ENG-123', addLabels: ['Bug'], removeLabels: ['bug'] },
      /both in addLabels and removeLabels/,
    );
    assert.equal(upstream.requests.length, 0);
  });

  test('linear_update_issue: success false is not reported as done', async () => {
    replies(data({ issueUpdate: { success: false, issue: null } }));
    await fails('linear_update_issue', { issue: 'ENG-123', priority: 2 }, /did not confirm/);
  });

  test('linear_add_comment', async () => {
    const comment = {
      id: 'c9',
      body: 'On it',
      createdAt: '2026-03-03T00:00:00.000Z',
      editedAt: null,
      url: 'https://linear.app/c9',
      user: { name: 'Ada' },
    };
    replies(
      data({ issue: { id: 'u-1', identifier: 'ENG-123', team: { id: 'team-1', key: 'ENG' } } }),
      data({ commentCreate: { success: true, comment } }),
    );
    const r = await ok('linear_add_comment', { issue: 'ENG-123', body: 'On it' });
    assertCalls([
      ['issue(id: $id)', { id: 'ENG-123' }],
      ['commentCreate(input: $input)', { input: { issueId: 'u-1', body: 'On it' } }],
    ]);
    assert.deepEqual(r, {
      issue: 'ENG-123',
      id: 'c9',
      author: 'Ada',
      createdAt: '2026-03-03T00:00:00.000Z',
      editedAt: null,
      url: 'https://linear.app/c9',
      body: 'On it',
    });
    const uuid = '0b9e2c1a-1111-4222-8333-444455556666';
    replies(data({ commentCreate: { success: true, comment } }));
    await ok('linear_add_comment', { issue: uuid, body: 'x' });
    assertCalls([['commentCreate(', { input: { issueId: uuid, body: 'x' } }]]);
  });
});

describe('linear errors', () => {
  test('HTTP 401 and authentication errors ask to reconnect', async () => {
    replies({
      status: 401,
      json: {
        errors: [
          {
            message: 'Authentication required, not authenticated',
            extensions: {
              type: 'authentication error',
              code: 'AUTHENTICATION_ERROR',
              userPresentableMessage: 'You need to authenticate.',
            },
          },
        ],
      },
    });
    await fails('linear_whoami', {}, /rejected the access token.*reconnect linear.*You need to authenticate/);
    replies({
      status: 200,
      json: { errors: [{ message: 'not authenticated', extensions: { type: 'authentication error' } }], data: null },
    });
    await fails('linear_whoami', {}, /reconnect linear/);
  });

  test('rate limiting (RATELIMITED in a 400 body, or 429)', async () => {
    replies({
      status: 400,
      headers: { 'x-ratelimit-requests-reset': '1767225600000' },
      json: { errors: [{ message: 'Rate limit exceeded', extensions: { code: 'RATELIMITED' } }] },
    });
    await fails(
      'linear_list_teams',
      {},
      /rate limited the request to list teams: retry after 2026-01-01T00:00:00.000Z/,
    );
    replies({ status: 429, headers: { 'retry-after': '30' }, json: { errors: [{ message: 'Too many requests' }] } });
    await fails('linear_list_teams', {}, /retry after 30 seconds/);
  });

  test('forbidden, missing scope, not found, invalid input, server error', async () => {
    replies({
      json: {
        data: null,
        errors: [
          {
            message: 'Forbidden',
            extensions: { type: 'forbidden', userPresentableMessage: 'Invalid scope: write required' },
          },
        ],
      },
    });
    await fails(
      'linear_add_comment',
      { issue: '0b9e2c1a-1111-4222-8333-444455556666', body: 'x' },
      /lacks the OAuth scope needed to comment.*reconnect linear/,
    );
    replies({
      json: {
        data: null,
        errors: [
          {
            message: 'Entity not found: Issue',
            extensions: { type: 'invalid input', userPresentableMessage: 'Could not find referenced Issue.' },
          },
        ],
      },
    });
    await fails('linear_get_issue', { issue: 'ENG-999' }, /found nothing while trying to read issue ENG-999/);
    replies({
      json: {
        data: { issueUpdate: null },
        errors: [
          {
            message: 'Argument Validation Error',
            extensions: { type: 'invalid input', userPresentableMessage: 'title must be shorter' },
          },
        ],
      },
    });
    await fails(
      'linear_update_issue',
      { issue: 'ENG-1', title: 'x' },
      /Linear refused to update issue ENG-1: title must be shorter/,
    );
    replies({ status: 502, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } });
    await fails('linear_list_projects', {}, /server error \(502\).*retry later/);
  });

  test('errors carrying both type and code are read by type, code spellings too', async () => {
    replies({
      json: {
        data: null,
        errors: [{ message: 'Internal error', extensions: { type: 'internal error', code: 'INTERNAL_SERVER_ERROR' } }],
      },
    });
    await fails('linear_whoami', {}, /server error \(200\) while trying to read your Linear user: retry later/);
    replies({ json: { data: null, errors: [{ message: 'Lock timeout', extensions: { code: 'LOCK_TIMEOUT' } }] } });
    await fails('linear_list_teams', {}, /server error .*retry later/);
    replies({
      json: {
        data: null,
        errors: [
          {
            message: 'Plan',
            extensions: {
              type: 'feature not accessible',
              code: 'FEATURE_NOT_ACCESSIBLE',
              userPresentableMessage: 'Upgrade to use this',
            },
          },
        ],
      },
    });
    await fails('linear_list_projects', {}, /refused to list projects \(feature not accessible\): Upgrade to use this/);
  });

  test('schema refusals reach no upstream', async () => {
    replies();
    const refused: [string, Record<string, unknown>][] = [
      ['linear_get_issue', { issue: 'ENG 123' }],
      ['linear_get_issue', { issue: '../x' }],
      ['linear_create_issue', { team: 'ENG', title: 't', priority: 5 }],
      ['linear_list_issues', { stateType: 'done' }],
      ['linear_list_teams', { extra: 1 }],
      ['linear_update_issue', { issue: 'ENG-1', assignee: 'two words' }],
    ];
    for (const [tool, args] of refused) {
      const item = (await gw.execute(tool, args)) as Record<string, unknown>;
      assert.equal(
        item['code'],
        'GW_ERR_VALIDATION_INVALID_ARGS',
        `${tool} ${JSON.stringify(args)}: ${JSON.stringify(item)}`,
      );
    }
    assert.equal(upstream.requests.length, 0);
  });
});

describe('linear: an answer over the response cap', () => {
  let small: Gateway;
  before(async () => {
    small = await startPluginGateway(
      'linear',
      upstream,
      { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 86400 },
      { policy: { http: { maxResponseBytes: 4096 } } },
    );
  });
  after(async () => small?.close());
  const big = 'x'.repeat(20000);
  const error = async (tool: string, args: Record<string, unknown>) => {
    const item = (await small.execute(tool, args)) as Record<string, unknown>;
    assert.ok(!('result' in item), JSON.stringify(item));
    return String(item['error']);
  };

  test('linear_get_issue gives the issue\'s url, not "a smaller limit"', async () => {
    replies(
      data({ issue: { id: 'u-1', description: big } }),
      data({ issue: { url: 'https://linear.app/acme/issue/ENG-123' } }),
    );
    const e = await error('linear_get_issue', { issue: 'ENG-123' });
    assert.match(
      e,
      /^Issue ENG-123 is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\), so it cannot be read here: open it in Linear: https:\/\/linear\.app\/acme\/issue\/ENG-123 /,
    );
    assert.doesNotMatch(e, /limit/);
    assertCalls([
      ['issue(id: $id) { id identifier', { id: 'ENG-123' }],
      ['issue(id: $id) { url }', { id: 'ENG-123' }],
    ]);
  });

  test('workflow states and writes do not mention a limit; lists do', async () => {
    replies(data({ workflowStates: { nodes: [{ id: 's', name: big }] } }));
    assert.doesNotMatch(await error('linear_list_workflow_states', { team: 'ENG' }), /limit/);
    replies(data({ issueUpdate: { success: true, issue: { id: 'u-1', title: big } } }));
    const w = await error('linear_update_issue', { issue: 'ENG-1', title: 't' });
    assert.match(w, /GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\).*the change was probably made: check/);
    assert.doesNotMatch(w, /limit/);
    replies(data({ issues: { nodes: [{ ...ROW, title: big }], pageInfo: PAGE_END } }));
    assert.match(
      await error('linear_list_issues', { limit: 50 }),
      /GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\).*a smaller limit/,
    );
  });
});
