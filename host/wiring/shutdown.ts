/**
 * @module host/wiring/shutdown
 * The gateway's close, in the one order that loses nothing: stop intake and let calls in flight
 * finish, then close the sandbox, the built-ins, the bridge and the database they use.
 */
import type { AuditRetention } from '../audit/retention.js';
import type { Bridge } from '../bridge/index.js';
import type { Db } from '../storage/db.js';
import type { Sandbox } from '../supervisor/index.js';
import type { ConnectionDrain } from '../transport/connection-drain.js';

export interface Running {
  /** aborted first: waits answer at once */
  closing: AbortController;
  auditRetention: AuditRetention;
  sandbox: Sandbox;
  /** the HTTP server: closing it stops intake and waits for the requests in flight */
  app: { close(): PromiseLike<unknown> };
  drain: ConnectionDrain;
  bridge: Bridge;
  /** the built-in integrations (their browser processes, their timers) */
  builtins: { close(): Promise<void> };
  db: Db;
}

/** A close that runs once: calls after the first resolve at once. */
export function closeOnce(running: Running): () => Promise<void> {
  let closed = false;
  return async () => {
    if (closed) return;
    closed = true;
    await closeGateway(running);
  };
}

async function closeGateway(r: Running): Promise<void> {
  // waits (wait_for_connection) answer at once instead of holding the drain for minutes
  r.closing.abort();
  // no sweep starts from here; one running ends after its current statement
  const retentionStopped = r.auditRetention.stop();
  // from here a sandbox process that dies is not restarted nor blamed on a plugin
  r.sandbox.beginShutdown();
  await Promise.all([r.app.close(), r.drain.endIdleOnceClosed()]);
  await r.sandbox.close();
  await r.builtins.close();
  await r.bridge.close();
  await retentionStopped;
  await r.db.close();
}
