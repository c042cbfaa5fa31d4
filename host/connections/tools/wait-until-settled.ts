/**
 * @module host/connections/tools/wait-until-settled
 * The wait behind wait_for_connection: long-polls the link's record with back-off, woken early by
 * this process's events, until the link settles, the user connects another way, the time is up,
 * the client cancels or the server begins to shut down.
 */
import type { MetaToolContext } from '../../meta-tools/types.js';
import { isBeingCompleted, type PendingConnect } from '../pending.js';
import type { ConnectionChange } from '../service-types.js';
import type { ConnectionMetaToolDeps } from './deps.js';

export type WaitStatus = 'CONNECTED' | 'EXPIRED' | 'DENIED' | 'FAILED' | 'TIMEOUT';

/** Waits for the link `first` up to `timeoutMs`; the answer of wait_for_connection. */
export async function waitUntilSettled(
  deps: ConnectionMetaToolDeps,
  ctx: MetaToolContext,
  first: PendingConnect,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const { signal, detach } = waitSignal(deps.closing, ctx);
  try {
    return await pollUntilSettled(deps, ctx, first, timeoutMs, signal);
  } finally {
    detach();
  }
}

/**
 * The client's signal, also aborted when the server begins to shut down. Listeners, removed by
 * `detach` (AbortSignal.any kept a reference on the server-long closing signal for every wait).
 */
function waitSignal(
  closing: AbortSignal | undefined,
  ctx: MetaToolContext,
): { signal: AbortSignal; detach: () => void } {
  if (!closing) return { signal: ctx.signal, detach: () => undefined };
  const both = new AbortController();
  if (closing.aborted || ctx.signal.aborted) {
    both.abort();
    return { signal: both.signal, detach: () => undefined };
  }
  const stop = (): void => both.abort();
  closing.addEventListener('abort', stop, { once: true });
  ctx.signal.addEventListener('abort', stop, { once: true });
  return {
    signal: both.signal,
    detach: () => {
      closing.removeEventListener('abort', stop);
      ctx.signal.removeEventListener('abort', stop);
    },
  };
}

async function pollUntilSettled(
  deps: ConnectionMetaToolDeps,
  ctx: MetaToolContext,
  first: PendingConnect,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const { connections } = deps;
  const started = Date.now();
  const maxPoll = deps.maxPollMs ?? 1000;
  const closing = deps.closing;
  let pollMs = 100;
  let lastProgress = 0;
  let p: PendingConnect | undefined = first;
  for (;;) {
    if (!p)
      return {
        connectionId: first.id,
        integration: first.integration,
        status: 'EXPIRED',
        reason: 'the link no longer exists',
      };
    const done = outcome(p) ?? (await connectedMeanwhile(deps, ctx, p));
    if (done) return done;
    const elapsed = Date.now() - started;
    if (elapsed >= timeoutMs || signal.aborted)
      return {
        connectionId: p.id,
        integration: p.integration,
        status: 'TIMEOUT',
        linkExpiresAt: new Date(p.expiresAt).toISOString(),
        message: ctx.signal.aborted
          ? 'cancelled by the client'
          : closing?.aborted
            ? 'This server is shutting down; call wait_for_connection again to keep waiting (the link stays valid).'
            : 'The user has not finished yet; call wait_for_connection again to keep waiting.',
      };
    if (elapsed - lastProgress >= 2000 || lastProgress === 0) {
      lastProgress = Math.max(elapsed, 1);
      await ctx.progress(
        Math.floor(elapsed / 1000),
        Math.ceil(timeoutMs / 1000),
        `waiting for the user to connect ${p.integration}`,
      );
    }
    await nap(deps, Math.min(pollMs, timeoutMs - elapsed, Math.max(1, p.expiresAt - connections.now())), p, signal);
    pollMs = Math.min(pollMs * 2, maxPoll);
    p = await connections.pending.get(p.id);
  }
}

/**
 * CONNECTED when the link's integration was connected since the link was made while the link is
 * still open. Judged by connectedAt, which only a connect, reconnect or import sets: a token
 * refresh (the sweep, a call) or a status change during the wait moves updatedAt, and is no
 * answer to the link.
 *
 * Two ways to get here. The person is finishing this very link (isBeingCompleted): its connection
 * is saved a moment before the link is settled, and the save's event can wake the wait in between
 * (it did, and the wait answered that the link was "no longer needed" to someone who had just used
 * it); that is the link's own CONNECTED. Or the user connected another way (the portal's own
 * Connect button makes a link of its own, an operator's import): the agent's link may never be
 * used, and waiting for it would only end in EXPIRED, so the answer says so.
 */
async function connectedMeanwhile(
  deps: ConnectionMetaToolDeps,
  ctx: MetaToolContext,
  p: PendingConnect,
): Promise<Record<string, unknown> | undefined> {
  if (p.status !== 'pending' && p.status !== 'opened' && p.status !== 'exchanging') return undefined;
  const m = deps.registry.plugin(p.integration);
  if (!m) return undefined;
  const s = await deps.connections.state(ctx.user.id, m);
  if (s.state !== 'connected' || s.connectedAt < p.createdAt) return undefined;
  // The link read again, after the connection: a link taken before the save (the callback moves it
  // on first) is seen so, even when `p` was read before that.
  const link = (await deps.connections.pending.get(p.id)) ?? p;
  const settled = outcome(link);
  if (settled) return settled;
  if (isBeingCompleted(link) && link.usedAt !== null && s.connectedAt >= link.usedAt)
    return { connectionId: p.id, integration: p.integration, status: 'CONNECTED' };
  return {
    connectionId: p.id,
    integration: p.integration,
    status: 'CONNECTED',
    message: `${m.displayName} was connected another way (for example in the portal); this link is no longer needed.`,
  };
}

function outcome(p: PendingConnect): Record<string, unknown> | undefined {
  const map: Partial<Record<PendingConnect['status'], WaitStatus>> = {
    connected: 'CONNECTED',
    denied: 'DENIED',
    expired: 'EXPIRED',
    failed: 'FAILED',
  };
  const status = map[p.status];
  if (!status) return undefined;
  return {
    connectionId: p.id,
    integration: p.integration,
    status,
    ...(p.statusReason ? { reason: p.statusReason } : {}),
  };
}

/**
 * Sleeps up to `ms`, waking early when this process settles the record, saves a connection of the
 * link's user and integration, or the client cancels.
 */
function nap(deps: ConnectionMetaToolDeps, ms: number, p: PendingConnect, signal: AbortSignal): Promise<void> {
  const { connections } = deps;
  return new Promise((resolve) => {
    const finish = (): void => {
      clearTimeout(timer);
      connections.pending.events.off('settled', onSettled);
      connections.events.off('change', onChange);
      signal.removeEventListener('abort', finish);
      resolve();
    };
    const onSettled = (settledId: string): void => {
      if (settledId === p.id) finish();
    };
    const onChange = (c: ConnectionChange): void => {
      if (c.userId === p.userId && c.integration === p.integration && c.status === 'connected') finish();
    };
    const timer = setTimeout(finish, Math.max(1, ms));
    connections.pending.events.on('settled', onSettled);
    connections.events.on('change', onChange);
    signal.addEventListener('abort', finish, { once: true });
  });
}
