/**
 * @module host/connections/tools/wait-for-connection
 * wait_for_connection: waits until the user finishes the link from connect (or connects the
 * integration another way), with progress notifications, a few waits per user at a time.
 */
import * as z from 'zod';
import type { MetaTool } from '../../meta-tools/types.js';
import { err, type ConnectionMetaToolDeps } from './deps.js';
import { waitUntilSettled } from './wait-until-settled.js';

/**
 * wait_for_connection calls one user may have waiting at once on this server. Each wait polls the
 * database and listens for its link; without a bound, one key sending batches of waits (a batch
 * may hold a hundred) kept ten thousand waiting, used most of a core and slowed every other user.
 */
export const MAX_WAITS_PER_USER = 4;

const waitSchema = z.strictObject({
  connectionId: z.string().min(1).max(64).describe('The connectionId returned by connect'),
  timeoutSec: z
    .number()
    .int()
    .min(1)
    .max(300)
    .default(120)
    .describe('How long to wait, 1 to 300 seconds (default 120)'),
});

export function waitForConnectionTool(deps: ConnectionMetaToolDeps): MetaTool<typeof waitSchema> {
  const { connections } = deps;
  const maxWaits = deps.maxWaitsPerUser ?? MAX_WAITS_PER_USER;
  /** wait_for_connection calls waiting now, by user id */
  const waiting = new Map<string, number>();
  return {
    name: 'wait_for_connection',
    order: 70,
    title: 'Wait for a connection',
    description:
      'Wait until the user finishes the link from connect. Returns {status}: CONNECTED (retry your call; also when the user connected the integration another way, e.g. in the portal), DENIED (the user refused at the provider), ' +
      'EXPIRED (the link expired: call connect again), FAILED (the provider exchange failed or the connection could not be stored; reason says why) or TIMEOUT (still pending: call again to keep waiting).',
    inputSchema: waitSchema,
    annotations: { readOnlyHint: true, idempotentHint: true },
    async handler(ctx, args) {
      const userId = ctx.user.id;
      const already = waiting.get(userId) ?? 0;
      if (already >= maxWaits)
        return err(
          'GW_ERR_POLICY_RATE_LIMITED',
          `At most ${maxWaits} wait_for_connection calls of one user may wait at once, and ${already} are waiting: wait for one link at a time, or call again once one has answered.`,
          { retryAfterSec: 5 },
        );
      waiting.set(userId, already + 1);
      try {
        const first = await connections.pending.get(args.connectionId);
        if (!first || first.userId !== userId)
          return err(
            'GW_ERR_CONNECTION_LINK_INVALID',
            'Unknown connectionId. Use the connectionId returned by connect.',
            { connectionId: args.connectionId },
          );
        return { json: await waitUntilSettled(deps, ctx, first, args.timeoutSec * 1000) };
      } finally {
        const left = (waiting.get(userId) ?? 1) - 1;
        if (left > 0) waiting.set(userId, left);
        else waiting.delete(userId);
      }
    },
  };
}
