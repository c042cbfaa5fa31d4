/**
 * @module plugins/github/plugin
 * GitHub tools over the REST API (version 2022-11-28). The plugin format is one self-contained ES
 * module without imports, so the helpers (error mapping, paths, pagination, base64, result shaping)
 * and every handler live in this file; that is why it is longer than the 400-line guideline.
 * The credential is added by the gateway: this code never sets Authorization.
 */

const API = 'https://api.github.com';
const API_VERSION = '2022-11-28';
const LIST_BODY_CHARS = 280;
const FULL_BODY_CHARS = 8000;
const COMMENT_CHARS = 2000;
const PATCH_CHARS = 1200;

// ---------------------------------------------------------------- errors (the one mapping) ----

/** A scope is also satisfied by the broader scopes listed here (GitHub's scope hierarchy). */
const BROADER_SCOPES = {
  public_repo: ['repo'],
  'repo:status': ['repo'],
  repo_deployment: ['repo'],
  'repo:invite': ['repo'],
  security_events: ['repo'],
  notifications: ['repo'],
  'read:org': ['write:org'],
  'write:org': ['admin:org'],
  'read:user': ['user'],
  'user:email': ['user'],
  'user:follow': ['user'],
  'read:discussion': ['write:discussion'],
  'read:packages': ['write:packages'],
};

function scopeGranted(granted, scope) {
  if (granted.includes(scope)) return true;
  return (BROADER_SCOPES[scope] || []).some((broader) => scopeGranted(granted, broader));
}

function headerOf(res, name) {
  const h = res && res.headers;
  if (!h) return null;
  const v = typeof h.get === 'function' ? h.get(name) : h[name];
  return v === undefined || v === null ? null : String(v);
}

function scopeList(value) {
  return (value || '').split(',').map((s) => s.trim()).filter(Boolean);
}

/** Seconds to wait when the response is a rate-limit refusal, else undefined. */
function rateLimitWait(res, message) {
  const status = res.status;
  const retryAfter = headerOf(res, 'retry-after');
  const remaining = headerOf(res, 'x-ratelimit-remaining');
  const limited = status === 429 || (status === 403 && (retryAfter !== null || remaining === '0' || /rate limit/i.test(message)));
  if (!limited) return undefined;
  if (retryAfter !== null && /^\d+$/.test(retryAfter.trim())) return Math.max(1, Number(retryAfter));
  const reset = Number(headerOf(res, 'x-ratelimit-reset'));
  if (reset > 0) return Math.max(1, Math.ceil(reset - Date.now() / 1000));
  return 60;
}

function describeValidation(errors) {
  if (!Array.isArray(errors) || errors.length === 0) return '';
  const parts = errors.slice(0, 10).map((e) => {
    if (typeof e === 'string') return e;
    if (e && typeof e.message === 'string') return e.message;
    if (e && typeof e === 'object') return [e.resource, e.field].filter(Boolean).join('.') + (e.code ? ` ${e.code}` : '');
    return String(e);
  });
  return ` Details: ${parts.join('; ')}.`;
}

/** Turns a failed GitHub response into the Error the agent sees. Every request goes through it. */
function githubError(res, text, what) {
  let body = {};
  try {
    body = JSON.parse(text || '{}') || {};
  } catch {
    body = {};
  }
  const status = res.status;
  const message = typeof body.message === 'string' ? body.message : (text || res.statusText || '').slice(0, 300);
  const about = what ? ` (${what})` : '';
  if (status === 401) {
    return new Error(`GitHub rejected the credential (401 ${message || 'Unauthorized'}): the token is invalid, expired or revoked. Reconnect the GitHub integration.`);
  }
  const wait = rateLimitWait(res, message);
  if (wait !== undefined) {
    return new Error(`GitHub rate limit exceeded${about}: rate limited, retry after ${wait} s. ${message}`.trim());
  }
  if (status === 403 || status === 404) {
    const sso = headerOf(res, 'x-github-sso');
    if (sso) {
      const url = (/url=(\S+)/.exec(sso) || [])[1];
      return new Error(`GitHub ${status}${about}: the organisation requires SAML single sign-on for this token.${url ? ` Authorise it at ${url}` : ' Authorise the token for the organisation in GitHub settings.'}`);
    }
    const accepted = scopeList(headerOf(res, 'x-accepted-oauth-scopes'));
    const granted = scopeList(headerOf(res, 'x-oauth-scopes'));
    if (accepted.length > 0 && !accepted.some((s) => scopeGranted(granted, s))) {
      return new Error(`GitHub ${status}${about}: the token is missing the OAuth scope this needs (one of: ${accepted.join(', ')}; the token has: ${granted.join(', ') || 'none'}). Reconnect GitHub and grant that scope.`);
    }
  }
  if (status === 403) return new Error(`GitHub refused the request${about} (403): ${message}`);
  if (status === 404) {
    // GitHub's own message names what is missing ("Branch foo not found", "No commit found for the
    // ref foo"); the bare "Not Found" adds nothing
    const own = typeof body.message === 'string' && body.message.trim() && !/^not found\.?$/i.test(body.message.trim()) ? ` GitHub said: ${body.message.trim().slice(0, 300)}` : '';
    return new Error(`Not found or no access${about}: GitHub answers 404 both when it does not exist and when the token may not see it. Check the owner, repository, number, branch or path.${own}`);
  }
  if (status === 405) return new Error(`GitHub does not allow this${about} (405): ${message}`);
  if (status === 409) return new Error(`GitHub reported a conflict${about} (409): ${message}`);
  if (status === 422) return new Error(`GitHub rejected the input${about} (422): ${message}.${describeValidation(body.errors)}`);
  if (status >= 500) return new Error(`GitHub server error ${status}${about}: ${message || 'no details'}. Try again later.`);
  return new Error(`GitHub returned ${status}${about}: ${message || 'no details'}`);
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

/** entries the contents API returns for one directory at most */
const DIR_ENTRIES_MAX = 1000;

/** pages of jobs (100 each) github_get_workflow_run reads at most */
const MAX_JOB_PAGES = 5;

/** query parameters of a rel="next" link that say where the next page starts */
const PAGE_KEYS = ['page', 'after', 'before', 'since', 'cursor'];

/**
 * Where the rel="next" link starts: its page number, or, where GitHub pages by cursor (large
 * result sets answer `after=`, some lists `since=`), those parameters as one string the tool takes
 * back as `page`. Null when this is the last page.
 */
function nextPage(res) {
  const link = headerOf(res, 'link');
  if (!link) return null;
  const next = /<([^>]*)>\s*;\s*rel="next"/.exec(link);
  if (!next) return null;
  const query = next[1].includes('?') ? next[1].slice(next[1].indexOf('?') + 1) : '';
  const params = query.split('&').map((kv) => kv.split('=')).filter(([k, v]) => PAGE_KEYS.includes(k) && v !== undefined && v !== '');
  const page = params.find(([k]) => k === 'page');
  if (page && /^\d+$/.test(page[1])) return Number(page[1]);
  return params.length > 0 ? params.map(([k, v]) => `${k}=${v}`).join('&') : null;
}

/** One GitHub request; throws githubError on any non-2xx answer. */
async function gh(ctx, method, path, opts = {}) {
  const headers = {
    accept: opts.accept || 'application/vnd.github+json',
    'x-github-api-version': API_VERSION,
    'user-agent': 'workbench-github-plugin',
  };
  const init = { method, headers };
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  const res = await ctx.http(API + path + queryString(opts.query), init);
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw githubError(res, text, opts.what);
  let data = null;
  if (!opts.raw && text) {
    try {
      data = JSON.parse(text);
    } catch {
      throw new Error(`GitHub returned a response that is not JSON (${res.status})${opts.what ? ` for ${opts.what}` : ''}.`);
    }
  }
  return { status: res.status, text, data, next: nextPage(res) };
}

function seg(value, name) {
  const s = String(value === undefined || value === null ? '' : value);
  if (s === '' || s === '.' || s === '..') throw new Error(`Invalid ${name}: "${s}".`);
  return enc(s);
}

/** A path such as a file path or a ref: each segment encoded, "/" kept between them. */
function segs(value, name) {
  const s = String(value || '').replace(/^\/+|\/+$/g, '');
  if (s === '') throw new Error(`Invalid ${name}: it is empty.`);
  return s.split('/').map((p) => seg(p, name)).join('/');
}

function repoPath(a) {
  return `/repos/${seg(a.owner, 'owner')}/${seg(a.repo, 'repo')}`;
}

/**
 * per_page, and where to start: a page number, or the cursor parameters a `next` carried. A page
 * string that is not such a `next` value (an unknown parameter, an empty value, or a broken
 * percent-escape such as `after=%E0`, on which decodeURIComponent throws URIError) is refused with
 * the one argument error below rather than a bare "URI malformed".
 */
function paging(a) {
  if (typeof a.page !== 'string' || /^\d+$/.test(a.page)) return { per_page: a.per_page, page: a.page === undefined ? undefined : Number(a.page) };
  const notNext = () => new Error(`page "${a.page}" is neither a page number nor a \`next\` value of an earlier result: pass the \`next\` value as it was returned.`);
  const out = { per_page: a.per_page };
  for (const kv of a.page.split('&')) {
    const [k, v] = kv.split('=');
    if (!PAGE_KEYS.includes(k) || !v) throw notNext();
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      throw notNext();
    }
  }
  return out;
}

/** Drops undefined values so that a PATCH body changes only what the agent asked to change. */
function defined(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}

// ---------------------------------------------------------------- text and base64 ----

function clip(text, max) {
  if (typeof text !== 'string') return text === undefined ? null : text;
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [truncated, ${text.length - max} more characters]`;
}

// UTF-8 and base64 with the sandbox's own TextEncoder/TextDecoder and Uint8Array base64, made when
// a handler needs them (not at module level: every call's fresh context evaluates the module). A
// decoder puts U+FFFD for each invalid sequence; GitHub wraps the base64 it sends every 60 characters.
const base64Decode = (text) => Uint8Array.fromBase64(String(text).replace(/[^A-Za-z0-9+/=]/g, ''));
// a byte-order mark is part of the file: kept, as GitHub shows it and as writing it back needs
const utf8Decode = (bytes) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
const base64OfUtf8 = (text) => new TextEncoder().encode(text).toBase64();

// ---------------------------------------------------------------- result shapes ----

const login = (u) => (u && u.login) || null;
const teamSlugs = (list) => (Array.isArray(list) ? list.map((t) => `team:${t.slug || t.name}`) : []);
const names = (list) => (Array.isArray(list) ? list.map((x) => (typeof x === 'string' ? x : x && (x.name || x.login || x.slug))).filter(Boolean) : []);

function slimRepo(r) {
  return {
    full_name: r.full_name,
    description: r.description || null,
    private: !!r.private,
    visibility: r.visibility || (r.private ? 'private' : 'public'),
    default_branch: r.default_branch,
    language: r.language || null,
    stars: r.stargazers_count,
    forks: r.forks_count,
    open_issues: r.open_issues_count,
    archived: !!r.archived,
    fork: !!r.fork,
    topics: r.topics || [],
    pushed_at: r.pushed_at || null,
    updated_at: r.updated_at || null,
    html_url: r.html_url,
  };
}

function slimIssue(i, bodyChars) {
  return {
    number: i.number,
    title: i.title,
    state: i.state,
    state_reason: i.state_reason || null,
    is_pull_request: !!i.pull_request,
    author: login(i.user),
    labels: names(i.labels),
    assignees: names(i.assignees),
    milestone: i.milestone ? i.milestone.title : null,
    comments: i.comments,
    created_at: i.created_at,
    updated_at: i.updated_at,
    closed_at: i.closed_at || null,
    html_url: i.html_url,
    body: clip(i.body || '', bodyChars),
    ...(i.repository_url ? { repository: i.repository_url.replace(/^.*\/repos\//, '') } : {}),
  };
}

function slimPull(p, bodyChars) {
  const full = {
    number: p.number,
    title: p.title,
    state: p.state,
    draft: !!p.draft,
    merged: p.merged === undefined ? !!p.merged_at : !!p.merged,
    author: login(p.user),
    head: p.head ? p.head.ref : null,
    head_sha: p.head ? p.head.sha : null,
    head_repo: p.head && p.head.repo ? p.head.repo.full_name : null,
    base: p.base ? p.base.ref : null,
    labels: names(p.labels),
    assignees: names(p.assignees),
    requested_reviewers: names(p.requested_reviewers).concat(teamSlugs(p.requested_teams)),
    created_at: p.created_at,
    updated_at: p.updated_at,
    closed_at: p.closed_at || null,
    merged_at: p.merged_at || null,
    html_url: p.html_url,
    body: clip(p.body || '', bodyChars),
  };
  if (p.mergeable !== undefined) {
    Object.assign(full, {
      mergeable: p.mergeable,
      mergeable_state: p.mergeable_state || null,
      merged_by: login(p.merged_by),
      commits: p.commits,
      additions: p.additions,
      deletions: p.deletions,
      changed_files: p.changed_files,
      comments: p.comments,
      review_comments: p.review_comments,
    });
  }
  return full;
}

function slimComment(c) {
  return { id: c.id, author: login(c.user), created_at: c.created_at, updated_at: c.updated_at, html_url: c.html_url, body: clip(c.body || '', COMMENT_CHARS) };
}

function slimCommit(c) {
  const info = c.commit || {};
  return {
    sha: c.sha,
    message: clip(info.message || '', 500),
    author: login(c.author) || (info.author && info.author.name) || null,
    date: (info.author && info.author.date) || null,
    html_url: c.html_url,
  };
}

function slimFile(f) {
  return {
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    ...(f.previous_filename ? { previous_filename: f.previous_filename } : {}),
    patch: f.patch === undefined ? null : clip(f.patch, PATCH_CHARS),
  };
}

function slimRun(r) {
  return {
    id: r.id,
    name: r.name,
    title: r.display_title || null,
    workflow_id: r.workflow_id,
    run_number: r.run_number,
    attempt: r.run_attempt,
    event: r.event,
    status: r.status,
    conclusion: r.conclusion || null,
    branch: r.head_branch,
    head_sha: r.head_sha,
    actor: login(r.actor),
    created_at: r.created_at,
    updated_at: r.updated_at,
    html_url: r.html_url,
  };
}

function slimRelease(r, bodyChars) {
  return {
    id: r.id,
    tag_name: r.tag_name,
    name: r.name || null,
    draft: !!r.draft,
    prerelease: !!r.prerelease,
    author: login(r.author),
    target_commitish: r.target_commitish,
    created_at: r.created_at,
    published_at: r.published_at || null,
    html_url: r.html_url,
    body: clip(r.body || '', bodyChars),
    assets: (r.assets || []).map((a) => ({ name: a.name, size: a.size, download_count: a.download_count, url: a.browser_download_url })),
  };
}

function slimReview(r) {
  return { id: r.id, author: login(r.user), state: r.state, submitted_at: r.submitted_at || null, commit_id: r.commit_id, html_url: r.html_url, body: clip(r.body || '', COMMENT_CHARS) };
}

function slimReviewComment(c) {
  return {
    id: c.id,
    author: login(c.user),
    path: c.path,
    line: c.line === undefined ? null : c.line,
    start_line: c.start_line || null,
    side: c.side || null,
    in_reply_to_id: c.in_reply_to_id || null,
    created_at: c.created_at,
    html_url: c.html_url,
    body: clip(c.body || '', COMMENT_CHARS),
    diff_hunk: clip(c.diff_hunk || '', 600),
  };
}

/** Reads the whole text and returns the window [offset, offset + max) with where to continue. */
function textWindow(text, offset, max) {
  const start = Math.min(offset || 0, text.length);
  const end = Math.min(start + max, text.length);
  return { total_chars: text.length, offset: start, content: text.slice(start, end), next_offset: end < text.length ? end : null };
}

async function defaultBranch(ctx, a) {
  const { data } = await gh(ctx, 'GET', repoPath(a), { what: `repository ${a.owner}/${a.repo}` });
  return data.default_branch;
}

// ---------------------------------------------------------------- handlers ----

export default {
  async github_get_me(ctx) {
    const { data: u } = await gh(ctx, 'GET', '/user', { what: 'the authenticated user' });
    return { login: u.login, id: u.id, name: u.name || null, email: u.email || null, company: u.company || null, bio: clip(u.bio || '', 500), public_repos: u.public_repos, followers: u.followers, html_url: u.html_url, created_at: u.created_at };
  },

  async github_search_repositories(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', '/search/repositories', { query: { q: a.query, sort: a.sort, order: a.order, ...paging(a) }, what: 'repository search' });
    return { total_count: data.total_count, incomplete_results: !!data.incomplete_results, repositories: (data.items || []).map(slimRepo), next };
  },

  async github_list_my_repositories(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', '/user/repos', { query: { visibility: a.visibility, affiliation: a.affiliation, sort: a.sort, direction: a.direction, ...paging(a) }, what: 'your repositories' });
    return { repositories: data.map(slimRepo), next };
  },

  async github_get_repository(ctx, a) {
    const { data } = await gh(ctx, 'GET', repoPath(a), { what: `repository ${a.owner}/${a.repo}` });
    return { ...slimRepo(data), owner: login(data.owner), license: data.license ? data.license.spdx_id : null, homepage: data.homepage || null, watchers: data.subscribers_count, created_at: data.created_at, permissions: data.permissions || null };
  },

  async github_list_branches(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/branches`, { query: { protected: a.protected, ...paging(a) }, what: 'branches' });
    return { branches: data.map((b) => ({ name: b.name, sha: b.commit ? b.commit.sha : null, protected: !!b.protected })), next };
  },

  async github_create_branch(ctx, a) {
    // Git ref rules the schema's pattern cannot express without lookahead.
    if (/\.\.|\/\/|@\{|\.lock$|\/$|\.$/.test(a.branch)) throw new Error(`Invalid arguments: "${a.branch}" is not a valid branch name (no "..", "//", "@{", and no trailing "/", "." or ".lock")`);
    let sha = a.from_sha;
    let from = a.from_sha ? null : a.from_branch;
    if (!sha) {
      from = from || (await defaultBranch(ctx, a));
      const { data } = await gh(ctx, 'GET', `${repoPath(a)}/git/ref/heads/${segs(from, 'from_branch')}`, { what: `branch ${from}` });
      sha = data.object.sha;
    }
    const { data } = await gh(ctx, 'POST', `${repoPath(a)}/git/refs`, { body: { ref: `refs/heads/${a.branch}`, sha }, what: `creating branch ${a.branch}` });
    return { branch: a.branch, ref: data.ref, sha: data.object ? data.object.sha : sha, created_from: from || sha };
  },

  async github_get_file_contents(ctx, a) {
    const path = a.path ? segs(a.path, 'path') : '';
    const { data } = await gh(ctx, 'GET', `${repoPath(a)}/contents/${path}`, { query: { ref: a.ref }, what: `path "${a.path || '/'}"` });
    if (Array.isArray(data)) {
      const out = { type: 'dir', path: a.path || '', entries: data.map((e) => ({ name: e.name, path: e.path, type: e.type, size: e.size })) };
      // the contents API lists at most 1,000 entries of a directory
      if (data.length >= DIR_ENTRIES_MAX) out.entries_truncated = `GitHub lists at most ${DIR_ENTRIES_MAX} entries of a directory; use github_search_code with path: to find a file in it`;
      return out;
    }
    const base = { type: data.type, path: data.path, sha: data.sha, size: data.size, html_url: data.html_url };
    if (data.type !== 'file') return { ...base, target: data.target || data.submodule_git_url || null };
    if (data.encoding !== 'base64' || typeof data.content !== 'string' || (data.content === '' && data.size > 0)) {
      return { ...base, content: null, note: 'The file is too large for the contents API (over 1 MB); use download_url.', download_url: data.download_url || null };
    }
    let bytes;
    try {
      bytes = base64Decode(data.content);
    } catch {
      return { ...base, content: null, note: 'GitHub sent the content in a form that is not valid base64; use download_url.', download_url: data.download_url || null };
    }
    if (bytes.slice(0, 8000).includes(0)) return { ...base, binary: true, content: null, download_url: data.download_url || null };
    return { ...base, ...textWindow(utf8Decode(bytes), a.offset, a.max_chars) };
  },

  async github_create_or_update_file(ctx, a) {
    const path = `${repoPath(a)}/contents/${segs(a.path, 'path')}`;
    let sha = a.sha;
    if (!sha) {
      try {
        const { data } = await gh(ctx, 'GET', path, { query: { ref: a.branch }, what: `path "${a.path}"` });
        if (Array.isArray(data) || data.type !== 'file') throw new Error(`"${a.path}" is a ${Array.isArray(data) ? 'directory' : data.type}, not a file.`);
        sha = data.sha;
      } catch (err) {
        if (!/^Not found/.test(String(err && err.message))) throw err;
      }
    }
    const body = defined({ message: a.message, content: base64OfUtf8(a.content), branch: a.branch, sha });
    const { status, data } = await gh(ctx, 'PUT', path, { body, what: `writing "${a.path}"` });
    return { created: status === 201, path: data.content.path, sha: data.content.sha, html_url: data.content.html_url, commit: { sha: data.commit.sha, html_url: data.commit.html_url } };
  },

  async github_list_commits(ctx, a) {
    const query = { sha: a.ref, path: a.path, author: a.author, since: a.since, until: a.until, ...paging(a) };
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/commits`, { query, what: 'commits' });
    return { commits: data.map(slimCommit), next };
  },

  async github_get_commit(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/commits/${segs(a.ref, 'ref')}`, { query: { per_page: a.max_files }, what: `commit ${a.ref}` });
    const files = data.files || [];
    const out = { ...slimCommit(data), message: clip((data.commit && data.commit.message) || '', 4000), parents: (data.parents || []).map((p) => p.sha), stats: data.stats || null, files: files.map(slimFile) };
    // GitHub pages a commit's files: say when there are more than were asked for
    if (next !== null) out.files_truncated = `more than ${files.length} files changed; pass a larger max_files (up to 100), or see the whole commit at its html_url`;
    return out;
  },

  async github_search_code(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', '/search/code', { query: { q: a.query, ...paging(a) }, accept: 'application/vnd.github.text-match+json', what: 'code search' });
    const items = (data.items || []).map((i) => ({
      repository: i.repository ? i.repository.full_name : null,
      path: i.path,
      sha: i.sha,
      html_url: i.html_url,
      fragments: (i.text_matches || []).map((m) => clip(m.fragment || '', 400)),
    }));
    return { total_count: data.total_count, incomplete_results: !!data.incomplete_results, items, next };
  },

  async github_list_issues(ctx, a) {
    const query = { state: a.state, labels: a.labels, assignee: a.assignee, creator: a.creator, mentioned: a.mentioned, milestone: a.milestone, since: a.since, sort: a.sort, direction: a.direction, ...paging(a) };
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/issues`, { query, what: 'issues' });
    const issues = data.filter((i) => !i.pull_request).map((i) => slimIssue(i, LIST_BODY_CHARS));
    return { issues, skipped_pull_requests: data.length - issues.length, next };
  },

  async github_get_issue(ctx, a) {
    const { data } = await gh(ctx, 'GET', `${repoPath(a)}/issues/${seg(a.issue_number, 'issue_number')}`, { what: `issue #${a.issue_number}` });
    return slimIssue(data, FULL_BODY_CHARS);
  },

  async github_create_issue(ctx, a) {
    const body = defined({ title: a.title, body: a.body, labels: a.labels, assignees: a.assignees, milestone: a.milestone });
    const { data } = await gh(ctx, 'POST', `${repoPath(a)}/issues`, { body, what: 'creating the issue' });
    return slimIssue(data, LIST_BODY_CHARS);
  },

  async github_update_issue(ctx, a) {
    const path = `${repoPath(a)}/issues/${seg(a.issue_number, 'issue_number')}`;
    const patch = defined({ title: a.title, body: a.body, state: a.state, state_reason: a.state_reason, labels: a.labels, assignees: a.assignees, milestone: a.milestone });
    if (Object.keys(patch).length === 0 && !(a.add_labels && a.add_labels.length)) {
      throw new Error('Nothing to change: pass at least one of title, body, state, state_reason, labels, add_labels, assignees, milestone.');
    }
    let issue = null;
    if (Object.keys(patch).length > 0) issue = (await gh(ctx, 'PATCH', path, { body: patch, what: `issue #${a.issue_number}` })).data;
    if (a.add_labels && a.add_labels.length) {
      const { data } = await gh(ctx, 'POST', `${path}/labels`, { body: { labels: a.add_labels }, what: `labels of issue #${a.issue_number}` });
      if (!issue) issue = (await gh(ctx, 'GET', path, { what: `issue #${a.issue_number}` })).data;
      issue.labels = data;
    }
    return slimIssue(issue, LIST_BODY_CHARS);
  },

  async github_add_issue_comment(ctx, a) {
    const { data } = await gh(ctx, 'POST', `${repoPath(a)}/issues/${seg(a.issue_number, 'issue_number')}/comments`, { body: { body: a.body }, what: `commenting on #${a.issue_number}` });
    return slimComment(data);
  },

  async github_list_issue_comments(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/issues/${seg(a.issue_number, 'issue_number')}/comments`, { query: { since: a.since, ...paging(a) }, what: `comments of #${a.issue_number}` });
    return { comments: data.map(slimComment), next };
  },

  async github_search_issues(ctx, a) {
    let q = a.query;
    if (!/(^|\s)(is|type):(issue|pr|pull-request)\b/i.test(q)) q += a.type === 'pr' ? ' is:pr' : ' is:issue';
    const query = { q, sort: a.sort, order: a.order, advanced_search: 'true', ...paging(a) };
    const { data, next } = await gh(ctx, 'GET', '/search/issues', { query, what: 'issue search' });
    return { total_count: data.total_count, incomplete_results: !!data.incomplete_results, items: (data.items || []).map((i) => slimIssue(i, LIST_BODY_CHARS)), next };
  },

  async github_list_labels(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/labels`, { query: paging(a), what: 'labels' });
    return { labels: data.map((l) => ({ name: l.name, color: l.color, description: l.description || null })), next };
  },

  async github_list_pull_requests(ctx, a) {
    const query = { state: a.state, head: a.head, base: a.base, sort: a.sort, direction: a.direction, ...paging(a) };
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/pulls`, { query, what: 'pull requests' });
    return { pull_requests: data.map((p) => slimPull(p, LIST_BODY_CHARS)), next };
  },

  async github_get_pull_request(ctx, a) {
    const { data } = await gh(ctx, 'GET', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}`, { what: `pull request #${a.pull_number}` });
    return slimPull(data, FULL_BODY_CHARS);
  },

  async github_create_pull_request(ctx, a) {
    const base = a.base || (await defaultBranch(ctx, a));
    const body = defined({ title: a.title, head: a.head, base, body: a.body, draft: a.draft, maintainer_can_modify: a.maintainer_can_modify });
    const { data } = await gh(ctx, 'POST', `${repoPath(a)}/pulls`, { body, what: 'creating the pull request' });
    const result = slimPull(data, LIST_BODY_CHARS);
    if ((a.reviewers && a.reviewers.length) || (a.team_reviewers && a.team_reviewers.length)) {
      try {
        Object.assign(result, await requestReviewers(ctx, a, data));
      } catch (err) {
        result.reviewers_warning = `The pull request was created, but requesting reviewers failed: ${err.message}`;
      }
    }
    return result;
  },

  async github_update_pull_request(ctx, a) {
    const patch = defined({ title: a.title, body: a.body, state: a.state, base: a.base, maintainer_can_modify: a.maintainer_can_modify });
    if (Object.keys(patch).length === 0) throw new Error('Nothing to change: pass at least one of title, body, state, base, maintainer_can_modify.');
    const { data } = await gh(ctx, 'PATCH', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}`, { body: patch, what: `pull request #${a.pull_number}` });
    return slimPull(data, LIST_BODY_CHARS);
  },

  async github_merge_pull_request(ctx, a) {
    const body = defined({ merge_method: a.merge_method, commit_title: a.commit_title, commit_message: a.commit_message, sha: a.sha });
    const { data } = await gh(ctx, 'PUT', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}/merge`, { body, what: `merging #${a.pull_number}` });
    return { merged: !!data.merged, sha: data.sha, message: data.message };
  },

  async github_list_pull_request_files(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}/files`, { query: paging(a), what: `files of #${a.pull_number}` });
    return { files: data.map(slimFile), next };
  },

  async github_get_pull_request_diff(ctx, a) {
    const { text } = await gh(ctx, 'GET', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}`, { accept: 'application/vnd.github.diff', raw: true, what: `diff of #${a.pull_number}` });
    return textWindow(text, a.offset, a.max_chars);
  },

  async github_list_pull_request_reviews(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}/reviews`, { query: paging(a), what: `reviews of #${a.pull_number}` });
    return { reviews: data.map(slimReview), next };
  },

  async github_create_pull_request_review(ctx, a) {
    const event = a.event || 'COMMENT';
    if (event !== 'APPROVE' && !(typeof a.body === 'string' && a.body.trim())) {
      throw new Error(
        `A ${event} review needs a body: GitHub requires the overall review text for REQUEST_CHANGES and COMMENT, line comments or not, and refuses the review (422) without it. Pass body (e.g. a one-line summary of the line comments), or use event APPROVE.`,
      );
    }
    const comments = (a.comments || []).map((c) => defined({ path: c.path, body: c.body, line: c.line, side: c.side, start_line: c.start_line, start_side: c.start_line ? c.side : undefined }));
    const body = defined({ event, body: a.body, commit_id: a.commit_id, comments: comments.length ? comments : undefined });
    const { data } = await gh(ctx, 'POST', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}/reviews`, { body, what: `reviewing #${a.pull_number}` });
    return slimReview(data);
  },

  async github_request_reviewers(ctx, a) {
    const { data: pull } = await gh(ctx, 'GET', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}`, { what: `pull request #${a.pull_number}` });
    return { number: pull.number, ...(await requestReviewers(ctx, a, pull)) };
  },

  async github_list_pull_request_comments(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}/comments`, { query: { since: a.since, ...paging(a) }, what: `review comments of #${a.pull_number}` });
    return { comments: data.map(slimReviewComment), next };
  },

  async github_reply_to_review_comment(ctx, a) {
    const path = `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}/comments/${seg(a.comment_id, 'comment_id')}/replies`;
    const { data } = await gh(ctx, 'POST', path, { body: { body: a.body }, what: `replying to review comment ${a.comment_id}` });
    return slimReviewComment(data);
  },

  async github_list_check_runs(ctx, a) {
    if (!a.ref === !a.pull_number) throw new Error('Pass exactly one of ref (a branch, tag or commit SHA) or pull_number.');
    let ref = a.ref;
    if (a.pull_number) {
      const { data: pull } = await gh(ctx, 'GET', `${repoPath(a)}/pulls/${seg(a.pull_number, 'pull_number')}`, { what: `pull request #${a.pull_number}` });
      ref = pull.head.sha;
    }
    const query = { check_name: a.check_name, status: a.status, filter: a.filter, ...paging(a) };
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/commits/${segs(ref, 'ref')}/check-runs`, { query, what: `checks of ${a.ref || `#${a.pull_number}`}` });
    const runs = (data.check_runs || []).map((c) => ({ id: c.id, name: c.name, app: c.app ? c.app.slug || c.app.name : null, status: c.status, conclusion: c.conclusion || null, started_at: c.started_at || null, completed_at: c.completed_at || null, html_url: c.html_url || c.details_url || null, summary: clip((c.output && (c.output.title || c.output.summary)) || '', 300) || null }));
    const summary = {};
    for (const r of runs) summary[r.conclusion || r.status] = (summary[r.conclusion || r.status] || 0) + 1;
    return { ref, total_count: data.total_count, summary, check_runs: runs, next };
  },

  async github_list_workflows(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/actions/workflows`, { query: paging(a), what: 'workflows' });
    return { total_count: data.total_count, workflows: (data.workflows || []).map((w) => ({ id: w.id, name: w.name, path: w.path, state: w.state, html_url: w.html_url })), next };
  },

  async github_list_workflow_runs(ctx, a) {
    const base = a.workflow ? `${repoPath(a)}/actions/workflows/${seg(a.workflow, 'workflow')}/runs` : `${repoPath(a)}/actions/runs`;
    const query = { branch: a.branch, status: a.status, event: a.event, actor: a.actor, head_sha: a.head_sha, ...paging(a) };
    const { data, next } = await gh(ctx, 'GET', base, { query, what: 'workflow runs' });
    return { total_count: data.total_count, runs: (data.workflow_runs || []).map(slimRun), next };
  },

  async github_get_workflow_run(ctx, a) {
    const path = `${repoPath(a)}/actions/runs/${seg(a.run_id, 'run_id')}`;
    const { data: run } = await gh(ctx, 'GET', path, { what: `workflow run ${a.run_id}` });
    // a matrix build can have hundreds of jobs: follow the pages (a failure may be on any of them)
    const all = [];
    let total = 0;
    let more = null;
    for (let page = 1; page <= MAX_JOB_PAGES; page++) {
      const { data: jobs, next } = await gh(ctx, 'GET', `${path}/jobs`, { query: { filter: 'latest', per_page: 100, page }, what: `jobs of run ${a.run_id}` });
      all.push(...(jobs.jobs || []));
      total = jobs.total_count || all.length;
      more = next;
      if (next === null) break;
    }
    const slimJobs = all.map((j) => ({
      id: j.id,
      name: j.name,
      status: j.status,
      conclusion: j.conclusion || null,
      started_at: j.started_at || null,
      completed_at: j.completed_at || null,
      html_url: j.html_url,
      failed_steps: (j.steps || []).filter((s) => s.conclusion === 'failure').map((s) => s.name),
    }));
    const out = { ...slimRun(run), total_jobs: total, jobs: slimJobs };
    if (more !== null) out.jobs_truncated = `only the first ${slimJobs.length} of ${total} jobs are listed`;
    return out;
  },

  async github_trigger_workflow(ctx, a) {
    const body = defined({ ref: a.ref, inputs: a.inputs, return_run_details: true });
    const { status, data } = await gh(ctx, 'POST', `${repoPath(a)}/actions/workflows/${seg(a.workflow, 'workflow')}/dispatches`, { body, what: `dispatching ${a.workflow}` });
    if (status === 200 && data) return { dispatched: true, run_id: data.workflow_run_id || null, run_url: data.run_url || null, html_url: data.html_url || null };
    return { dispatched: true, run_id: null, note: 'GitHub accepted the dispatch without run details; find the run with github_list_workflow_runs (event "workflow_dispatch").' };
  },

  async github_rerun_workflow(ctx, a) {
    const path = `${repoPath(a)}/actions/runs/${seg(a.run_id, 'run_id')}/${a.failed_only ? 'rerun-failed-jobs' : 'rerun'}`;
    await gh(ctx, 'POST', path, { body: defined({ enable_debug_logging: a.enable_debug_logging }), what: `re-running run ${a.run_id}` });
    return { rerun_requested: true, run_id: a.run_id, failed_only: !!a.failed_only };
  },

  async github_cancel_workflow_run(ctx, a) {
    await gh(ctx, 'POST', `${repoPath(a)}/actions/runs/${seg(a.run_id, 'run_id')}/cancel`, { what: `cancelling run ${a.run_id}` });
    return { cancel_requested: true, run_id: a.run_id };
  },

  async github_list_releases(ctx, a) {
    const { data, next } = await gh(ctx, 'GET', `${repoPath(a)}/releases`, { query: paging(a), what: 'releases' });
    return { releases: data.map((r) => slimRelease(r, LIST_BODY_CHARS)), next };
  },

  async github_create_release(ctx, a) {
    const body = defined({ tag_name: a.tag_name, target_commitish: a.target_commitish, name: a.name, body: a.body, draft: a.draft, prerelease: a.prerelease, generate_release_notes: a.generate_release_notes, make_latest: a.make_latest });
    const { data } = await gh(ctx, 'POST', `${repoPath(a)}/releases`, { body, what: `creating release ${a.tag_name}` });
    return slimRelease(data, FULL_BODY_CHARS);
  },

  async github_list_notifications(ctx, a) {
    if (!!a.owner !== !!a.repo) throw new Error('Pass both owner and repo to limit notifications to one repository, or neither.');
    const path = a.owner ? `${repoPath(a)}/notifications` : '/notifications';
    const { data, next } = await gh(ctx, 'GET', path, { query: { all: a.all, participating: a.participating, since: a.since, ...paging(a) }, what: 'notifications' });
    const notifications = data.map((n) => {
      const subject = n.subject || {};
      const number = /\/(?:issues|pulls)\/(\d+)$/.exec(subject.url || '');
      return { thread_id: n.id, unread: !!n.unread, reason: n.reason, updated_at: n.updated_at, repository: n.repository ? n.repository.full_name : null, type: subject.type, title: subject.title, number: number ? Number(number[1]) : null };
    });
    return { notifications, next };
  },

  async github_mark_notifications_read(ctx, a) {
    if (a.thread_id) {
      await gh(ctx, 'PATCH', `/notifications/threads/${seg(a.thread_id, 'thread_id')}`, { what: `notification thread ${a.thread_id}` });
      return { marked_read: 'thread', thread_id: a.thread_id };
    }
    if (!!a.owner !== !!a.repo) throw new Error('Pass both owner and repo to mark one repository read, or neither.');
    const path = a.owner ? `${repoPath(a)}/notifications` : '/notifications';
    const { status } = await gh(ctx, 'PUT', path, { body: defined({ last_read_at: a.last_read_at, read: true }), what: 'marking notifications read' });
    return { marked_read: a.owner ? `${a.owner}/${a.repo}` : 'all', pending: status === 202 };
  },
};

/**
 * Requests reviews on a pull request. The author cannot review their own pull request (GitHub
 * answers 422), so the author is left out and reported instead of failing the whole call.
 */
async function requestReviewers(ctx, a, pull) {
  const author = (login(pull.user) || '').toLowerCase();
  const reviewers = (a.reviewers || []).filter((r) => r.toLowerCase() !== author);
  const skipped = (a.reviewers || []).filter((r) => r.toLowerCase() === author);
  const teams = a.team_reviewers || [];
  if (reviewers.length === 0 && teams.length === 0) {
    return { reviewers_requested: [], reviewers_skipped: skipped, note: 'No reviewer left to request: the pull request author cannot review their own pull request.' };
  }
  const path = `${repoPath(a)}/pulls/${seg(pull.number, 'pull_number')}/requested_reviewers`;
  const { data } = await gh(ctx, 'POST', path, { body: defined({ reviewers, team_reviewers: teams.length ? teams : undefined }), what: `requesting reviewers on #${pull.number}` });
  return { reviewers_requested: names(data.requested_reviewers).concat(teamSlugs(data.requested_teams)), reviewers_skipped: skipped };
}
