/**
 * @module plugins/atlassian-bitbucket/plugin
 * Bitbucket Cloud tools over the REST API 2.0 (https://api.bitbucket.org/2.0), acting as the
 * connected user (OAuth 2.0; the gateway adds the Bearer token, this code never sees it). The
 * plugin format is one self-contained ES module without imports, so the one error mapping, the
 * request helper, the paging cursor, BBQL quoting, reviewer resolution and the result shapers live
 * here beside the handlers; the file is longer than 400 lines for that reason.
 */

const API = 'https://api.bitbucket.org/2.0';
const WEB = 'https://bitbucket.org';
const DESCRIPTION_CHARS = 8000;
const COMMENT_CHARS = 2000;
const MESSAGE_CHARS = 500;
/** pages of workspace members read at most to resolve reviewer nicknames */
const MEMBER_PAGES = 5;

// ---------------------------------------------------------------- errors (the one mapping) ----

/** Bitbucket's error body: {"type":"error","error":{"message","detail","fields"}}; detail may be a string or an object. */
function parseError(text) {
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  const err = data && typeof data === 'object' && data.error && typeof data.error === 'object' ? data.error : {};
  const parts = [];
  if (typeof err.message === 'string' && err.message.trim()) parts.push(err.message.trim());
  if (typeof err.detail === 'string' && err.detail.trim() && err.detail.trim() !== parts[0]) parts.push(err.detail.trim());
  if (err.fields && typeof err.fields === 'object') {
    for (const [field, msgs] of Object.entries(err.fields)) parts.push(`${field}: ${Array.isArray(msgs) ? msgs.join(' ') : String(msgs)}`);
  }
  let message = parts.join(' — ').replace(/[.\s]+$/, '');
  if (!message && text && data === null) message = String(text).replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 300);
  const detail = err.detail && typeof err.detail === 'object' ? err.detail : {};
  const required = Array.isArray(detail.required) ? detail.required.map(String) : [];
  const granted = Array.isArray(detail.granted) ? detail.granted.map(String) : [];
  return { message: message.slice(0, 600), required, granted };
}

/**
 * Turns a failed Bitbucket answer into the Error the agent reads. `action` completes "while trying
 * to …"; `scope` is the OAuth scope the call needs; `hints` adds a per-status sentence (merge).
 */
function bitbucketError(res, text, { action, scope, hints }) {
  const status = res.status;
  const { message, required, granted } = parseError(text);
  const said = message ? ` Bitbucket said: ${message}.` : '';
  const hint = hints && hints[status] ? ` ${hints[status]}` : '';
  if (status === 429) {
    const after = res.headers.get('retry-after');
    const wait = after && /^\d+$/.test(after.trim()) ? `retry after ${after.trim()} seconds` : 'wait a minute and retry';
    return new Error(`Bitbucket rate limited the request to ${action} (429): ${wait}.`);
  }
  if (status === 401) {
    return new Error(`Bitbucket rejected the access token (401) while trying to ${action}: reconnect atlassian-bitbucket.${said}`);
  }
  if (status === 403 && (required.length || /scope/i.test(message))) {
    const need = required.length ? required.join(', ') : scope;
    const have = granted.length ? ` (the token has: ${granted.join(', ')})` : '';
    return new Error(
      `The Bitbucket connection lacks the OAuth scope needed to ${action} (403; needs ${need})${have}: the operator must grant that permission on the Bitbucket OAuth consumer, then reconnect atlassian-bitbucket.`,
    );
  }
  if (status === 403) {
    return new Error(`Bitbucket refused permission to ${action} (403): ${message || 'your Bitbucket user lacks the repository or workspace permission for this'}.${hint}`);
  }
  if (status === 404) {
    return new Error(`Bitbucket found nothing while trying to ${action} (404): it does not exist, or your account cannot see it. Check the workspace, repository, id, branch or path.${said}`);
  }
  if (status === 555) {
    return new Error(`Bitbucket timed out (555) while trying to ${action}.${hint || ' Retry in a moment.'}${said}`);
  }
  if (status === 400 || status === 409 || status === 422) {
    return new Error(`Bitbucket refused to ${action} (${status}): ${message || 'the request was not valid'}.${hint}`);
  }
  if (status >= 500) {
    return new Error(`Bitbucket had a server error (${status}) while trying to ${action}: retry later.${said}`);
  }
  return new Error(`Bitbucket answered HTTP ${status} while trying to ${action}.${said}`);
}

/**
 * The gateway's own refusals of a request, in words: an answer over its size cap (`tooLarge` says
 * what to do instead where asking for less cannot help), or none in time. Else undefined.
 */
function bridgeError(err, method, action, tooLarge) {
  const code = err && err.code;
  let out;
  if (code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
    out = new Error(`Bitbucket's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ${tooLarge || 'ask for less (a smaller pagelen, or narrower filters)'}.`);
  } else if (code === 'GW_ERR_BRIDGE_TIMEOUT') {
    const write = method !== 'GET' ? ' It may still have been done: check before trying again.' : ' Try again in a moment.';
    out = new Error(`Bitbucket did not answer in time (GW_ERR_BRIDGE_TIMEOUT) while trying to ${action}.${write}`);
  } else {
    return undefined;
  }
  out.code = code; // a caller may still tell them apart (merge words its timeout itself)
  return out;
}

// ---------------------------------------------------------------- requests ----

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

/** One path segment; "." and ".." would change the path they sit in. */
function seg(value, name) {
  const s = String(value ?? '');
  if (s === '' || s === '.' || s === '..') throw new Error(`Invalid ${name}: "${s}".`);
  return enc(s);
}

/** A file path: each segment encoded, "/" kept between them. */
function segs(value, name) {
  const s = String(value || '').replace(/^\/+|\/+$/g, '');
  if (s === '') return '';
  return s.split('/').map((p) => seg(p, name)).join('/');
}

/** Query string from pairs; an array value repeats the key (state=OPEN&state=MERGED). */
function qs(params) {
  const parts = [];
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === '') continue;
    for (const v of Array.isArray(value) ? value : [value]) parts.push(`${enc(key)}=${enc(v)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

const repoPath = (a) => `/repositories/${seg(a.workspace, 'workspace')}/${seg(a.repo_slug, 'repo_slug')}`;
const prPath = (a) => `${repoPath(a)}/pullrequests/${seg(a.pull_request_id, 'pull_request_id')}`;

/**
 * One request to the API. `query` is a query string already built (from `qs` or a cursor).
 * Returns {res, text}; throws the mapped error on any non-2xx answer.
 */
async function call(ctx, method, path, { query = '', body, accept = 'application/json', action, scope, hints, tooLarge } = {}) {
  const headers = { accept };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await ctx.http(`${API}${path}${query}`, init);
  } catch (err) {
    throw bridgeError(err, method, action, tooLarge) || err;
  }
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw bitbucketError(res, text, { action, scope, hints });
  return { res, text };
}

async function json(ctx, method, path, opts) {
  const { res, text } = await call(ctx, method, path, opts);
  if (!text) return { res, data: null };
  try {
    return { res, data: JSON.parse(text) };
  } catch {
    throw new Error(`Bitbucket answered ${res.status} with something that is not JSON while trying to ${opts.action}.`);
  }
}

// ---------------------------------------------------------------- paging ----

const utf8 = (s) => new TextEncoder().encode(s);

/**
 * A query string in one canonical form, or null: its `key=value` pairs split on "&", each key and
 * value percent-decoded and encoded again (a "+", a space in a query, is kept between the parts).
 * Bitbucket's `next` links leave some characters raw (`path=src/`); the canonical form has only
 * letters, digits, "-", "_", ".", "%XX", "=", "&" and "+", so it cannot carry a "#", a space or
 * a new path. cursorOf makes cursors of this form and queryOfCursor takes no other.
 */
function canonicalQuery(query) {
  const strict = (x) => enc(x).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const part = (s) => s.split('+').map((x) => strict(decodeURIComponent(x))).join('+');
  try {
    const pairs = String(query).split('&').filter((p) => p !== '').map((p) => {
      const eq = p.indexOf('=');
      return eq < 0 ? part(p) : `${part(p.slice(0, eq))}=${part(p.slice(eq + 1))}`;
    });
    return pairs.length ? pairs.join('&') : null;
  } catch {
    return null; // a malformed %-escape
  }
}

/**
 * The opaque cursor for a page object's `next` URL: its query string, in canonical form, in
 * base64url. Only a `next` on https://api.bitbucket.org/2.0 is taken; the next call rebuilds the
 * path from its arguments, so a cursor can change the query of the same endpoint and nothing else.
 */
function cursorOf(page) {
  const next = page && typeof page.next === 'string' ? page.next : '';
  const m = /^https:\/\/api\.bitbucket\.org\/2\.0\/[^?#\s]*\?([^#\s]+)$/.exec(next);
  const query = m ? canonicalQuery(m[1]) : null;
  return query ? cursorOfQuery(query) : null;
}

const cursorOfQuery = (query) => utf8(query).toBase64({ alphabet: 'base64url', omitPadding: true });

/** Query string carried by a cursor (a canonical one, as cursorOf makes), or an error that says what to pass instead. */
function queryOfCursor(cursor) {
  const bad = () => new Error(`cursor "${String(cursor).slice(0, 40)}" is not a \`next\` value of an earlier result: pass \`next\` exactly as it was returned, or omit cursor for the first page.`);
  let query;
  try {
    query = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.fromBase64(cursor, { alphabet: 'base64url' }));
  } catch {
    throw bad();
  }
  if (canonicalQuery(query) !== query) throw bad();
  return `?${query}`;
}

/** First page: the query from `params`; later pages: the cursor's. */
const pageQuery = (a, params) => (a.cursor ? queryOfCursor(a.cursor) : qs(params));

// ---------------------------------------------------------------- BBQL ----

/** A BBQL string literal: double quotes, with backslash and double quote escaped. */
const bbqlString = (s) => `"${String(s).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Joins BBQL conditions with AND; a raw query from the agent is parenthesised. */
function bbql(conditions, raw) {
  const all = conditions.filter(Boolean);
  if (raw && raw.trim()) all.push(all.length ? `(${raw.trim()})` : raw.trim());
  return all.length ? all.join(' AND ') : undefined;
}

// ---------------------------------------------------------------- result shapes ----

function clip(text, max) {
  if (typeof text !== 'string') return text ?? null;
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [truncated, ${text.length - max} more characters]`;
}

const href = (x, rel = 'html') => (x && x.links && x.links[rel] && typeof x.links[rel].href === 'string' ? x.links[rel].href : null);
const who = (u) => (u && typeof u === 'object' ? u.display_name || u.nickname || null : null);

function slimUser(u) {
  return { display_name: u.display_name ?? null, nickname: u.nickname ?? null, account_id: u.account_id ?? null, uuid: u.uuid ?? null };
}

function slimRepo(r) {
  return {
    full_name: r.full_name,
    slug: r.slug ?? null,
    name: r.name ?? null,
    description: clip(r.description || '', 500),
    private: !!r.is_private,
    language: r.language || null,
    main_branch: r.mainbranch ? r.mainbranch.name : null,
    project: r.project ? { key: r.project.key ?? null, name: r.project.name ?? null } : null,
    updated_on: r.updated_on ?? null,
    url: href(r),
  };
}

function branchOf(end) {
  return end && end.branch ? end.branch.name ?? null : null;
}

function slimPr(p) {
  return {
    id: p.id,
    title: p.title,
    state: p.state,
    draft: !!p.draft,
    author: who(p.author),
    source_branch: branchOf(p.source),
    destination_branch: branchOf(p.destination),
    comment_count: p.comment_count ?? null,
    task_count: p.task_count ?? null,
    created_on: p.created_on ?? null,
    updated_on: p.updated_on ?? null,
    url: href(p),
  };
}

function detailPr(p) {
  const hash = (end) => (end && end.commit ? end.commit.hash ?? null : null);
  return {
    ...slimPr(p),
    description: clip(p.description || (p.summary && p.summary.raw) || '', DESCRIPTION_CHARS),
    source_repository: p.source && p.source.repository ? p.source.repository.full_name ?? null : null,
    source_commit: hash(p.source),
    destination_commit: hash(p.destination),
    merge_commit: p.merge_commit ? p.merge_commit.hash ?? null : null,
    close_source_branch: !!p.close_source_branch,
    closed_by: who(p.closed_by),
    reason: p.reason || null,
    reviewers: (p.reviewers || []).map((u) => ({ display_name: u.display_name ?? null, account_id: u.account_id ?? null })),
    participants: (p.participants || []).map((x) => ({
      display_name: who(x.user),
      account_id: x.user ? x.user.account_id ?? null : null,
      role: x.role ?? null,
      approved: !!x.approved,
      state: x.state ?? null,
    })),
  };
}

function slimComment(c) {
  const inline = c.inline && typeof c.inline === 'object' ? { path: c.inline.path ?? null, from: c.inline.from ?? null, to: c.inline.to ?? null } : null;
  return {
    id: c.id,
    author: who(c.user),
    created_on: c.created_on ?? null,
    updated_on: c.updated_on ?? null,
    content: c.deleted ? null : clip((c.content && c.content.raw) || '', COMMENT_CHARS),
    deleted: !!c.deleted,
    inline,
    parent_id: c.parent ? c.parent.id ?? null : null,
    url: href(c),
  };
}

function commitAuthor(c) {
  const a = c && c.author;
  if (!a) return null;
  if (a.user) return who(a.user);
  const raw = typeof a.raw === 'string' ? a.raw : '';
  return raw.replace(/\s*<[^>]*>\s*$/, '') || null;
}

function slimCommit(c) {
  return {
    hash: c.hash,
    date: c.date ?? null,
    author: commitAuthor(c),
    message: clip((c.message || '').trim(), MESSAGE_CHARS),
    parents: (c.parents || []).map((p) => p.hash),
    url: href(c),
  };
}

function slimBranch(b) {
  const t = b.target || {};
  return {
    name: b.name,
    commit: t.hash ?? null,
    date: t.date ?? null,
    author: commitAuthor(t),
    message: clip(String(t.message || '').split('\n')[0], 200),
    url: href(b),
  };
}

function slimPipeline(p, a) {
  const state = p.state || {};
  const target = p.target || {};
  const full = p.repository && p.repository.full_name ? p.repository.full_name : `${enc(a.workspace)}/${enc(a.repo_slug)}`;
  const result = state.result ? state.result.name ?? null : state.stage ? state.stage.name ?? null : null;
  return {
    uuid: p.uuid,
    build_number: p.build_number ?? null,
    state: state.name ?? null,
    result,
    ref_type: target.ref_type ?? null,
    ref_name: target.ref_name ?? null,
    pipeline: target.selector ? target.selector.pattern || target.selector.type || null : null,
    commit: target.commit ? target.commit.hash ?? null : null,
    trigger: p.trigger ? p.trigger.name ?? null : null,
    creator: who(p.creator),
    created_on: p.created_on ?? null,
    completed_on: p.completed_on ?? null,
    duration_seconds: p.duration_in_seconds ?? null,
    url: p.build_number ? `${WEB}/${full}/pipelines/results/${p.build_number}` : null,
  };
}

const values = (page) => (page && Array.isArray(page.values) ? page.values : []);

/** The window [offset, offset + max) of a text, with where to continue. */
function textWindow(text, offset, max) {
  const start = Math.min(offset || 0, text.length);
  const end = Math.min(start + max, text.length);
  const out = { total_chars: text.length, offset: start, content: text.slice(start, end), next_offset: end < text.length ? end : null };
  if (out.next_offset !== null) out.note = `Cut at ${max} characters of ${text.length}: call again with offset ${end} for the rest.`;
  return out;
}

// ---------------------------------------------------------------- reviewers ----

const UUID_RE = /^\{[0-9A-Fa-f-]{36}\}$/;
// an Atlassian account id: "557058:<uuid>", or the older 24 hexadecimal digits
const ACCOUNT_ID_RE = /^([0-9]{1,10}:[0-9A-Fa-f-]{36}|[0-9a-f]{24})$/;

/**
 * Turns reviewer names into account references: {uuid} and account ids as they are, nicknames
 * (or display names) looked up among the workspace's members. Unknown names fail the call.
 */
async function resolveReviewers(ctx, a, names) {
  const refs = [];
  const lookup = [];
  for (const n of names) {
    if (UUID_RE.test(n)) refs.push({ given: n, uuid: n });
    else if (ACCOUNT_ID_RE.test(n)) refs.push({ given: n, account_id: n });
    else lookup.push(n);
  }
  if (lookup.length) {
    const wanted = new Map(lookup.map((n) => [n.toLowerCase(), n]));
    let query = qs({ pagelen: 100 });
    for (let page = 0; page < MEMBER_PAGES && wanted.size && query; page++) {
      const { data } = await json(ctx, 'GET', `/workspaces/${seg(a.workspace, 'workspace')}/members`, {
        query,
        action: `look up reviewers among the members of workspace ${a.workspace}`,
        scope: 'account',
      });
      for (const m of values(data)) {
        const u = m.user || {};
        for (const key of [u.nickname, u.display_name]) {
          const hit = typeof key === 'string' ? wanted.get(key.toLowerCase()) : undefined;
          if (hit !== undefined) {
            refs.push({ given: hit, uuid: u.uuid, account_id: u.account_id });
            wanted.delete(key.toLowerCase());
            break;
          }
        }
      }
      const c = cursorOf(data);
      query = c ? queryOfCursor(c) : '';
    }
    if (wanted.size) {
      throw new Error(`No member of workspace ${a.workspace} has the nickname ${[...wanted.values()].map((n) => `"${n}"`).join(', ')}: pass their Atlassian account id (e.g. from bitbucket_get_pull_request of a past pull request) instead.`);
    }
  }
  return refs;
}

const isUser = (ref, u) => !!u && ((ref.uuid && ref.uuid === u.uuid) || (ref.account_id && ref.account_id === u.account_id));
const reviewerBody = (ref) => (ref.uuid ? { uuid: ref.uuid } : { account_id: ref.account_id });

/** Reviewer references without the author, who may not review their own pull request. */
function withoutAuthor(refs, author) {
  const keep = refs.filter((r) => !isUser(r, author));
  const skipped = refs.filter((r) => isUser(r, author)).map((r) => r.given);
  return { keep, skipped };
}

// ---------------------------------------------------------------- handlers ----

async function getCurrentUser(ctx) {
  const { data: u } = await json(ctx, 'GET', '/user', { action: 'read your Bitbucket account', scope: 'account' });
  return { ...slimUser(u), created_on: u.created_on ?? null, url: href(u) };
}

// GET /user/workspaces replaces GET /workspaces and /user/permissions/workspaces, which Bitbucket
// retired (changelog CHANGE-2770 and CHANGE-3022). Its rows may carry the workspace under
// `workspace` with the caller's access beside it, or be the workspace itself: both are read.
async function listWorkspaces(ctx, a) {
  const { data } = await json(ctx, 'GET', '/user/workspaces', {
    query: pageQuery(a, { pagelen: a.pagelen }),
    action: 'list your workspaces',
    scope: 'account',
  });
  const workspaces = values(data).map((v) => {
    const w = v.workspace && typeof v.workspace === 'object' ? v.workspace : v;
    const out = { slug: w.slug ?? null, name: w.name ?? null, uuid: w.uuid ?? null, url: href(w) || (w.slug ? `${WEB}/${enc(w.slug)}/` : null) };
    if (typeof v.administrator === 'boolean') out.administrator = v.administrator;
    if (typeof v.permission === 'string') out.permission = v.permission;
    return out;
  });
  return { workspaces, next: cursorOf(data) };
}

async function listRepositories(ctx, a) {
  const q = bbql([a.name ? `name ~ ${bbqlString(a.name)}` : null, a.project_key ? `project.key = ${bbqlString(a.project_key)}` : null], a.query);
  const { data } = await json(ctx, 'GET', `/repositories/${seg(a.workspace, 'workspace')}`, {
    query: pageQuery(a, { q, sort: a.sort, role: a.role, pagelen: a.pagelen }),
    action: `list the repositories of workspace ${a.workspace}`,
    scope: 'repository',
  });
  return { repositories: values(data).map(slimRepo), total: data && typeof data.size === 'number' ? data.size : null, next: cursorOf(data) };
}

async function getRepository(ctx, a) {
  const { data: r } = await json(ctx, 'GET', repoPath(a), { action: `read repository ${a.workspace}/${a.repo_slug}`, scope: 'repository' });
  const clone = {};
  for (const c of (r.links && r.links.clone) || []) if (c && c.name && c.href) clone[c.name] = c.href;
  return {
    ...slimRepo(r),
    description: clip(r.description || '', 4000),
    uuid: r.uuid ?? null,
    size: r.size ?? null,
    fork_of: r.parent ? r.parent.full_name ?? null : null,
    has_issues: r.has_issues ?? null,
    website: r.website || null,
    created_on: r.created_on ?? null,
    clone: { https: clone.https || null, ssh: clone.ssh || null },
  };
}

async function listPullRequests(ctx, a) {
  const q = bbql(
    [
      a.source_branch ? `source.branch.name = ${bbqlString(a.source_branch)}` : null,
      a.destination_branch ? `destination.branch.name = ${bbqlString(a.destination_branch)}` : null,
    ],
    a.query,
  );
  const { data } = await json(ctx, 'GET', `${repoPath(a)}/pullrequests`, {
    query: pageQuery(a, { state: a.state, q, sort: a.sort, pagelen: a.pagelen }),
    action: `list the pull requests of ${a.workspace}/${a.repo_slug}`,
    scope: 'pullrequest',
  });
  return { pull_requests: values(data).map(slimPr), next: cursorOf(data) };
}

async function getPullRequest(ctx, a) {
  const { data } = await json(ctx, 'GET', prPath(a), { action: `read pull request #${a.pull_request_id}`, scope: 'pullrequest' });
  return detailPr(data);
}

async function createPullRequest(ctx, a) {
  const body = { title: a.title, source: { branch: { name: a.source_branch } } };
  if (a.destination_branch) body.destination = { branch: { name: a.destination_branch } };
  if (a.description) body.description = a.description;
  body.close_source_branch = !!a.close_source_branch;
  if (a.draft) body.draft = true;
  let skipped = [];
  if (a.reviewers && a.reviewers.length) {
    const refs = await resolveReviewers(ctx, a, a.reviewers);
    const { data: me } = await json(ctx, 'GET', '/user', { action: 'read your Bitbucket account', scope: 'account' });
    const split = withoutAuthor(refs, me);
    skipped = split.skipped;
    body.reviewers = split.keep.map(reviewerBody);
  }
  const { data } = await json(ctx, 'POST', `${repoPath(a)}/pullrequests`, {
    body,
    action: `create a pull request from ${a.source_branch} in ${a.workspace}/${a.repo_slug}`,
    scope: 'pullrequest:write',
  });
  const out = { ...slimPr(data), reviewers: (data.reviewers || []).map(who) };
  if (skipped.length) {
    out.reviewers_skipped = skipped;
    out.note = 'You are the author, and an author cannot review their own pull request on Bitbucket: left out of the reviewers.';
  }
  return out;
}

async function updatePullRequest(ctx, a) {
  const changes = ['title', 'description', 'reviewers', 'destination_branch'].filter((k) => a[k] !== undefined);
  if (!changes.length) throw new Error('Nothing to update: give at least one of title, description, reviewers, destination_branch.');
  // Bitbucket's PUT wants the title and treats a missing reviewer list as empty: start from the
  // pull request as it is, so that only what the agent names changes
  const { data: cur } = await json(ctx, 'GET', prPath(a), { action: `read pull request #${a.pull_request_id}`, scope: 'pullrequest' });
  const body = { title: a.title ?? cur.title };
  if (a.description !== undefined) body.description = a.description;
  if (a.destination_branch !== undefined) body.destination = { branch: { name: a.destination_branch } };
  let skipped = [];
  if (a.reviewers !== undefined) {
    const split = withoutAuthor(await resolveReviewers(ctx, a, a.reviewers), cur.author);
    skipped = split.skipped;
    body.reviewers = split.keep.map(reviewerBody);
  } else {
    body.reviewers = (cur.reviewers || []).filter((u) => u.uuid || u.account_id).map((u) => reviewerBody({ uuid: u.uuid, account_id: u.account_id }));
  }
  const { data } = await json(ctx, 'PUT', prPath(a), { body, action: `update pull request #${a.pull_request_id}`, scope: 'pullrequest:write' });
  const out = { ...slimPr(data), updated: changes, reviewers: (data.reviewers || []).map(who) };
  if (skipped.length) {
    out.reviewers_skipped = skipped;
    out.note = 'The pull request author cannot review it on Bitbucket: left out of the reviewers.';
  }
  return out;
}

async function approvePullRequest(ctx, a) {
  const approve = a.action !== 'unapprove';
  const { res, data } = await json(ctx, approve ? 'POST' : 'DELETE', `${prPath(a)}/approve`, {
    action: `${approve ? 'approve' : 'withdraw your approval of'} pull request #${a.pull_request_id}`,
    scope: 'pullrequest:write',
    hints: { 409: approve ? 'You may already have approved it, or it is no longer open: read it with bitbucket_get_pull_request.' : 'It may no longer be open: read it with bitbucket_get_pull_request.' },
  });
  const approved = approve ? (data && typeof data.approved === 'boolean' ? data.approved : res.status < 300) : false;
  return { id: a.pull_request_id, approved, state: data && data.state ? data.state : null };
}

async function declinePullRequest(ctx, a) {
  const { data } = await json(ctx, 'POST', `${prPath(a)}/decline`, { action: `decline pull request #${a.pull_request_id}`, scope: 'pullrequest:write' });
  return { ...slimPr(data), reason: data.reason || null };
}

const MERGE_HINTS = {
  400: 'Merge checks, unresolved tasks, missing approvals or conflicts block it: look at the pull request in Bitbucket, resolve them, or choose another merge_strategy.',
  409: 'The pull request or a branch changed while merging (or it is already merged or declined): read it again with bitbucket_get_pull_request before retrying.',
  555: 'The merge may still finish in the background: check bitbucket_get_pull_request in a minute before merging again.',
};

async function mergePullRequest(ctx, a) {
  const body = {};
  if (a.merge_strategy) body.merge_strategy = a.merge_strategy;
  if (a.message) body.message = a.message;
  if (a.close_source_branch !== undefined) body.close_source_branch = a.close_source_branch;
  let answer;
  try {
    answer = await json(ctx, 'POST', `${prPath(a)}/merge`, { body, action: `merge pull request #${a.pull_request_id}`, scope: 'pullrequest:write', hints: MERGE_HINTS });
  } catch (err) {
    if (err && err.code === 'GW_ERR_BRIDGE_TIMEOUT') {
      throw new Error(`Bitbucket did not answer in time while merging pull request #${a.pull_request_id}; ${MERGE_HINTS[555]}`);
    }
    throw err;
  }
  const { res, data } = answer;
  if (res.status === 202) {
    return { id: a.pull_request_id, merged: false, pending: true, note: 'Bitbucket is merging in the background: check bitbucket_get_pull_request in a moment for the MERGED state.' };
  }
  return { ...slimPr(data), merged: data.state === 'MERGED', merge_commit: data.merge_commit ? data.merge_commit.hash ?? null : null };
}

async function getPullRequestDiff(ctx, a) {
  const web = `${WEB}/${enc(a.workspace)}/${enc(a.repo_slug)}/pull-requests/${enc(a.pull_request_id)}/diff`;
  const tooLarge = `Bitbucket sends the whole diff, so offset and max_chars do not help. Open it at ${web}, or read the changed files one at a time with bitbucket_get_file_content`;
  const { text } = await call(ctx, 'GET', `${prPath(a)}/diff`, { accept: 'text/plain', action: `read the diff of pull request #${a.pull_request_id}`, scope: 'pullrequest', tooLarge });
  return { id: a.pull_request_id, ...textWindow(text, a.offset, a.max_chars ?? 50000) };
}

async function listPullRequestComments(ctx, a) {
  const { data } = await json(ctx, 'GET', `${prPath(a)}/comments`, {
    query: pageQuery(a, { pagelen: a.pagelen, sort: 'created_on' }),
    action: `read the comments of pull request #${a.pull_request_id}`,
    scope: 'pullrequest',
  });
  return { id: a.pull_request_id, comments: values(data).map(slimComment), next: cursorOf(data) };
}

async function addPullRequestComment(ctx, a) {
  const inline = a.line !== undefined || a.from_line !== undefined;
  if (inline && !a.path) throw new Error('An inline comment needs `path` (the file) as well as `line` or `from_line`.');
  if (a.path && !inline) throw new Error('An inline comment needs `line` (new version) or `from_line` (old version) as well as `path`.');
  const body = { content: { raw: a.content } };
  if (inline) {
    body.inline = { path: a.path };
    if (a.line !== undefined) body.inline.to = a.line;
    if (a.from_line !== undefined) body.inline.from = a.from_line;
  }
  if (a.parent_id) body.parent = { id: a.parent_id };
  const { data } = await json(ctx, 'POST', `${prPath(a)}/comments`, { body, action: `comment on pull request #${a.pull_request_id}`, scope: 'pullrequest:write' });
  return slimComment(data);
}

async function listBranches(ctx, a) {
  const { data } = await json(ctx, 'GET', `${repoPath(a)}/refs/branches`, {
    query: pageQuery(a, { q: a.name ? `name ~ ${bbqlString(a.name)}` : undefined, sort: a.sort, pagelen: a.pagelen }),
    action: `list the branches of ${a.workspace}/${a.repo_slug}`,
    scope: 'repository',
  });
  return { branches: values(data).map(slimBranch), next: cursorOf(data) };
}

async function listCommits(ctx, a) {
  // `include` rather than /commits/{revision}: a branch name may hold "/"
  const { data } = await json(ctx, 'GET', `${repoPath(a)}/commits`, {
    query: pageQuery(a, { include: a.branch, path: a.path, pagelen: a.pagelen }),
    action: `list the commits of ${a.workspace}/${a.repo_slug}${a.branch ? ` on ${a.branch}` : ''}`,
    scope: 'repository',
  });
  return { commits: values(data).map(slimCommit), next: cursorOf(data) };
}

/** The commit to read files at: a hash as it is; a branch or tag name without "/" as it is; else its head hash. */
async function fileRef(ctx, a) {
  let ref = a.ref;
  if (!ref) {
    const { data: r } = await json(ctx, 'GET', repoPath(a), { action: `read repository ${a.workspace}/${a.repo_slug}`, scope: 'repository' });
    ref = r && r.mainbranch ? r.mainbranch.name : null;
    if (!ref) throw new Error(`Repository ${a.workspace}/${a.repo_slug} has no main branch yet (it is empty): there are no files to read.`);
  }
  if (!ref.includes('/')) return ref;
  // in /src/{commit}/{path} a "/" in the ref would be read as part of the path
  const { data: b } = await json(ctx, 'GET', `${repoPath(a)}/refs/branches/${seg(ref, 'ref')}`, { action: `find branch ${ref}`, scope: 'repository' });
  if (!b || !b.target || !b.target.hash) throw new Error(`Bitbucket gave no head commit for branch ${ref}.`);
  return b.target.hash;
}

async function getFileContent(ctx, a) {
  const ref = await fileRef(ctx, a);
  const path = segs(a.path, 'path');
  // a folder answers a page of entries: 100 at once (a file read ignores pagelen), the rest by cursor
  const { res } = await call(ctx, 'GET', `${repoPath(a)}/src/${seg(ref, 'ref')}/${path}`, {
    query: pageQuery(a, { pagelen: 100 }),
    accept: '*/*',
    tooLarge: `Bitbucket sends the whole file, so offset and max_chars do not help. Open it at ${WEB}/${enc(a.workspace)}/${enc(a.repo_slug)}/src/${seg(ref, 'ref')}/${path}`,
    action: `read "${a.path || '/'}" at ${a.ref || ref}`,
    scope: 'repository',
  });
  const base = { path: a.path || '', ref: a.ref || ref };
  const bytes = await res.bytes();
  const type = String(res.headers.get('content-type') || '');
  if (/^application\/json/i.test(type)) {
    let page = null;
    try {
      page = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      page = null;
    }
    const entries = values(page);
    if (page && Array.isArray(page.values) && entries.every((e) => e && (e.type === 'commit_file' || e.type === 'commit_directory'))) {
      const next = cursorOf(page);
      const out = { ...base, type: 'directory', entries: entries.map((e) => ({ path: e.path, type: e.type === 'commit_directory' ? 'dir' : 'file', size: e.size ?? null })), next };
      if (next) out.note = 'The folder has more entries: call again with the same path and ref and `next` as cursor.';
      return out;
    }
  }
  if (bytes.subarray(0, 8000).includes(0)) {
    return { ...base, type: 'file', binary: true, size: bytes.length, content: null, note: 'This is a binary file: its content is not returned as text.' };
  }
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  return { ...base, type: 'file', ...textWindow(text, a.offset, a.max_chars ?? 50000) };
}

async function listPipelines(ctx, a) {
  const { data } = await json(ctx, 'GET', `${repoPath(a)}/pipelines`, {
    query: pageQuery(a, { sort: '-created_on', pagelen: a.pagelen }),
    action: `list the pipelines of ${a.workspace}/${a.repo_slug}`,
    scope: 'pipeline',
  });
  let next = cursorOf(data);
  // the pipelines list may page by number without a `next` link
  if (!next && data && typeof data.size === 'number' && typeof data.page === 'number' && typeof data.pagelen === 'number' && data.page * data.pagelen < data.size) {
    next = cursorOfQuery(`sort=-created_on&pagelen=${data.pagelen}&page=${data.page + 1}`);
  }
  return { pipelines: values(data).map((p) => slimPipeline(p, a)), total: data && typeof data.size === 'number' ? data.size : null, next };
}

async function triggerPipeline(ctx, a) {
  const target = { type: 'pipeline_ref_target', ref_type: 'branch', ref_name: a.branch };
  if (a.custom_pipeline) target.selector = { type: 'custom', pattern: a.custom_pipeline };
  const body = { target };
  if (a.variables && a.variables.length) {
    const keys = new Set();
    for (const v of a.variables) {
      if (keys.has(v.key)) throw new Error(`Variable ${v.key} is given twice.`);
      keys.add(v.key);
    }
    body.variables = a.variables.map((v) => ({ key: v.key, value: v.value, secured: !!v.secured }));
  }
  const { data } = await json(ctx, 'POST', `${repoPath(a)}/pipelines/`, {
    body,
    action: `run ${a.custom_pipeline ? `the custom pipeline "${a.custom_pipeline}"` : 'the pipeline'} on branch ${a.branch} of ${a.workspace}/${a.repo_slug}`,
    scope: 'pipeline:write',
    hints: { 400: 'Check that the branch exists, that bitbucket-pipelines.yml defines this pipeline for it, and that Pipelines is enabled on the repository.' },
  });
  return slimPipeline(data, a);
}

export default {
  bitbucket_get_current_user: getCurrentUser,
  bitbucket_list_workspaces: listWorkspaces,
  bitbucket_list_repositories: listRepositories,
  bitbucket_get_repository: getRepository,
  bitbucket_list_pull_requests: listPullRequests,
  bitbucket_get_pull_request: getPullRequest,
  bitbucket_create_pull_request: createPullRequest,
  bitbucket_update_pull_request: updatePullRequest,
  bitbucket_approve_pull_request: approvePullRequest,
  bitbucket_decline_pull_request: declinePullRequest,
  bitbucket_merge_pull_request: mergePullRequest,
  bitbucket_get_pull_request_diff: getPullRequestDiff,
  bitbucket_list_pull_request_comments: listPullRequestComments,
  bitbucket_add_pull_request_comment: addPullRequestComment,
  bitbucket_list_branches: listBranches,
  bitbucket_list_commits: listCommits,
  bitbucket_get_file_content: getFileContent,
  bitbucket_list_pipelines: listPipelines,
  bitbucket_trigger_pipeline: triggerPipeline,
};
