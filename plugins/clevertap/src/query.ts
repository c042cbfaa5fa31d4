/**
 * @module plugins/clevertap/src/query
 * CleverTap's two multi-step patterns, carried out inside one call within its budget:
 * - a count or trend query may answer `{"status": "partial", "req_id": …}` while it is computed;
 *   the result is then read with `GET <same path>?req_id=…`, again until it is "success".
 * - events and profiles are read with a cursor: a POST describes what to read and answers a
 *   cursor; each `GET …?cursor=` answers a batch of records and the `next_cursor`.
 * Both stop while the call still has a request and time to spare (ctx.limits) and hand back what
 * to pass to go on: the `reqId` of a query still running, the `cursor` of the next batch. The
 * sandbox has no timers, so polls follow each other as the answers come, at most MAX_POLLS a call.
 */
import type { PluginContext } from 'workbench/plugin-sdk';
import { call, shown, type Answer, type Project } from './api.js';

/** polls of a running query in one call: back to back, so a few; the agent's next call waits longer */
const MAX_POLLS = 8;
/** ms of the call's wall time kept for one more request and the answer */
const TIME_RESERVE_MS = 4000;

/** Whether the call can afford one more request. */
export function canRequestMore(ctx: PluginContext, reserve = 0): boolean {
  return ctx.limits.requestsLeft() > reserve && ctx.limits.timeLeftMs() > TIME_RESERVE_MS;
}

/** A finished query's answer, or the id of one still running. */
export type QueryOutcome = { done: true; data: Answer } | { done: false; reqId: string; polls: number };

/**
 * Runs a query (POST `body` to `path`), or goes on with one already running (`reqId`), and polls
 * it while the call can afford it.
 */
export async function runQuery(
  ctx: PluginContext,
  project: Project,
  path: string,
  body: unknown,
  reqId: string | undefined,
  action: string,
): Promise<QueryOutcome> {
  let answer = reqId
    ? await call(ctx, project, 'GET', path, action, { query: { req_id: reqId } })
    : await call(ctx, project, 'POST', path, action, { body });
  let polls = reqId ? 1 : 0;
  while (answer.data.status === 'partial') {
    const id = answer.reqId ?? reqId;
    if (!id)
      throw new Error(`CleverTap answered "partial" without a req_id while trying to ${action}: retry the call.`);
    if (polls >= MAX_POLLS || !canRequestMore(ctx)) return { done: false, reqId: id, polls };
    answer = await call(ctx, project, 'GET', path, action, { query: { req_id: id } });
    polls++;
  }
  return { done: true, data: answer.data };
}

/** The result of a query still running: how to collect it with the same tool. */
export function stillRunning(tool: string, project: Project, outcome: { reqId: string; polls: number }) {
  return {
    status: 'running',
    project: shown(project),
    reqId: outcome.reqId,
    note: `CleverTap is still computing this query (polled ${outcome.polls} time(s) in this call). Call ${tool} again in a few seconds with the same arguments plus reqId "${outcome.reqId}" to collect the result; no new query is started.`,
  };
}

/** What a cursor read gives: the records, and the cursor of the next batch (null at the end). */
export interface CursorRead {
  records: unknown[];
  next: string | null;
  stopped: 'done' | 'limit' | 'budget';
}

/**
 * Reads batches from `cursor` (or from the cursor a POST of `body` to `path` answers) until
 * `limit` records, the last batch, or the call's budget; `next` is where to go on. A batch is
 * never cut: the records of the last batch read beyond `limit` are returned too.
 */
export async function readCursor(
  ctx: PluginContext,
  project: Project,
  path: string,
  start: { cursor?: string | undefined; body?: unknown; query?: Record<string, string | number | boolean | undefined> },
  limit: number,
  action: string,
): Promise<CursorRead> {
  let cursor = start.cursor ?? null;
  if (cursor === null) {
    const opened = await call(ctx, project, 'POST', path, action, { body: start.body, query: start.query ?? {} });
    cursor = typeof opened.data['cursor'] === 'string' ? opened.data['cursor'] : null;
    if (cursor === null) return { records: recordsOf(opened.data), next: null, stopped: 'done' };
  }
  const records: unknown[] = [];
  for (;;) {
    if (records.length > 0 && !canRequestMore(ctx)) return { records, next: cursor, stopped: 'budget' };
    const batch = await call(ctx, project, 'GET', path, action, { query: { cursor } });
    records.push(...recordsOf(batch.data));
    const next = batch.data['next_cursor'];
    cursor = typeof next === 'string' && next ? next : null;
    if (cursor === null) return { records, next: null, stopped: 'done' };
    if (records.length >= limit) return { records, next: cursor, stopped: 'limit' };
  }
}

const recordsOf = (data: Answer): unknown[] => (Array.isArray(data['records']) ? (data['records'] as unknown[]) : []);

/** The body of an answer without its `status`, for results that pass CleverTap's breakdown on. */
export function withoutStatus(data: Answer): Record<string, unknown> {
  const { status: _status, req_id: _reqId, ...rest } = data;
  return rest;
}
