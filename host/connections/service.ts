/**
 * @module host/connections/service
 * The connection service: each user's connection per integration, stored sealed (vault), looked up
 * cheaply by the engine, decrypted and refreshed only when a call needs the credential, saved by the
 * OAuth callback, the API-key form and `connections import`, and removed with revocation at the
 * provider on disconnect. "Connected" is the stored status, which refresh keeps truthful.
 */
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { PluginManifest } from '../../contracts/manifest.js';
import type { Db } from '../storage/db.js';
import { validateApiKeyFields } from './apikey-fields.js';
import { ConnectionStore, type ConnectionRow } from './connection-store.js';
import { ConnectionError } from './errors.js';
import { revokeToken, type OAuthClient, type OAuthHttpOptions, type TokenSet } from './oauth.js';
import { PendingConnects } from './pending.js';
import { NO_REFRESH_REASON, createRefresher, type ConnectionLogger } from './refresh.js';
import { openSecret, sealSecret, type SecretPayload } from './sealed-secret.js';
import { expiresAtOf } from './token-response.js';
import type { ConnectionLookup, ConnectionService, Credential } from './types.js';
import type { Vault } from './vault.js';
import { fail } from '../../contracts/errors.js';

export type { ConnectionLogger } from './refresh.js';

export interface ConnectionServiceDeps {
  db: Db;
  vault: Vault;
  /** OAuth2 client credentials for a plugin (see clientFromEnv); undefined when not configured */
  clientFor(pluginName: string): OAuthClient | undefined;
  fetch?: typeof fetch;
  now?: () => number;
  logger?: ConnectionLogger;
  /** maps provider URLs (token, revocation, authorization) to the ones used: the policy's `upstreams` */
  mapUrl?: (url: string) => string;
  /** refresh tokens expiring within this many ms (default 60 000) */
  refreshSkewMs?: number;
  /** longest a refresh lease is held (default 30 000) */
  refreshLeaseMs?: number;
  /** lifetime of a connect link, and of the provider round trip after it is opened (default 10 min) */
  linkTtlMs?: number;
}

export type IntegrationConnectionState =
  | {
      state: 'connected';
      connectionId: string;
      updatedAt: number;
      /** when the connection was last made or remade (a refresh moves updatedAt, not this) */
      connectedAt: number;
      expiresAt: number | null;
    }
  | { state: 'needs_reauth'; connectionId: string; reason: string; updatedAt: number }
  | { state: 'not_connected' };

export interface ConnectionChange {
  id: string;
  userId: string;
  integration: string;
  status: string;
}

export interface DisconnectResult {
  removed: boolean;
  /** 'revoked' at the provider, 'unsupported' (no revocationUrl / not OAuth2), or 'failed' (removed locally anyway) */
  revocation: 'revoked' | 'unsupported' | 'failed';
}

export interface RefreshSweep {
  /** connections whose credential is usable after the sweep (refreshed, or valid and not refreshable) */
  usable: number;
  needsReauth: number;
  failed: number;
}

export interface FullConnectionService extends ConnectionService {
  /** the state shown to people and agents (list_integrations, the portal) */
  state(userId: string, manifest: PluginManifest): Promise<IntegrationConnectionState>;
  /** every stored connection of a user, by integration name */
  states(userId: string): Promise<Map<string, IntegrationConnectionState>>;
  /** stores an OAuth2 token set (after a code exchange) */
  saveTokens(userId: string, manifest: PluginManifest, tokens: TokenSet): Promise<{ connectionId: string }>;
  /** validates and stores API-key fields; throws ConnectionError(GW_ERR_CONNECTION_INVALID_INPUT) with per-field messages */
  saveApiKey(userId: string, manifest: PluginManifest, input: Record<string, unknown>): Promise<{ connectionId: string }>;
  /** deletes the connection (at the version read; re-read if it changed meanwhile), then revokes the deleted tokens at the provider where supported */
  disconnect(userId: string, manifest: PluginManifest): Promise<DisconnectResult>;
  /**
   * Refreshes, ahead of time, OAuth2 connections of the installed `manifests` whose token expires
   * within `withinMs` (default 5 min), so providers without long-lived tokens keep working between
   * calls. A connection whose refresh failed, or that the sweep cannot improve (no refresh token,
   * no client), is put off (in this process) so that it does not take every batch. Safe to run on
   * every replica at once (the refresh lease); a background timer may call it every minute.
   */
  refreshExpiring(manifests: readonly PluginManifest[], withinMs?: number, limit?: number): Promise<RefreshSweep>;
  /** fires 'change' with a ConnectionChange after every status change made by this process */
  readonly events: EventEmitter;
  /** fetch / mapUrl / timeout used for provider requests (shared with the portal's code exchange) */
  readonly http: OAuthHttpOptions;
  readonly clientFor: (pluginName: string) => OAuthClient | undefined;
  /** the connect links (`connect`, the portal's connect pages, `wait_for_connection`) */
  readonly pending: PendingConnects;
  /** the clock everything here uses */
  readonly now: () => number;
}

const SILENT: ConnectionLogger = { info() {}, warn() {} };
/** a connection whose background refresh failed is put off this long, doubling with each failure up to PUT_OFF_MAX_MS */
const PUT_OFF_BASE_MS = 60_000;
const PUT_OFF_MAX_MS = 30 * 60_000;
/** a put-off entry is forgotten (its failure count too) this long after it ran out */
const PUT_OFF_FORGET_MS = 60 * 60_000;
/** at most this many put-off connections are left out of one sweep's query (bounds its parameters) */
const PUT_OFF_MAX_SKIP = 500;

export function createConnectionService(deps: ConnectionServiceDeps): FullConnectionService {
  const store = new ConnectionStore(deps.db);
  const now = deps.now ?? Date.now;
  const logger = deps.logger ?? SILENT;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const http: OAuthHttpOptions = {};
  if (deps.fetch) http.fetch = deps.fetch;
  if (deps.mapUrl) http.mapUrl = deps.mapUrl;
  const emit = (c: ConnectionChange): void => void events.emit('change', c);
  /** connections the background sweep puts off (failed, or not refreshable by it), by id */
  const putOff = new Map<string, { until: number; failures: number }>();
  const refresher = createRefresher({
    store,
    vault: deps.vault,
    clientFor: deps.clientFor,
    http,
    now,
    logger,
    skewMs: deps.refreshSkewMs ?? 60_000,
    leaseMs: deps.refreshLeaseMs ?? 30_000,
    onChange: emit,
  });

  /**
   * An expired OAuth2 token without a refresh token can never work again: say so now (and store
   * it), instead of reporting "connected" until the next call fails.
   */
  async function truthful(row: ConnectionRow | undefined): Promise<ConnectionRow | undefined> {
    if (!row || row.status !== 'connected' || row.expires_at === null || row.expires_at > now()) return row;
    let refreshable = true;
    try {
      refreshable = openSecret(deps.vault, row.id, row.secret, row.integration).refreshToken !== undefined;
    } catch {
      return row; // unreadable: credential() reports the vault error when the connection is used
    }
    if (refreshable) return row;
    const at = now();
    // only if it is still the row judged here: a reconnect since the read stands
    if (!(await store.setStatusIf(row.id, row.version, 'needs_reauth', NO_REFRESH_REASON, at))) return truthful(await store.byId(row.id));
    return { ...row, status: 'needs_reauth', status_reason: NO_REFRESH_REASON, updated_at: at };
  }

  const toState = (row: ConnectionRow | undefined): IntegrationConnectionState => {
    if (!row) return { state: 'not_connected' };
    if (row.status === 'connected') return { state: 'connected', connectionId: row.id, updatedAt: row.updated_at, connectedAt: row.connected_at, expiresAt: row.expires_at };
    if (row.status === 'needs_reauth')
      return { state: 'needs_reauth', connectionId: row.id, reason: row.status_reason ?? 'the connection must be renewed: reconnect', updatedAt: row.updated_at };
    return { state: 'not_connected' };
  };

  async function save(
    userId: string,
    manifest: PluginManifest,
    payload: SecretPayload,
    config: Record<string, unknown> | undefined,
    expiresAt: number | null,
    scopes: string | null,
    options: { keepRefreshToken?: boolean } = {},
  ): Promise<{ connectionId: string }> {
    let kept = false;
    const connectionId = await store.upsert({
      id: randomUUID(),
      userId,
      integration: manifest.name,
      secret: (id, existing, existingStatus) => {
        kept = false;
        // only a connected row's refresh token is worth keeping: a needs_reauth row's was refused
        // (invalid_grant) or never existed, and keeping it would end the new connection in
        // invalid_grant again at its first expiry
        if (!options.keepRefreshToken || payload.refreshToken || existing === undefined || existingStatus !== 'connected') return sealSecret(deps.vault, id, payload);
        // A provider that answers a re-consent without a refresh token (Google, for one) keeps the
        // one it issued earlier valid: keep it, as a refresh that returns none does.
        let refreshToken: string | undefined;
        try {
          refreshToken = openSecret(deps.vault, id, existing, manifest.name, logger).refreshToken;
        } catch {
          refreshToken = undefined; // unreadable: the new tokens are stored without one
        }
        kept = refreshToken !== undefined;
        return sealSecret(deps.vault, id, refreshToken ? { ...payload, refreshToken } : payload);
      },
      config,
      expiresAt,
      scopes,
      now: now(),
    });
    emit({ id: connectionId, userId, integration: manifest.name, status: 'connected' });
    logger.info({ connectionId, userId, integration: manifest.name, expiresAt, refreshable: payload.refreshToken !== undefined || kept, keptRefreshToken: kept }, 'connection saved');
    return { connectionId };
  }

  const notNeeded = (m: PluginManifest): ConnectionError =>
    new ConnectionError('GW_ERR_CONNECTION_NOT_NEEDED', `${m.displayName} needs no connection (auth type "none")`);

  const service: FullConnectionService = {
    events,
    http,
    clientFor: deps.clientFor,
    pending: new PendingConnects({ db: deps.db, vault: deps.vault, now, ...(deps.linkTtlMs ? { ttlMs: deps.linkTtlMs } : {}) }),
    now,

    async lookup(userId, manifest): Promise<ConnectionLookup> {
      if (manifest.auth.type === 'none') return { connected: true, connectionId: '', config: {} };
      const row = await store.byUser(userId, manifest.name);
      if (!row) return { connected: false };
      if (row.status !== 'connected') return { connected: false, reason: row.status_reason ?? `the ${manifest.displayName} connection must be renewed: reconnect` };
      let config: Record<string, unknown>;
      try {
        config = JSON.parse(row.config) as Record<string, unknown>;
      } catch {
        return { connected: false, reason: `the stored ${manifest.displayName} configuration is unreadable: reconnect` };
      }
      return { connected: true, connectionId: row.id, config };
    },

    async credential(userId, manifest): Promise<Credential | undefined> {
      if (manifest.auth.type === 'none') return { values: {} };
      const row = await store.byUser(userId, manifest.name);
      if (!row || row.status !== 'connected') return undefined;
      return refresher.fresh(row, manifest);
    },

    async importConnection(input) {
      const m = input.manifest;
      if (m.auth.type === 'none') throw notNeeded(m);
      if (m.auth.type === 'oauth2') {
        if (!input.token) throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', `${m.displayName} is OAuth2: a token is required`, { token: 'required' });
        if (input.expiresInSec !== undefined && !(Number.isFinite(input.expiresInSec) && input.expiresInSec > 0))
          throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', 'expires-in must be a positive number of seconds', { expiresInSec: 'must be > 0' });
        const tokens: TokenSet = { accessToken: input.token };
        if (input.refreshToken) tokens.refreshToken = input.refreshToken;
        if (input.expiresInSec !== undefined) tokens.expiresInSec = input.expiresInSec;
        const payload: SecretPayload = { values: { token: tokens.accessToken } };
        if (tokens.refreshToken) payload.refreshToken = tokens.refreshToken;
        const expiresAt = tokens.expiresInSec !== undefined ? expiresAtOf(now(), tokens.expiresInSec) : null;
        // re-importing without config keeps the connection's config (e.g. the Jira site)
        return save(input.userId, m, payload, input.config, expiresAt, null);
      }
      // a re-import keeps the stored non-secret fields (ctx.config) it does not give, as the OAuth2
      // path keeps its config: re-importing a key reset a chosen region to its default
      const kept: Record<string, unknown> = {};
      const stored = await store.byUser(input.userId, m.name);
      if (stored) {
        let config: unknown;
        try {
          config = JSON.parse(stored.config);
        } catch {
          config = undefined; // unreadable: nothing to keep
        }
        for (const f of m.auth.fields) {
          const v = typeof config === 'object' && config !== null ? (config as Record<string, unknown>)[f.name] : undefined;
          if (!f.secret && typeof v === 'string') kept[f.name] = v;
        }
      }
      const merged: Record<string, unknown> = { ...kept, ...(input.config ?? {}), ...(input.values ?? {}) };
      // a token fills the integration's only secret field (beside any number of non-secret ones)
      const secrets = m.auth.fields.filter((f) => f.secret);
      if (input.token !== undefined) {
        const only = secrets.length === 1 ? secrets[0] : undefined;
        if (!only)
          throw new ConnectionError(
            'GW_ERR_CONNECTION_INVALID_INPUT',
            `a token fills the only secret field of an API-key integration, and ${m.displayName} has ${secrets.length} (${secrets.map((f) => f.name).join(', ')}): give each field in values instead`,
            { token: 'one secret field only' },
          );
        if (merged[only.name] === undefined) merged[only.name] = input.token;
      }
      return service.saveApiKey(input.userId, m, merged);
    },

    async saveTokens(userId, manifest, tokens) {
      if (manifest.auth.type !== 'oauth2') throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', `${manifest.displayName} is not an OAuth2 integration`);
      const payload: SecretPayload = { values: { token: tokens.accessToken } };
      if (tokens.refreshToken) payload.refreshToken = tokens.refreshToken;
      const expiresAt = tokens.expiresInSec !== undefined ? expiresAtOf(now(), tokens.expiresInSec) : null;
      // a reconnect keeps the connection's config (e.g. the Jira site chosen at import), and its
      // refresh token when the provider sent no new one
      return save(userId, manifest, payload, undefined, expiresAt, tokens.scope ?? null, { keepRefreshToken: true });
    },

    async saveApiKey(userId, manifest, input) {
      if (manifest.auth.type === 'none') throw notNeeded(manifest);
      if (manifest.auth.type !== 'apikey') throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', `${manifest.displayName} is connected with OAuth2, not an API key`);
      const v = validateApiKeyFields(manifest.auth.fields, input);
      const problems = Object.entries(v.errors);
      if (problems.length > 0)
        throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', problems.map(([, msg]) => msg).join('; '), v.errors);
      if (Object.keys(v.secret).length === 0)
        throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', `${manifest.displayName}: at least one secret field must be filled in`);
      return save(userId, manifest, { values: v.secret }, v.config, null, null);
    },

    async state(userId, manifest) {
      if (manifest.auth.type === 'none') return { state: 'not_connected' };
      return toState(await truthful(await store.byUser(userId, manifest.name)));
    },

    async states(userId) {
      const rows = await store.listForUser(userId);
      const checked = await Promise.all(rows.map((r) => truthful(r)));
      // (a row disconnected while it was checked is left out)
      return new Map(checked.filter((r): r is ConnectionRow => r !== undefined).map((r) => [r.integration, toState(r)]));
    },

    async refreshExpiring(manifests, withinMs = 5 * 60_000, limit = 100) {
      const out: RefreshSweep = { usable: 0, needsReauth: 0, failed: 0 };
      const byName = new Map(manifests.filter((m) => m.auth.type === 'oauth2').map((m) => [m.name, m]));
      const started = now();
      for (const [id, d] of putOff) if (d.until + PUT_OFF_FORGET_MS < started) putOff.delete(id);
      const skip = [...putOff].filter(([, d]) => d.until > started).sort((a, b) => b[1].until - a[1].until).slice(0, PUT_OFF_MAX_SKIP).map(([id]) => id);
      for (const row of await store.expiring(started + withinMs, limit, [...byName.keys()], skip)) {
        const m = byName.get(row.integration);
        if (!m) continue;
        try {
          const { credential: cred, failure } = await refresher.freshOrFailure(row, m, withinMs);
          // the provider failed the refresh and the current token (not expired yet) came back:
          // a failure, backed off like one, not a token usable until its expiry
          if (failure) throw fail('GW_ERR_CONNECTION_PROVIDER', { message: failure });
          if (cred) out.usable++;
          else out.needsReauth++;
          // still expiring at the same version: the sweep could not refresh it (no refresh token, no
          // client); leave it to the call that needs it rather than take a batch slot every run
          const after = await store.byId(row.id);
          if (after && after.version === row.version && after.status === 'connected' && after.expires_at !== null && after.expires_at < now() + withinMs)
            putOff.set(row.id, { until: after.expires_at, failures: 0 });
          else putOff.delete(row.id);
        } catch (err) {
          out.failed++;
          const failures = (putOff.get(row.id)?.failures ?? 0) + 1;
          putOff.set(row.id, { until: now() + Math.min(PUT_OFF_BASE_MS * 2 ** (failures - 1), PUT_OFF_MAX_MS), failures });
          logger.warn({ connectionId: row.id, integration: row.integration, failures, error: (err as Error).message }, 'background refresh failed');
        }
      }
      return out;
    },

    async disconnect(userId, manifest) {
      // Deleted first, at the version read: a reconnect meanwhile (it keeps the row id, bumps the
      // version) is then read again instead of deleted unseen, and the tokens revoked below are
      // exactly the ones deleted, never those of a connection made after the read.
      let row: ConnectionRow | undefined;
      for (let attempt = 1; ; attempt++) {
        row = await store.byUser(userId, manifest.name);
        if (!row) return { removed: false, revocation: 'unsupported' };
        if (await store.removeIf(row.id, row.version)) break;
        if (attempt >= 5) throw fail('GW_ERR_CONNECTION_CONFLICT', { message: `the ${manifest.displayName} connection kept changing while it was being removed; try again` });
      }
      emit({ id: row.id, userId, integration: manifest.name, status: 'disconnected' });
      let revocation: DisconnectResult['revocation'] = 'unsupported';
      const client = deps.clientFor(manifest.name);
      if (manifest.auth.type === 'oauth2' && manifest.auth.revocationUrl && client) {
        try {
          const secret = openSecret(deps.vault, row.id, row.secret, manifest.name, logger);
          // Revoking the refresh token ends the whole grant at most providers; the access token is revoked too.
          if (secret.refreshToken) await revokeToken(manifest.auth, client, secret.refreshToken, 'refresh_token', http);
          if (secret.values['token']) await revokeToken(manifest.auth, client, secret.values['token'], 'access_token', http);
          revocation = 'revoked';
        } catch (err) {
          revocation = 'failed';
          logger.warn({ connectionId: row.id, integration: row.integration, error: (err as Error).message }, 'revocation at the provider failed; the connection is removed anyway');
        }
      }
      return { removed: true, revocation };
    },
  };
  return service;
}
