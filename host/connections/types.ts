/**
 * @module host/connections/types
 * What the engine needs from the connection service: is this user connected to this integration,
 * and (only when a request needs it) the decrypted credential, refreshed when stale.
 */
import type { Credential } from '../bridge/index.js';
import type { PluginManifest } from '../../contracts/manifest.js';
import type { OAuthClient } from './oauth.js';

/** Secret values applied by the bridge: `{token}` for OAuth2, or the API-key fields marked secret. */
export type { Credential };

export type ConnectionStatus = 'connected' | 'needs_reauth' | 'disconnected';

export type ConnectionLookup =
  | {
      connected: true;
      connectionId: string;
      /** the non-secret config, with `instanceUrl` set to the connection's instance (and only then) */
      config: Record<string, unknown>;
      /** the origin of the connection's own instance; undefined for the provider's default */
      instance?: string | undefined;
    }
  | { connected: false; reason?: string };

export interface ConnectionService {
  /** Cheap check used by the engine's connection stage (no decryption, no refresh). */
  lookup(userId: string, manifest: PluginManifest): Promise<ConnectionLookup>;
  /**
   * Decrypts the credential, refreshing it first when it is stale (single-flight per connection).
   * Resolves undefined when the connection is gone or needs re-authorisation.
   */
  credential(userId: string, manifest: PluginManifest): Promise<Credential | undefined>;
  /**
   * the operator's OAuth2 client of a plugin, if configured (without it, connect cannot work); with
   * `instance`, the client registered on that instance (`<PLUGIN>_INSTANCE_CLIENTS`)
   */
  readonly clientFor?: (pluginName: string, instance?: string) => OAuthClient | undefined;
  /** Stores a credential as if the user had connected (CLI `connections import`, tests). */
  importConnection(input: {
    userId: string;
    manifest: PluginManifest;
    token?: string;
    refreshToken?: string;
    /** floored and clamped to [1 s, 10 years], as a provider's expires_in */
    expiresInSec?: number;
    values?: Record<string, string>;
    config?: Record<string, unknown>;
    /** a cookie connection's cookies: a JSON array in playwright's cookie shape (cookie-capture.ts) */
    cookies?: unknown;
    /**
     * the connection's own instance (instance-url.ts checks it; the default's URL for the default);
     * left out, a re-import keeps the stored connection's
     */
    instanceUrl?: string;
  }): Promise<{ connectionId: string }>;
}

/** Whether a user can run an integration's tools now: always for auth "none", else a stored, working connection. */
export async function isUsable(
  connections: Pick<ConnectionService, 'lookup'>,
  userId: string,
  manifest: PluginManifest,
): Promise<boolean> {
  return manifest.auth.type === 'none' || (await connections.lookup(userId, manifest)).connected;
}
