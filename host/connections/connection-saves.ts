/**
 * @module host/connections/connection-saves
 * Storing a connection, sealed: an OAuth2 token set after the code exchange (keeping the refresh
 * token a re-consent did not repeat), API-key fields from the portal's form (validated per field),
 * `connections import` (a token or fields given by the operator, keeping what it does not give), and
 * a cookie connection's cookies (a browser capture, or an import), only those of its domains.
 */
import { randomUUID } from 'node:crypto';
import type { PluginManifest } from '../../contracts/manifest.js';
import { validateApiKeyFields } from './apikey-fields.js';
import { notSignedIn, selectCookies, sessionExpiresAt } from './cookie-capture.js';
import { ConnectionError } from './errors.js';
import type { TokenSet } from './oauth.js';
import { openSecret, sealSecret, type SecretPayload } from './sealed-secret.js';
import type { CookieCapture, FullConnectionService, ServiceCore } from './service-types.js';
import { expiresAtOf } from './token-response.js';
import type { ConnectionService } from './types.js';

export type ConnectionSaves = Pick<
  FullConnectionService,
  'importConnection' | 'saveTokens' | 'saveApiKey' | 'captureCookies'
>;

type ImportInput = Parameters<ConnectionService['importConnection']>[0];
type Saved = Promise<{ connectionId: string }>;

export function createConnectionSaves(core: ServiceCore): ConnectionSaves {
  const saveApiKey = (userId: string, manifest: PluginManifest, input: Record<string, unknown>): Saved =>
    saveApiKeyFields(core, userId, manifest, input);
  return {
    async importConnection(input) {
      const m = input.manifest;
      if (m.auth.type === 'none') throw notNeeded(m);
      if (m.auth.type === 'cookie' || input.cookies !== undefined) return importCookies(core, input);
      if (m.auth.type === 'oauth2') return importToken(core, input);
      return saveApiKey(input.userId, m, await importedFields(core, input));
    },
    async saveTokens(userId, manifest, tokens) {
      if (manifest.auth.type !== 'oauth2')
        throw new ConnectionError(
          'GW_ERR_CONNECTION_INVALID_INPUT',
          `${manifest.displayName} is not an OAuth2 integration`,
        );
      const payload: SecretPayload = { values: { token: tokens.accessToken } };
      if (tokens.refreshToken) payload.refreshToken = tokens.refreshToken;
      const expiresAt = tokens.expiresInSec !== undefined ? expiresAtOf(core.now(), tokens.expiresInSec) : null;
      // a reconnect keeps the connection's config (e.g. the Jira site chosen at import), and its
      // refresh token when the provider sent no new one
      return save(core, userId, manifest, payload, undefined, expiresAt, tokens.scope ?? null, {
        keepRefreshToken: true,
      });
    },
    saveApiKey,
    captureCookies: (userId, manifest, cookies) => saveCookies(core, userId, manifest, cookies),
  };
}

/** `connections import --cookies`: the cookies given, checked as a capture's are. */
async function importCookies(core: ServiceCore, input: ImportInput): Saved {
  const m = input.manifest;
  if (m.auth.type !== 'cookie')
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      `${m.displayName} is not a cookie connection (auth type "${m.auth.type}"): cookies cannot connect it`,
      { cookies: 'not a cookie integration' },
    );
  const given = ['token', 'refreshToken', 'expiresInSec', 'values', 'config'].filter(
    (k) => input[k as keyof ImportInput] !== undefined,
  );
  if (input.cookies === undefined || given.length > 0)
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      `${m.displayName} is a cookie connection: give its cookies${given.length > 0 ? `, and nothing else (not ${given.join(', ')})` : ''}`,
      { cookies: 'required' },
    );
  const { connectionId } = await saveCookies(core, input.userId, m, input.cookies);
  return { connectionId };
}

/** A capture or an import of cookies: the signed-in session's cookies of the declared domains, sealed. */
async function saveCookies(
  core: ServiceCore,
  userId: string,
  manifest: PluginManifest,
  cookies: unknown,
): Promise<CookieCapture> {
  const auth = manifest.auth;
  if (auth.type !== 'cookie')
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      `${manifest.displayName} is not a cookie connection (auth type "${auth.type}")`,
    );
  const { kept, dropped } = selectCookies(auth, cookies, { nowMs: core.now(), mappedHosts: core.mappedHosts });
  const problem = notSignedIn(auth, kept);
  if (problem)
    throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', `${manifest.displayName}: ${problem}`, {
      cookies: problem,
    });
  const expiresAt = sessionExpiresAt(auth, kept);
  const { connectionId } = await save(core, userId, manifest, { values: {}, cookies: kept }, {}, expiresAt, null);
  return { connectionId, kept: kept.length, dropped, expiresAt };
}

const notNeeded = (m: PluginManifest): ConnectionError =>
  new ConnectionError('GW_ERR_CONNECTION_NOT_NEEDED', `${m.displayName} needs no connection (auth type "none")`);

async function saveApiKeyFields(
  core: ServiceCore,
  userId: string,
  manifest: PluginManifest,
  input: Record<string, unknown>,
): Saved {
  if (manifest.auth.type === 'none') throw notNeeded(manifest);
  if (manifest.auth.type !== 'apikey')
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      `${manifest.displayName} is not connected with an API key (its auth type is "${manifest.auth.type}")`,
    );
  const v = validateApiKeyFields(manifest.auth.fields, input);
  const problems = Object.entries(v.errors);
  if (problems.length > 0)
    throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', problems.map(([, msg]) => msg).join('; '), v.errors);
  if (Object.keys(v.secret).length === 0)
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      `${manifest.displayName}: at least one secret field must be filled in`,
    );
  return save(core, userId, manifest, { values: v.secret }, v.config, null, null);
}

/** `connections import` of an OAuth2 integration: the token (and refresh token) given. */
async function importToken(core: ServiceCore, input: ImportInput): Saved {
  const m = input.manifest;
  if (!input.token)
    throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', `${m.displayName} is OAuth2: a token is required`, {
      token: 'required',
    });
  if (input.expiresInSec !== undefined && !(Number.isFinite(input.expiresInSec) && input.expiresInSec > 0))
    throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', 'expires-in must be a positive number of seconds', {
      expiresInSec: 'must be > 0',
    });
  const tokens: TokenSet = { accessToken: input.token };
  if (input.refreshToken) tokens.refreshToken = input.refreshToken;
  if (input.expiresInSec !== undefined) tokens.expiresInSec = input.expiresInSec;
  const payload: SecretPayload = { values: { token: tokens.accessToken } };
  if (tokens.refreshToken) payload.refreshToken = tokens.refreshToken;
  const expiresAt = tokens.expiresInSec !== undefined ? expiresAtOf(core.now(), tokens.expiresInSec) : null;
  // re-importing without config keeps the connection's config (e.g. the Jira site)
  return save(core, input.userId, m, payload, input.config, expiresAt, null);
}

/** `connections import` of an API-key integration: the fields to save, before they are validated. */
async function importedFields(core: ServiceCore, input: ImportInput): Promise<Record<string, unknown>> {
  const m = input.manifest;
  if (m.auth.type !== 'apikey') return {};
  // a re-import keeps the stored non-secret fields (ctx.config) it does not give, as the OAuth2
  // path keeps its config: re-importing a key reset a chosen region to its default
  const kept: Record<string, unknown> = {};
  const stored = await core.store.byUser(input.userId, m.name);
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
  return merged;
}

async function save(
  core: ServiceCore,
  userId: string,
  manifest: PluginManifest,
  payload: SecretPayload,
  config: Record<string, unknown> | undefined,
  expiresAt: number | null,
  scopes: string | null,
  options: { keepRefreshToken?: boolean } = {},
): Saved {
  const { vault, logger } = core;
  let kept = false;
  const connectionId = await core.store.upsert({
    id: randomUUID(),
    userId,
    integration: manifest.name,
    secret: (id, existing, existingStatus) => {
      kept = false;
      // only a connected row's refresh token is worth keeping: a needs_reauth row's was refused
      // (invalid_grant) or never existed, and keeping it would end the new connection in
      // invalid_grant again at its first expiry
      if (!options.keepRefreshToken || payload.refreshToken || existing === undefined || existingStatus !== 'connected')
        return sealSecret(vault, id, payload);
      // A provider that answers a re-consent without a refresh token (Google, for one) keeps the
      // one it issued earlier valid: keep it, as a refresh that returns none does.
      let refreshToken: string | undefined;
      try {
        refreshToken = openSecret(vault, id, existing, manifest.name, logger).refreshToken;
      } catch {
        refreshToken = undefined; // unreadable: the new tokens are stored without one
      }
      kept = refreshToken !== undefined;
      return sealSecret(vault, id, refreshToken ? { ...payload, refreshToken } : payload);
    },
    config,
    expiresAt,
    scopes,
    now: core.now(),
  });
  core.emit({ id: connectionId, userId, integration: manifest.name, status: 'connected' });
  logger.info(
    {
      connectionId,
      userId,
      integration: manifest.name,
      expiresAt,
      refreshable: payload.refreshToken !== undefined || kept,
      keptRefreshToken: kept,
    },
    'connection saved',
  );
  return { connectionId };
}
