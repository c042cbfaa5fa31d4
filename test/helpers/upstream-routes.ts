/**
 * @module test/helpers/upstream-routes
 * The routing plugin tests give a loopback stand-in: replies keyed "METHOD /path", the path taken
 * under the API's base (or whole when it is not under it, e.g. an upload endpoint), a reply either
 * fixed or computed from the request, and anything unrouted answered 404 in the provider's own
 * error shape (so that a missing route fails the test the way a real 404 would read).
 */
import type { RecordedRequest, Upstream, UpstreamReply } from './upstream.js';

export type RouteReply = UpstreamReply | ((req: RecordedRequest) => UpstreamReply);

export interface RouteOptions {
  /** the API's base path ("/v1/documents"): keys are written relative to it */
  base: string;
  /** the provider's 404 body for a request no route answers */
  notFound: (method: string, path: string) => UpstreamReply['json'];
  /** percent-decode the relative path before the look-up (A1 ranges such as 'My Sheet'!A1) */
  decode?: boolean;
  /** asked before any route, answering when it returns a reply (e.g. Atlassian's accessible-resources look-up) */
  first?: (req: RecordedRequest) => UpstreamReply | undefined;
}

/**
 * Clears `upstream`'s recorded requests and answers from `replies`: "METHOD rel" (rel = the path
 * under `base`), then "METHOD path" (the whole path).
 */
export function routeUpstream(upstream: Upstream, replies: Record<string, RouteReply>, o: RouteOptions): void {
  upstream.requests.length = 0;
  upstream.setHandler((req) => {
    const early = o.first?.(req);
    if (early) return early;
    const under = req.path.startsWith(o.base) ? req.path.slice(o.base.length) : req.path;
    const rel = o.decode ? decodeURIComponent(under) : under;
    const reply = replies[`${req.method} ${rel}`] ?? replies[`${req.method} ${req.path}`];
    if (!reply) return { status: 404, json: o.notFound(req.method, req.path) };
    return typeof reply === 'function' ? reply(req) : reply;
  });
}
