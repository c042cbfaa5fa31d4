/**
 * @module plugins/atlassian-bitbucket/src/shape
 * Bitbucket's objects, as far as the tools read them, and the slim results the tools return: no
 * `links` trees, avatars or `type` tags; long texts cut with a note of how much was left out.
 */
import { clip, textWindow } from 'workbench/plugin-sdk';
import { WEB, webRepo, type RepoArgs } from './api.js';

type Links = { links?: Record<string, { href?: unknown } | Array<{ name?: string; href?: string }> | undefined> };
export interface User extends Links {
  display_name?: string;
  nickname?: string;
  account_id?: string;
  uuid?: string;
  created_on?: string;
}
export interface Commit extends Links {
  hash?: string;
  date?: string;
  message?: string;
  author?: { user?: User; raw?: unknown };
  parents?: Array<{ hash: string }>;
}
interface End {
  branch?: { name?: string };
  commit?: { hash?: string };
  repository?: { full_name?: string };
}
export interface Repo extends Links {
  full_name: string;
  slug?: string;
  name?: string;
  description?: string;
  is_private?: boolean;
  language?: string;
  mainbranch?: { name: string };
  project?: { key?: string; name?: string };
  updated_on?: string;
  uuid?: string;
  size?: number;
  parent?: { full_name?: string };
  has_issues?: boolean;
  website?: string;
  created_on?: string;
}
export interface PullRequest extends Links {
  id: number;
  title: string;
  state: string;
  draft?: boolean;
  author?: User;
  source?: End;
  destination?: End;
  comment_count?: number;
  task_count?: number;
  created_on?: string;
  updated_on?: string;
  description?: string;
  summary?: { raw?: string };
  merge_commit?: { hash?: string } | null;
  close_source_branch?: boolean;
  closed_by?: User | null;
  reason?: string;
  reviewers?: User[];
  participants?: Array<{ user?: User; role?: string; approved?: boolean; state?: string }>;
}
export interface Comment extends Links {
  id: number;
  user?: User;
  created_on?: string;
  updated_on?: string;
  content?: { raw?: string };
  deleted?: boolean;
  inline?: { path?: string; from?: number; to?: number };
  parent?: { id?: number };
}
export interface Branch extends Links {
  name: string;
  target?: Commit;
}
export interface Pipeline {
  uuid: string;
  build_number?: number;
  state?: { name?: string; result?: { name?: string }; stage?: { name?: string } };
  target?: {
    ref_type?: string;
    ref_name?: string;
    selector?: { pattern?: string; type?: string };
    commit?: { hash?: string };
  };
  repository?: { full_name?: string };
  trigger?: { name?: string };
  creator?: User;
  created_on?: string;
  completed_on?: string;
  duration_in_seconds?: number;
}

export const DESCRIPTION_CHARS = 8000;

/** The URL of a `links` entry (the web page by default). */
export function href(x: Links | null | undefined, rel = 'html'): string | null {
  const link = x?.links?.[rel];
  return link && !Array.isArray(link) && typeof link.href === 'string' ? link.href : null;
}
export const who = (u: User | null | undefined): string | null =>
  u && typeof u === 'object' ? u.display_name || u.nickname || null : null;

export const slimUser = (u: User) => ({
  display_name: u.display_name ?? null,
  nickname: u.nickname ?? null,
  account_id: u.account_id ?? null,
  uuid: u.uuid ?? null,
});

export const slimRepo = (r: Repo) => ({
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
});

const branchOf = (end: End | undefined) => end?.branch?.name ?? null;
const hashOf = (end: End | undefined) => end?.commit?.hash ?? null;

export const slimPr = (p: PullRequest) => ({
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
});

export const detailPr = (p: PullRequest) => ({
  ...slimPr(p),
  description: clip(p.description || p.summary?.raw || '', DESCRIPTION_CHARS),
  source_repository: p.source?.repository?.full_name ?? null,
  source_commit: hashOf(p.source),
  destination_commit: hashOf(p.destination),
  merge_commit: p.merge_commit?.hash ?? null,
  close_source_branch: !!p.close_source_branch,
  closed_by: who(p.closed_by),
  reason: p.reason || null,
  reviewers: (p.reviewers || []).map((u) => ({
    display_name: u.display_name ?? null,
    account_id: u.account_id ?? null,
  })),
  participants: (p.participants || []).map((x) => ({
    display_name: who(x.user),
    account_id: x.user?.account_id ?? null,
    role: x.role ?? null,
    approved: !!x.approved,
    state: x.state ?? null,
  })),
});

export const slimComment = (c: Comment) => ({
  id: c.id,
  author: who(c.user),
  created_on: c.created_on ?? null,
  updated_on: c.updated_on ?? null,
  content: c.deleted ? null : clip(c.content?.raw || '', 2000),
  deleted: !!c.deleted,
  inline:
    c.inline && typeof c.inline === 'object'
      ? { path: c.inline.path ?? null, from: c.inline.from ?? null, to: c.inline.to ?? null }
      : null,
  parent_id: c.parent?.id ?? null,
  url: href(c),
});

function commitAuthor(c: Commit | undefined): string | null {
  const a = c?.author;
  if (!a) return null;
  if (a.user) return who(a.user);
  return (typeof a.raw === 'string' ? a.raw : '').replace(/\s*<[^>]*>\s*$/, '') || null;
}

export const slimCommit = (c: Commit) => ({
  hash: c.hash,
  date: c.date ?? null,
  author: commitAuthor(c),
  message: clip((c.message || '').trim(), 500),
  parents: (c.parents || []).map((p) => p.hash),
  url: href(c),
});

export function slimBranch(b: Branch) {
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

export function slimPipeline(p: Pipeline, a: RepoArgs) {
  const state = p.state || {};
  const target = p.target || {};
  const page = p.repository?.full_name ? `${WEB}/${p.repository.full_name}` : webRepo(a);
  return {
    uuid: p.uuid,
    build_number: p.build_number ?? null,
    state: state.name ?? null,
    result: state.result ? (state.result.name ?? null) : state.stage ? (state.stage.name ?? null) : null,
    ref_type: target.ref_type ?? null,
    ref_name: target.ref_name ?? null,
    pipeline: target.selector ? target.selector.pattern || target.selector.type || null : null,
    commit: target.commit?.hash ?? null,
    trigger: p.trigger?.name ?? null,
    creator: who(p.creator),
    created_on: p.created_on ?? null,
    completed_on: p.completed_on ?? null,
    duration_seconds: p.duration_in_seconds ?? null,
    url: p.build_number ? `${page}/pipelines/results/${p.build_number}` : null,
  };
}

/** The window [offset, offset + max) of a text, with where to continue, saying so when it is cut. */
export function noteWindow(text: string, offset: number, max: number) {
  const window = textWindow(text, offset || 0, max);
  const end = window.next_offset;
  return end === null
    ? window
    : { ...window, note: `Cut at ${max} characters of ${text.length}: call again with offset ${end} for the rest.` };
}
