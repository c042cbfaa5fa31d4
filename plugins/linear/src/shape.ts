/**
 * @module plugins/linear/src/shape
 * What the tools ask Linear for (the GraphQL selections) and the slim results made of it: issue
 * rows, one issue in detail, comments and the result of a write. Long markdown is cut.
 */
import { nodes, type Connection } from './api.js';

const MAX_TEXT = 20000;
const PRIORITY = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];

export const ISSUE_ROW =
  'id identifier title priority url updatedAt state { name type } assignee { name } team { key }';
export const ISSUE_DETAIL =
  'id identifier title description priority priorityLabel url createdAt updatedAt completedAt canceledAt dueDate estimate ' +
  'state { id name type } assignee { id name email } creator { name } team { id key name } ' +
  'labels(first: 50) { nodes { id name } } project { id name } cycle { id number name } parent { identifier title } ' +
  'comments(first: 100) { nodes { id } pageInfo { hasNextPage } }';
export const COMMENT = 'id body createdAt editedAt url user { name }';
export const WRITE_RESULT = 'success issue { id identifier title url state { name } assignee { name } priority }';

/** Anything Linear names (a user, a state, a label, …). */
export interface Named {
  id: string;
  name?: string | null;
}
type Maybe<T> = T | null | undefined;
/** Fields Linear answers as text, or null. */
export type Texts<K extends string> = { [P in K]?: string | null };

export type Issue = Named &
  Texts<
    | 'identifier'
    | 'title'
    | 'description'
    | 'priorityLabel'
    | 'url'
    | 'createdAt'
    | 'updatedAt'
    | 'completedAt'
    | 'canceledAt'
    | 'dueDate'
  > & {
    priority?: number | null;
    estimate?: number | null;
    state?: Maybe<Named & Texts<'type'>>;
    assignee?: Maybe<Named & Texts<'email'>>;
    creator?: Maybe<Named>;
    team?: Maybe<Named & Texts<'key'>>;
    labels?: Maybe<Connection>;
    project?: Maybe<Named>;
    cycle?: Maybe<Named & { number?: number | null }>;
    parent?: Maybe<Texts<'identifier' | 'title'>>;
    comments?: Maybe<Connection>;
  };

export type Comment = { id: string } & Texts<'body' | 'createdAt' | 'editedAt' | 'url'> & { user?: Maybe<Named> };

export const nameOf = (x: unknown): unknown => (x && typeof x === 'object' ? ((x as Named).name ?? null) : null);

const priorityLabel = (p: unknown) => (typeof p === 'number' ? (PRIORITY[p] ?? p) : null);

function cut(text: unknown): string {
  const s = typeof text === 'string' ? text : '';
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}… (truncated)` : s;
}

export function slimIssue(i: Issue) {
  return {
    id: i.id,
    identifier: i.identifier ?? null,
    title: i.title ?? null,
    state: nameOf(i.state),
    stateType: i.state ? (i.state.type ?? null) : null,
    assignee: nameOf(i.assignee),
    priority: priorityLabel(i.priority),
    team: i.team ? (i.team.key ?? null) : null,
    updatedAt: i.updatedAt ?? null,
    url: i.url ?? null,
  };
}

export function detailIssue(i: Issue) {
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
    labels: nodes(i.labels, 50)
      .map(nameOf)
      .filter((n) => n !== null),
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

export function slimComment(c: Comment) {
  return {
    id: c.id,
    author: nameOf(c.user),
    createdAt: c.createdAt ?? null,
    editedAt: c.editedAt ?? null,
    url: c.url ?? null,
    body: cut(c.body),
  };
}

/** An issueCreate/issueUpdate payload; `success: false` is an error, not a result. */
export function writeResult(payload: Maybe<{ success?: boolean; issue?: Maybe<Issue> }>, verb: string) {
  if (!payload || !payload.success || !payload.issue)
    throw new Error(
      `Linear did not confirm that the issue was ${verb}: check with linear_list_issues before trying again.`,
    );
  const i = payload.issue;
  return {
    id: i.id,
    identifier: i.identifier ?? null,
    title: i.title ?? null,
    state: nameOf(i.state),
    assignee: nameOf(i.assignee),
    priority: priorityLabel(i.priority),
    url: i.url ?? null,
  };
}
