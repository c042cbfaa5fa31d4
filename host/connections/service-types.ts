/**
 * @module host/connections/service-types
 * What the connection service offers beyond the engine's lookup (host/connections/types.ts), and
 * the parts its steps share (the store, the vault, the clock, the change events). A module of its
 * own so that the steps (reads, saves, the refresh sweep, disconnect) and the service that puts
 * them together import the same types without importing each other.
 */
import type { EventEmitter } from 'node:events';
import type { PluginManifest } from '../../contracts/manifest.js';
import type { ConnectionStore } from './connection-store.js';
import type { DroppedCookie } from './cookie-capture.js';
import type { InstanceRules } from './instance-url.js';
import type { OAuthClient, OAuthHttpOptions, TokenSet } from './oauth.js';
import type { PendingConnects } from './pending.js';
import type { ConnectionLogger } from './refresh.js';
import type { ConnectionService } from './types.js';
import type { Vault } from './vault.js';

export type IntegrationConnectionState =
  | {
      state: 'connected';
      connectionId: string;
      updatedAt: number;
      /** when the connection was last made or remade (a refresh moves updatedAt, not this) */
      connectedAt: number;
      expiresAt: number | null;
      /** the origin of the connection's own instance; undefined for the provider's default */
      instance?: string | undefined;
    }
  | {
      state: 'needs_reauth';
      connectionId: string;
      reason: string;
      updatedAt: number;
      instance?: string | undefined;
    }
  | { state: 'not_connected' };

/** What a cookie capture stored. */
export interface CookieCapture {
  connectionId: string;
  /** cookies stored */
  kept: number;
  /** cookies left out (another domain, expired, unsendable), with the reason */
  dropped: DroppedCookie[];
  /** when the session ends (epoch ms), or null for session cookies only */
  expiresAt: number | null;
}

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
  /**
   * stores an OAuth2 token set (after a code exchange) for `instance`, the origin whose token
   * endpoint issued it (checked before the round trip began); undefined for the provider's default
   */
  saveTokens(
    userId: string,
    manifest: PluginManifest,
    tokens: TokenSet,
    instance?: string,
  ): Promise<{ connectionId: string }>;
  /**
   * stores a token the person made (an OAuth2 integration's `personalToken`) for the instance URL
   * given (checked here); throws ConnectionError (GW_ERR_CONNECTION_INVALID_INPUT, or an
   * _INSTANCE_ code) with the field at fault
   */
  savePersonalToken(
    userId: string,
    manifest: PluginManifest,
    token: unknown,
    instanceUrl: unknown,
  ): Promise<{ connectionId: string }>;
  /**
   * validates and stores API-key fields (and `instanceUrl`, for an integration that takes an
   * instance); throws ConnectionError(GW_ERR_CONNECTION_INVALID_INPUT, or an _INSTANCE_ code) with per-field messages
   */
  saveApiKey(
    userId: string,
    manifest: PluginManifest,
    input: Record<string, unknown>,
  ): Promise<{ connectionId: string }>;
  /**
   * Stores the cookies of a signed-in browser session as the user's cookie connection: the
   * unexpired cookies within the manifest's domains (a mapped upstream target's as the host it
   * stands for). Throws ConnectionError(GW_ERR_CONNECTION_INVALID_INPUT) when they are not cookies,
   * or do not make a signed-in session (none kept, a signedInCheck cookie missing): nothing is
   * stored then. The seam the browser built-in calls with its BrowserContext's cookies().
   */
  captureCookies(userId: string, manifest: PluginManifest, cookies: unknown): Promise<CookieCapture>;
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
  readonly clientFor: (pluginName: string, instance?: string) => OAuthClient | undefined;
  /** the policy's rules a connection's instance is checked against (instance-url.ts) */
  readonly instanceRules: InstanceRules;
  /** the instances of a plugin on which the operator registered an OAuth client (origins) */
  readonly instanceOrigins: (pluginName: string) => string[];
  /** the connect links (`connect`, the portal's connect pages, `wait_for_connection`) */
  readonly pending: PendingConnects;
  /** the clock everything here uses */
  readonly now: () => number;
}

/** What the service's steps share. */
export interface ServiceCore {
  store: ConnectionStore;
  vault: Vault;
  now: () => number;
  logger: ConnectionLogger;
  http: OAuthHttpOptions;
  clientFor(pluginName: string, instance?: string): OAuthClient | undefined;
  instanceRules: InstanceRules;
  /** the policy's upstream targets by host name, with the hosts they stand for (cookie captures) */
  mappedHosts: ReadonlyMap<string, readonly string[]>;
  /** tells this process's listeners (waits, caches) that a connection changed status */
  emit(change: ConnectionChange): void;
}
