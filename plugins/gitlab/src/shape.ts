/**
 * @module plugins/gitlab/src/shape
 * GitLab's answers as the slim results the tools return: the fields an agent acts on, usernames
 * instead of user objects, long texts cut with a note of how much was left out.
 */
import { clip } from 'workbench/plugin-sdk';

export const LIST_TEXT_CHARS = 280;
export const FULL_TEXT_CHARS = 8000;
const NOTE_CHARS = 2000;

/** The fields of GitLab's objects that the shapers read (GitLab sends many more). */
export interface User {
  id: number;
  username?: string;
  name?: string;
  email?: string;
  public_email?: string;
  state?: string;
  bot?: boolean;
  web_url?: string;
  created_at?: string;
}
export type Who = { username?: string } | null | undefined;
type Label = string | { name?: string } | null;

export interface Project {
  id: number;
  path_with_namespace?: string;
  name?: string;
  description?: string | null;
  visibility?: string;
  default_branch?: string;
  archived?: boolean;
  star_count?: number;
  forks_count?: number;
  open_issues_count?: number;
  last_activity_at?: string;
  web_url?: string;
  namespace?: { full_path?: string } | null;
  topics?: string[];
  tag_list?: string[];
  empty_repo?: boolean;
  http_url_to_repo?: string;
  created_at?: string;
  permissions?: { project_access?: { access_level?: number } | null; group_access?: { access_level?: number } | null };
  merge_method?: string;
  squash_option?: string;
  only_allow_merge_if_pipeline_succeeds?: boolean;
  issues_enabled?: boolean;
  merge_requests_enabled?: boolean;
}

interface Issuable {
  iid: number;
  id: number;
  project_id: number;
  references?: { full?: string } | null;
  title: string;
  state: string;
  author?: Who;
  assignees?: Who[];
  labels?: Label[];
  milestone?: { title?: string } | null;
  created_at: string;
  updated_at: string;
  closed_at?: string | null;
  web_url: string;
  description?: string | null;
  user_notes_count?: number;
}

export interface Issue extends Issuable {
  issue_type?: string;
  type?: string;
  due_date?: string | null;
  confidential?: boolean;
  closed_by?: Who;
  merge_requests_count?: number;
  task_completion_status?: { count: number; completed_count: number } | null;
}

export interface MergeRequest extends Issuable {
  draft?: boolean;
  work_in_progress?: boolean;
  reviewers?: Who[];
  source_branch: string;
  target_branch: string;
  detailed_merge_status?: string;
  merge_status?: string;
  has_conflicts?: boolean;
  merged_at?: string | null;
  sha?: string;
  merge_commit_sha?: string | null;
  squash_commit_sha?: string | null;
  merge_user?: Who;
  merged_by?: Who;
  squash?: boolean;
  force_remove_source_branch?: boolean;
  should_remove_source_branch?: boolean | null;
  merge_when_pipeline_succeeds?: boolean;
  blocking_discussions_resolved?: boolean;
  changes_count?: string | number;
  diverged_commits_count?: number;
  merge_error?: string | null;
  head_pipeline?: PipelineRef | null;
  pipeline?: PipelineRef | null;
}
interface PipelineRef {
  id: number;
  status: string;
  ref?: string;
  web_url?: string;
}

export interface Note {
  id: number;
  author?: Who;
  created_at: string;
  internal?: boolean;
  confidential?: boolean;
  body?: string;
}

export interface Pipeline {
  id: number;
  iid?: number;
  status: string;
  ref: string;
  sha: string;
  source?: string;
  name?: string | null;
  created_at: string;
  updated_at?: string;
  web_url: string;
  user?: Who;
  started_at?: string | null;
  finished_at?: string | null;
  duration?: number | null;
  coverage?: string | null;
  yaml_errors?: string | null;
}

export interface Job {
  id: number;
  name: string;
  stage: string;
  status: string;
  allow_failure?: boolean;
  failure_reason?: string;
  duration?: number | null;
  started_at?: string | null;
  finished_at?: string | null;
  web_url: string;
  ref?: string;
  pipeline?: { id: number } | null;
}

export interface Branch {
  name: string;
  default?: boolean;
  protected?: boolean;
  merged?: boolean;
  can_push?: boolean;
  commit?: {
    id?: string;
    title?: string;
    author_name?: string;
    committed_date?: string;
    authored_date?: string;
  } | null;
  web_url?: string;
}

/** The value, or null when GitLab left it out. */
export const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
/** The value as a boolean, or null when GitLab left it out. */
export const flag = (v: boolean | null | undefined): boolean | null => (v === undefined ? null : !!v);

export const who = (u: Who): string | null => u?.username || null;
const whos = (list: Who[] | undefined): string[] =>
  Array.isArray(list) ? list.map(who).filter((u): u is string => !!u) : [];
const labels = (list: Label[] | undefined) =>
  Array.isArray(list) ? list.map((l) => (typeof l === 'string' ? l : l?.name)) : [];

export function slimProject(p: Project) {
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
    open_issues: orNull(p.open_issues_count),
    last_activity_at: p.last_activity_at || null,
    web_url: p.web_url,
  };
}

/** What issues and merge requests both start with. */
const issuable = (x: Issuable) => ({
  iid: x.iid,
  id: x.id,
  project_id: x.project_id,
  reference: x.references?.full || null,
  title: x.title,
  state: x.state,
});

export function slimIssue(i: Issue, textChars: number) {
  return {
    ...issuable(i),
    type: i.issue_type || i.type || null,
    author: who(i.author),
    assignees: whos(i.assignees),
    labels: labels(i.labels),
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

export function slimMergeRequest(m: MergeRequest, textChars: number) {
  return {
    ...issuable(m),
    draft: !!(m.draft || m.work_in_progress),
    author: who(m.author),
    assignees: whos(m.assignees),
    reviewers: whos(m.reviewers),
    source_branch: m.source_branch,
    target_branch: m.target_branch,
    labels: labels(m.labels),
    detailed_merge_status: m.detailed_merge_status || m.merge_status || null,
    has_conflicts: flag(m.has_conflicts),
    created_at: m.created_at,
    updated_at: m.updated_at,
    merged_at: m.merged_at || null,
    web_url: m.web_url,
    description: clip(m.description || '', textChars),
  };
}

export function fullMergeRequest(m: MergeRequest) {
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
    blocking_discussions_resolved: flag(m.blocking_discussions_resolved),
    changes_count: orNull(m.changes_count),
    notes: m.user_notes_count,
    diverged_commits_count: orNull(m.diverged_commits_count),
    merge_error: m.merge_error || null,
    head_pipeline: pipe
      ? { id: pipe.id, status: pipe.status, ref: pipe.ref || null, web_url: pipe.web_url || null }
      : null,
  };
}

export function slimNote(n: Note) {
  return {
    id: n.id,
    author: who(n.author),
    created_at: n.created_at,
    internal: !!(n.internal || n.confidential),
    body: clip(n.body || '', NOTE_CHARS),
  };
}

export function slimPipeline(p: Pipeline) {
  return {
    id: p.id,
    iid: orNull(p.iid),
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

export function slimJob(j: Job) {
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

export function slimBranch(b: Branch) {
  const c = b.commit || {};
  return {
    name: b.name,
    default: !!b.default,
    protected: !!b.protected,
    merged: !!b.merged,
    can_push: flag(b.can_push),
    commit: {
      sha: c.id || null,
      title: c.title || null,
      author: c.author_name || null,
      date: c.committed_date || c.authored_date || null,
    },
    web_url: b.web_url || null,
  };
}
