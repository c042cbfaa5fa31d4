/**
 * @module host/portal/connect-link
 * What every step of a connect link shares (connect-routes.ts: the link's page and the API-key
 * form; connect-oauth.ts: the OAuth2 round trip and the personal token): the refusals of a link
 * that cannot be used, the integration a link may still connect, the checks of a POST on a link,
 * and what the page starts from (the instance the agent suggested, or the connection's own).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PluginAuth, PluginManifest } from '../../contracts/manifest.js';
import type { OpenResult, PendingConnect } from '../connections/pending.js';
import type { PortalContext, SignedIn } from './context.js';
import type { ConnectFormState } from './connect-views.js';

export type Refusal = Extract<OpenResult, { ok: false }>['reason'];

/** The reason a link fails with when the connection could not be saved (the database refused, …). */
export const STORE_FAILED_REASON = 'the connection could not be stored on the server; try again with a new link';

/** Worded for a link from an agent or from the integrations page alike (see RESULT_TEXT). */
const AGAIN = 'start again from the integrations page, or ask your agent for a new link';
export const REFUSALS: Record<Refusal, { status: number; title: string; text: string }> = {
  unknown: { status: 404, title: 'Link not found', text: `This connect link is unknown: ${AGAIN}.` },
  other_user: {
    status: 403,
    title: 'Link belongs to another account',
    text: 'This link was created for a different Workbench account. Sign in as that account, or connect from the integrations page of this one.',
  },
  used: {
    status: 410,
    title: 'Link already used',
    text: `This link was already used. If you did not finish connecting, ${AGAIN}.`,
  },
  expired: { status: 410, title: 'Link expired', text: `This link has expired: ${AGAIN}.` },
};

export type Id = { Params: { id: string } };

export function refuse(ctx: PortalContext, reply: FastifyReply, reason: Refusal, who?: SignedIn): FastifyReply {
  const r = REFUSALS[reason];
  return ctx.sendError(reply, r.status, r.title, r.text, who);
}

/** the link's integration, if it exists and the user may still use it (policy may change while a link is open) */
export function pluginFor(ctx: PortalContext, name: string, who: SignedIn): PluginManifest | undefined {
  const m = ctx.deps.registry.plugin(name);
  return m && ctx.mayUse(who.user, name) ? m : undefined;
}

/** A link's POST that may go on: its signed-in owner, the link still open, an integration of `type`. */
export interface LinkPost<T extends PluginAuth['type']> {
  who: SignedIn;
  pending: PendingConnect;
  m: PluginManifest;
  auth: Extract<PluginAuth, { type: T }>;
}

/** Checks a POST on a connect link (session, CSRF, the link, the integration); answers the refusal itself. */
export async function linkPost<T extends PluginAuth['type']>(
  ctx: PortalContext,
  request: FastifyRequest<Id>,
  reply: FastifyReply,
  type: T,
): Promise<LinkPost<T> | FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who || !ctx.checkPost(request, reply, who.session.csrf)) return reply;
  const checked = await ctx.deps.connections.pending.check(request.params.id, who.user.id);
  if (!checked.ok) return refuse(ctx, reply, checked.reason, who);
  const m = pluginFor(ctx, checked.pending.integration, who);
  if (!m || m.auth.type !== type) return refuse(ctx, reply, 'unknown', who);
  return { who, pending: checked.pending, m, auth: m.auth as Extract<PluginAuth, { type: T }> };
}

/**
 * The instance field a link's page starts with: the one the agent's connect named (pointed out to
 * the person), else the one the connection has now (a reconnect stays where it was), else empty.
 */
export async function startState(
  ctx: PortalContext,
  who: SignedIn,
  m: PluginManifest,
  p: PendingConnect,
): Promise<ConnectFormState> {
  if (p.instanceUrl !== null) return { instanceUrl: p.instanceUrl, suggested: true };
  const now = await ctx.deps.connections.state(who.user.id, m);
  return now.state !== 'not_connected' && now.instance !== undefined ? { instanceUrl: now.instance } : {};
}
