/**
 * @module host/connections/refresh
 * Refreshing a stale OAuth2 token without the peers' bugs: single-flight per connection in this
 * process (concurrent callers share one promise) and across replicas (a lease row update that only
 * one process wins), so a single-use refresh token is spent exactly once. The rotated refresh token
 * is persisted; `invalid_grant` turns the connection into `needs_reauth` with a reason — unless it
 * changed meanwhile (a reconnect bumps its version), so a verdict about an old refresh token never
 * lands on a new connection; a provider that is down or answers garbage gives a clear error and the
 * connection is kept.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PluginManifest } from '../../contracts/manifest.js';
import { GatewayError } from '../errors.js';
import type { ConnectionRow, ConnectionStore } from './connection-store.js';
import {
  OAuthError,
  clientEnvPrefix,
  oauthForInstance,
  refreshAccessToken,
  type OAuthClient,
  type OAuthHttpOptions,
  type TokenSet,
} from './oauth.js';
import { openSecret, sealSecret, type SecretPayload } from './sealed-secret.js';
import { expiresAtOf } from './token-response.js';
import type { Credential } from './types.js';
import type { Vault } from './vault.js';

export interface ConnectionLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface RefresherDeps {
  store: ConnectionStore;
  vault: Vault;
  clientFor(pluginName: string, instance?: string): OAuthClient | undefined;
  http: OAuthHttpOptions;
  now: () => number;
  logger: ConnectionLogger;
  /** refresh when the token expires within this many ms (default 60 s) */
  skewMs: number;
  /** how long a refresh lease is held at most (default 30 s) */
  leaseMs: number;
  /** called after a connection changed status (for waiters and caches) */
  onChange?: (row: { id: string; userId: string; integration: string; status: string }) => void;
}

export const INVALID_GRANT_REASON =
  'the provider no longer accepts the stored authorization (invalid_grant): reconnect';
export const NO_REFRESH_REASON = 'the access token expired and the provider issued no refresh token: reconnect';
/** attempts to store refreshed tokens (a busy or briefly unavailable database) before the call goes on without */
const COMMIT_ATTEMPTS = 3;
const COMMIT_RETRY_MS = 100;
/** the longest a refresh request to the provider may take (and at most a third of the lease) */
const DEFAULT_REFRESH_TIMEOUT_MS = 10_000;

export interface Refresher {
  /** true when the row's token expires within `skewMs` (default: the configured skew) */
  isStale(row: ConnectionRow, skewMs?: number): boolean;
  /**
   * The row's credential, refreshed first when it expires within `skewMs` (default: the configured
   * skew); undefined when the connection needs re-authorisation.
   */
  fresh(row: ConnectionRow, manifest: PluginManifest, skewMs?: number): Promise<Credential | undefined>;
  /**
   * As fresh, and says when the provider refused or failed the refresh but the current token, not
   * yet expired, was returned instead (`failure`: what went wrong): the background sweep backs off
   * such a connection rather than count it refreshed.
   */
  freshOrFailure(row: ConnectionRow, manifest: PluginManifest, skewMs?: number): Promise<FreshResult>;
}

export interface FreshResult {
  credential: Credential | undefined;
  /** the refresh failed at the provider; `credential` is the current, not yet expired, token */
  failure?: string;
}

export function createRefresher(deps: RefresherDeps): Refresher {
  const inFlight = new Map<string, Promise<FreshResult>>();
  const run: RefreshRun = {
    deps,
    // The provider request and the writes after it must end well inside the lease, so that another
    // replica does not take the lease and present the refresh token this one is spending.
    refreshTimeoutMs: Math.max(
      1,
      Math.min(deps.http.timeoutMs ?? DEFAULT_REFRESH_TIMEOUT_MS, Math.floor(deps.leaseMs / 3)),
    ),
    isStale: (row: ConnectionRow, skewMs = deps.skewMs): boolean =>
      row.expires_at !== null && row.expires_at - skewMs <= deps.now(),
    expired: (row: ConnectionRow): boolean => row.expires_at !== null && row.expires_at <= deps.now(),
  };

  async function freshOrFailure(
    row: ConnectionRow,
    manifest: PluginManifest,
    skewMs = deps.skewMs,
  ): Promise<FreshResult> {
    const secret = openBound(deps, row, manifest);
    if (manifest.auth.type === 'cookie' && secret.cookies)
      return { credential: { values: {}, cookies: secret.cookies } };
    if (manifest.auth.type !== 'oauth2' || !run.isStale(row, skewMs)) return { credential: credentialOf(secret) };
    let flight = inFlight.get(row.id);
    if (!flight) {
      flight = refresh(run, row.id, manifest, skewMs).finally(() => inFlight.delete(row.id));
      inFlight.set(row.id, flight);
    }
    return flight;
  }

  return {
    isStale: run.isStale,
    freshOrFailure,
    async fresh(row, manifest, skewMs = deps.skewMs) {
      return (await freshOrFailure(row, manifest, skewMs)).credential;
    },
  };
}

/** What the bridge gets of a secret: the values it injects, and the instance they are bound to. */
const credentialOf = (secret: SecretPayload): Credential =>
  secret.instance !== undefined ? { values: secret.values, instance: secret.instance } : { values: secret.values };

/**
 * Opens the row's secret and holds it to the instance the row names: the sealed one is where the
 * credential was given for, and a plain column that says otherwise was changed outside the
 * gateway (the credential would go to the host it names), so the credential is not used at all.
 */
function openBound(deps: RefresherDeps, row: ConnectionRow, manifest: PluginManifest): SecretPayload {
  const secret = openSecret(deps.vault, row.id, row.secret, manifest.name, deps.logger);
  if ((secret.instance ?? null) === (row.instance_url ?? null)) return secret;
  deps.logger.warn(
    { connectionId: row.id, integration: row.integration, sealedFor: secret.instance ?? null, row: row.instance_url },
    'the connection names another instance than its credential was sealed for; the credential is not used',
  );
  throw fail(
    manifest,
    'the stored connection names another instance than its credential was given for (changed outside Workbench): reconnect',
  );
}

/** What one refresher's steps share. */
interface RefreshRun {
  deps: RefresherDeps;
  /** the longest a refresh request to the provider may take */
  refreshTimeoutMs: number;
  isStale(row: ConnectionRow, skewMs?: number): boolean;
  expired(row: ConnectionRow): boolean;
}

const fail = (manifest: PluginManifest, message: string): GatewayError =>
  new GatewayError('GW_ERR_ENGINE_CREDENTIAL_FAILED', `${manifest.displayName}: ${message}`, {
    integration: manifest.name,
  });

/**
 * Marks the connection needs_reauth if it is still the row that was judged. Resolves false when
 * it changed meanwhile (the user reconnected, or another process refreshed it): the verdict was
 * about the old secret, and the caller reads the row again.
 */
async function needsReauth({ deps }: RefreshRun, row: ConnectionRow, reason: string): Promise<boolean> {
  if (!(await deps.store.setStatusIf(row.id, row.version, 'needs_reauth', reason, deps.now()))) {
    deps.logger.info(
      { connectionId: row.id, integration: row.integration, reason },
      'the connection changed while it was judged; not marking it for re-authorisation',
    );
    return false;
  }
  deps.logger.warn({ connectionId: row.id, integration: row.integration, reason }, 'connection needs re-authorisation');
  deps.onChange?.({ id: row.id, userId: row.user_id, integration: row.integration, status: 'needs_reauth' });
  return true;
}

async function refresh(
  run: RefreshRun,
  connectionId: string,
  manifest: PluginManifest,
  skewMs: number,
): Promise<FreshResult> {
  return refreshOnce(run, connectionId, manifest, skewMs).then((r) => (r && 'credential' in r ? r : { credential: r }));
}

/** "Read the row again": the connection changed while it was judged. */
const AGAIN = Symbol('again');

async function refreshOnce(
  run: RefreshRun,
  connectionId: string,
  manifest: PluginManifest,
  skewMs: number,
): Promise<Credential | FreshResult | undefined> {
  const { deps, isStale, expired } = run;
  if (manifest.auth.type !== 'oauth2') return undefined;
  const auth = manifest.auth;
  const deadline = Date.now() + deps.leaseMs + 5_000; // real time: waiting must end even under a fake clock
  let waitMs = 50;
  for (;;) {
    const row = await deps.store.byId(connectionId);
    if (!row || row.status !== 'connected') return undefined;
    const secret = openBound(deps, row, manifest);
    if (!isStale(row, skewMs)) return credentialOf(secret);
    if (!secret.refreshToken) {
      if (!expired(row)) return credentialOf(secret);
      if (await needsReauth(run, row, NO_REFRESH_REASON)) return undefined;
      continue; // reconnected meanwhile: judge the new row
    }
    // the sealed instance's token endpoint and client: a refresh token goes where it came from
    const endpoints = oauthForInstance(auth, secret.instance);
    const client = endpoints && deps.clientFor(manifest.name, secret.instance);
    if (!endpoints || !client) {
      if (!expired(row)) return credentialOf(secret);
      throw fail(
        manifest,
        `the token expired and cannot be refreshed: ${secret.instance ? `no OAuth client for ${secret.instance} is configured on the server (${clientEnvPrefix(manifest.name)}_INSTANCE_CLIENTS)` : `${clientEnvPrefix(manifest.name)}_CLIENT_ID is not configured on the server`}`,
      );
    }
    const owner = randomUUID();
    if (!(await deps.store.tryLease(row.id, row.version, owner, deps.leaseMs))) {
      // Another process is refreshing (or just did): wait for its result instead of spending the token again.
      if (Date.now() > deadline)
        throw fail(manifest, 'another server is still refreshing the token; try again shortly');
      await sleep(waitMs);
      waitMs = Math.min(waitMs * 2, 500);
      continue;
    }
    let tokens;
    try {
      tokens = await refreshAccessToken(endpoints, client, secret.refreshToken, {
        ...deps.http,
        timeoutMs: run.refreshTimeoutMs,
      });
    } catch (err) {
      const verdict = await refusedOrFailed(run, row, owner, manifest, credentialOf(secret), err);
      if (verdict === AGAIN) continue;
      return verdict;
    }
    return storeRefreshed(run, row, owner, tokens, { ...secret, refreshToken: secret.refreshToken });
  }
}

/**
 * After the provider refused or failed the refresh (the lease is held by `owner`): undefined when
 * the connection now needs re-authorisation, AGAIN when it changed meanwhile, the current token
 * with the failure while it has not expired yet; else throws.
 */
async function refusedOrFailed(
  run: RefreshRun,
  row: ConnectionRow,
  owner: string,
  manifest: PluginManifest,
  current: Credential,
  err: unknown,
): Promise<FreshResult | undefined | typeof AGAIN> {
  const { deps } = run;
  if (err instanceof OAuthError && err.kind === 'invalid_grant') {
    if (await needsReauth(run, row, INVALID_GRANT_REASON)) return undefined;
    // The user reconnected while the old refresh token was being refused: the new connection
    // stands. Read it again (its token is fresh, or is refreshed with its own refresh token).
    await deps.store.releaseLease(row.id, owner);
    return AGAIN;
  }
  await deps.store.releaseLease(row.id, owner);
  const message = err instanceof OAuthError ? err.message : `token refresh failed (${(err as Error).message})`;
  deps.logger.warn(
    {
      connectionId: row.id,
      integration: row.integration,
      kind: err instanceof OAuthError ? err.kind : 'internal',
      error: message,
    },
    'token refresh failed',
  );
  // The current token still works for a few seconds: use it rather than fail the call.
  if (!run.expired(row)) return { credential: current, failure: message };
  throw fail(manifest, `${message}. The connection is kept; try again later`);
}

/** Seals and stores the tokens the provider issued (the lease is held by `owner`); the call gets its token either way. */
async function storeRefreshed(
  run: RefreshRun,
  row: ConnectionRow,
  owner: string,
  tokens: TokenSet,
  old: SecretPayload & { refreshToken: string },
): Promise<Credential> {
  const { deps } = run;
  const payload: SecretPayload = {
    values: { token: tokens.accessToken },
    refreshToken: tokens.refreshToken ?? old.refreshToken,
  };
  if (old.instance) payload.instance = old.instance;
  const { sealed, keyId } = sealSecret(deps.vault, row.id, payload);
  const now = deps.now();
  const expiresAt = tokens.expiresInSec !== undefined ? expiresAtOf(now, tokens.expiresInSec) : null;
  // the provider has issued the tokens (and may have spent the old refresh token): a failed
  // write is retried, and the call gets its token even if the write never succeeds
  let stored = false;
  for (let attempt = 1; ; attempt++) {
    try {
      stored = await deps.store.commitRefresh(row.id, row.version, sealed, keyId, expiresAt, tokens.scope ?? null, now);
      break;
    } catch (err) {
      deps.logger.warn(
        { connectionId: row.id, integration: row.integration, attempt, error: (err as Error).message },
        'storing the refreshed token failed',
      );
      if (attempt >= COMMIT_ATTEMPTS) {
        await deps.store.releaseLease(row.id, owner).catch(() => undefined);
        break;
      }
      await sleep(COMMIT_RETRY_MS * attempt);
    }
  }
  deps.logger.info(
    { connectionId: row.id, integration: row.integration, rotated: tokens.refreshToken !== undefined, stored },
    stored
      ? 'token refreshed'
      : 'token refreshed but not stored (the connection was reconnected or removed meanwhile, or the database refused every write)',
  );
  return credentialOf(payload);
}
