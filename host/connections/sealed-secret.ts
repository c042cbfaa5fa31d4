/**
 * @module host/connections/sealed-secret
 * What a connection's encrypted `secret` column holds: the values the bridge injects (`{token}` for
 * OAuth2, the secret API-key fields otherwise, a cookie connection's cookies) and the OAuth2
 * refresh token, which never leaves the host, and the instance the credential belongs to (sealed
 * with it, so that the row's plain `instance_url` cannot be changed to send it elsewhere). Sealed
 * with the vault, bound to the connection id.
 */
import type { StoredCookie } from '../bridge/index.js';
import { GatewayError } from '../errors.js';
import { VaultError, type Vault } from './vault.js';

export interface SecretPayload {
  values: Record<string, string>;
  refreshToken?: string;
  /** a cookie connection's cookies (captured in a browser, or imported) */
  cookies?: StoredCookie[];
  /** the origin of the connection's own instance; absent for the provider's default */
  instance?: string;
  /** a token the person made (not an OAuth grant): never refreshed, not revoked at disconnect */
  personal?: boolean;
}

export function sealSecret(
  vault: Vault,
  connectionId: string,
  payload: SecretPayload,
): { sealed: string; keyId: string } {
  const body: SecretPayload = { values: payload.values };
  if (payload.refreshToken) body.refreshToken = payload.refreshToken;
  if (payload.cookies) body.cookies = payload.cookies;
  if (payload.instance) body.instance = payload.instance;
  if (payload.personal) body.personal = true;
  // the key id the value names: the vault's key may change (a key file re-read after a rotation)
  const sealed = vault.encrypt(JSON.stringify(body), connectionId);
  return { sealed, keyId: vault.keyIdOf(sealed) ?? vault.keyId };
}

/** where openSecret reports what an operator needs to know */
export interface SecretLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * Opens a row's secret. A vault failure becomes GW_ERR_ENGINE_CREDENTIAL_FAILED whose message, read
 * by the calling agent, says only that this server cannot read the credential and to contact its
 * operator; the key ids and what to do (the vault's explanation) go to `logger`.
 */
export function openSecret(
  vault: Vault,
  connectionId: string,
  sealed: string,
  integration: string,
  logger?: SecretLogger,
): SecretPayload {
  let text: string;
  try {
    text = vault.decrypt(sealed, connectionId);
  } catch (err) {
    const why = err instanceof VaultError ? err.message : 'decryption failed';
    logger?.warn(
      {
        connectionId,
        integration,
        code: err instanceof VaultError ? err.code : 'VAULT_DECRYPT_FAILED',
        sealedWith: vault.keyIdOf(sealed),
        keyId: vault.keyId,
      },
      `the stored ${integration} credential of connection ${connectionId} cannot be read: ${why}`,
    );
    throw new GatewayError(
      'GW_ERR_ENGINE_CREDENTIAL_FAILED',
      `the stored ${integration} credential cannot be read on this server (a problem with the server's encryption key, not with this call): contact the operator of this Workbench server`,
      { integration },
    );
  }
  const parsed: unknown = JSON.parse(text);
  const p = parsed as Partial<SecretPayload>;
  const values: Record<string, string> = {};
  if (p && typeof p.values === 'object' && p.values !== null)
    for (const [k, v] of Object.entries(p.values)) if (typeof v === 'string') values[k] = v;
  const out: SecretPayload = { values };
  if (typeof p?.refreshToken === 'string' && p.refreshToken) out.refreshToken = p.refreshToken;
  // sealed by this server from validated cookies (cookie-capture.ts); a value that is not a list is none
  if (Array.isArray(p?.cookies)) out.cookies = p.cookies;
  if (typeof p?.instance === 'string' && p.instance) out.instance = p.instance;
  if (p?.personal === true) out.personal = true;
  return out;
}
