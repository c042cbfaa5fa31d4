/**
 * @module plugins/atlassian-jira/plugin
 * Jira Cloud REST v3 tools acting as the connected Atlassian user (OAuth 2.0 3LO). Each call first
 * resolves the site's cloud id from the token's accessible resources, then calls
 * https://api.atlassian.com/ex/jira/{cloudId}/rest/api/3/…. Self-contained (the plugin format
 * allows no imports), so the request helper, the one error mapping, the ADF converters and the
 * result shapers live here beside the handlers; the file is longer than 400 lines for that reason.
 */

const API = 'https://api.atlassian.com';
const READ = 'read:jira-work';
const WRITE = 'write:jira-work';
const USERS = 'read:jira-user';
const SLIM_FIELDS = ['summary', 'status', 'assignee', 'priority', 'issuetype', 'updated'];
const DETAIL_FIELDS = [
  'summary', 'status', 'assignee', 'reporter', 'priority', 'issuetype', 'created', 'updated', 'duedate',
  'resolution', 'labels', 'components', 'parent', 'subtasks', 'issuelinks', 'description', 'project', 'comment',
];
const MAX_TEXT = 20000;

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Jira answer becomes a message an agent can act on.

/** Jira's error body: `errorMessages` (array), `errors` (field → message map), or `message`. */
function jiraDetail(data) {
  if (data == null) return '';
  if (typeof data === 'string') return data.trim().slice(0, 500);
  const parts = [];
  if (Array.isArray(data.errorMessages)) parts.push(...data.errorMessages.filter((m) => typeof m === 'string' && m));
  if (data.errors && typeof data.errors === 'object') {
    for (const [field, msg] of Object.entries(data.errors)) parts.push(`${field}: ${msg}`);
  }
  if (!parts.length && typeof data.message === 'string') parts.push(data.message);
  if (!parts.length && typeof data.error === 'string') parts.push(data.error);
  return parts.join('; ');
}

function jiraError(action, status, retryAfter, data, scope) {
  const detail = jiraDetail(data).replace(/[.\s]+$/, '');
  const scopeProblem = /scope/i.test(detail);
  if (status === 429) {
    const wait = retryAfter ? `retry after ${retryAfter} seconds` : 'wait a minute and retry';
    return new Error(`Jira rate limited the request to ${action} (429): ${wait}.`);
  }
  if ((status === 401 || status === 403) && scopeProblem) {
    return new Error(
      `The Jira connection lacks the OAuth scope needed to ${action} (${status}; needs ${scope}): reconnect atlassian-jira and approve that scope.`,
    );
  }
  if (status === 401) {
    return new Error(`Jira rejected the access token (401) while trying to ${action}: reconnect atlassian-jira.${detail ? ` Jira said: ${detail}` : ''}`);
  }
  if (status === 403) {
    return new Error(
      `Jira refused permission to ${action} (403): ${detail || 'your Jira user lacks the project permission for this'}. This needs the ${scope} scope and the matching Jira project permission.`,
    );
  }
  if (status === 404) {
    return new Error(`Jira found nothing while trying to ${action} (404): ${detail || 'it does not exist, or you cannot see it'}.`);
  }
  if (status === 400 || status === 409 || status === 422) {
    return new Error(`Jira refused to ${action} (${status}): ${detail || 'the request was not valid'}.`);
  }
  if (status >= 500) {
    return new Error(`Jira had a server error (${status}) while trying to ${action}: retry later.${detail ? ` Jira said: ${detail}` : ''}`);
  }
  return new Error(`Jira answered HTTP ${status} while trying to ${action}${detail ? `: ${detail}` : ''}.`);
}

// ---------------------------------------------------------------------------------------------
// Requests

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

function qs(params) {
  const parts = [];
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${enc(k)}=${enc(v)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

async function send(ctx, method, url, body, action, scope) {
  const headers = { accept: 'application/json' };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await ctx.http(url, init);
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) throw jiraError(action, res.status, res.headers.get('retry-after'), data, scope);
  return data;
}

function normSite(s) {
  return String(s || '').trim().toLowerCase().replace(/^https?:\/\//, '').replace(/\/+$/, '');
}

/** The Jira site this call acts on: `ctx.config.site` (URL, host, name or cloud id), else the first. */
async function resolveSite(ctx) {
  const data = await send(ctx, 'GET', `${API}/oauth/token/accessible-resources`, undefined, 'list the Jira sites this connection can reach', READ);
  const all = Array.isArray(data) ? data.filter((s) => s && typeof s.id === 'string') : [];
  const jira = all.filter((s) => Array.isArray(s.scopes) && s.scopes.some((x) => String(x).includes('jira')));
  const pool = jira.length ? jira : all;
  if (!pool.length) {
    throw new Error('This Atlassian connection can reach no Jira site: reconnect atlassian-jira and choose a Jira site on the consent screen.');
  }
  const wanted = ctx.config && typeof ctx.config.site === 'string' ? ctx.config.site.trim() : '';
  let site = pool[0];
  if (wanted) {
    const w = normSite(wanted);
    site = pool.find((s) => {
      const host = normSite(s.url);
      return s.id === wanted || host === w || host.split('.')[0] === w || String(s.name || '').toLowerCase() === w;
    });
    if (!site) {
      throw new Error(`No Jira site matching "${wanted}" is reachable with this connection; reachable: ${pool.map((s) => s.url || s.name).join(', ')}.`);
    }
  }
  return { id: site.id, name: site.name || null, url: String(site.url || '').replace(/\/+$/, '') };
}

/** One Jira REST v3 call on the resolved site. */
function jira(ctx, site, method, path, { query, body, action, scope }) {
  const url = `${API}/ex/jira/${enc(site.id)}/rest/api/3${path}${qs(query)}`;
  return send(ctx, method, url, body, action, scope);
}

// ---------------------------------------------------------------------------------------------
// Atlassian Document Format ⇄ plain text

function textToAdf(text) {
  const paragraphs = String(text || '')
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .filter((p) => p.trim() !== '');
  return {
    type: 'doc',
    version: 1,
    content: paragraphs.map((p) => {
      const content = [];
      p.split('\n').forEach((line, i) => {
        if (i > 0) content.push({ type: 'hardBreak' });
        if (line) content.push({ type: 'text', text: line });
      });
      return { type: 'paragraph', content };
    }),
  };
}

function adfInline(nodes) {
  return (Array.isArray(nodes) ? nodes : []).map((n) => adfNode(n)).join('');
}

function adfBlocks(nodes, sep = '\n\n') {
  return (Array.isArray(nodes) ? nodes : []).map((n) => adfNode(n)).filter((s) => s !== '').join(sep);
}

function indentRest(s, pad) {
  return s.split('\n').map((line, i) => (i === 0 || line === '' ? line : pad + line)).join('\n');
}

function adfNode(n) {
  if (!n || typeof n !== 'object') return '';
  const a = n.attrs || {};
  switch (n.type) {
    case 'text': {
      const text = typeof n.text === 'string' ? n.text : '';
      // a hyperlink is a text node with a link mark: keep its address beside the words
      const link = (n.marks || []).find((m) => m && m.type === 'link' && m.attrs && typeof m.attrs.href === 'string');
      return link && link.attrs.href !== text ? `${text} (${link.attrs.href})` : text;
    }
    case 'hardBreak': return '\n';
    case 'mention': return a.text || (a.id ? `@${a.id}` : '@someone');
    case 'emoji': return a.text || a.shortName || '';
    case 'inlineCard': case 'blockCard': case 'embedCard': return a.url || '';
    case 'status': return a.text ? `[${a.text}]` : '';
    case 'date': return a.timestamp ? new Date(Number(a.timestamp)).toISOString().slice(0, 10) : '';
    case 'paragraph': return adfInline(n.content);
    case 'heading': return `${'#'.repeat(Math.min(Math.max(Number(a.level) || 1, 1), 6))} ${adfInline(n.content)}`;
    case 'codeBlock': return `\`\`\`${a.language || ''}\n${adfInline(n.content)}\n\`\`\``;
    case 'blockquote': return adfBlocks(n.content).split('\n').map((l) => `> ${l}`).join('\n');
    case 'rule': return '---';
    case 'bulletList':
      return (n.content || []).map((item) => `- ${indentRest(adfBlocks(item.content, '\n'), '  ')}`).join('\n');
    case 'orderedList': {
      const start = Number(a.order) || 1;
      return (n.content || []).map((item, i) => `${start + i}. ${indentRest(adfBlocks(item.content, '\n'), '   ')}`).join('\n');
    }
    case 'taskList': return adfBlocks(n.content, '\n');
    case 'taskItem': return `[${a.state === 'DONE' ? 'x' : ' '}] ${adfInline(n.content)}`;
    case 'table': return adfBlocks(n.content, '\n');
    case 'tableRow': return (n.content || []).map((cell) => adfBlocks(cell.content, ' ').replace(/\n/g, ' ')).join(' | ');
    case 'media': case 'mediaInline': return `[attachment${a.alt ? `: ${a.alt}` : ''}]`;
    default:
      if (Array.isArray(n.content)) {
        const inline = n.content.every((c) => c && (c.type === 'text' || c.type === 'hardBreak' || c.type === 'mention' || c.type === 'emoji'));
        return inline ? adfInline(n.content) : adfBlocks(n.content);
      }
      return typeof n.text === 'string' ? n.text : '';
  }
}

function adfToText(doc) {
  if (doc == null) return '';
  if (typeof doc === 'string') return doc;
  const text = adfNode(doc).replace(/\n{3,}/g, '\n\n').trim();
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (truncated)` : text;
}

// ---------------------------------------------------------------------------------------------
// Result shapers

const name = (x) => (x && typeof x === 'object' ? x.displayName || x.name || null : null);
const browse = (site, key) => `${site.url}/browse/${key}`;

function slimIssue(issue, site) {
  const f = issue.fields || {};
  return {
    key: issue.key,
    summary: f.summary ?? null,
    status: name(f.status),
    assignee: name(f.assignee),
    priority: name(f.priority),
    issuetype: name(f.issuetype),
    updated: f.updated ?? null,
    url: browse(site, issue.key),
  };
}

function slimLink(link) {
  const type = link.type || {};
  const other = link.outwardIssue || link.inwardIssue || {};
  const f = other.fields || {};
  return {
    relation: link.outwardIssue ? type.outward || type.name : type.inward || type.name,
    key: other.key || null,
    summary: f.summary ?? null,
    status: name(f.status),
  };
}

function detailIssue(issue, site) {
  const f = issue.fields || {};
  return {
    ...slimIssue(issue, site),
    project: f.project ? f.project.key : null,
    reporter: name(f.reporter),
    created: f.created ?? null,
    dueDate: f.duedate ?? null,
    resolution: name(f.resolution),
    labels: Array.isArray(f.labels) ? f.labels : [],
    components: Array.isArray(f.components) ? f.components.map(name) : [],
    parent: f.parent ? { key: f.parent.key, summary: f.parent.fields?.summary ?? null } : null,
    subtasks: Array.isArray(f.subtasks)
      ? f.subtasks.map((s) => ({ key: s.key, summary: s.fields?.summary ?? null, status: name(s.fields?.status) }))
      : [],
    links: Array.isArray(f.issuelinks) ? f.issuelinks.map(slimLink) : [],
    commentCount: f.comment && typeof f.comment.total === 'number' ? f.comment.total : null,
    description: adfToText(f.description),
  };
}

function slimUser(u) {
  return {
    accountId: u.accountId,
    displayName: u.displayName ?? null,
    email: u.emailAddress || null,
    active: u.active ?? null,
    accountType: u.accountType ?? null,
  };
}

function slimComment(c, site, key) {
  return {
    id: c.id,
    author: name(c.author),
    created: c.created ?? null,
    updated: c.updated ?? null,
    body: adfToText(c.body),
    url: `${browse(site, key)}?focusedCommentId=${enc(c.id)}`,
  };
}

const issueRef = (v) => (/^[0-9]+$/.test(v) ? { id: v } : { name: v });

// ---------------------------------------------------------------------------------------------
// Handlers

async function searchIssues(ctx, args) {
  const site = await resolveSite(ctx);
  const body = { jql: args.jql, maxResults: args.maxResults ?? 25, fields: SLIM_FIELDS };
  if (args.cursor) body.nextPageToken = args.cursor;
  const data = await jira(ctx, site, 'POST', '/search/jql', { body, action: 'search issues', scope: READ });
  const issues = Array.isArray(data?.issues) ? data.issues.map((i) => slimIssue(i, site)) : [];
  const next = data && !data.isLast && data.nextPageToken ? data.nextPageToken : null;
  return { issues, count: issues.length, next };
}

async function getIssue(ctx, args) {
  const site = await resolveSite(ctx);
  const issue = await jira(ctx, site, 'GET', `/issue/${enc(args.issueKey)}`, {
    query: { fields: DETAIL_FIELDS.join(',') },
    action: `read issue ${args.issueKey}`,
    scope: READ,
  });
  return detailIssue(issue, site);
}

async function createIssue(ctx, args) {
  const site = await resolveSite(ctx);
  const fields = {
    project: { key: args.projectKey.toUpperCase() },
    summary: args.summary,
    issuetype: issueRef(args.issueType || 'Task'),
  };
  if (args.description) fields.description = textToAdf(args.description);
  if (args.labels && args.labels.length) fields.labels = args.labels;
  if (args.priority) fields.priority = { name: args.priority };
  if (args.assigneeAccountId) fields.assignee = { accountId: args.assigneeAccountId };
  if (args.parentKey) fields.parent = { key: args.parentKey };
  if (args.dueDate) fields.duedate = args.dueDate;
  const created = await jira(ctx, site, 'POST', '/issue', {
    body: { fields },
    action: `create an issue in project ${fields.project.key}`,
    scope: WRITE,
  });
  return { key: created.key, id: created.id, url: browse(site, created.key) };
}

async function updateIssue(ctx, args) {
  const fields = {};
  const update = {};
  if (args.summary !== undefined) fields.summary = args.summary;
  if (args.description !== undefined) fields.description = args.description === '' ? null : textToAdf(args.description);
  if (args.priority !== undefined) fields.priority = { name: args.priority };
  if (args.dueDate !== undefined) fields.duedate = args.dueDate === '' ? null : args.dueDate;
  if (args.labels !== undefined) fields.labels = args.labels;
  const ops = [
    ...(args.addLabels || []).map((l) => ({ add: l })),
    ...(args.removeLabels || []).map((l) => ({ remove: l })),
  ];
  if (ops.length) {
    if (args.labels !== undefined) throw new Error('Give either labels (replace all) or addLabels/removeLabels, not both.');
    update.labels = ops;
  }
  const changed = [...Object.keys(fields), ...Object.keys(update)];
  if (!changed.length) throw new Error('Nothing to update: give at least one of summary, description, priority, dueDate, labels, addLabels, removeLabels.');
  const site = await resolveSite(ctx);
  const body = { fields };
  if (ops.length) body.update = update;
  await jira(ctx, site, 'PUT', `/issue/${enc(args.issueKey)}`, { body, action: `update issue ${args.issueKey}`, scope: WRITE });
  return { key: args.issueKey, updated: changed, url: browse(site, args.issueKey) };
}

async function addComment(ctx, args) {
  const site = await resolveSite(ctx);
  const c = await jira(ctx, site, 'POST', `/issue/${enc(args.issueKey)}/comment`, {
    body: { body: textToAdf(args.body) },
    action: `comment on issue ${args.issueKey}`,
    scope: WRITE,
  });
  return { key: args.issueKey, id: c.id, created: c.created ?? null, url: `${browse(site, args.issueKey)}?focusedCommentId=${enc(c.id)}` };
}

async function listComments(ctx, args) {
  const site = await resolveSite(ctx);
  const startAt = Number(args.cursor || 0);
  const maxResults = args.maxResults ?? 20;
  const data = await jira(ctx, site, 'GET', `/issue/${enc(args.issueKey)}/comment`, {
    query: { startAt, maxResults, orderBy: args.order === 'oldest' ? 'created' : '-created' },
    action: `read the comments of issue ${args.issueKey}`,
    scope: READ,
  });
  const comments = Array.isArray(data?.comments) ? data.comments.map((c) => slimComment(c, site, args.issueKey)) : [];
  const total = typeof data?.total === 'number' ? data.total : null;
  const end = startAt + comments.length;
  const next = comments.length && (total === null || end < total) ? String(end) : null;
  return { key: args.issueKey, comments, total, next };
}

async function fetchTransitions(ctx, site, key) {
  const data = await jira(ctx, site, 'GET', `/issue/${enc(key)}/transitions`, {
    action: `list the transitions of issue ${key}`,
    scope: READ,
  });
  return Array.isArray(data?.transitions) ? data.transitions : [];
}

const slimTransition = (t) => ({
  id: t.id,
  name: t.name,
  to: name(t.to),
  toCategory: t.to && t.to.statusCategory ? t.to.statusCategory.name ?? null : null,
});

async function listTransitions(ctx, args) {
  const site = await resolveSite(ctx);
  const transitions = (await fetchTransitions(ctx, site, args.issueKey)).map(slimTransition);
  return { key: args.issueKey, transitions };
}

async function transitionIssue(ctx, args) {
  const site = await resolveSite(ctx);
  const all = await fetchTransitions(ctx, site, args.issueKey);
  const want = args.transition.trim().toLowerCase();
  const pick =
    all.find((t) => String(t.id) === want) ||
    all.find((t) => String(t.name || '').toLowerCase() === want) ||
    all.find((t) => String(name(t.to) || '').toLowerCase() === want);
  if (!pick) {
    const avail = all.map((t) => `"${t.name}" (id ${t.id} → ${name(t.to)})`).join(', ') || 'none';
    throw new Error(`Issue ${args.issueKey} has no transition matching "${args.transition}". Available now: ${avail}.`);
  }
  const body = { transition: { id: String(pick.id) } };
  if (args.resolution) body.fields = { resolution: { name: args.resolution } };
  if (args.comment) body.update = { comment: [{ add: { body: textToAdf(args.comment) } }] };
  await jira(ctx, site, 'POST', `/issue/${enc(args.issueKey)}/transitions`, {
    body,
    action: `move issue ${args.issueKey} with transition "${pick.name}"`,
    scope: WRITE,
  });
  return { key: args.issueKey, transition: pick.name, status: name(pick.to), url: browse(site, args.issueKey) };
}

async function findOneUser(ctx, site, who) {
  const users = await jira(ctx, site, 'GET', '/user/search', {
    query: { query: who, maxResults: 10 },
    action: `look up the user "${who}"`,
    scope: USERS,
  });
  const list = (Array.isArray(users) ? users : []).filter((u) => u.accountType !== 'app' && u.active !== false);
  const w = who.toLowerCase();
  const exact = list.filter((u) => String(u.emailAddress || '').toLowerCase() === w || String(u.displayName || '').toLowerCase() === w);
  const hits = exact.length ? exact : list;
  if (hits.length === 1) return hits[0];
  if (!hits.length) throw new Error(`No active Jira user matches "${who}": check the spelling, or use jira_search_users.`);
  const names = hits.slice(0, 5).map((u) => `${u.displayName} (${u.accountId})`).join(', ');
  throw new Error(`"${who}" matches several Jira users: ${names}. Pass the accountId of the right one.`);
}

async function assignIssue(ctx, args) {
  const given = [args.accountId ? 1 : 0, args.user ? 1 : 0, args.unassign ? 1 : 0].reduce((a, b) => a + b, 0);
  if (given !== 1) throw new Error('Give exactly one of accountId, user or unassign: true.');
  const site = await resolveSite(ctx);
  let accountId = null;
  let displayName = null;
  if (args.accountId) accountId = args.accountId;
  if (args.user) {
    const u = await findOneUser(ctx, site, args.user);
    accountId = u.accountId;
    displayName = u.displayName ?? null;
  }
  await jira(ctx, site, 'PUT', `/issue/${enc(args.issueKey)}/assignee`, {
    body: { accountId },
    action: accountId ? `assign issue ${args.issueKey}` : `unassign issue ${args.issueKey}`,
    scope: WRITE,
  });
  return { key: args.issueKey, assigneeAccountId: accountId, assignee: displayName, url: browse(site, args.issueKey) };
}

async function listProjects(ctx, args) {
  const site = await resolveSite(ctx);
  const startAt = Number(args.cursor || 0);
  const data = await jira(ctx, site, 'GET', '/project/search', {
    query: { startAt, maxResults: args.maxResults ?? 50, query: args.query },
    action: 'list projects',
    scope: READ,
  });
  const values = Array.isArray(data?.values) ? data.values : [];
  const projects = values.map((p) => ({ key: p.key, name: p.name, id: p.id, type: p.projectTypeKey ?? null, url: browse(site, p.key) }));
  const next = data && data.isLast === false && values.length ? String(startAt + values.length) : null;
  return { projects, total: typeof data?.total === 'number' ? data.total : null, next };
}

async function getProject(ctx, args) {
  const site = await resolveSite(ctx);
  const p = await jira(ctx, site, 'GET', `/project/${enc(args.projectKey)}`, {
    query: { expand: 'description,lead,issueTypes' },
    action: `read project ${args.projectKey}`,
    scope: READ,
  });
  return {
    key: p.key,
    id: p.id,
    name: p.name,
    description: p.description || '',
    lead: name(p.lead),
    type: p.projectTypeKey ?? null,
    issueTypes: Array.isArray(p.issueTypes) ? p.issueTypes.map((t) => ({ id: t.id, name: t.name, subtask: !!t.subtask })) : [],
    url: browse(site, p.key),
  };
}

async function listIssueTypes(ctx, args) {
  const site = await resolveSite(ctx);
  // the list is paged (startAt / maxResults / total): read every page, a few at most
  const list = [];
  for (let page = 0; page < 10; page++) {
    const data = await jira(ctx, site, 'GET', `/issue/createmeta/${enc(args.projectKey)}/issuetypes`, {
      query: { startAt: list.length, maxResults: 100 },
      action: `list the issue types of project ${args.projectKey}`,
      scope: READ,
    });
    const got = data?.issueTypes || data?.values || data?.createMetaIssueType || [];
    list.push(...got);
    if (got.length === 0 || typeof data?.total !== 'number' || list.length >= data.total) break;
  }
  return {
    project: args.projectKey,
    issueTypes: list.map((t) => ({ id: t.id, name: t.name, subtask: !!t.subtask, description: t.description || '' })),
  };
}

async function searchUsers(ctx, args) {
  const site = await resolveSite(ctx);
  const users = await jira(ctx, site, 'GET', '/user/search', {
    query: { query: args.query, maxResults: args.maxResults ?? 10 },
    action: 'search users',
    scope: USERS,
  });
  return { users: (Array.isArray(users) ? users : []).map(slimUser) };
}

async function getMyself(ctx) {
  const site = await resolveSite(ctx);
  const me = await jira(ctx, site, 'GET', '/myself', { action: 'read your Jira profile', scope: USERS });
  return { ...slimUser(me), timeZone: me.timeZone ?? null, site: { name: site.name, url: site.url } };
}

async function addWatcher(ctx, args) {
  const site = await resolveSite(ctx);
  let accountId = args.accountId;
  if (!accountId) {
    const me = await jira(ctx, site, 'GET', '/myself', { action: 'read your Jira profile', scope: USERS });
    accountId = me.accountId;
  }
  await jira(ctx, site, 'POST', `/issue/${enc(args.issueKey)}/watchers`, {
    body: accountId,
    action: `add a watcher to issue ${args.issueKey}`,
    scope: WRITE,
  });
  return { key: args.issueKey, watcherAccountId: accountId, url: browse(site, args.issueKey) };
}

async function linkIssues(ctx, args) {
  const site = await resolveSite(ctx);
  const type = args.linkType || 'Relates';
  const body = {
    type: /^[0-9]+$/.test(type) ? { id: type } : { name: type },
    inwardIssue: { key: args.issueKey },
    outwardIssue: { key: args.targetIssueKey },
  };
  if (args.comment) body.comment = { body: textToAdf(args.comment) };
  await jira(ctx, site, 'POST', '/issueLink', {
    body,
    action: `link ${args.issueKey} to ${args.targetIssueKey} (${type})`,
    scope: WRITE,
  });
  return { issueKey: args.issueKey, targetIssueKey: args.targetIssueKey, linkType: type, url: browse(site, args.issueKey) };
}

async function listLinkTypes(ctx) {
  const site = await resolveSite(ctx);
  const data = await jira(ctx, site, 'GET', '/issueLinkType', { action: 'list issue link types', scope: READ });
  const list = Array.isArray(data?.issueLinkTypes) ? data.issueLinkTypes : [];
  return { linkTypes: list.map((t) => ({ id: t.id, name: t.name, outward: t.outward, inward: t.inward })) };
}

export default {
  jira_search_issues: searchIssues,
  jira_get_issue: getIssue,
  jira_create_issue: createIssue,
  jira_update_issue: updateIssue,
  jira_add_comment: addComment,
  jira_list_comments: listComments,
  jira_list_transitions: listTransitions,
  jira_transition_issue: transitionIssue,
  jira_assign_issue: assignIssue,
  jira_list_projects: listProjects,
  jira_get_project: getProject,
  jira_list_issue_types: listIssueTypes,
  jira_search_users: searchUsers,
  jira_get_myself: getMyself,
  jira_add_watcher: addWatcher,
  jira_link_issues: linkIssues,
  jira_list_link_types: listLinkTypes,
};
