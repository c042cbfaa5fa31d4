/**
 * @module host/transport/jots-routes
 * Serves the jots (host/builtins/jots) over HTTP. Three address forms, all GET (and HEAD):
 *
 * - `/jots/<id>/<path>`: the owner's address. With the owner's API key (x-workbench-api-key or
 *   Authorization: Bearer) the file is the answer. A browser has no key: signed in to the portal
 *   (its session cookie, on the gateway's origin), it is sent to a new view link; not signed in, to
 *   the sign-in page and back; on the separate jots origin, first to the gateway's origin, where
 *   its session is. Anyone else gets 404, as for a site that does not exist.
 * - `/jots/v/<token>/<path>`: a view link, made for the owner's browser (an hour). A jot page runs
 *   in an opaque origin (jot-headers.ts), so its own requests for its styles, scripts and images
 *   carry no SameSite cookie: only a capability in the path reaches them. An expired link sends a
 *   browser to the owner's address (and so to sign in again).
 * - `/jots/s/<token>/<path>`: a share link; anyone holding it. A path, not `?share=` and a cookie:
 *   the page's own requests would not carry the cookie (as above), and a token in the path makes
 *   every relative link of the site work.
 *
 * With WORKBENCH_JOTS_URL, requests whose Host is the jots origin reach these routes and nothing
 * else (not the portal, /mcp or /rest), and the links serve content there only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SITE_ID, TOKEN, type JotService } from '../builtins/jots/service.js';
import { INDEX_FILE, requestedFile } from '../builtins/jots/site-paths.js';
import type { User, UserStore } from '../storage/users.js';
import { presentedKey, sendUnauthorized } from './caller-auth.js';
import { jotHeaders, type JotAnswer } from './jot-headers.js';

export interface JotRouteDeps {
  jots: JotService;
  users: UserStore;
  /** the gateway's public URL (where the portal and its session are) */
  publicUrl: string;
  /** where site links start (WORKBENCH_JOTS_URL, or the public URL), without a trailing "/" */
  base: string;
  /** WORKBENCH_JOTS_URL's origin, when jots have one of their own */
  jotsUrl?: string;
  /** the user signed in to the portal on this request (its session cookie), if any */
  signedIn(request: FastifyRequest): Promise<User | undefined>;
}

/** A jot address: which form, its id or token (as sent), and the rest of the path (percent-encoded; undefined without the "/" after the key). */
interface JotAddress {
  kind: 'owner' | 'view' | 'share';
  key: string;
  rest: string | undefined;
  search: string;
}

const PRIVATE: JotAnswer = { capability: false, shared: false };

/** Whether a request's Host is the jots origin's (WORKBENCH_JOTS_URL); always false without one. */
export function jotsHostMatcher(jotsUrl: string | undefined): (host: string | undefined) => boolean {
  if (!jotsUrl) return () => false;
  const u = new URL(jotsUrl);
  return (host) => {
    if (!host) return false;
    try {
      return new URL(`${u.protocol}//${host}`).host === u.host;
    } catch {
      return false;
    }
  };
}

/**
 * On the jots origin only the jot routes answer: the portal, /mcp and /rest are not served there, so
 * the jots origin is never a second origin of the gateway. Registered before every other route.
 */
export function guardJotsHost(app: FastifyInstance, jotsUrl: string | undefined): void {
  const onJotsHost = jotsHostMatcher(jotsUrl);
  if (!jotsUrl) return;
  app.addHook('onRequest', async (request, reply) => {
    if (!onJotsHost(request.headers.host)) return undefined;
    const reading = request.method === 'GET' || request.method === 'HEAD';
    if (reading && request.url.startsWith('/jots/')) return undefined;
    return notFound(reply, PRIVATE);
  });
}

export function registerJotRoutes(app: FastifyInstance, deps: JotRouteDeps): void {
  const onJotsHost = jotsHostMatcher(deps.jotsUrl);
  app.get('/jots/*', async (request, reply) => {
    const address = parseAddress(request.url);
    if (!address) return notFound(reply, PRIVATE);
    // the site's root needs its "/", or the page's relative links would resolve one level up
    if (address.rest === undefined) {
      const prefix = { owner: '', view: 'v/', share: 's/' }[address.kind];
      return reply
        .code(308)
        .headers(jotHeaders(PRIVATE))
        .header('location', `/jots/${prefix}${address.key}/${address.search}`)
        .send();
    }
    // with a jots origin of their own, a link's content is never served on the gateway's origin
    const contentHere = !deps.jotsUrl || onJotsHost(request.headers.host);
    if (address.kind === 'share')
      return contentHere ? serveShared(deps, address, request, reply) : notFound(reply, PRIVATE);
    if (address.kind === 'view')
      return contentHere ? serveViewed(deps, address, request, reply) : notFound(reply, PRIVATE);
    return serveOwned(deps, address, onJotsHost(request.headers.host), request, reply);
  });
}

function parseAddress(url: string): JotAddress | undefined {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const search = q === -1 ? '' : url.slice(q);
  const m = /^\/jots\/(?:([sv])\/)?([^/]+)(\/.*)?$/.exec(path);
  if (!m?.[2]) return undefined;
  const kind = m[1] === 's' ? 'share' : m[1] === 'v' ? 'view' : 'owner';
  const keyOk = (kind === 'owner' ? SITE_ID : TOKEN).test(m[2]);
  if (!keyOk) return undefined;
  return { kind, key: m[2], rest: m[3]?.slice(1), search };
}

async function serveShared(
  deps: JotRouteDeps,
  a: JotAddress,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const siteId = await deps.jots.sharedSite(a.key);
  const answer: JotAnswer = { capability: true, shared: true };
  return siteId ? sendFile(deps, siteId, a, answer, request, reply) : notFound(reply, answer);
}

async function serveViewed(
  deps: JotRouteDeps,
  a: JotAddress,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const view = await deps.jots.viewedSite(a.key);
  const answer: JotAnswer = { capability: true, shared: false };
  if (view && 'siteId' in view) return sendFile(deps, view.siteId, a, answer, request, reply);
  // an expired view link: a browser goes back through sign-in to a new one
  if (view && acceptsHtml(request))
    return redirect(reply, `${gatewayBase(deps)}/jots/${view.expiredSiteId}/${a.rest ?? ''}${a.search}`);
  return notFound(reply, answer);
}

/** The owner's address: the API key's owner gets the file; a browser goes by its portal session (module doc). */
async function serveOwned(
  deps: JotRouteDeps,
  a: JotAddress,
  onJotsHost: boolean,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const key = presentedKey(request);
  if (key !== undefined) {
    const caller = await deps.users.authenticate(key);
    if (!caller) {
      sendUnauthorized(reply.headers(jotHeaders(PRIVATE)), false);
      return reply;
    }
    const siteId = await deps.jots.ownedSite(caller.id, a.key);
    return siteId ? sendFile(deps, siteId, a, PRIVATE, request, reply) : notFound(reply, PRIVATE);
  }
  const there = `/jots/${a.key}/${a.rest ?? ''}${a.search}`;
  if (onJotsHost) return acceptsHtml(request) ? redirect(reply, gatewayBase(deps) + there) : notFound(reply, PRIVATE);
  const user = await deps.signedIn(request);
  if (!user)
    return acceptsHtml(request)
      ? redirect(reply, `/login?next=${encodeURIComponent(there)}`)
      : notFound(reply, PRIVATE);
  const token = await deps.jots.openView(user.id, a.key);
  return token ? redirect(reply, `${deps.base}/jots/v/${token}/${a.rest ?? ''}${a.search}`) : notFound(reply, PRIVATE);
}

/** The file `a.rest` names in the site; a folder's address serves its index.html, and a folder named without its "/" is sent to it. */
async function sendFile(
  deps: JotRouteDeps,
  siteId: string,
  a: JotAddress,
  answer: JotAnswer,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const rest = a.rest ?? '';
  const path = requestedFile(rest);
  if (path === undefined) return notFound(reply, answer);
  const file = await deps.jots.readFile(siteId, path);
  if (!file) {
    const folder = rest !== '' && !rest.endsWith('/') && (await deps.jots.hasFile(siteId, `${path}/${INDEX_FILE}`));
    // "./": a folder named like "https:host" must stay a relative reference, not another site's address
    return folder
      ? redirect(reply, `./${rest.slice(rest.lastIndexOf('/') + 1)}/${a.search}`, 308)
      : notFound(reply, answer);
  }
  const etag = `"${file.sha256}"`;
  void reply.headers(jotHeaders(answer)).header('etag', etag);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.code(200).type(file.contentType).send(file.body);
}

/** The same answer for a site that does not exist, is not the caller's, or a link that is not (or no longer) valid. */
function notFound(reply: FastifyReply, answer: JotAnswer): FastifyReply {
  return reply.code(404).headers(jotHeaders(answer)).type('text/plain; charset=utf-8').send('Not found\n');
}

function redirect(reply: FastifyReply, location: string, status = 303): FastifyReply {
  return reply.code(status).headers(jotHeaders(PRIVATE)).header('location', location).send();
}

const gatewayBase = (deps: JotRouteDeps): string => deps.publicUrl.replace(/\/+$/, '');

/** Whether the request names text/html among the types it accepts (a browser navigating; not `*\/*` alone). */
function acceptsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (typeof accept !== 'string') return false;
  return accept.split(',').some((range) => {
    const [type = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return type === 'text/html' && (q === undefined || Number(q.slice(2)) > 0);
  });
}
