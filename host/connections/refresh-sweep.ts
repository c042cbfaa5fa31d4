/**
 * @module host/connections/refresh-sweep
 * The background refresh: OAuth2 connections whose token expires soon are refreshed ahead of the
 * call that needs them. A connection whose refresh failed is put off, longer with each failure, and
 * one the sweep cannot improve (no refresh token, no client) until its expiry, so that neither
 * takes a batch slot every run.
 */
import type { PluginManifest } from '../../contracts/manifest.js';
import type { ConnectionRow } from './connection-store.js';
import type { Refresher } from './refresh.js';
import type { RefreshSweep, ServiceCore } from './service-types.js';
import { fail } from '../../contracts/errors.js';

/** a connection whose background refresh failed is put off this long, doubling with each failure up to PUT_OFF_MAX_MS */
const PUT_OFF_BASE_MS = 60_000;
const PUT_OFF_MAX_MS = 30 * 60_000;
/** a put-off entry is forgotten (its failure count too) this long after it ran out */
const PUT_OFF_FORGET_MS = 60 * 60_000;
/** at most this many put-off connections are left out of one sweep's query (bounds its parameters) */
const PUT_OFF_MAX_SKIP = 500;

type PutOff = Map<string, { until: number; failures: number }>;

export type RefreshExpiring = (
  manifests: readonly PluginManifest[],
  withinMs?: number,
  limit?: number,
) => Promise<RefreshSweep>;

export function createRefreshSweep(core: ServiceCore, refresher: Refresher): RefreshExpiring {
  /** connections the background sweep puts off (failed, or not refreshable by it), by id */
  const putOff: PutOff = new Map();
  return async (manifests, withinMs = 5 * 60_000, limit = 100) => {
    const out: RefreshSweep = { usable: 0, needsReauth: 0, failed: 0 };
    const byName = new Map(manifests.filter((m) => m.auth.type === 'oauth2').map((m) => [m.name, m]));
    const started = core.now();
    for (const [id, d] of putOff) if (d.until + PUT_OFF_FORGET_MS < started) putOff.delete(id);
    const skip = [...putOff]
      .filter(([, d]) => d.until > started)
      .sort((a, b) => b[1].until - a[1].until)
      .slice(0, PUT_OFF_MAX_SKIP)
      .map(([id]) => id);
    for (const row of await core.store.expiring(started + withinMs, limit, [...byName.keys()], skip)) {
      const m = byName.get(row.integration);
      if (!m) continue;
      await refreshOne(core, refresher, putOff, row, m, withinMs, out);
    }
    return out;
  };
}

async function refreshOne(
  core: ServiceCore,
  refresher: Refresher,
  putOff: PutOff,
  row: ConnectionRow,
  m: PluginManifest,
  withinMs: number,
  out: RefreshSweep,
): Promise<void> {
  try {
    const { credential: cred, failure } = await refresher.freshOrFailure(row, m, withinMs);
    // the provider failed the refresh and the current token (not expired yet) came back:
    // a failure, backed off like one, not a token usable until its expiry
    if (failure) throw fail('GW_ERR_CONNECTION_PROVIDER', { message: failure });
    if (cred) out.usable++;
    else out.needsReauth++;
    // still expiring at the same version: the sweep could not refresh it (no refresh token, no
    // client); leave it to the call that needs it rather than take a batch slot every run
    const after = await core.store.byId(row.id);
    if (
      after &&
      after.version === row.version &&
      after.status === 'connected' &&
      after.expires_at !== null &&
      after.expires_at < core.now() + withinMs
    )
      putOff.set(row.id, { until: after.expires_at, failures: 0 });
    else putOff.delete(row.id);
  } catch (err) {
    out.failed++;
    const failures = (putOff.get(row.id)?.failures ?? 0) + 1;
    putOff.set(row.id, {
      until: core.now() + Math.min(PUT_OFF_BASE_MS * 2 ** (failures - 1), PUT_OFF_MAX_MS),
      failures,
    });
    core.logger.warn(
      { connectionId: row.id, integration: row.integration, failures, error: (err as Error).message },
      'background refresh failed',
    );
  }
}
