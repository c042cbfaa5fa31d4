/**
 * @module plugins/atlassian-jira/src/shape
 * Jira's answers, as far as the tools read them, and the slim rows the tools return.
 */
import { enc } from 'workbench/plugin-sdk';
import { adfToText, type AdfNode } from './adf.js';
import { browse, type Site } from './api.js';

export interface Named {
  displayName?: string;
  name?: string;
}
export interface RawUser extends Named {
  accountId: string;
  emailAddress?: string;
  active?: boolean;
  accountType?: string;
  timeZone?: string;
}
interface IssueRef {
  key: string;
  fields?: { summary?: string; status?: Named };
}
interface RawLink {
  type?: { name?: string; inward?: string; outward?: string };
  outwardIssue?: IssueRef;
  inwardIssue?: IssueRef;
}
export interface RawIssue {
  key: string;
  id?: string;
  fields?: {
    summary?: string;
    created?: string;
    updated?: string;
    duedate?: string;
    labels?: string[];
    status?: Named;
    assignee?: Named;
    reporter?: Named;
    priority?: Named;
    issuetype?: Named;
    resolution?: Named;
    components?: Named[];
    project?: { key: string };
    parent?: IssueRef;
    subtasks?: IssueRef[];
    issuelinks?: RawLink[];
    comment?: { total?: number };
    description?: AdfNode | string;
  };
}
export interface RawComment {
  id: string;
  author?: Named;
  created?: string;
  updated?: string;
  body?: AdfNode | string;
}
export interface RawTransition {
  id: string;
  name?: string;
  to?: Named & { statusCategory?: { name?: string } };
}

export const SLIM_FIELDS = ['summary', 'status', 'assignee', 'priority', 'issuetype', 'updated'];
export const DETAIL_FIELDS = [
  'summary',
  'status',
  'assignee',
  'reporter',
  'priority',
  'issuetype',
  'created',
  'updated',
  'duedate',
  'resolution',
  'labels',
  'components',
  'parent',
  'subtasks',
  'issuelinks',
  'description',
  'project',
  'comment',
];

/** A user's, status' or type's name. */
export const name = (x: Named | null | undefined): string | null =>
  x && typeof x === 'object' ? x.displayName || x.name || null : null;
const list = <T>(x: T[] | undefined): T[] => (Array.isArray(x) ? x : []);

export function slimIssue(issue: RawIssue, site: Site) {
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

function slimLink(link: RawLink) {
  const type = link.type || {};
  const other: Partial<IssueRef> = link.outwardIssue || link.inwardIssue || {};
  return {
    relation: link.outwardIssue ? type.outward || type.name : type.inward || type.name,
    key: other.key || null,
    summary: other.fields?.summary ?? null,
    status: name(other.fields?.status),
  };
}

export function detailIssue(issue: RawIssue, site: Site) {
  const f = issue.fields || {};
  return {
    ...slimIssue(issue, site),
    project: f.project ? f.project.key : null,
    reporter: name(f.reporter),
    created: f.created ?? null,
    dueDate: f.duedate ?? null,
    resolution: name(f.resolution),
    labels: list(f.labels),
    components: list(f.components).map(name),
    parent: f.parent ? { key: f.parent.key, summary: f.parent.fields?.summary ?? null } : null,
    subtasks: list(f.subtasks).map((s) => ({
      key: s.key,
      summary: s.fields?.summary ?? null,
      status: name(s.fields?.status),
    })),
    links: list(f.issuelinks).map(slimLink),
    commentCount: f.comment && typeof f.comment.total === 'number' ? f.comment.total : null,
    description: adfToText(f.description),
  };
}

export const slimUser = (u: RawUser) => ({
  accountId: u.accountId,
  displayName: u.displayName ?? null,
  email: u.emailAddress || null,
  active: u.active ?? null,
  accountType: u.accountType ?? null,
});

/** The link to one comment of an issue. */
export const commentUrl = (site: Site, key: string, id: string): string =>
  `${browse(site, key)}?focusedCommentId=${enc(id)}`;

export const slimComment = (c: RawComment, site: Site, key: string) => ({
  id: c.id,
  author: name(c.author),
  created: c.created ?? null,
  updated: c.updated ?? null,
  body: adfToText(c.body),
  url: commentUrl(site, key, c.id),
});

export const slimTransition = (t: RawTransition) => ({
  id: t.id,
  name: t.name,
  to: name(t.to),
  toCategory: t.to && t.to.statusCategory ? (t.to.statusCategory.name ?? null) : null,
});
