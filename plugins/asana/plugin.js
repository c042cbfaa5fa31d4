/**
 * @module plugins/asana/plugin
 * Asana REST API 1.0 tools acting as the connected Asana user (OAuth 2.0). Every request goes to
 * https://app.asana.com/api/1.0, writes wrap their fields in `{data: …}` and answers carry theirs in
 * `data`; `opt_fields` asks only for the fields a result shows, and lists page with an `offset`
 * token (`next_page.offset`) that results hand back as `next`. Self-contained (the plugin format
 * allows no imports): the request helper, the one error mapping and the result shapers live here
 * beside the handlers, which is why the file is longer than 400 lines.
 */

const API = 'https://app.asana.com/api/1.0';
const MAX_TEXT = 20000;

const TASK_ROW_FIELDS = ['name', 'completed', 'assignee.name', 'due_on', 'due_at', 'permalink_url'];
const TASK_DETAIL_FIELDS = [
  'name', 'resource_subtype', 'completed', 'completed_at', 'assignee.name', 'assignee.email', 'due_on', 'due_at', 'start_on',
  'notes', 'created_at', 'modified_at', 'created_by.name', 'memberships.project.name', 'memberships.section.name',
  'parent.name', 'tags.name', 'custom_fields.name', 'custom_fields.display_value', 'num_subtasks', 'workspace.name', 'permalink_url',
];
const PROJECT_ROW_FIELDS = ['name', 'archived', 'owner.name', 'team.name', 'due_on', 'permalink_url'];
const PROJECT_DETAIL_FIELDS = [
  'name', 'archived', 'completed', 'notes', 'owner.name', 'team.name', 'workspace.name', 'start_on', 'due_on',
  'created_at', 'modified_at', 'privacy_setting', 'current_status_update.title', 'current_status_update.status_type', 'permalink_url',
];
const STORY_FIELDS = ['type', 'text', 'created_at', 'created_by.name'];

// ---------------------------------------------------------------------------------------------
// Errors: the one place where an Asana answer becomes a message an agent can act on.

/** Asana's error body: `{errors: [{message, help, phrase}]}`. */
function asanaDetail(data) {
  if (data == null) return '';
  if (typeof data === 'string') return data.trim().slice(0, 500);
  const msgs = Array.isArray(data.errors) ? data.errors.map((e) => (e && typeof e.message === 'string' ? e.message : '')).filter(Boolean) : [];
  if (!msgs.length && typeof data.message === 'string') msgs.push(data.message);
  if (!msgs.length && typeof data.error === 'string') msgs.push(data.error_description || data.error);
  return msgs.join('; ').slice(0, 1000);
}

/** Asana's phrase for a server error (what its support looks incidents up by). */
function asanaPhrase(data) {
  const e = data && Array.isArray(data.errors) ? data.errors.find((x) => x && typeof x.phrase === 'string') : null;
  return e ? e.phrase : '';
}

function asanaError(action, status, retryAfter, data, paid) {
  const detail = asanaDetail(data).replace(/[.\s]+$/, '');
  const said = detail ? ` Asana said: ${detail}.` : '';
  if (status === 429) {
    const wait = retryAfter ? `retry after ${retryAfter} seconds` : 'wait a minute and retry';
    return new Error(`Asana rate limited the request to ${action} (429): ${wait}.`);
  }
  if (status === 401) return new Error(`Asana rejected the access token (401) while trying to ${action}: reconnect asana.${said}`);
  if (status === 402) {
    return new Error(
      `Asana refused to ${action} (402 Payment Required): ${paid || 'this needs a paid (premium) Asana plan for the workspace or one of your teams'}.${said}`,
    );
  }
  if (status === 403 && /scope/i.test(detail)) {
    return new Error(`The Asana connection lacks the OAuth permission needed to ${action} (403): reconnect asana and approve full access.${said}`);
  }
  if (status === 403) {
    return new Error(`Asana refused permission to ${action} (403): ${detail || 'your Asana user cannot see or change this'}.`);
  }
  if (status === 404) {
    return new Error(`Asana found nothing while trying to ${action} (404): ${detail || 'the gid does not exist, or you cannot see it'}.`);
  }
  if (status === 400 || status === 409 || status === 422) {
    return new Error(`Asana refused to ${action} (${status}): ${detail || 'the request was not valid'}.`);
  }
  if (status >= 500) {
    const phrase = asanaPhrase(data);
    return new Error(`Asana had a server error (${status}) while trying to ${action}: retry later.${phrase ? ` Error phrase: ${phrase}.` : ''}`);
  }
  return new Error(`Asana answered HTTP ${status} while trying to ${action}${detail ? `: ${detail}` : ''}.`);
}

// ---------------------------------------------------------------------------------------------
// Requests

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

function qs(params) {
  const parts = [];
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${enc(k)}=${enc(Array.isArray(v) ? v.join(',') : v)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** The gateway's own refusals of a request (an answer over its size cap, none in time) in words; else the error as it is. */
function bridgeError(err, method, action) {
  const code = err && err.code;
  let out;
  if (code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
    out = new Error(`Asana's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ask for less (a smaller limit, where the tool takes one); a single item this large cannot be read here: open it in Asana.`);
  } else if (code === 'GW_ERR_BRIDGE_TIMEOUT') {
    const write = method !== 'GET' ? ' It may still have been done: check before trying again.' : ' Try again in a moment.';
    out = new Error(`Asana did not answer in time (GW_ERR_BRIDGE_TIMEOUT) while trying to ${action}.${write}`);
  } else {
    return err;
  }
  out.code = code;
  return out;
}

/**
 * One Asana call. `body` is wrapped in `{data: …}`; the answer's envelope is returned whole
 * (`data`, and `next_page` on lists). `paid` words the 402 answer where a plan is needed.
 */
async function asana(ctx, method, path, { query, body, action, paid } = {}) {
  const headers = { accept: 'application/json' };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify({ data: body });
  }
  let res;
  try {
    res = await ctx.http(`${API}${path}${qs(query)}`, init);
  } catch (err) {
    throw bridgeError(err, method, action);
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) throw asanaError(action, res.status, res.headers.get('retry-after'), data, paid);
  return data && typeof data === 'object' ? data : {};
}

const nextOf = (env) => (env.next_page && typeof env.next_page.offset === 'string' && env.next_page.offset ? env.next_page.offset : null);
const list = (env) => (Array.isArray(env.data) ? env.data : []);

/** The workspace a call acts in: the one given, else the user's only workspace. */
async function workspaceOf(ctx, given) {
  if (given) return given;
  const env = await asana(ctx, 'GET', '/workspaces', { query: { limit: 100, opt_fields: 'name' }, action: 'list your workspaces' });
  const all = list(env);
  if (all.length === 1) return all[0].gid;
  if (!all.length) throw new Error('This Asana account belongs to no workspace the connection can reach.');
  const names = all.slice(0, 10).map((w) => `${w.name} (${w.gid})`).join(', ');
  throw new Error(`You belong to several Asana workspaces: ${names}${all.length > 10 ? ', …' : ''}. Pass \`workspace\` with the gid of the one you mean.`);
}

// ---------------------------------------------------------------------------------------------
// Result shapers

const nameOf = (x) => (x && typeof x === 'object' ? x.name ?? null : null);
const ref = (x) => (x && typeof x === 'object' && x.gid ? { gid: x.gid, name: x.name ?? null } : null);

function cut(text) {
  const s = typeof text === 'string' ? text : '';
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}… (truncated)` : s;
}

function slimTask(t) {
  return {
    gid: t.gid,
    name: t.name ?? null,
    completed: !!t.completed,
    assignee: nameOf(t.assignee),
    due: t.due_at || t.due_on || null,
    url: t.permalink_url ?? null,
  };
}

/**
 * Custom fields as `{ "Priority": "High" }`, by the values Asana displays; a repeated name gets its
 * gid. A Map, then Object.fromEntries: a field named "__proto__" is a key like any other.
 */
function customFields(list) {
  const out = new Map();
  for (const f of Array.isArray(list) ? list : []) {
    if (!f || typeof f.name !== 'string') continue;
    const key = out.has(f.name) ? `${f.name} (${f.gid})` : f.name;
    out.set(key, f.display_value ?? null);
  }
  return Object.fromEntries(out);
}

function detailTask(t) {
  return {
    gid: t.gid,
    name: t.name ?? null,
    type: t.resource_subtype ?? null,
    completed: !!t.completed,
    completedAt: t.completed_at ?? null,
    assignee: t.assignee ? { gid: t.assignee.gid, name: t.assignee.name ?? null, email: t.assignee.email ?? null } : null,
    dueOn: t.due_on ?? null,
    dueAt: t.due_at ?? null,
    startOn: t.start_on ?? null,
    projects: (Array.isArray(t.memberships) ? t.memberships : [])
      .filter((m) => m && m.project)
      .map((m) => ({ gid: m.project.gid, name: m.project.name ?? null, section: nameOf(m.section), sectionGid: m.section ? m.section.gid : null })),
    parent: ref(t.parent),
    tags: (Array.isArray(t.tags) ? t.tags : []).map(nameOf).filter((n) => n !== null),
    customFields: customFields(t.custom_fields),
    subtasks: typeof t.num_subtasks === 'number' ? t.num_subtasks : null,
    createdBy: nameOf(t.created_by),
    createdAt: t.created_at ?? null,
    modifiedAt: t.modified_at ?? null,
    workspace: ref(t.workspace),
    url: t.permalink_url ?? null,
    notes: cut(t.notes),
  };
}

function slimProject(p) {
  return {
    gid: p.gid,
    name: p.name ?? null,
    archived: !!p.archived,
    owner: nameOf(p.owner),
    team: nameOf(p.team),
    dueOn: p.due_on ?? null,
    url: p.permalink_url ?? null,
  };
}

function slimComment(s) {
  return { gid: s.gid, author: nameOf(s.created_by), createdAt: s.created_at ?? null, text: cut(s.text) };
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function getMe(ctx) {
  const env = await asana(ctx, 'GET', '/users/me', { query: { opt_fields: 'name,email,workspaces.name' }, action: 'read your Asana profile' });
  const u = env.data || {};
  return {
    gid: u.gid,
    name: u.name ?? null,
    email: u.email ?? null,
    workspaces: (Array.isArray(u.workspaces) ? u.workspaces : []).map(ref).filter(Boolean),
  };
}

async function listWorkspaces(ctx, args) {
  const env = await asana(ctx, 'GET', '/workspaces', {
    query: { limit: args.limit ?? 50, offset: args.cursor, opt_fields: 'name,is_organization' },
    action: 'list your workspaces',
  });
  return {
    workspaces: list(env).map((w) => ({ gid: w.gid, name: w.name ?? null, isOrganization: !!w.is_organization })),
    next: nextOf(env),
  };
}

async function listProjects(ctx, args) {
  const workspace = await workspaceOf(ctx, args.workspace);
  const env = await asana(ctx, 'GET', `/workspaces/${enc(workspace)}/projects`, {
    query: { archived: String(args.archived ?? false), limit: args.limit ?? 50, offset: args.cursor, opt_fields: PROJECT_ROW_FIELDS },
    action: `list the projects of workspace ${workspace}`,
  });
  return { workspace, projects: list(env).map(slimProject), next: nextOf(env) };
}

async function getProject(ctx, args) {
  const env = await asana(ctx, 'GET', `/projects/${enc(args.project)}`, {
    query: { opt_fields: PROJECT_DETAIL_FIELDS },
    action: `read project ${args.project}`,
  });
  const p = env.data || {};
  const status = p.current_status_update;
  return {
    ...slimProject(p),
    completed: !!p.completed,
    startOn: p.start_on ?? null,
    workspace: ref(p.workspace),
    privacy: p.privacy_setting ?? null,
    createdAt: p.created_at ?? null,
    modifiedAt: p.modified_at ?? null,
    status: status ? { title: status.title ?? null, type: status.status_type ?? null } : null,
    notes: cut(p.notes),
  };
}

async function listSections(ctx, args) {
  const env = await asana(ctx, 'GET', `/projects/${enc(args.project)}/sections`, {
    query: { limit: args.limit ?? 100, offset: args.cursor, opt_fields: 'name' },
    action: `list the sections of project ${args.project}`,
  });
  return { project: args.project, sections: list(env).map((s) => ({ gid: s.gid, name: s.name ?? null })), next: nextOf(env) };
}

async function listTasks(ctx, args) {
  const given = ['project', 'section', 'assignee'].filter((k) => args[k]);
  if (given.length !== 1) throw new Error('Give exactly one of project, section or assignee (with workspace) to say which tasks to list.');
  if (args.workspace && !args.assignee) throw new Error('`workspace` goes with `assignee` only: a project or section already names its workspace.');
  const query = { project: args.project, section: args.section };
  let action = args.project ? `list the tasks of project ${args.project}` : `list the tasks of section ${args.section}`;
  if (args.assignee) {
    query.assignee = args.assignee;
    query.workspace = await workspaceOf(ctx, args.workspace);
    action = `list the tasks assigned to ${args.assignee}`;
  }
  Object.assign(query, { completed_since: args.completedSince, limit: args.limit ?? 50, offset: args.cursor, opt_fields: TASK_ROW_FIELDS });
  const env = await asana(ctx, 'GET', '/tasks', { query, action });
  return { tasks: list(env).map(slimTask), next: nextOf(env) };
}

async function getTask(ctx, args) {
  const env = await asana(ctx, 'GET', `/tasks/${enc(args.task)}`, { query: { opt_fields: TASK_DETAIL_FIELDS }, action: `read task ${args.task}` });
  return detailTask(env.data || {});
}

function dueFields(args, data) {
  if (args.dueOn !== undefined && args.dueAt !== undefined) throw new Error('Give dueOn (a date) or dueAt (a date and time), not both.');
  if (args.dueOn !== undefined) data.due_on = args.dueOn === '' ? null : args.dueOn;
  if (args.dueAt !== undefined) data.due_at = args.dueAt === '' ? null : args.dueAt;
}

async function createTask(ctx, args) {
  const data = { name: args.name };
  if (args.notes) data.notes = args.notes;
  if (args.assignee) data.assignee = args.assignee;
  dueFields(args, data);
  const projects = args.projects || [];
  if (args.section) {
    if (projects.length !== 1) throw new Error('A section belongs to one project: give `projects` with exactly that project\'s gid beside `section`.');
    data.memberships = [{ project: projects[0], section: args.section }];
  } else if (projects.length) {
    data.projects = projects;
  }
  if (args.parent) data.parent = args.parent;
  if (args.workspace) data.workspace = args.workspace;
  else if (!projects.length && !args.parent) data.workspace = await workspaceOf(ctx);
  const env = await asana(ctx, 'POST', '/tasks', {
    query: { opt_fields: TASK_ROW_FIELDS },
    body: data,
    action: args.parent ? `create a subtask of task ${args.parent}` : `create the task "${args.name}"`,
  });
  return slimTask(env.data || {});
}

async function updateTask(ctx, args) {
  const data = {};
  if (args.name !== undefined) data.name = args.name;
  if (args.notes !== undefined) data.notes = args.notes;
  if (args.completed !== undefined) data.completed = args.completed;
  if (args.assignee !== undefined) data.assignee = args.assignee === '' ? null : args.assignee;
  dueFields(args, data);
  const changed = Object.keys(data);
  if (!changed.length) throw new Error('Nothing to update: give at least one of name, notes, completed, assignee, dueOn or dueAt.');
  const env = await asana(ctx, 'PUT', `/tasks/${enc(args.task)}`, {
    query: { opt_fields: TASK_ROW_FIELDS },
    body: data,
    action: `update task ${args.task}`,
  });
  return { ...slimTask(env.data || {}), updated: changed };
}

async function addComment(ctx, args) {
  const env = await asana(ctx, 'POST', `/tasks/${enc(args.task)}/stories`, {
    query: { opt_fields: STORY_FIELDS },
    body: { text: args.text },
    action: `comment on task ${args.task}`,
  });
  return { task: args.task, ...slimComment(env.data || {}) };
}

/**
 * The comments of a task. Stories (comments and system activity alike) page 100 at a time, and
 * only comments are kept, so a cursor is the story page's offset token plus how many comments of
 * that page were already returned: `<offset>~<skip>` (offset empty for the first page).
 */
async function listComments(ctx, args) {
  const limit = args.limit ?? 20;
  let offset;
  let skip = 0;
  if (args.cursor) {
    const at = args.cursor.lastIndexOf('~');
    const n = at < 0 ? NaN : Number(args.cursor.slice(at + 1));
    if (!Number.isInteger(n) || n < 0) throw new Error('`cursor` is not a `next` value of asana_list_comments: pass `next` as it was returned.');
    offset = args.cursor.slice(0, at) || undefined;
    skip = n;
  }
  const comments = [];
  for (let page = 0; page < 10; page++) {
    const env = await asana(ctx, 'GET', `/tasks/${enc(args.task)}/stories`, {
      query: { limit: 100, offset, opt_fields: STORY_FIELDS },
      action: `read the comments of task ${args.task}`,
    });
    const pageComments = list(env).filter((s) => s && s.type === 'comment');
    const room = limit - comments.length;
    const take = pageComments.slice(skip, skip + room);
    comments.push(...take.map(slimComment));
    const following = nextOf(env);
    if (skip + take.length < pageComments.length) {
      return { task: args.task, comments, next: `${offset ?? ''}~${skip + take.length}` };
    }
    if (!following) return { task: args.task, comments, next: null };
    offset = following;
    skip = 0;
    if (comments.length >= limit) break;
  }
  return { task: args.task, comments, next: `${offset}~0` };
}

async function searchTasks(ctx, args) {
  const workspace = await workspaceOf(ctx, args.workspace);
  const query = {
    text: args.text,
    'assignee.any': args.assignee,
    'projects.any': args.project,
    completed: args.completed === undefined ? undefined : String(args.completed),
    'due_on.before': args.dueBefore,
    'due_on.after': args.dueAfter,
    'modified_at.after': args.modifiedAfter,
    sort_by: args.sortBy ?? 'modified_at',
    limit: args.limit ?? 25,
    opt_fields: [...TASK_ROW_FIELDS, 'modified_at'],
  };
  const env = await asana(ctx, 'GET', `/workspaces/${enc(workspace)}/tasks/search`, {
    query,
    action: `search tasks in workspace ${workspace}`,
    paid: 'task search is only available on paid Asana plans (the workspace, or a team you are in, must be premium). Use asana_list_tasks by project, section or assignee instead',
  });
  const tasks = list(env).map((t) => ({ ...slimTask(t), modifiedAt: t.modified_at ?? null }));
  return { workspace, tasks, count: tasks.length, more: tasks.length >= query.limit };
}

async function findUsers(ctx, args) {
  const workspace = await workspaceOf(ctx, args.workspace);
  const env = await asana(ctx, 'GET', `/workspaces/${enc(workspace)}/typeahead`, {
    query: { resource_type: 'user', query: args.query, count: args.limit ?? 10, opt_fields: 'name,email' },
    action: `look up users matching "${args.query}"`,
  });
  return { workspace, users: list(env).map((u) => ({ gid: u.gid, name: u.name ?? null, email: u.email ?? null })) };
}

async function addTaskToProject(ctx, args) {
  const data = { project: args.project };
  if (args.section) data.section = args.section;
  await asana(ctx, 'POST', `/tasks/${enc(args.task)}/addProject`, {
    body: data,
    action: args.section ? `add task ${args.task} to section ${args.section} of project ${args.project}` : `add task ${args.task} to project ${args.project}`,
  });
  return { task: args.task, project: args.project, section: args.section ?? null };
}

export default {
  asana_whoami: getMe,
  asana_list_workspaces: listWorkspaces,
  asana_list_projects: listProjects,
  asana_get_project: getProject,
  asana_list_sections: listSections,
  asana_list_tasks: listTasks,
  asana_get_task: getTask,
  asana_create_task: createTask,
  asana_update_task: updateTask,
  asana_add_comment: addComment,
  asana_list_comments: listComments,
  asana_search_tasks: searchTasks,
  asana_find_users: findUsers,
  asana_add_task_to_project: addTaskToProject,
};
