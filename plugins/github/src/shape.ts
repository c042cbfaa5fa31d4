/**
 * @module plugins/github/src/shape
 * Slim results: the fields an agent uses (numbers, titles, states, logins, label names, branches,
 * SHAs, dates, html_url), never raw API objects. Bodies are cut to 280 characters in lists and
 * 8,000 in single reads, comments to 2,000, patches to 1,200 per file; long text comes in windows.
 * The interfaces name only the fields read here, as GitHub sends them.
 */
import { clip } from 'workbench/plugin-sdk';

export const LIST_BODY_CHARS = 280;
export const FULL_BODY_CHARS = 8000;
const COMMENT_CHARS = 2000;
const PATCH_CHARS = 1200;

/** a search answer */
export interface Search<T> {
  total_count: number;
  incomplete_results?: boolean;
  items?: T[];
}

export interface User {
  login?: string;
  name?: string;
}
type Named = string | { name?: string; login?: string; slug?: string } | null;
interface Team {
  slug?: string;
  name?: string;
}

export const login = (u: User | null | undefined): string | null => u?.login || null;
export const teamNames = (list: Team[] | undefined): string[] =>
  Array.isArray(list) ? list.map((t) => `team:${t.slug || t.name}`) : [];
/** names of labels, logins of users, slugs of teams (strings kept) */
export const names = (list: Named[] | undefined): string[] =>
  Array.isArray(list)
    ? list.map((x) => (typeof x === 'string' ? x : x && (x.name || x.login || x.slug))).filter((x): x is string => !!x)
    : [];

export interface Repo {
  full_name: string;
  description?: string | null;
  private?: boolean;
  visibility?: string;
  default_branch: string;
  language?: string | null;
  stargazers_count: number;
  forks_count: number;
  open_issues_count: number;
  archived?: boolean;
  fork?: boolean;
  topics?: string[];
  pushed_at?: string | null;
  updated_at?: string | null;
  html_url: string;
}

export function slimRepo(r: Repo) {
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

export interface Issue {
  number: number;
  title: string;
  state: string;
  state_reason?: string | null;
  pull_request?: unknown;
  user?: User | null;
  labels?: Named[];
  assignees?: Named[];
  milestone?: { title: string } | null;
  comments: number;
  created_at: string;
  updated_at: string;
  closed_at?: string | null;
  html_url: string;
  body?: string | null;
  repository_url?: string;
}

export function slimIssue(i: Issue, bodyChars: number) {
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

interface Branch {
  ref: string;
  sha: string;
  repo?: { full_name: string } | null;
}

export interface Pull {
  number: number;
  title: string;
  state: string;
  draft?: boolean;
  merged?: boolean;
  user?: User | null;
  head?: Branch;
  base?: Branch;
  labels?: Named[];
  assignees?: Named[];
  requested_reviewers?: Named[];
  requested_teams?: Team[];
  created_at: string;
  updated_at: string;
  closed_at?: string | null;
  merged_at?: string | null;
  html_url: string;
  body?: string | null;
  // only in a single pull request's answer
  mergeable?: boolean | null;
  mergeable_state?: string;
  merged_by?: User | null;
  commits?: number;
  additions?: number;
  deletions?: number;
  changed_files?: number;
  comments?: number;
  review_comments?: number;
}

export function slimPull(p: Pull, bodyChars: number) {
  const slim = {
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
    requested_reviewers: names(p.requested_reviewers).concat(teamNames(p.requested_teams)),
    created_at: p.created_at,
    updated_at: p.updated_at,
    closed_at: p.closed_at || null,
    merged_at: p.merged_at || null,
    html_url: p.html_url,
    body: clip(p.body || '', bodyChars),
  };
  if (p.mergeable === undefined) return slim;
  return {
    ...slim,
    mergeable: p.mergeable,
    mergeable_state: p.mergeable_state || null,
    merged_by: login(p.merged_by),
    commits: p.commits,
    additions: p.additions,
    deletions: p.deletions,
    changed_files: p.changed_files,
    comments: p.comments,
    review_comments: p.review_comments,
  };
}

export interface Comment {
  id: number;
  user?: User | null;
  created_at: string;
  updated_at: string;
  html_url: string;
  body?: string | null;
}

export function slimComment(c: Comment) {
  return {
    id: c.id,
    author: login(c.user),
    created_at: c.created_at,
    updated_at: c.updated_at,
    html_url: c.html_url,
    body: clip(c.body || '', COMMENT_CHARS),
  };
}

export interface Commit {
  sha: string;
  commit?: { message?: string; author?: { name?: string; date?: string } | null };
  author?: User | null;
  html_url: string;
}

export function slimCommit(c: Commit) {
  const info = c.commit || {};
  return {
    sha: c.sha,
    message: clip(info.message || '', 500),
    author: login(c.author) || info.author?.name || null,
    date: info.author?.date || null,
    html_url: c.html_url,
  };
}

export interface File {
  filename: string;
  status: string;
  additions: number;
  deletions: number;
  previous_filename?: string;
  patch?: string | null;
}

export function slimFile(f: File) {
  return {
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    ...(f.previous_filename ? { previous_filename: f.previous_filename } : {}),
    patch: typeof f.patch === 'string' ? clip(f.patch, PATCH_CHARS) : null,
  };
}

export interface Run {
  id: number;
  name: string;
  display_title?: string | null;
  workflow_id: number;
  run_number: number;
  run_attempt: number;
  event: string;
  status: string;
  conclusion?: string | null;
  head_branch: string;
  head_sha: string;
  actor?: User | null;
  created_at: string;
  updated_at: string;
  html_url: string;
}

export function slimRun(r: Run) {
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

export interface Release {
  id: number;
  tag_name: string;
  name?: string | null;
  draft?: boolean;
  prerelease?: boolean;
  author?: User | null;
  target_commitish: string;
  created_at: string;
  published_at?: string | null;
  html_url: string;
  body?: string | null;
  assets?: Array<{ name: string; size: number; download_count: number; browser_download_url: string }>;
}

export function slimRelease(r: Release, bodyChars: number) {
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
    assets: (r.assets || []).map((a) => ({
      name: a.name,
      size: a.size,
      download_count: a.download_count,
      url: a.browser_download_url,
    })),
  };
}

export interface Review {
  id: number;
  user?: User | null;
  state: string;
  submitted_at?: string | null;
  commit_id: string;
  html_url: string;
  body?: string | null;
}

export function slimReview(r: Review) {
  return {
    id: r.id,
    author: login(r.user),
    state: r.state,
    submitted_at: r.submitted_at || null,
    commit_id: r.commit_id,
    html_url: r.html_url,
    body: clip(r.body || '', COMMENT_CHARS),
  };
}

export interface ReviewComment extends Comment {
  path: string;
  line?: number | null;
  start_line?: number | null;
  side?: string | null;
  in_reply_to_id?: number | null;
  diff_hunk?: string;
}

export function slimReviewComment(c: ReviewComment) {
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
