/**
 * @module plugins/linear/plugin
 * Linear tools over its GraphQL API (POST https://api.linear.app/graphql, `{query, variables}`),
 * acting as the connected Linear user (OAuth 2.0). Every value from the caller travels in
 * `variables`: query texts are constants. Team keys, state names, label names, emails and issue
 * identifiers ("ENG-123") are resolved to Linear ids here. Lists page with Linear's
 * `pageInfo.endCursor`, handed back as `next`. Self-contained (the plugin format allows no
 * imports): the request helper, the one error mapping and the result shapers live here, which is
 * why the file is longer than 400 lines.
 */

const API = 'https://api.linear.app/graphql';
const MAX_TEXT = 20000;
const PRIORITY = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Linear answer becomes a message an agent can act on.

/** `extensions.type` / `extensions.code` in one spelling: lower case, `_` as a space. */
const norm = (v) => (typeof v === 'string' ? v.toLowerCase().replace(/_/g, ' ').trim() : '');

/** Linear's GraphQL errors: the friendliest message of each, and the first error's type and code. */
function linearErrors(data) {
  const list = data && typeof data === 'object' && Array.isArray(data.errors) ? data.errors : [];
  const messages = [];
  const raw = [];
  let kind = '';
  let code = '';
  for (const e of list) {
    if (!e || typeof e !== 'object') continue;
    const ext = e.extensions && typeof e.extensions === 'object' ? e.extensions : {};
    const msg = typeof ext.userPresentableMessage === 'string' ? ext.userPresentableMessage : typeof e.message === 'string' ? e.message : '';
    if (msg) messages.push(msg.slice(0, 500));
    if (typeof e.message === 'string') raw.push(e.message.slice(0, 200));
    if (!kind && !code) {
      kind = norm(ext.type);
      code = norm(ext.code);
    }
  }
  return { kind: kind || code, kinds: new Set([kind, code].filter(Boolean)), detail: messages.join('; ').slice(0, 1000), raw: raw.join(' ') };
}

function linearError(action, status, headers, data) {
  const { kind, kinds, detail: gqlDetail, raw } = linearErrors(data);
  const is = (...names) => names.some((n) => kinds.has(n));
  const detail = (gqlDetail || (typeof data === 'string' ? data.trim().slice(0, 300) : '')).replace(/[.\s]+$/, '');
  const said = detail ? ` Linear said: ${detail}.` : '';
  const text = `${kind} ${detail} ${raw}`.toLowerCase();
  if (status === 429 || is('ratelimited', 'rate limited')) {
    const after = headers.get('retry-after');
    const reset = Number(headers.get('x-ratelimit-requests-reset'));
    const wait = after
      ? `retry after ${after} seconds`
      : Number.isFinite(reset) && reset > 0
        ? `retry after ${new Date(reset).toISOString()}`
        : 'wait a minute and retry';
    return new Error(`Linear rate limited the request to ${action}: ${wait}.${said}`);
  }
  if (status === 401 || is('authentication error', 'unauthenticated')) {
    return new Error(`Linear rejected the access token while trying to ${action}: reconnect linear.${said}`);
  }
  if (status === 403 || is('forbidden')) {
    if (/scope|write access|permission to write/.test(text)) {
      return new Error(`The Linear connection lacks the OAuth scope needed to ${action}: reconnect linear and approve read and write access.${said}`);
    }
    return new Error(`Linear refused permission to ${action}: ${detail || 'your Linear user cannot see or change this'}.`);
  }
  if (status === 404 || /entity not found|not found/.test(text)) {
    return new Error(`Linear found nothing while trying to ${action}: ${detail || 'the id or identifier does not exist, or you cannot see it'}.`);
  }
  if (is('feature not accessible', 'usage limit exceeded')) {
    return new Error(`Linear refused to ${action} (${kind}): ${detail || 'your workspace plan does not allow it'}.`);
  }
  if (status >= 500 || is('internal error', 'internal server error', 'lock timeout')) {
    return new Error(`Linear had a server error (${status}) while trying to ${action}: retry later.${said}`);
  }
  if (status >= 400 || is('invalid input', 'user error', 'graphql error', 'bad user input')) {
    return new Error(`Linear refused to ${action}: ${detail || `HTTP ${status}`}.`);
  }
  return new Error(`Linear could not ${action}: ${detail || 'the answer had no data'}.`);
}

/** What to do about an answer over the gateway's size cap, by kind of request (or `opts.tooLarge`). */
function tooLargeHint(opts) {
  if (opts.tooLarge) return opts.tooLarge;
  if (opts.write) return 'the change was probably made: check (linear_get_issue, linear_list_comments) before trying again';
  return 'this answer cannot be made smaller: try again later, or reach it in Linear itself';
}

/** The gateway's own refusals of a request (an answer over its size cap, none in time) in words. */
function bridgeError(err, opts, action) {
  const code = err && err.code;
  const write = !!opts.write;
  let out;
  if (code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
    out = new Error(`Linear's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ${tooLargeHint(opts)}.`);
  } else if (code === 'GW_ERR_BRIDGE_TIMEOUT') {
    const tail = write ? ' It may still have been done: check before trying again.' : ' Try again in a moment.';
    out = new Error(`Linear did not answer in time (GW_ERR_BRIDGE_TIMEOUT) while trying to ${action}.${tail}`);
  } else {
    return err;
  }
  out.code = code;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Requests

/**
 * One GraphQL request; returns `data`, or throws the mapped error (HTTP or `errors[]`).
 * `opts.write`: a change (a timeout may still have made it); `opts.tooLarge`: what to do when the
 * answer is over the gateway's size cap.
 */
async function gql(ctx, action, query, variables, opts = {}) {
  let res;
  try {
    res = await ctx.http(API, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables: variables || {} }),
    });
  } catch (err) {
    throw bridgeError(err, opts, action);
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) throw linearError(action, res.status, res.headers, data);
  if (!data || typeof data !== 'object') throw linearError(action, res.status, res.headers, data);
  if (Array.isArray(data.errors) && data.errors.length) throw linearError(action, res.status, res.headers, data);
  if (!data.data || typeof data.data !== 'object') throw linearError(action, res.status, res.headers, undefined);
  return data.data;
}

const PAGE = 'pageInfo { hasNextPage endCursor }';
const LIMIT_HINT = { tooLarge: 'ask for fewer with a smaller limit and page with cursor' };
/** A connection's nodes: objects only, at most `max` (what was asked for) whatever the answer holds. */
const nodes = (conn, max = 100) =>
  conn && typeof conn === 'object' && Array.isArray(conn.nodes) ? conn.nodes.filter((n) => n && typeof n === 'object' && !Array.isArray(n)).slice(0, max) : [];
const nextOf = (conn) => (conn && conn.pageInfo && conn.pageInfo.hasNextPage && typeof conn.pageInfo.endCursor === 'string' ? conn.pageInfo.endCursor : null);

// ---------------------------------------------------------------------------------------------
// Result shapers

const ISSUE_ROW = 'id identifier title priority url updatedAt state { name type } assignee { name } team { key }';
const ISSUE_DETAIL =
  'id identifier title description priority priorityLabel url createdAt updatedAt completedAt canceledAt dueDate estimate ' +
  'state { id name type } assignee { id name email } creator { name } team { id key name } ' +
  'labels(first: 50) { nodes { id name } } project { id name } cycle { id number name } parent { identifier title } ' +
  'comments(first: 100) { nodes { id } pageInfo { hasNextPage } }';
const COMMENT = 'id body createdAt editedAt url user { name }';

const nameOf = (x) => (x && typeof x === 'object' ? x.name ?? null : null);

function cut(text) {
  const s = typeof text === 'string' ? text : '';
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}… (truncated)` : s;
}

function slimIssue(i) {
  return {
    id: i.id,
    identifier: i.identifier ?? null,
    title: i.title ?? null,
    state: nameOf(i.state),
    stateType: i.state ? i.state.type ?? null : null,
    assignee: nameOf(i.assignee),
    priority: typeof i.priority === 'number' ? PRIORITY[i.priority] ?? i.priority : null,
    team: i.team ? i.team.key ?? null : null,
    updatedAt: i.updatedAt ?? null,
    url: i.url ?? null,
  };
}

function detailIssue(i) {
  const comments = i.comments || {};
  const count = nodes(comments, 100).length;
  return {
    id: i.id,
    identifier: i.identifier ?? null,
    title: i.title ?? null,
    state: i.state ? { id: i.state.id, name: i.state.name ?? null, type: i.state.type ?? null } : null,
    assignee: i.assignee ? { id: i.assignee.id, name: i.assignee.name ?? null, email: i.assignee.email ?? null } : null,
    creator: nameOf(i.creator),
    priority: typeof i.priority === 'number' ? i.priority : null,
    priorityLabel: i.priorityLabel ?? null,
    team: i.team ? { id: i.team.id, key: i.team.key ?? null, name: i.team.name ?? null } : null,
    labels: nodes(i.labels, 50).map(nameOf).filter((n) => n !== null),
    project: i.project ? { id: i.project.id, name: i.project.name ?? null } : null,
    cycle: i.cycle ? { id: i.cycle.id, number: i.cycle.number ?? null, name: i.cycle.name ?? null } : null,
    parent: i.parent ? { identifier: i.parent.identifier ?? null, title: i.parent.title ?? null } : null,
    dueDate: i.dueDate ?? null,
    estimate: i.estimate ?? null,
    comments: comments.pageInfo && comments.pageInfo.hasNextPage ? `${count}+` : count,
    createdAt: i.createdAt ?? null,
    updatedAt: i.updatedAt ?? null,
    completedAt: i.completedAt ?? null,
    canceledAt: i.canceledAt ?? null,
    url: i.url ?? null,
    description: cut(i.description),
  };
}

function slimComment(c) {
  return { id: c.id, author: nameOf(c.user), createdAt: c.createdAt ?? null, editedAt: c.editedAt ?? null, url: c.url ?? null, body: cut(c.body) };
}

// ---------------------------------------------------------------------------------------------
// Resolution of names to ids

async function resolveTeam(ctx, key) {
  const data = await gql(ctx, `find team ${key}`, 'query($key: String!) { teams(first: 2, filter: { key: { eqIgnoreCase: $key } }) { nodes { id key name } } }', { key });
  const team = nodes(data.teams, 2)[0];
  if (!team) throw new Error(`Linear has no team with key "${key}" that you can see: linear_list_teams lists the teams and their keys.`);
  return team;
}

async function resolveState(ctx, team, name) {
  const data = await gql(
    ctx,
    `find workflow state "${name}" of team ${team.key}`,
    'query($teamId: ID!, $name: String!) { workflowStates(first: 5, filter: { team: { id: { eq: $teamId } }, name: { eqIgnoreCase: $name } }) { nodes { id name type } } }',
    { teamId: team.id, name },
  );
  const state = nodes(data.workflowStates, 5)[0];
  if (!state) throw new Error(`Team ${team.key} has no workflow state named "${name}": linear_list_workflow_states lists them.`);
  return state;
}

/** The server-side label filter: these names, of this team or the workspace (no team), no label groups. */
function labelFilter(teamId, names) {
  return {
    and: [
      { or: names.map((n) => ({ name: { eqIgnoreCase: n } })) },
      { or: [{ team: { id: { eq: teamId } } }, { team: { null: true } }] },
      { isGroup: { eq: false } },
    ],
  };
}

/** Label names (case-insensitive) to ids: the team's labels and workspace labels (no team), never groups. */
async function resolveLabels(ctx, team, names) {
  if (!names || !names.length) return [];
  const data = await gql(
    ctx,
    `find labels ${names.join(', ')}`,
    'query($filter: IssueLabelFilter!) { issueLabels(first: 100, filter: $filter) { nodes { id name team { id } } } }',
    { filter: labelFilter(team.id, names) },
  );
  const byName = new Map();
  for (const l of nodes(data.issueLabels)) {
    if (!l || typeof l.name !== 'string') continue;
    if (l.team && l.team.id !== team.id) continue;
    const k = l.name.toLowerCase();
    if (!byName.has(k) || l.team) byName.set(k, l.id);
  }
  const missing = names.filter((n) => !byName.has(n.toLowerCase()));
  if (missing.length) throw new Error(`Team ${team.key} has no label named ${missing.map((n) => `"${n}"`).join(', ')} (labels must exist already; names are matched ignoring case).`);
  return [...new Set(names.map((n) => byName.get(n.toLowerCase())))];
}

/** Linear's filter for a user by display name or full name, ignoring case. */
const userNameFilter = (name) => ({ or: [{ displayName: { eqIgnoreCase: name } }, { name: { eqIgnoreCase: name } }] });

/** "me", an email, a user id (UUID) or a display name → user id; "none" → null (unassigned). */
async function resolveUser(ctx, who) {
  if (who === 'none') return null;
  if (who === 'me') {
    const data = await gql(ctx, 'read your Linear user', 'query { viewer { id } }', {});
    if (!data.viewer || typeof data.viewer.id !== 'string') throw new Error('Linear did not say who you are (no viewer): try linear_whoami, or reconnect linear.');
    return data.viewer.id;
  }
  if (who.includes('@')) {
    const data = await gql(ctx, `find the Linear user ${who}`, 'query($email: String!) { users(first: 2, filter: { email: { eqIgnoreCase: $email } }) { nodes { id } } }', { email: who });
    const u = nodes(data.users, 2)[0];
    if (!u) throw new Error(`No Linear user in this workspace has the email ${who}.`);
    return u.id;
  }
  if (UUID.test(who)) return who;
  const data = await gql(ctx, `find the Linear user ${who}`, 'query($filter: UserFilter!) { users(first: 3, filter: $filter) { nodes { id name displayName } } }', { filter: userNameFilter(who) });
  const found = nodes(data.users, 3).filter((u) => typeof u.id === 'string');
  if (found.length === 1) return found[0].id;
  if (!found.length) throw new Error(`No Linear user in this workspace has the display name or name "${who}": give "me", an email, a user id (a UUID; linear_whoami shows yours) or an exact display name.`);
  throw new Error(`More than one Linear user is called "${who}" (${found.map((u) => u.displayName || u.name).join(', ')}): give their email instead.`);
}

async function resolveIssue(ctx, ref, action) {
  const data = await gql(ctx, action, 'query($id: String!) { issue(id: $id) { id identifier team { id key } } }', { id: ref });
  if (!data.issue) throw new Error(`Linear found no issue ${ref}.`);
  return data.issue;
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function whoami(ctx) {
  const data = await gql(ctx, 'read your Linear user', 'query { viewer { id name displayName email admin url organization { id name urlKey } } }', {});
  const v = data.viewer;
  if (!v || typeof v !== 'object') throw new Error('Linear did not say who you are (no viewer): reconnect linear if this persists.');
  const o = v.organization || {};
  return {
    id: v.id,
    name: v.name ?? null,
    displayName: v.displayName ?? null,
    email: v.email ?? null,
    admin: !!v.admin,
    url: v.url ?? null,
    organization: { id: o.id ?? null, name: o.name ?? null, urlKey: o.urlKey ?? null },
  };
}

async function listTeams(ctx, args) {
  const first = args.limit ?? 50;
  const data = await gql(ctx, 'list teams', `query($first: Int!, $after: String) { teams(first: $first, after: $after) { nodes { id key name description } ${PAGE} } }`, {
    first,
    after: args.cursor ?? null,
  }, LIMIT_HINT);
  return {
    teams: nodes(data.teams, first).map((t) => ({ id: t.id, key: t.key ?? null, name: t.name ?? null, description: t.description ?? null })),
    next: nextOf(data.teams),
  };
}

function issueFilter(args) {
  const f = {};
  if (args.team) f.team = { key: { eqIgnoreCase: args.team } };
  if (args.assignee === 'me') f.assignee = { isMe: { eq: true } };
  else if (args.assignee === 'none') f.assignee = { null: true };
  else if (args.assignee && args.assignee.includes('@')) f.assignee = { email: { eqIgnoreCase: args.assignee } };
  else if (args.assignee && UUID.test(args.assignee)) f.assignee = { id: { eq: args.assignee } };
  else if (args.assignee) f.assignee = userNameFilter(args.assignee);
  const state = {};
  if (args.state) state.name = { eqIgnoreCase: args.state };
  if (args.stateType) state.type = { eq: args.stateType };
  else if (args.open) state.type = { nin: ['completed', 'canceled'] };
  if (Object.keys(state).length) f.state = state;
  if (args.label) f.labels = { some: { name: { eqIgnoreCase: args.label } } };
  if (args.project) f.project = { name: { eqIgnoreCase: args.project } };
  return f;
}

async function listIssues(ctx, args) {
  const filter = issueFilter(args);
  const vars = { first: args.limit ?? 25, after: args.cursor ?? null, filter };
  let conn;
  if (args.query) {
    const data = await gql(
      ctx,
      `search issues for "${args.query}"`,
      `query($term: String!, $filter: IssueFilter, $first: Int!, $after: String) { searchIssues(term: $term, filter: $filter, first: $first, after: $after) { nodes { ${ISSUE_ROW} } ${PAGE} } }`,
      { term: args.query, ...vars },
      LIMIT_HINT,
    );
    conn = data.searchIssues;
  } else {
    const data = await gql(
      ctx,
      'list issues',
      `query($filter: IssueFilter, $first: Int!, $after: String) { issues(filter: $filter, first: $first, after: $after, orderBy: updatedAt) { nodes { ${ISSUE_ROW} } ${PAGE} } }`,
      vars,
      LIMIT_HINT,
    );
    conn = data.issues;
  }
  return { issues: nodes(conn, vars.first).map(slimIssue), next: nextOf(conn) };
}

async function getIssue(ctx, args) {
  let data;
  try {
    data = await gql(ctx, `read issue ${args.issue}`, `query($id: String!) { issue(id: $id) { ${ISSUE_DETAIL} } }`, { id: args.issue }, {
      tooLarge: 'it cannot be read here: open it in Linear (its url is in linear_list_issues; linear_list_comments reads its comments)',
    });
  } catch (err) {
    if (err && err.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
      let url = null;
      try {
        const small = await gql(ctx, `find the link of issue ${args.issue}`, 'query($id: String!) { issue(id: $id) { url } }', { id: args.issue });
        url = small.issue && typeof small.issue.url === 'string' && small.issue.url.startsWith('https://linear.app/') ? small.issue.url : null;
      } catch {
        // keep the first message
      }
      if (url) {
        const out = new Error(`Issue ${args.issue} is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE), so it cannot be read here: open it in Linear: ${url} (linear_list_comments reads its comments).`);
        out.code = err.code;
        throw out;
      }
    }
    throw err;
  }
  if (!data.issue) throw new Error(`Linear found no issue ${args.issue}.`);
  return detailIssue(data.issue);
}

const WRITE_RESULT = 'success issue { id identifier title url state { name } assignee { name } priority }';

function writeResult(payload, verb) {
  if (!payload || !payload.success || !payload.issue) throw new Error(`Linear did not confirm that the issue was ${verb}: check with linear_list_issues before trying again.`);
  const i = payload.issue;
  return {
    id: i.id,
    identifier: i.identifier ?? null,
    title: i.title ?? null,
    state: nameOf(i.state),
    assignee: nameOf(i.assignee),
    priority: typeof i.priority === 'number' ? PRIORITY[i.priority] ?? i.priority : null,
    url: i.url ?? null,
  };
}

async function createIssue(ctx, args) {
  const team = await resolveTeam(ctx, args.team);
  const input = { teamId: team.id, title: args.title };
  if (args.description) input.description = args.description;
  if (args.priority !== undefined) input.priority = args.priority;
  if (args.state) input.stateId = (await resolveState(ctx, team, args.state)).id;
  if (args.labels && args.labels.length) input.labelIds = await resolveLabels(ctx, team, args.labels);
  if (args.assignee && args.assignee !== 'none') input.assigneeId = await resolveUser(ctx, args.assignee);
  if (args.parent) input.parentId = (await resolveIssue(ctx, args.parent, `find parent issue ${args.parent}`)).id;
  const data = await gql(ctx, `create an issue in team ${team.key}`, `mutation($input: IssueCreateInput!) { issueCreate(input: $input) { ${WRITE_RESULT} } }`, { input }, { write: true });
  return writeResult(data.issueCreate, 'created');
}

async function updateIssue(ctx, args) {
  const keys = ['title', 'description', 'state', 'assignee', 'priority', 'addLabels', 'removeLabels'];
  if (!keys.some((k) => args[k] !== undefined && !(Array.isArray(args[k]) && !args[k].length))) {
    throw new Error(`Nothing to change: give at least one of ${keys.join(', ')}.`);
  }
  const add = args.addLabels || [];
  const remove = args.removeLabels || [];
  const clash = add.find((n) => remove.some((m) => m.toLowerCase() === n.toLowerCase()));
  if (clash) throw new Error(`Label "${clash}" is both in addLabels and removeLabels: give it in one of them.`);
  const input = {};
  if (args.title !== undefined) input.title = args.title;
  if (args.description !== undefined) input.description = args.description;
  if (args.priority !== undefined) input.priority = args.priority;
  if (args.assignee !== undefined) input.assigneeId = await resolveUser(ctx, args.assignee);
  let id = args.issue;
  if (args.state || add.length || remove.length) {
    const issue = await resolveIssue(ctx, args.issue, `read issue ${args.issue}`);
    id = issue.id;
    const team = issue.team;
    if (args.state) input.stateId = (await resolveState(ctx, team, args.state)).id;
    if (add.length) input.addedLabelIds = await resolveLabels(ctx, team, add);
    if (remove.length) input.removedLabelIds = await resolveLabels(ctx, team, remove);
  }
  const data = await gql(ctx, `update issue ${args.issue}`, `mutation($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { ${WRITE_RESULT} } }`, { id, input }, { write: true });
  return writeResult(data.issueUpdate, 'updated');
}

async function addComment(ctx, args) {
  const issue = UUID.test(args.issue) ? { id: args.issue, identifier: null } : await resolveIssue(ctx, args.issue, `find issue ${args.issue}`);
  const data = await gql(
    ctx,
    `comment on issue ${args.issue}`,
    `mutation($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { ${COMMENT} } } }`,
    { input: { issueId: issue.id, body: args.body } },
    { write: true },
  );
  const p = data.commentCreate;
  if (!p || !p.success || !p.comment) throw new Error(`Linear did not confirm the comment on ${args.issue}: check with linear_list_comments before trying again.`);
  return { issue: issue.identifier || args.issue, ...slimComment(p.comment) };
}

async function listComments(ctx, args) {
  const first = args.limit ?? 25;
  const data = await gql(
    ctx,
    `read the comments of issue ${args.issue}`,
    `query($id: String!, $first: Int!, $after: String) { issue(id: $id) { identifier comments(first: $first, after: $after, orderBy: createdAt) { nodes { ${COMMENT} } ${PAGE} } } }`,
    { id: args.issue, first, after: args.cursor ?? null },
    { tooLarge: 'ask for fewer comments with a smaller limit (1 reads one at a time)' },
  );
  if (!data.issue) throw new Error(`Linear found no issue ${args.issue}.`);
  const conn = data.issue.comments;
  return { issue: data.issue.identifier ?? args.issue, comments: nodes(conn, first).map(slimComment), next: nextOf(conn) };
}

async function listWorkflowStates(ctx, args) {
  const data = await gql(
    ctx,
    `list the workflow states of team ${args.team}`,
    'query($key: String!) { workflowStates(first: 100, filter: { team: { key: { eqIgnoreCase: $key } } }) { nodes { id name type position description } } }',
    { key: args.team },
  );
  const states = nodes(data.workflowStates, 100)
    .map((s) => ({ id: s.id, name: s.name ?? null, type: s.type ?? null, position: s.position ?? null, description: s.description ?? null }))
    .sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  if (!states.length) throw new Error(`Linear has no team with key "${args.team}" that you can see: linear_list_teams lists the teams and their keys.`);
  return { team: args.team.toUpperCase(), states };
}

async function listProjects(ctx, args) {
  const filter = {};
  if (args.team) filter.accessibleTeams = { some: { key: { eqIgnoreCase: args.team } } };
  if (args.name) filter.name = { containsIgnoreCase: args.name };
  const first = args.limit ?? 25;
  const data = await gql(
    ctx,
    'list projects',
    `query($filter: ProjectFilter, $first: Int!, $after: String) { projects(filter: $filter, first: $first, after: $after, orderBy: updatedAt) { nodes { id name status { name type } lead { name } startDate targetDate progress url } ${PAGE} } }`,
    { filter, first, after: args.cursor ?? null },
    LIMIT_HINT,
  );
  return {
    projects: nodes(data.projects, first).map((p) => ({
      id: p.id,
      name: p.name ?? null,
      status: nameOf(p.status),
      statusType: p.status ? p.status.type ?? null : null,
      lead: nameOf(p.lead),
      startDate: p.startDate ?? null,
      targetDate: p.targetDate ?? null,
      progress: typeof p.progress === 'number' ? p.progress : null,
      url: p.url ?? null,
    })),
    next: nextOf(data.projects),
  };
}

export default {
  linear_whoami: whoami,
  linear_list_teams: listTeams,
  linear_list_issues: listIssues,
  linear_get_issue: getIssue,
  linear_create_issue: createIssue,
  linear_update_issue: updateIssue,
  linear_add_comment: addComment,
  linear_list_comments: listComments,
  linear_list_workflow_states: listWorkflowStates,
  linear_list_projects: listProjects,
};
