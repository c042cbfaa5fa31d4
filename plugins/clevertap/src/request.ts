/**
 * @module plugins/clevertap/src/request
 * A read-only request to one of CleverTap's documented read endpoints, for what the other tools do
 * not cover: the path is one of an allow-list with the methods it takes (no upload, delete or
 * campaign-creating endpoint is reachable), and an answer still being computed is polled like the
 * count tools do.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { call, projectFor, shown } from './api.js';
import { project, reqId } from './args.js';
import { runQuery, stillRunning, withoutStatus } from './query.js';

/** CleverTap's documented read endpoints (under /1) and the methods each takes. */
const READS: Record<string, readonly ('GET' | 'POST')[]> = {
  '/events.json': ['POST', 'GET'],
  '/profiles.json': ['POST', 'GET'],
  '/profile.json': ['GET'],
  '/counts/events.json': ['POST', 'GET'],
  '/counts/profiles.json': ['POST', 'GET'],
  '/counts/trends.json': ['POST', 'GET'],
  '/counts/top.json': ['POST', 'GET'],
  '/now.json': ['POST'],
  '/targets/list.json': ['POST'],
  '/targets/result.json': ['POST'],
  '/message/report.json': ['POST'],
};
const PATHS = Object.keys(READS) as [string, ...string[]];

export const request = defineTool({
  description:
    'A read-only request to one of CleverTap\'s documented read endpoints (under https://<region>.api.clevertap.com/1), for what the other clevertap tools do not cover: events and profiles by cursor, a profile, counts, trends, top property counts, real-time counts, campaigns and message reports. Dates in bodies are YYYYMMDD numbers. An answer CleverTap is still computing is polled; if it is not ready in time, status "running" and a reqId come back: call again with the same arguments plus reqId. Prefer the specific clevertap tools.',
  input: z.object({
    project,
    path: z.enum(PATHS).describe('The endpoint, under /1.'),
    method: z
      .enum(['GET', 'POST'])
      .default('POST')
      .describe('GET for a cursor, a reqId or a profile look-up; POST for a query.'),
    query: z
      .record(z.string(), z.union([z.string().max(4000), z.number(), z.boolean()]))
      .optional()
      .describe('Query parameters, e.g. {"batch_size": 50} or {"cursor": "…"} or {"identity": "u1"}.'),
    body: z.record(z.string(), z.unknown()).optional().describe('The JSON body of a POST.'),
    reqId,
  }),
  annotations: reads('Read request'),
  handler: async (ctx, a) => {
    const allowed = READS[a.path] ?? [];
    if (!allowed.includes(a.method)) throw new Error(`${a.path} takes ${allowed.join(' or ')}, not ${a.method}.`);
    if (a.method === 'GET' && a.body) throw new Error('A GET request has no body: put its parameters in query.');
    const names = Object.keys(a.query ?? {});
    if (names.length > 10) throw new Error('query takes at most 10 parameters.');
    const odd = names.find((k) => !/^[A-Za-z_]{1,40}$/.test(k));
    if (odd !== undefined)
      throw new Error(
        `query parameter "${odd.slice(0, 40)}" is not a CleverTap parameter name (letters and _, such as batch_size, cursor, req_id).`,
      );
    const p = projectFor(ctx, a.project);
    const action = `${a.method} ${a.path}`;
    if (a.reqId) {
      const outcome = await runQuery(ctx, p, a.path, undefined, a.reqId, action);
      if (!outcome.done) return stillRunning('clevertap_request', p, outcome);
      return { project: shown(p), path: a.path, status: 'success', data: withoutStatus(outcome.data) };
    }
    const first = await call(ctx, p, a.method, a.path, action, {
      ...(a.query ? { query: a.query } : {}),
      ...(a.method === 'POST' ? { body: a.body ?? {} } : {}),
    });
    if (first.data.status === 'partial' && first.reqId) {
      const outcome = await runQuery(ctx, p, a.path, undefined, first.reqId, action);
      if (!outcome.done) return stillRunning('clevertap_request', p, outcome);
      return { project: shown(p), path: a.path, status: 'success', data: withoutStatus(outcome.data) };
    }
    return { project: shown(p), path: a.path, status: first.data.status ?? null, data: withoutStatus(first.data) };
  },
});
