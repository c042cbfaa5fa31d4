/**
 * @module host/connections/connection-saves
 * Storing a connection, sealed: an OAuth2 token set after the code exchange (keeping the refresh
 * token a re-consent did not repeat), API-key fields from the portal's form (validated per field),
 * `connections import` (a token or fields given by the operator, keeping what it does not give), a
 * personal token pasted on the connect page of an OAuth2 integration that takes one, and a cookie
 * connection's cookies (a browser capture, or an import), only those of its domains. Every save
 * names the instance its credential belongs to (instance-url.ts checks it; none: the provider's
 * default), sealed with the credential and kept beside it in the row.
 */
import { randomUUID } from 'node:crypto';
import { INSTANCE_CONFIG_KEY, instanceOf, type PluginManifest } from '../../contracts/manifest.js';
import { validateApiKeyFields } from './apikey-fields.js';
import { notSignedIn, selectCookies, sessionExpiresAt } from './cookie-capture.js';
import { ConnectionError } from './errors.js';
import { checkInstanceUrl } from './instance-url.js';
import { checkPersonalToken } from './personal-token.js';
import type { TokenSet } from './oauth.js';
import { openSecret, sealSecret, type SecretPayload } from './sealed-secret.js';
import type { CookieCapture, FullConnectionService, ServiceCore } from './service-types.js';
import { expiresAtOf } from './token-response.js';
import type { ConnectionService } from './types.js';

export type ConnectionSaves = Pick<
  FullConnectionService,
  'importConnection' | 'saveTokens' | 'saveApiKey' | 'savePersonalToken' | 'captureCookies'
>;

type ImportInput = Parameters<ConnectionService['importConnection']>[0];
type Saved = Promise<{ connectionId: string }>;

export function createConnectionSaves(core: ServiceCore): ConnectionSaves {
  return {
    async importConnection(input) {
      const m = input.manifest;
      if (m.auth.type === 'none') throw notNeeded(m);
      if (m.auth.type === 'cookie' || input.cookies !== undefined) return importCookies(core, input);
      if (m.auth.type === 'oauth2') return importToken(core, input);
      const fields = await importedFields(core, input);
      return saveApiKeyFields(core, input.userId, m, fields, await importedInstance(core, input));
    },
    async saveApiKey(userId, manifest, input) {
      // the form's instance field (only an integration that takes an instance has one)
      const { [INSTANCE_CONFIG_KEY]: given, ...fields } = input;
      if (!instanceOf(manifest)) return saveApiKeyFields(core, userId, manifest, input, undefined);
      const instance = await checkInstanceUrl(manifest, given, core.instanceRules);
      return saveApiKeyFields(core, userId, manifest, fields, instance);
    },
    savePersonalToken: (userId, manifest, token, instanceUrl) =>
      savePersonalToken(core, userId, manifest, token, instanceUrl),
    async saveTokens(userId, manifest, tokens, instance) {
      if (manifest.auth.type !== 'oauth2')
        throw new ConnectionError(
          'GW_ERR_CONNECTION_INVALID_INPUT',
          `${manifest.displayName} is not an OAuth2 integration`,
        );
      const payload: SecretPayload = { values: { token: tokens.accessToken } };
      if (tokens.refreshToken) payload.refreshToken = tokens.refreshToken;
      // the instance whose token endpoint issued them (checked before the round trip began)
      if (instance) payload.instance = instance;
      const expiresAt = tokens.expiresInSec !== undefined ? expiresAtOf(core.now(), tokens.expiresInSec) : null;
      // a reconnect keeps the connection's config (e.g. the Jira site chosen at import), and its
      // refresh token when the provider sent no new one
      return save(core, userId, manifest, payload, undefined, expiresAt, tokens.scope ?? null, {
        keepRefreshToken: true,
      });
    },
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
  const given = ['token', 'refreshToken', 'expiresInSec', 'values', 'config', 'instanceUrl'].filter(
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

/** The fields of an API-key connection, validated, stored for `instance` (already checked). */
async function saveApiKeyFields(
  core: ServiceCore,
  userId: string,
  manifest: PluginManifest,
  input: Record<string, unknown>,
  instance: string | undefined,
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
  const payload: SecretPayload = { values: v.secret };
  if (instance) payload.instance = instance;
  return save(core, userId, manifest, payload, v.config, null, null);
}

/** A token the person made, pasted on the connect page of an OAuth2 integration that takes one (`personalToken`). */
async function savePersonalToken(
  core: ServiceCore,
  userId: string,
  manifest: PluginManifest,
  token: unknown,
  instanceUrl: unknown,
): Saved {
  const text = checkPersonalToken(manifest, token);
  const instance = await checkInstanceUrl(manifest, instanceUrl, core.instanceRules);
  const payload: SecretPayload = { values: { token: text }, personal: true };
  if (instance) payload.instance = instance;
  // a reconnect keeps the connection's config, as an OAuth sign-in does
  return save(core, userId, manifest, payload, undefined, null, null);
}

/**
 * The instance of an import: the one given (the default's own URL for the default), else the
 * stored connection's, kept as its non-secret fields are: a re-import that forgot it must not send
 * a self-managed instance's token to the provider's public service.
 */
async function importedInstance(core: ServiceCore, input: ImportInput): Promise<string | undefined> {
  if (input.instanceUrl !== undefined) return checkInstanceUrl(input.manifest, input.instanceUrl, core.instanceRules);
  const stored = await core.store.byUser(input.userId, input.manifest.name);
  return stored?.instance_url ?? undefined;
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
  const instance = await importedInstance(core, input);
  if (instance) payload.instance = instance;
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
      // one it issued earlier valid: keep it, as a refresh that returns none does (only one of the
      // same instance: another instance's refresh token is no use there, and must not go there).
      let refreshToken: string | undefined;
      try {
        const old = openSecret(vault, id, existing, manifest.name, logger);
        refreshToken = old.instance === payload.instance ? old.refreshToken : undefined;
      } catch {
        refreshToken = undefined; // unreadable: the new tokens are stored without one
      }
      kept = refreshToken !== undefined;
      return sealSecret(vault, id, refreshToken ? { ...payload, refreshToken } : payload);
    },
    config,
    instanceUrl: payload.instance ?? null,
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
      instance: payload.instance ?? null,
      expiresAt,
      refreshable: payload.refreshToken !== undefined || kept,
      keptRefreshToken: kept,
    },
    'connection saved',
  );
  return { connectionId };
}
