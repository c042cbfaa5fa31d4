/**
 * @module plugins/gitlab/plugin
 * GitLab tools over the REST API v4 of gitlab.com (a self-managed instance is reached through the
 * policy's `upstreams` mapping; this code only knows gitlab.com). The plugin format is one
 * self-contained ES module without imports, so the request helper, the one error mapping, project
 * paths, paging, base64 and the result shapers live here beside the handlers; that is why the file
 * is longer than the 400-line guideline. The credential is added by the gateway: this code never
 * sets Authorization.
 */

const API = 'https://gitlab.com/api/v4';
const LIST_TEXT_CHARS = 280;
const FULL_TEXT_CHARS = 8000;
const NOTE_CHARS = 2000;
const SEARCH_DATA_CHARS = 600;
/** all diffs of one gitlab_get_merge_request_diffs answer together, at most */
const DIFF_BUDGET_CHARS = 200000;
/** gitlab_get_job_log cleans at most this many times max_chars raw characters from the log's end */
const LOG_TAIL_FACTOR = 4;
/** pages of jobs (100 each) gitlab_get_pipeline reads at most */
const MAX_JOB_PAGES = 5;
/** GitLab role names by access level */
const ROLES = { 0: 'none', 5: 'minimal_access', 10: 'guest', 15: 'planner', 20: 'reporter', 30: 'developer', 40: 'maintainer', 50: 'owner' };

// ---------------------------------------------------------------- errors (the one mapping) ----

function headerOf(res, name) {
  const h = res && res.headers;
  if (!h) return null;
  const v = typeof h.get === 'function' ? h.get(name) : h[name];
  return v === undefined || v === null ? null : String(v);
}

/**
 * GitLab's error text: `message` is a string ("404 Project Not Found"), an array, or an object of
 * field → messages ({"title": ["can't be blank"]}, {"base": ["Reference not found"]}); OAuth
 * failures answer {"error", "error_description"}.
 */
function gitlabMessage(body, text) {
  if (body && typeof body === 'object') {
    const m = body.message;
    if (typeof m === 'string' && m.trim()) return m.trim();
    if (Array.isArray(m)) return m.map(String).join('; ');
    if (m && typeof m === 'object') {
      return Object.entries(m)
        .slice(0, 10)
        .map(([field, v]) => {
          const said = Array.isArray(v) ? v.join(', ') : String(v);
          return field === 'base' ? said : `${field} ${said}`;
        })
        .join('; ');
    }
    if (typeof body.error_description === 'string') return body.error_description;
    if (typeof body.error === 'string') return body.error;
  }
  return String(text || '').trim().slice(0, 300);
}

/** Seconds to wait after a 429: Retry-After, else RateLimit-Reset (epoch seconds), else 60. */
function retryAfter(res) {
  const after = headerOf(res, 'retry-after');
  if (after !== null && /^\d+$/.test(after.trim())) return Math.max(1, Number(after));
  const reset = Number(headerOf(res, 'ratelimit-reset'));
  if (reset > 0) return Math.max(1, Math.ceil(reset - Date.now() / 1000));
  return 60;
}

function parseBody(text) {
  try {
    return JSON.parse(text || '{}') || {};
  } catch {
    return {};
  }
}

/** Turns a failed GitLab response into the Error the agent sees. Every request goes through it. */
function gitlabError(res, text, what) {
  const body = parseBody(text);
  const status = res.status;
  const message = gitlabMessage(body, text) || res.statusText || '';
  const about = what ? ` (${what})` : '';
  const said = message ? ` GitLab said: ${message}` : '';
  if (status === 401) {
    return new Error(`GitLab rejected the credential${about} (401 ${message || 'Unauthorized'}): the token is invalid, expired or revoked. Reconnect the gitlab integration.`);
  }
  if (status === 403 && body.error === 'insufficient_scope') {
    const scope = typeof body.scope === 'string' ? body.scope : 'api';
    return new Error(`GitLab refused${about} (403): the token lacks the OAuth scope this needs (${scope}). Reconnect gitlab and grant the ${scope} scope.`);
  }
  if (status === 429) return new Error(`GitLab rate limit reached${about}: rate limited, retry after ${retryAfter(res)} s.${said}`);
  if (status === 403) return new Error(`GitLab refused${about} (403): your role in this project or group does not allow it, or the feature is disabled for the project.${said}`);
  if (status === 404) {
    return new Error(`Not found or no access${about}: GitLab answers 404 both when it does not exist and when you may not see it. Check the project (numeric id or full path such as group/subgroup/project), the iid, the branch or ref, and the file path.${said}`);
  }
  if (status === 405) return new Error(`GitLab does not allow this${about} (405).${said}`);
  if (status === 409) return new Error(`GitLab reported a conflict${about} (409): ${message || 'no details'}`);
  if (status === 400 || status === 422) return new Error(`GitLab rejected the input${about} (${status}): ${message || 'no details'}`);
  if (status >= 500) return new Error(`GitLab server error ${status}${about}: ${message || 'no details'}. Try again later.`);
  return new Error(`GitLab returned ${status}${about}: ${message || 'no details'}`);
}

// ---------------------------------------------------------------- requests ----

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

function queryString(params) {
  const parts = [];
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === '') continue;
    const v = Array.isArray(value) ? value.join(',') : String(value);
    parts.push(`${enc(key)}=${enc(v)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** `x-next-page`: the next page number, empty on the last page. */
function nextPage(res) {
  const v = (headerOf(res, 'x-next-page') || '').trim();
  return /^\d+$/.test(v) ? Number(v) : null;
}

/**
 * One GitLab request; throws gitlabError on any non-2xx answer. `opts.errors(res, text)` may
 * return a more precise Error for a status a tool knows (merge: 405, 406, 409, 422).
 */
async function gl(ctx, method, path, opts = {}) {
  const headers = { accept: opts.accept || 'application/json' };
  const init = { method, headers };
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  let res;
  try {
    res = await ctx.http(API + path + queryString(opts.query), init);
  } catch (err) {
    if (err && err.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
      // a tool that cannot ask for less (one file, one job log) says where to see it instead
      if (opts.tooLarge) throw new Error(await opts.tooLarge());
      throw new Error(`GitLab's answer${opts.what ? ` for ${opts.what}` : ''} is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE): ask for less (a smaller per_page, one file or one job at a time).`);
    }
    if (err && err.code === 'GW_ERR_BRIDGE_TIMEOUT') {
      throw new Error(`GitLab did not answer in time${opts.what ? ` (${opts.what})` : ''} (GW_ERR_BRIDGE_TIMEOUT): try again, or ask for less.`);
    }
    throw err;
  }
  const text = await res.text();
  if (res.status < 200 || res.status > 299) {
    const own = opts.errors ? await opts.errors(res, text) : undefined;
    throw own || gitlabError(res, text, opts.what);
  }
  let data = null;
  if (!opts.raw && text) {
    try {
      data = JSON.parse(text);
    } catch {
      throw new Error(`GitLab returned a response that is not JSON (${res.status})${opts.what ? ` for ${opts.what}` : ''}.`);
    }
  }
  return { status: res.status, res, text, data, next: nextPage(res) };
}

/**
 * A project as GitLab's `:id` wants it: a numeric id as is, a path (`group/sub/project`) URL-encoded
 * as one segment (`group%2Fsub%2Fproject`). A project's web URL is accepted too.
 */
function projectRef(value) {
  let s = String(value === undefined || value === null ? '' : value).trim();
  if (/^\d+$/.test(s)) return s;
  const url = /^https?:\/\/([^/?#]*)(.*)$/i.exec(s);
  if (url) {
    // only a gitlab.com URL names a project here: the same path on another host is another project
    const host = url[1].replace(/^[^@]*@/, '').replace(/:\d*$/, '').toLowerCase();
    if (host !== 'gitlab.com' && host !== 'www.gitlab.com') {
      throw new Error(`Invalid project "${String(value)}": that URL is on ${host || 'no host'}, not gitlab.com, and this integration reaches gitlab.com (or the GitLab instance the operator set up for it). Pass the project's numeric id or its full path with namespace (e.g. "group/subgroup/project") instead.`);
    }
    s = url[2].split(/[?#]/)[0].split('/-/')[0].replace(/\.git$/, '');
  }
  s = s.replace(/^\/+|\/+$/g, '');
  const parts = s.split('/');
  if (s === '' || parts.length < 2 || parts.some((p) => p === '' || p === '.' || p === '..' || /\s/.test(p))) {
    throw new Error(`Invalid project "${String(value)}": pass its numeric id (e.g. 278964) or its full path with namespace (e.g. "gitlab-org/gitlab", "group/subgroup/project").`);
  }
  return enc(parts.join('/'));
}

const P = (a) => `/projects/${projectRef(a.project)}`;

/** A number that goes into a path (iid, pipeline id, job id). */
function num(value, name) {
  const s = String(value);
  if (!/^\d+$/.test(s)) throw new Error(`Invalid ${name}: "${s}".`);
  return s;
}

/** A repository file path for /repository/files/:file_path: one segment, `/` as %2F and `.` as %2E, as GitLab documents. */
function filePath(value) {
  const s = String(value || '').replace(/^\/+/, '');
  if (s === '' || s.split('/').some((p) => p === '' || p === '.' || p === '..')) throw new Error(`Invalid file path "${value}".`);
  return enc(s).replace(/\./g, '%2E');
}

/** `table[key]` for one of the table's own keys only: an upstream "constructor" or "__proto__" is not a key. */
const own = (table, key) => (Object.hasOwn(table, key) ? table[key] : undefined);

/** Drops undefined values so that a PUT changes only what the agent asked to change. */
function defined(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}

const paging = (a) => ({ per_page: a.per_page, page: a.page });

/**
 * `scope` of a list across projects (/issues, /merge_requests): GitLab's default there is
 * created_by_me, which a filter by another user (reviewer, assignee, author) would narrow to
 * almost nothing, so such a filter without a scope asks for all. In a project, GitLab's default
 * is all already.
 */
function crossProjectScope(a, userFilters) {
  if (a.scope !== undefined || a.project !== undefined) return a.scope;
  return userFilters.some((u) => u !== undefined) ? 'all' : undefined;
}
/** A list answer as an array (GitLab answers a list endpoint with an array). */
const rows = (data) => (Array.isArray(data) ? data : []);
const csv = (list) => (Array.isArray(list) ? list.join(',') : undefined);

/** GitLab user ids for usernames (`GET /users?username=`), in order; an unknown name fails the call. */
async function userIds(ctx, usernames, role) {
  const ids = [];
  for (const raw of usernames) {
    const username = String(raw).replace(/^@/, '');
    const { data } = await gl(ctx, 'GET', '/users', { query: { username }, what: `looking up ${role} @${username}` });
    const user = Array.isArray(data) ? data.find((u) => u && String(u.username).toLowerCase() === username.toLowerCase()) || data[0] : null;
    if (!user) throw new Error(`No GitLab user with the username "${username}" (${role}): check the spelling; a username is the @handle, not the display name.`);
    ids.push(user.id);
  }
  return ids;
}

/** `assignee_ids` / `reviewer_ids` for a list of usernames: [0] (GitLab's "nobody") for an empty list. */
async function idsFor(ctx, usernames, role) {
  if (usernames === undefined) return undefined;
  if (usernames.length === 0) return [0];
  return userIds(ctx, usernames, role);
}

async function defaultBranch(ctx, a) {
  const { data } = await gl(ctx, 'GET', P(a), { what: `project ${a.project}` });
  if (!data.default_branch) throw new Error(`Project ${a.project} has no default branch (its repository is empty): pass the ref explicitly.`);
  return data.default_branch;
}

// ---------------------------------------------------------------- text and bytes ----

function clip(text, max) {
  if (typeof text !== 'string') return text === undefined ? null : text;
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [truncated, ${text.length - max} more characters]`;
}

/** Reads the whole text and returns the window [offset, offset + max) with where to continue. */
function textWindow(text, offset, max) {
  const start = Math.min(offset || 0, text.length);
  const end = Math.min(start + max, text.length);
  return { total_chars: text.length, offset: start, content: text.slice(start, end), next_offset: end < text.length ? end : null };
}

/**
 * ANSI colour codes and GitLab's collapsible-section markers, which a job log is full of, and the
 * text a carriage return overwrote. Each pattern is linear in the log's length (the log is the
 * upstream's text, and one synchronous step of the sandbox has a CPU limit): the overwritten-text
 * one is anchored at a line start (unanchored it rescans the rest of a long line from every
 * position), and a marker's `[options]` is looked for on its own line only, at most 256 characters.
 */
function plainLog(text) {
  return text
    .replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')
    .replace(/section_(start|end):\d+:[A-Za-z0-9_.-]+(\[[^\]\n]{0,256}\])?\r?/g, '')
    .replace(/\r\n/g, '\n')
    .replace(/^[^\n]*\r(?!\n)/gm, '');
}

// ---------------------------------------------------------------- result shapes ----

const who = (u) => (u && u.username) || null;
const whos = (list) => (Array.isArray(list) ? list.map(who).filter(Boolean) : []);
const ref = (x) => (x && x.references && x.references.full) || null;

function slimProject(p) {
  return {
    id: p.id,
    path_with_namespace: p.path_with_namespace,
    name: p.name,
    description: clip(p.description || '', LIST_TEXT_CHARS) || null,
    visibility: p.visibility || null,
    default_branch: p.default_branch || null,
    archived: !!p.archived,
    stars: p.star_count,
    forks: p.forks_count,
    open_issues: p.open_issues_count === undefined ? null : p.open_issues_count,
    last_activity_at: p.last_activity_at || null,
    web_url: p.web_url,
  };
}

function slimIssue(i, textChars) {
  return {
    iid: i.iid,
    id: i.id,
    project_id: i.project_id,
    reference: ref(i),
    title: i.title,
    state: i.state,
    type: i.issue_type || i.type || null,
    author: who(i.author),
    assignees: whos(i.assignees),
    labels: Array.isArray(i.labels) ? i.labels.map((l) => (typeof l === 'string' ? l : l && l.name)) : [],
    milestone: i.milestone ? i.milestone.title : null,
    due_date: i.due_date || null,
    confidential: !!i.confidential,
    notes: i.user_notes_count,
    created_at: i.created_at,
    updated_at: i.updated_at,
    closed_at: i.closed_at || null,
    web_url: i.web_url,
    description: clip(i.description || '', textChars),
  };
}

function slimMergeRequest(m, textChars) {
  return {
    iid: m.iid,
    id: m.id,
    project_id: m.project_id,
    reference: ref(m),
    title: m.title,
    state: m.state,
    draft: !!(m.draft || m.work_in_progress),
    author: who(m.author),
    assignees: whos(m.assignees),
    reviewers: whos(m.reviewers),
    source_branch: m.source_branch,
    target_branch: m.target_branch,
    labels: Array.isArray(m.labels) ? m.labels.map((l) => (typeof l === 'string' ? l : l && l.name)) : [],
    detailed_merge_status: m.detailed_merge_status || m.merge_status || null,
    has_conflicts: m.has_conflicts === undefined ? null : !!m.has_conflicts,
    created_at: m.created_at,
    updated_at: m.updated_at,
    merged_at: m.merged_at || null,
    web_url: m.web_url,
    description: clip(m.description || '', textChars),
  };
}

function fullMergeRequest(m) {
  const pipe = m.head_pipeline || m.pipeline;
  return {
    ...slimMergeRequest(m, FULL_TEXT_CHARS),
    sha: m.sha || null,
    merge_commit_sha: m.merge_commit_sha || null,
    squash_commit_sha: m.squash_commit_sha || null,
    merged_by: who(m.merge_user || m.merged_by),
    closed_at: m.closed_at || null,
    milestone: m.milestone ? m.milestone.title : null,
    squash: !!m.squash,
    remove_source_branch: !!(m.force_remove_source_branch || m.should_remove_source_branch),
    auto_merge: !!m.merge_when_pipeline_succeeds,
    blocking_discussions_resolved: m.blocking_discussions_resolved === undefined ? null : !!m.blocking_discussions_resolved,
    changes_count: m.changes_count === undefined ? null : m.changes_count,
    notes: m.user_notes_count,
    diverged_commits_count: m.diverged_commits_count === undefined ? null : m.diverged_commits_count,
    merge_error: m.merge_error || null,
    head_pipeline: pipe ? { id: pipe.id, status: pipe.status, ref: pipe.ref || null, web_url: pipe.web_url || null } : null,
  };
}

function slimNote(n) {
  return { id: n.id, author: who(n.author), created_at: n.created_at, internal: !!(n.internal || n.confidential), body: clip(n.body || '', NOTE_CHARS) };
}

function slimPipeline(p) {
  return {
    id: p.id,
    iid: p.iid === undefined ? null : p.iid,
    status: p.status,
    ref: p.ref,
    sha: p.sha,
    source: p.source || null,
    name: p.name || null,
    created_at: p.created_at,
    updated_at: p.updated_at || null,
    web_url: p.web_url,
  };
}

function slimJob(j) {
  return {
    id: j.id,
    name: j.name,
    stage: j.stage,
    status: j.status,
    allow_failure: !!j.allow_failure,
    failure_reason: j.failure_reason || null,
    duration: j.duration === undefined || j.duration === null ? null : Math.round(j.duration),
    started_at: j.started_at || null,
    finished_at: j.finished_at || null,
    web_url: j.web_url,
  };
}

function slimBranch(b) {
  const c = b.commit || {};
  return {
    name: b.name,
    default: !!b.default,
    protected: !!b.protected,
    merged: !!b.merged,
    can_push: b.can_push === undefined ? null : !!b.can_push,
    commit: { sha: c.id || null, title: c.title || null, author: c.author_name || null, date: c.committed_date || c.authored_date || null },
    web_url: b.web_url || null,
  };
}

/** What `detailed_merge_status` means for someone who wants to merge now. */
const MERGE_BLOCKERS = {
  not_open: 'it is not open (closed or already merged)',
  draft_status: 'it is a draft: mark it ready first (gitlab_update_merge_request with draft: false)',
  discussions_not_resolved: 'it has unresolved threads that must be resolved first',
  not_approved: 'it lacks the approvals it needs',
  requested_changes: 'a reviewer requested changes',
  ci_must_pass: 'the pipeline must succeed first (project setting) and it has not',
  ci_still_running: 'its pipeline is still running',
  need_rebase: 'the source branch must be rebased onto the target branch first',
  conflict: 'it has conflicts with the target branch',
  blocked_status: 'it is blocked by another merge request',
  merge_request_blocked: 'it is blocked by another merge request',
  checking: 'GitLab is still checking whether it can be merged: try again in a few seconds',
  unchecked: 'GitLab has not checked yet whether it can be merged: try again in a few seconds',
  preparing: 'GitLab is still preparing it: try again in a few seconds',
  approvals_syncing: 'its approvals are still being synchronised: try again in a few seconds',
  jira_association_missing: 'its title or description must reference a Jira issue',
  external_status_checks: 'external status checks have not passed',
  security_policy_violations: 'security policies are violated',
  locked_paths: 'it changes paths locked by another user',
  locked_lfs_files: 'it changes LFS files locked by another user',
  title_regex: 'its title does not match the pattern the project requires',
  merge_time: 'it may not be merged before its merge_after time',
  commits_status: 'its source branch has no commits or is missing',
};

// ---------------------------------------------------------------- handlers ----

export default {
  async gitlab_get_current_user(ctx) {
    const { data: u } = await gl(ctx, 'GET', '/user', { what: 'the authenticated user' });
    return { id: u.id, username: u.username, name: u.name || null, email: u.email || u.public_email || null, state: u.state || null, bot: !!u.bot, web_url: u.web_url, created_at: u.created_at || null };
  },

  async gitlab_list_projects(ctx, a) {
    const query = { membership: a.membership, owned: a.owned || undefined, starred: a.starred || undefined, search: a.search, archived: a.include_archived ? undefined : false, order_by: a.order_by, sort: a.sort, ...paging(a) };
    const { data, next } = await gl(ctx, 'GET', '/projects', { query, what: 'projects' });
    return { projects: rows(data).map(slimProject), next };
  },

  async gitlab_get_project(ctx, a) {
    const { data: p } = await gl(ctx, 'GET', P(a), { query: { license: false }, what: `project ${a.project}` });
    const perms = p.permissions || {};
    const level = Math.max((perms.project_access && perms.project_access.access_level) || 0, (perms.group_access && perms.group_access.access_level) || 0);
    return {
      ...slimProject(p),
      description: clip(p.description || '', FULL_TEXT_CHARS) || null,
      namespace: p.namespace ? p.namespace.full_path : null,
      topics: p.topics || p.tag_list || [],
      empty_repo: !!p.empty_repo,
      http_url_to_repo: p.http_url_to_repo || null,
      created_at: p.created_at || null,
      your_role: own(ROLES, level) || String(level),
      merge_method: p.merge_method || null,
      squash_option: p.squash_option || null,
      only_allow_merge_if_pipeline_succeeds: p.only_allow_merge_if_pipeline_succeeds === undefined ? null : !!p.only_allow_merge_if_pipeline_succeeds,
      issues_enabled: p.issues_enabled === undefined ? null : !!p.issues_enabled,
      merge_requests_enabled: p.merge_requests_enabled === undefined ? null : !!p.merge_requests_enabled,
    };
  },

  async gitlab_list_issues(ctx, a) {
    const query = { state: a.state, scope: crossProjectScope(a, [a.assignee_username, a.author_username]), labels: csv(a.labels), assignee_username: a.assignee_username, author_username: a.author_username, milestone: a.milestone, search: a.search, order_by: a.order_by, sort: a.sort, ...paging(a) };
    const path = a.project !== undefined ? `${P(a)}/issues` : '/issues';
    const { data, next } = await gl(ctx, 'GET', path, { query, what: 'issues' });
    return { issues: rows(data).map((i) => slimIssue(i, LIST_TEXT_CHARS)), next };
  },

  async gitlab_get_issue(ctx, a) {
    const { data: i } = await gl(ctx, 'GET', `${P(a)}/issues/${num(a.issue_iid, 'issue_iid')}`, { what: `issue #${a.issue_iid}` });
    return {
      ...slimIssue(i, FULL_TEXT_CHARS),
      closed_by: who(i.closed_by),
      merge_requests_count: i.merge_requests_count === undefined ? null : i.merge_requests_count,
      tasks: i.task_completion_status ? `${i.task_completion_status.completed_count}/${i.task_completion_status.count}` : null,
    };
  },

  async gitlab_create_issue(ctx, a) {
    const body = defined({
      title: a.title,
      description: a.description,
      labels: csv(a.labels),
      assignee_ids: a.assignees && a.assignees.length ? await userIds(ctx, a.assignees, 'assignee') : undefined,
      milestone_id: a.milestone_id,
      due_date: a.due_date,
      confidential: a.confidential,
      issue_type: a.issue_type,
    });
    const { data } = await gl(ctx, 'POST', `${P(a)}/issues`, { body, what: 'creating the issue' });
    return slimIssue(data, LIST_TEXT_CHARS);
  },

  async gitlab_update_issue(ctx, a) {
    const body = defined({
      title: a.title,
      description: a.description,
      state_event: a.state_event,
      labels: a.labels === undefined ? undefined : a.labels.join(','),
      add_labels: csv(a.add_labels),
      remove_labels: csv(a.remove_labels),
      due_date: a.due_date,
      confidential: a.confidential,
      milestone_id: a.milestone_id,
      discussion_locked: a.discussion_locked,
    });
    if (Object.keys(body).length === 0 && a.assignees === undefined) {
      throw new Error('Nothing to change: pass at least one of title, description, state_event, labels, add_labels, remove_labels, assignees, due_date, confidential, milestone_id, discussion_locked.');
    }
    const assignees = await idsFor(ctx, a.assignees, 'assignee');
    if (assignees !== undefined) body.assignee_ids = assignees;
    const { data } = await gl(ctx, 'PUT', `${P(a)}/issues/${num(a.issue_iid, 'issue_iid')}`, { body, what: `issue #${a.issue_iid}` });
    return slimIssue(data, LIST_TEXT_CHARS);
  },

  async gitlab_add_issue_note(ctx, a) {
    const { data } = await gl(ctx, 'POST', `${P(a)}/issues/${num(a.issue_iid, 'issue_iid')}/notes`, { body: defined({ body: a.body, internal: a.internal }), what: `commenting on issue #${a.issue_iid}` });
    return slimNote(data);
  },

  async gitlab_list_merge_requests(ctx, a) {
    const query = {
      state: a.state,
      scope: crossProjectScope(a, [a.author_username, a.reviewer_username]),
      labels: csv(a.labels),
      author_username: a.author_username,
      reviewer_username: a.reviewer_username,
      source_branch: a.source_branch,
      target_branch: a.target_branch,
      search: a.search,
      order_by: a.order_by,
      sort: a.sort,
      ...paging(a),
    };
    const path = a.project !== undefined ? `${P(a)}/merge_requests` : '/merge_requests';
    const { data, next } = await gl(ctx, 'GET', path, { query, what: 'merge requests' });
    return { merge_requests: rows(data).map((m) => slimMergeRequest(m, LIST_TEXT_CHARS)), next };
  },

  async gitlab_get_merge_request(ctx, a) {
    const { data } = await gl(ctx, 'GET', `${P(a)}/merge_requests/${num(a.merge_request_iid, 'merge_request_iid')}`, { what: `merge request !${a.merge_request_iid}` });
    return fullMergeRequest(data);
  },

  async gitlab_create_merge_request(ctx, a) {
    const target = a.target_branch || (await defaultBranch(ctx, a));
    const title = a.draft && !/^(draft:|\[draft\]|\(draft\))/i.test(a.title) ? `Draft: ${a.title}` : a.title;
    const body = defined({
      source_branch: a.source_branch,
      target_branch: target,
      title,
      description: a.description,
      labels: csv(a.labels),
      assignee_ids: a.assignees && a.assignees.length ? await userIds(ctx, a.assignees, 'assignee') : undefined,
      reviewer_ids: a.reviewers && a.reviewers.length ? await userIds(ctx, a.reviewers, 'reviewer') : undefined,
      remove_source_branch: a.remove_source_branch,
      squash: a.squash,
    });
    const { data } = await gl(ctx, 'POST', `${P(a)}/merge_requests`, { body, what: 'creating the merge request' });
    return slimMergeRequest(data, LIST_TEXT_CHARS);
  },

  async gitlab_update_merge_request(ctx, a) {
    const path = `${P(a)}/merge_requests/${num(a.merge_request_iid, 'merge_request_iid')}`;
    const body = defined({
      title: a.title,
      description: a.description,
      state_event: a.state_event,
      target_branch: a.target_branch,
      labels: a.labels === undefined ? undefined : a.labels.join(','),
      add_labels: csv(a.add_labels),
      remove_labels: csv(a.remove_labels),
      remove_source_branch: a.remove_source_branch,
      squash: a.squash,
      discussion_locked: a.discussion_locked,
    });
    if (Object.keys(body).length === 0 && a.assignees === undefined && a.reviewers === undefined && a.draft === undefined) {
      throw new Error('Nothing to change: pass at least one of title, description, state_event, draft, target_branch, labels, add_labels, remove_labels, assignees, reviewers, remove_source_branch, squash, discussion_locked.');
    }
    // GitLab's REST API marks a draft by the title's "Draft:" prefix: a new title without it would
    // mark a draft ready, so a title change alone keeps the merge request's current draft state
    const draftPrefix = /^\s*(draft:|\[draft\]|\(draft\))\s*/i;
    let draft = a.draft;
    let title = a.title;
    if (draft === undefined && title !== undefined && !draftPrefix.test(title)) {
      const { data } = await gl(ctx, 'GET', path, { what: `merge request !${a.merge_request_iid}` });
      if (data.draft || data.work_in_progress) draft = true;
    }
    if (draft !== undefined) {
      if (title === undefined) title = (await gl(ctx, 'GET', path, { what: `merge request !${a.merge_request_iid}` })).data.title;
      const bare = title.replace(draftPrefix, '');
      body.title = draft ? `Draft: ${bare}` : bare;
    }
    const assignees = await idsFor(ctx, a.assignees, 'assignee');
    if (assignees !== undefined) body.assignee_ids = assignees;
    const reviewers = await idsFor(ctx, a.reviewers, 'reviewer');
    if (reviewers !== undefined) body.reviewer_ids = reviewers;
    const { data } = await gl(ctx, 'PUT', path, { body, what: `merge request !${a.merge_request_iid}` });
    return slimMergeRequest(data, LIST_TEXT_CHARS);
  },

  async gitlab_merge_merge_request(ctx, a) {
    const iid = num(a.merge_request_iid, 'merge_request_iid');
    const path = `${P(a)}/merge_requests/${iid}`;
    const body = defined({
      squash: a.squash,
      should_remove_source_branch: a.remove_source_branch,
      sha: a.sha,
      merge_commit_message: a.merge_commit_message,
      squash_commit_message: a.squash_commit_message,
      // `auto_merge` replaced merge_when_pipeline_succeeds in GitLab 17.11; older instances know only the latter
      auto_merge: a.auto_merge ? true : undefined,
      merge_when_pipeline_succeeds: a.auto_merge ? true : undefined,
    });
    const errors = async (res, text) => {
      const message = gitlabMessage(parseBody(text), text);
      const said = message ? ` GitLab said: ${message}` : '';
      if (res.status === 405 || res.status === 406 || res.status === 422) {
        // say why, from the merge request's own detailed_merge_status
        let reason = null;
        try {
          const { data } = await gl(ctx, 'GET', path, { what: `merge request !${iid}` });
          const status = data.detailed_merge_status || data.merge_status;
          if (data.has_conflicts && res.status !== 405) reason = MERGE_BLOCKERS.conflict;
          else if (status && own(MERGE_BLOCKERS, status)) reason = `${own(MERGE_BLOCKERS, status)} (detailed_merge_status: ${status})`;
          else if (status) reason = `detailed_merge_status is ${status}`;
        } catch {
          reason = null;
        }
        if (res.status === 405) {
          return new Error(`GitLab will not merge !${iid} now (405 not mergeable): ${reason || 'it is a draft, closed, has unresolved threads, lacks approvals, or its pipeline must succeed first'}. To have GitLab merge it when the pipeline succeeds, call again with auto_merge: true.${said}`);
        }
        return new Error(`GitLab could not merge !${iid} (${res.status} ${res.status === 406 ? 'conflicts' : 'merge failed'}): ${reason || 'the source branch has conflicts with the target branch or must be rebased'}. Resolve the conflicts or rebase the source branch, then merge again.${said}`);
      }
      if (res.status === 409) {
        return new Error(`The source branch of !${iid} has moved (409): the sha you passed is no longer its HEAD, so GitLab did not merge. Read the merge request again (gitlab_get_merge_request), review the new commits, and merge with the new sha.${said}`);
      }
      if (res.status === 401) {
        // the merge endpoint answers 401 also when the user may not merge: tell the two apart
        try {
          await gl(ctx, 'GET', '/user', { what: 'checking the token' });
        } catch {
          return undefined;
        }
        return new Error(`GitLab refused to merge !${iid} (401): you are not allowed to merge into its target branch (a protected branch, or your role is below the one allowed to merge).${said}`);
      }
      return undefined;
    };
    const { data } = await gl(ctx, 'PUT', `${path}/merge`, { body, errors, what: `merging !${iid}` });
    return {
      iid: data.iid,
      state: data.state,
      merged: data.state === 'merged',
      auto_merge: !data.merged_at && !!data.merge_when_pipeline_succeeds,
      merge_commit_sha: data.merge_commit_sha || null,
      squash_commit_sha: data.squash_commit_sha || null,
      merged_by: who(data.merge_user || data.merged_by),
      merged_at: data.merged_at || null,
      web_url: data.web_url,
    };
  },

  async gitlab_get_merge_request_diffs(ctx, a) {
    const path = `${P(a)}/merge_requests/${num(a.merge_request_iid, 'merge_request_iid')}/diffs`;
    const { data, next } = await gl(ctx, 'GET', path, { query: paging(a), what: `diffs of !${a.merge_request_iid}` });
    let budget = DIFF_BUDGET_CHARS;
    let left = 0;
    const files = rows(data).map((d) => {
      const diff = typeof d.diff === 'string' ? d.diff : '';
      const change = d.new_file ? 'added' : d.deleted_file ? 'deleted' : d.renamed_file ? 'renamed' : 'modified';
      const out = { old_path: d.old_path, new_path: d.new_path, change };
      if (d.generated_file) out.generated = true;
      const max = Math.min(a.max_diff_chars, budget);
      if (max <= 0) {
        left++;
        out.diff = null;
        out.note = 'diff left out: this answer reached its size limit; ask for this file with a smaller per_page';
        return out;
      }
      out.diff = diff.length > max ? diff.slice(0, max) : diff;
      if (diff.length > max) out.note = `diff cut at ${max} of ${diff.length} characters; see it whole at the merge request's web page`;
      else if (!diff && (d.too_large || d.collapsed)) out.note = `GitLab sent no diff for this file (${d.too_large ? 'too large' : 'collapsed'}); see it on the merge request's web page`;
      else if (!diff) out.note = 'no textual diff (binary file, or only the mode changed)';
      budget -= out.diff.length;
      return out;
    });
    const result = { files, next };
    if (left) result.note = `${left} diff(s) left out to keep the answer under ${DIFF_BUDGET_CHARS} characters`;
    return result;
  },

  async gitlab_add_merge_request_note(ctx, a) {
    const path = `${P(a)}/merge_requests/${num(a.merge_request_iid, 'merge_request_iid')}/notes`;
    const { data } = await gl(ctx, 'POST', path, { body: defined({ body: a.body, internal: a.internal }), what: `commenting on !${a.merge_request_iid}` });
    return slimNote(data);
  },

  async gitlab_list_pipelines(ctx, a) {
    const query = { ref: a.ref, status: a.status, scope: a.scope, sha: a.sha, source: a.source, username: a.username, order_by: a.order_by, sort: a.sort, ...paging(a) };
    const { data, next } = await gl(ctx, 'GET', `${P(a)}/pipelines`, { query, what: 'pipelines' });
    return { pipelines: rows(data).map(slimPipeline), next };
  },

  async gitlab_get_pipeline(ctx, a) {
    const path = `${P(a)}/pipelines/${num(a.pipeline_id, 'pipeline_id')}`;
    const { data: p } = await gl(ctx, 'GET', path, { what: `pipeline ${a.pipeline_id}` });
    // a big pipeline has hundreds of jobs: follow the pages (the failed one may be on any of them)
    const jobs = [];
    let more = null;
    for (let page = 1; page <= MAX_JOB_PAGES; page++) {
      const { data, next } = await gl(ctx, 'GET', `${path}/jobs`, { query: { per_page: 100, page }, what: `jobs of pipeline ${a.pipeline_id}` });
      jobs.push(...rows(data));
      more = next;
      if (next === null) break;
    }
    const summary = new Map();
    for (const j of jobs) summary.set(String(j.status), (summary.get(String(j.status)) || 0) + 1);
    const out = {
      ...slimPipeline(p),
      user: who(p.user),
      started_at: p.started_at || null,
      finished_at: p.finished_at || null,
      duration: p.duration === undefined ? null : p.duration,
      coverage: p.coverage || null,
      yaml_errors: p.yaml_errors || null,
      job_summary: Object.fromEntries(summary),
      jobs: jobs.map(slimJob),
    };
    if (more !== null) out.jobs_truncated = `only the first ${jobs.length} jobs are listed`;
    return out;
  },

  async gitlab_create_pipeline(ctx, a) {
    const body = defined({ ref: a.ref, variables: a.variables && a.variables.length ? a.variables.map((v) => defined({ key: v.key, value: v.value, variable_type: v.variable_type })) : undefined });
    const { data } = await gl(ctx, 'POST', `${P(a)}/pipeline`, { body, what: `creating a pipeline on ${a.ref}` });
    return slimPipeline(data);
  },

  async gitlab_get_job_log(ctx, a) {
    const path = `${P(a)}/jobs/${num(a.job_id, 'job_id')}`;
    const { data: job } = await gl(ctx, 'GET', path, { what: `job ${a.job_id}` });
    const tooLarge = () =>
      `The log of job ${a.job_id} is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE), so not even its end can be read here (a smaller max_chars does not help: the whole log is sent). ${job.web_url ? `Open it in GitLab: ${job.web_url} (raw text: ${job.web_url}/raw).` : 'Open the job in GitLab.'}`;
    const { text } = await gl(ctx, 'GET', `${path}/trace`, { accept: 'text/plain', raw: true, what: `log of job ${a.job_id}`, tooLarge });
    // only the tail that can be returned is cleaned: from a line start within the last
    // LOG_TAIL_FACTOR × max_chars raw characters (what cleaning removes is seldom more than that)
    let raw = text;
    const partial = text.length > LOG_TAIL_FACTOR * a.max_chars;
    if (partial) {
      raw = text.slice(text.length - LOG_TAIL_FACTOR * a.max_chars);
      const nl = raw.indexOf('\n');
      if (nl >= 0 && nl < raw.length - 1) raw = raw.slice(nl + 1);
    }
    const clean = plainLog(raw);
    const log = clean.length > a.max_chars ? clean.slice(clean.length - a.max_chars) : clean;
    const cut = partial || clean.length > a.max_chars;
    const why = '(the end of a log is where a failure shows); pass a larger max_chars for more';
    return {
      job: { ...slimJob(job), pipeline_id: job.pipeline ? job.pipeline.id : null, ref: job.ref || null },
      // the length of the whole cleaned log is known only when the whole log was cleaned
      total_chars: partial ? null : clean.length,
      raw_chars: text.length,
      truncated: cut,
      ...(cut
        ? { note: partial ? `only the last ${log.length} characters of a log of ${text.length} characters (counted before colour codes and section markers were removed) ${why}` : `only the last ${a.max_chars} of ${clean.length} characters ${why}` }
        : {}),
      log,
    };
  },

  async gitlab_get_file(ctx, a) {
    const ref = a.ref || 'HEAD';
    const tooLarge = async () => {
      // GitLab sends a file whole (base64 in JSON): offset and max_chars cannot make it smaller
      let at = '';
      try {
        const { data: p } = await gl(ctx, 'GET', P(a), { what: `project ${a.project}` });
        const shown = ref === 'HEAD' ? p.default_branch || ref : ref;
        if (p.web_url) at = ` Open it in GitLab: ${p.web_url}/-/blob/${shown.split('/').map(enc).join('/')}/${String(a.path).replace(/^\/+/, '').split('/').map(enc).join('/')}`;
      } catch {
        at = '';
      }
      return `File "${a.path}" at ${ref} is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE), so it cannot be read here (offset and max_chars do not help: GitLab sends the whole file).${at || ' Open it in the project on GitLab.'}`;
    };
    const { data } = await gl(ctx, 'GET', `${P(a)}/repository/files/${filePath(a.path)}`, { query: { ref }, what: `file "${a.path}" at ${ref}`, tooLarge });
    const base = { path: data.file_path, ref: data.ref || ref, size: data.size, blob_id: data.blob_id || null, last_commit_id: data.last_commit_id || null };
    if (data.encoding && data.encoding !== 'base64') return { ...base, ...textWindow(String(data.content || ''), a.offset, a.max_chars) };
    let bytes;
    try {
      bytes = Uint8Array.fromBase64(String(data.content || '').replace(/\s+/g, ''));
    } catch {
      return { ...base, content: null, note: 'GitLab sent the content in a form that is not valid base64.' };
    }
    if (bytes.subarray(0, 8000).includes(0)) return { ...base, binary: true, content: null, note: 'binary file: its content is not shown' };
    let text;
    try {
      // a byte-order mark is part of the file: kept
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      return { ...base, binary: true, content: null, note: 'the file is not UTF-8 text: its content is not shown' };
    }
    return { ...base, ...textWindow(text, a.offset, a.max_chars) };
  },

  async gitlab_list_repository_tree(ctx, a) {
    const query = { path: a.path, ref: a.ref, recursive: a.recursive || undefined, ...paging(a) };
    const { data, next } = await gl(ctx, 'GET', `${P(a)}/repository/tree`, { query, what: `tree of "${a.path || '/'}"` });
    const kind = { tree: 'dir', blob: 'file', commit: 'submodule' };
    return { entries: rows(data).map((e) => ({ name: e.name, path: e.path, type: own(kind, e.type) || e.type })), next };
  },

  async gitlab_list_branches(ctx, a) {
    const { data, next } = await gl(ctx, 'GET', `${P(a)}/repository/branches`, { query: { search: a.search, ...paging(a) }, what: 'branches' });
    return { branches: rows(data).map(slimBranch), next };
  },

  async gitlab_create_branch(ctx, a) {
    // git ref rules the schema's pattern cannot express without lookahead
    if (/\.\.|\/\/|@\{|\.lock$|\/$|\.$|^\/|^-/.test(a.branch)) throw new Error(`Invalid arguments: "${a.branch}" is not a valid branch name (no "..", "//", "@{", no leading "/" or "-", and no trailing "/", "." or ".lock").`);
    const from = a.ref || (await defaultBranch(ctx, a));
    const { data } = await gl(ctx, 'POST', `${P(a)}/repository/branches`, { body: { branch: a.branch, ref: from }, what: `creating branch ${a.branch} from ${from}` });
    return { ...slimBranch(data), created_from: from };
  },

  async gitlab_search_code(ctx, a) {
    const query = { scope: 'blobs', search: a.query, ref: a.ref, ...paging(a) };
    const { data, next } = await gl(ctx, 'GET', `${P(a)}/search`, { query, what: 'code search' });
    const items = rows(data).map((b) => ({ path: b.path, ref: b.ref || null, startline: b.startline === undefined ? null : b.startline, fragment: clip(b.data || '', SEARCH_DATA_CHARS) }));
    return { items, next };
  },
};
