/**
 * @module host/connections/connection-reads
 * Reading connections: the engine's cheap lookup (no decryption), the credential (decrypted, and
 * refreshed when stale), and the state shown to people and agents, kept truthful (an expired
 * token that can never be refreshed, or a cookie session whose cookies expired, is "needs_reauth"
 * at once, not "connected" until a call fails).
 */
import { INSTANCE_CONFIG_KEY, instanceOf, type PluginManifest } from '../../contracts/manifest.js';
import type { ConnectionRow } from './connection-store.js';
import { NO_REFRESH_REASON, type Refresher } from './refresh.js';
import { openSecret, type SecretPayload } from './sealed-secret.js';
import type { FullConnectionService, IntegrationConnectionState, ServiceCore } from './service-types.js';
import type { ConnectionLookup, Credential } from './types.js';

export type ConnectionReads = Pick<FullConnectionService, 'lookup' | 'credential' | 'state' | 'states'>;

export function createConnectionReads(core: ServiceCore, refresher: Refresher): ConnectionReads {
  const { store } = core;
  const truthful = (row: ConnectionRow | undefined): Promise<ConnectionRow | undefined> => truthfulRow(core, row);
  return {
    async lookup(userId, manifest): Promise<ConnectionLookup> {
      if (manifest.auth.type === 'none') return { connected: true, connectionId: '', config: {} };
      let row = await store.byUser(userId, manifest.name);
      if (!row) return { connected: false };
      // a signed-in session whose cookies expired can never work again: say so now (the secret
      // is opened only once the stored expiry has passed); the row may be gone by then
      if (manifest.auth.type === 'cookie') row = await truthful(row);
      if (!row) return { connected: false };
      if (row.status !== 'connected')
        return {
          connected: false,
          reason: row.status_reason ?? `the ${manifest.displayName} connection must be renewed: reconnect`,
        };
      let config: Record<string, unknown>;
      try {
        config = JSON.parse(row.config) as Record<string, unknown>;
      } catch {
        return {
          connected: false,
          reason: `the stored ${manifest.displayName} configuration is unreadable: reconnect`,
        };
      }
      const instance = row.instance_url ?? undefined;
      // a version of the plugin that no longer takes an instance would send its requests elsewhere
      if (instance !== undefined && !instanceOf(manifest))
        return {
          connected: false,
          reason: `the ${manifest.displayName} connection names its own instance (${instance}), which this version of the integration does not take: reconnect`,
        };
      // the instance reaches the plugin from the row only, whatever a stored config says
      const { [INSTANCE_CONFIG_KEY]: _stored, ...rest } = typeof config === 'object' && config !== null ? config : {};
      return {
        connected: true,
        connectionId: row.id,
        ...(instance !== undefined
          ? { config: { ...rest, [INSTANCE_CONFIG_KEY]: instance }, instance }
          : { config: rest }),
      };
    },

    async credential(userId, manifest): Promise<Credential | undefined> {
      if (manifest.auth.type === 'none') return { values: {} };
      let row = await store.byUser(userId, manifest.name);
      if (manifest.auth.type === 'cookie') row = await truthful(row);
      if (!row || row.status !== 'connected') return undefined;
      return refresher.fresh(row, manifest);
    },

    async state(userId: string, manifest: PluginManifest) {
      if (manifest.auth.type === 'none') return { state: 'not_connected' };
      return toState(await truthful(await store.byUser(userId, manifest.name)));
    },

    async states(userId: string) {
      const rows = await store.listForUser(userId);
      const checked = await Promise.all(rows.map((r) => truthful(r)));
      // (a row disconnected while it was checked is left out)
      return new Map(
        checked.filter((r): r is ConnectionRow => r !== undefined).map((r) => [r.integration, toState(r)]),
      );
    },
  };
}

/** Why a cookie connection needs re-authorisation once its session's cookies expired. */
export const COOKIES_EXPIRED_REASON =
  'the signed-in session expired (the cookies it needs have expired): call connect to sign in again';

/**
 * An expired OAuth2 token without a refresh token can never work again, nor can a signed-in
 * session whose cookies expired: say so now (and store it), instead of reporting "connected"
 * until the next call fails.
 */
async function truthfulRow(core: ServiceCore, row: ConnectionRow | undefined): Promise<ConnectionRow | undefined> {
  const { store, now } = core;
  if (!row || row.status !== 'connected' || row.expires_at === null || row.expires_at > now()) return row;
  let payload: SecretPayload;
  try {
    payload = openSecret(core.vault, row.id, row.secret, row.integration);
  } catch {
    return row; // unreadable: credential() reports the vault error when the connection is used
  }
  if (payload.refreshToken !== undefined) return row;
  const reason = payload.cookies ? COOKIES_EXPIRED_REASON : NO_REFRESH_REASON;
  const at = now();
  // only if it is still the row judged here: a reconnect since the read stands
  if (!(await store.setStatusIf(row.id, row.version, 'needs_reauth', reason, at)))
    return truthfulRow(core, await store.byId(row.id));
  core.emit({ id: row.id, userId: row.user_id, integration: row.integration, status: 'needs_reauth' });
  core.logger.warn({ connectionId: row.id, integration: row.integration, reason }, 'connection needs re-authorisation');
  return { ...row, status: 'needs_reauth', status_reason: reason, updated_at: at };
}

function toState(row: ConnectionRow | undefined): IntegrationConnectionState {
  if (!row) return { state: 'not_connected' };
  const instance = row.instance_url !== null ? { instance: row.instance_url } : {};
  if (row.status === 'connected')
    return {
      state: 'connected',
      connectionId: row.id,
      updatedAt: row.updated_at,
      connectedAt: row.connected_at,
      expiresAt: row.expires_at,
      ...instance,
    };
  if (row.status === 'needs_reauth')
    return {
      state: 'needs_reauth',
      connectionId: row.id,
      reason: row.status_reason ?? 'the connection must be renewed: reconnect',
      updatedAt: row.updated_at,
      ...instance,
    };
  return { state: 'not_connected' };
}
