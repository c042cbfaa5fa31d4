/**
 * @module host/portal/browser-routes
 * The live browser view (host/builtins/browser/live-view.ts) as portal pages: `/browser/live/:id`
 * shows the page a browser context is on, to the person signed in as the context's own user only
 * (anyone else gets 403; a signed-out visitor signs in first), and lets them take control, click,
 * type, press keys and scroll, then hand it back. The page's script (browser-live-assets.ts, the
 * one script the portal serves) long-polls `frame` for JPEG frames and posts `input` and
 * `control` forms, each with the session's CSRF token and checked like every portal form.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LiveInput, LiveView, LiveViewAccess } from '../builtins/browser/index.js';
import { isWorkbenchError } from '../../contracts/errors.js';
import { LIVE_VIEW_CSS, LIVE_VIEW_SCRIPT } from './browser-live-assets.js';
import type { PortalContext, SignedIn } from './context.js';
import { html } from './html.js';
import { renderPage } from './layout.js';
import { liveViewContentSecurityPolicy, securityHeaders } from './security-headers.js';

/** how long one frame request waits for a new frame, ms */
const FRAME_WAIT_MS = 20_000;
const MAX_COORD = 100_000;

type Id = { Params: { id: string } };
type FrameQuery = Id & { Querystring: { after?: string } };

const PROBLEM_STATUS = { unknown: 404, 'not-yours': 403, ended: 410 } as const;

export function registerBrowserRoutes(scope: FastifyInstance, ctx: PortalContext, live: LiveViewAccess): void {
  scope.get('/browser/live.js', async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(LIVE_VIEW_SCRIPT),
  );
  scope.get('/browser/live.css', async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(LIVE_VIEW_CSS),
  );
  scope.get<Id>('/browser/live/:id', async (request, reply) => showLiveView(ctx, live, request, reply));
  scope.get<FrameQuery>('/browser/live/:id/frame', async (request, reply) => sendFrame(ctx, live, request, reply));
  scope.post<Id>('/browser/live/:id/input', async (request, reply) =>
    withView(ctx, live, request, reply, (view) => input(ctx, view, request, reply)),
  );
  scope.post<Id>('/browser/live/:id/control', async (request, reply) =>
    withView(ctx, live, request, reply, async (view) => {
      const action = ctx.body(request)['action'];
      if (action === 'take') view.takeControl();
      else if (action === 'release') view.handBack();
      else return reply.code(400).send();
      return reply.code(204).header('x-live-control', view.control).send();
    }),
  );
  // frame requests wait for a frame: answer them now, or closing the server would wait for them
  scope.addHook('preClose', async () => live.wakeAll());
}

async function showLiveView(
  ctx: PortalContext,
  live: LiveViewAccess,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who) return reply;
  const found = live.lookup(request.params.id, who.user.id);
  if (!found.ok) {
    const [title, message] =
      found.problem === 'not-yours'
        ? ['Not your browser', 'This live view belongs to another account. Sign in as the user the agent works for.']
        : found.problem === 'ended'
          ? [
              'Live view ended',
              'This live view has ended: its link expired, or the browser session closed. Ask the agent for a new link.',
            ]
          : [
              'Live view not found',
              'There is no live view at this address (it may have ended when the server restarted). Ask the agent for a new link.',
            ];
    return ctx.sendError(reply, PROBLEM_STATUS[found.problem], title, message, who);
  }
  return sendLivePage(ctx, reply, who, request.params.id, found.view);
}

function sendLivePage(
  ctx: PortalContext,
  reply: FastifyReply,
  who: SignedIn,
  id: string,
  view: LiveView,
): FastifyReply {
  const body = html`<link rel="stylesheet" href="/browser/live.css">
<p>${view.purpose ? html`Why: ${view.purpose}. ` : ''}This is the page the agent's browser shows, live. Take control to click, type and scroll on it yourself (to sign in, or pass a check), then hand it back to the agent.</p>
<p id="live-state" role="status" aria-live="polite">Connecting…</p>
<div class="live-controls"><button type="button" id="live-take">Take control</button><button type="button" id="live-release" hidden>Hand back to the agent</button></div>
<div id="live-screen" class="live-screen" tabindex="0" data-id="${id}" data-csrf="${who.session.csrf}" aria-label="The browser's page. With control, click on it and type here.">
<img id="live-frame" alt="The page the browser shows" width="1280" height="720"></div>
${
  view.done
    ? html`<form method="post" action="${view.done.action}"><input type="hidden" name="_csrf" value="${who.session.csrf}"><p><button type="submit">${view.done.label}</button></p></form>`
    : ''
}
<noscript><p class="error">The live view needs JavaScript.</p></noscript>
<script src="/browser/live.js"></script>`;
  const page = renderPage({ title: 'Live browser', body, user: who.user, csrf: who.session.csrf });
  return reply
    .code(200)
    .headers({ ...securityHeaders(ctx.secure), 'content-security-policy': liveViewContentSecurityPolicy() })
    .type('text/html; charset=utf-8')
    .send(page);
}

/** The view for a frame or form request of the signed-in owner, or the bare status that says why not. */
async function viewOf(
  ctx: PortalContext,
  live: LiveViewAccess,
  request: FastifyRequest<Id>,
): Promise<{ view: LiveView; who: SignedIn } | number> {
  const who = await ctx.signedIn(request);
  if (!who) return 401;
  const found = live.lookup(request.params.id, who.user.id);
  return found.ok ? { view: found.view, who } : PROBLEM_STATUS[found.problem];
}

async function sendFrame(
  ctx: PortalContext,
  live: LiveViewAccess,
  request: FastifyRequest<FrameQuery>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const found = await viewOf(ctx, live, request);
  if (typeof found === 'number') return reply.code(found).send();
  const after = Number(request.query.after ?? 0);
  const gone = new AbortController();
  reply.raw.once('close', () => gone.abort());
  const frame = await found.view.nextFrame(Number.isSafeInteger(after) ? after : 0, FRAME_WAIT_MS, gone.signal);
  void reply.header('x-live-control', found.view.control).header('cache-control', 'no-store');
  if (!frame) return reply.code(204).send();
  return reply
    .code(200)
    .headers({
      'x-frame-seq': String(frame.seq),
      'x-frame-width': String(frame.width),
      'x-frame-height': String(frame.height),
    })
    .type('image/jpeg')
    .send(frame.jpeg);
}

/** A form post to a live view: its owner, signed in, with the session's CSRF token. */
async function withView(
  ctx: PortalContext,
  live: LiveViewAccess,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
  then: (view: LiveView) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const found = await viewOf(ctx, live, request);
  if (typeof found === 'number') return reply.code(found).send();
  if (!ctx.checkPost(request, reply, found.who.session.csrf)) return reply;
  return then(found.view);
}

/** The input a form describes, or undefined when it describes none. */
export function liveInputOf(form: Record<string, string>): LiveInput | undefined {
  const num = (k: string, min: number): number | undefined => {
    const v = form[k];
    const n = v === undefined || v.trim() === '' ? NaN : Number(v);
    return Number.isFinite(n) && n >= min && n <= MAX_COORD ? n : undefined;
  };
  const x = num('x', 0);
  const y = num('y', 0);
  switch (form['kind']) {
    case 'click': {
      const button = form['button'] ?? 'left';
      if (x === undefined || y === undefined || !['left', 'right', 'middle'].includes(button)) return undefined;
      return { kind: 'click', x, y, button: button as 'left' | 'right' | 'middle' };
    }
    case 'key': {
      const key = form['key'] ?? '';
      return key.length > 0 && key.length <= 60 ? { kind: 'key', key } : undefined;
    }
    case 'text': {
      const text = form['text'] ?? '';
      return text.length > 0 && text.length <= 1000 ? { kind: 'text', text } : undefined;
    }
    case 'scroll': {
      const dx = num('dx', -MAX_COORD);
      const dy = num('dy', -MAX_COORD);
      return x === undefined || y === undefined || dx === undefined || dy === undefined
        ? undefined
        : { kind: 'scroll', x, y, dx, dy };
    }
    default:
      return undefined;
  }
}

async function input(
  ctx: PortalContext,
  view: LiveView,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const event = liveInputOf(ctx.body(request));
  if (!event) return reply.code(400).send();
  try {
    await view.input(event);
  } catch (err) {
    // not in control (409); a key the browser does not know (400); the page went away meanwhile (410)
    if (isWorkbenchError(err) && err.code === 'GW_ERR_BROWSER_TAKEN_OVER') return reply.code(409).send();
    if (/Unknown key/i.test(String((err as Error).message))) return reply.code(400).send();
    request.log.info({ err }, 'browser live view: an input did not reach the page');
    return reply.code(410).send();
  }
  return reply.code(204).header('x-live-control', view.control).send();
}
