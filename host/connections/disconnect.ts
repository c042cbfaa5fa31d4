/**
 * @module host/connections/disconnect
 * Removing a connection: deleted first, at the version read, then its tokens revoked at the
 * provider where it supports revocation (a failed revocation still removes the connection here):
 * at the instance the credential was sealed for, with the client registered there. A personal
 * token is the person's own, made and revoked in their account: it is only forgotten here.
 */
import type { PluginManifest } from '../../contracts/manifest.js';
import type { ConnectionRow } from './connection-store.js';
import { oauthForInstance, revokeToken } from './oauth.js';
import { openSecret } from './sealed-secret.js';
import type { DisconnectResult, ServiceCore } from './service-types.js';
import { fail } from '../../contracts/errors.js';

export async function disconnectConnection(
  core: ServiceCore,
  userId: string,
  manifest: PluginManifest,
): Promise<DisconnectResult> {
  const { store, logger } = core;
  // Deleted first, at the version read: a reconnect meanwhile (it keeps the row id, bumps the
  // version) is then read again instead of deleted unseen, and the tokens revoked below are
  // exactly the ones deleted, never those of a connection made after the read.
  let row: ConnectionRow | undefined;
  for (let attempt = 1; ; attempt++) {
    row = await store.byUser(userId, manifest.name);
    if (!row) return { removed: false, revocation: 'unsupported' };
    if (await store.removeIf(row.id, row.version)) break;
    if (attempt >= 5)
      throw fail('GW_ERR_CONNECTION_CONFLICT', {
        message: `the ${manifest.displayName} connection kept changing while it was being removed; try again`,
      });
  }
  core.emit({ id: row.id, userId, integration: manifest.name, status: 'disconnected' });
  const unsupported: DisconnectResult = { removed: true, revocation: 'unsupported' };
  if (manifest.auth.type !== 'oauth2') return unsupported;
  const instance = row.instance_url ?? undefined;
  const endpoints = oauthForInstance(manifest.auth, instance);
  const client = endpoints?.revocationUrl ? core.clientFor(manifest.name, instance) : undefined;
  if (!endpoints || !client) return unsupported;
  let revocation: DisconnectResult['revocation'];
  try {
    const secret = openSecret(core.vault, row.id, row.secret, manifest.name, logger);
    // only where the credential was sealed for (a row changed outside the gateway names another)
    if (secret.personal || (secret.instance ?? undefined) !== instance) return unsupported;
    // Revoking the refresh token ends the whole grant at most providers; the access token is revoked too.
    if (secret.refreshToken) await revokeToken(endpoints, client, secret.refreshToken, 'refresh_token', core.http);
    if (secret.values['token']) await revokeToken(endpoints, client, secret.values['token'], 'access_token', core.http);
    revocation = 'revoked';
  } catch (err) {
    revocation = 'failed';
    logger.warn(
      { connectionId: row.id, integration: row.integration, error: (err as Error).message },
      'revocation at the provider failed; the connection is removed anyway',
    );
  }
  return { removed: true, revocation };
}
