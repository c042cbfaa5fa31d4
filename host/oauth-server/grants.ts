/**
 * @module host/oauth-server/grants
 * Grants as they are used and ended: an access token checked on every request to /mcp (in the
 * database, so a revocation anywhere is seen by the next request), token revocation (RFC 7009),
 * the person's list of grants and its Revoke button, and the sweep of what has ended. A grant is
 * live while it is not revoked, not expired, and the API key its consent was given with (if any) is
 * not revoked (GRANT_LIVE). How grants and tokens are made is host/oauth-server/token-store.ts.
 */
import type { Db } from '../storage/db.js';
import type { User } from '../storage/users.js';
import { ACCESS_TOKEN_PREFIX, hashOf } from './secrets.js';

/** A live grant, for the portal. */
export interface GrantInfo {
  id: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  scope: string;
  createdAt: number;
  lastUsedAt: number | null;
  expiresAt: number;
}

export interface AccessCheck {
  user: User;
  grantId: string;
  tokenHash: string;
}

/** A grant is usable while this holds (`?` is the time): not revoked, not expired, and its API key (if any) live. */
export const GRANT_LIVE = `g.revoked_at IS NULL AND g.expires_at > ?
  AND (g.key_id IS NULL OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = g.key_id AND k.revoked_at IS NULL))`;

/** Ends a grant (its tokens are refused with it): `reason` is kept for whoever reads the table. */
export async function revokeGrantIn(tx: Db, grantId: string, reason: string, now: number): Promise<void> {
  await tx.run('UPDATE oauth_grants SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL', [
    now,
    reason,
    grantId,
  ]);
}

export class Grants {
  readonly #db: Db;
  readonly #now: () => number;

  constructor(db: Db, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /** The user of a live access token issued for `audience`, or undefined (unknown, expired, revoked, another audience). */
  async verifyAccess(token: string, audience: string): Promise<AccessCheck | undefined> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX) || token.length > 200) return undefined;
    const now = this.#now();
    const tokenHash = hashOf(token);
    const r = await this.#db.get<{
      id: string;
      email: string;
      tenant: string;
      created_at: number;
      grant_id: string;
      last_used_at: number | null;
    }>(
      `SELECT u.id, u.email, u.tenant, u.created_at, g.id AS grant_id, g.last_used_at
         FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN users u ON u.id = g.user_id
        WHERE t.token_hash = ? AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > ? AND g.resource = ?
          AND ${GRANT_LIVE}`,
      [tokenHash, now, audience, now],
    );
    if (!r) return undefined;
    // informational: written at most once a minute per grant, and a failed write refuses nothing
    if (r.last_used_at === null || now - Number(r.last_used_at) > 60_000)
      await this.#db
        .run('UPDATE oauth_grants SET last_used_at = ? WHERE id = ?', [now, r.grant_id])
        .catch(() => undefined);
    return {
      user: { id: r.id, email: r.email, tenant: r.tenant, createdAt: Number(r.created_at) },
      grantId: r.grant_id,
      tokenHash,
    };
  }

  /** Whether an access token (by hash) is still live for `audience`: asked again while a request runs. */
  async accessLive(tokenHash: string, audience: string): Promise<boolean> {
    const now = this.#now();
    const r = await this.#db.get(
      `SELECT t.token_hash FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
        WHERE t.token_hash = ? AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > ? AND g.resource = ?
          AND ${GRANT_LIVE}`,
      [tokenHash, now, audience, now],
    );
    return r !== undefined;
  }

  /**
   * Token revocation (RFC 7009 §2.1): a refresh token revokes its whole grant, an access token
   * itself. A token that is unknown, or was issued to another client, revokes nothing and is not
   * told apart (the endpoint answers 200 either way).
   */
  async revoke(token: string, clientId: string): Promise<void> {
    const hash = hashOf(token);
    const row = await this.#db.get<{ kind: string; grant_id: string; client_id: string }>(
      `SELECT t.kind, t.grant_id, g.client_id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
        WHERE t.token_hash = ?`,
      [hash],
    );
    if (!row || row.client_id !== clientId) return;
    const now = this.#now();
    if (row.kind === 'refresh') await revokeGrantIn(this.#db, row.grant_id, 'client-revoked', now);
    else
      await this.#db.run('UPDATE oauth_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL', [
        now,
        hash,
      ]);
  }

  /** The user's live grants, oldest first. */
  async listGrants(userId: string): Promise<GrantInfo[]> {
    const rows = await this.#db.all<{
      id: string;
      client_id: string;
      client_name: string;
      redirect_uri: string;
      scope: string;
      created_at: number;
      last_used_at: number | null;
      expires_at: number;
    }>(
      `SELECT g.id, g.client_id, g.client_name, g.redirect_uri, g.scope, g.created_at, g.last_used_at, g.expires_at
         FROM oauth_grants g WHERE g.user_id = ? AND ${GRANT_LIVE} ORDER BY g.created_at, g.id`,
      [userId, this.#now()],
    );
    return rows.map((r) => ({
      id: r.id,
      clientId: r.client_id,
      clientName: r.client_name,
      redirectUri: r.redirect_uri,
      scope: r.scope,
      createdAt: Number(r.created_at),
      lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
      expiresAt: Number(r.expires_at),
    }));
  }

  /** Revokes one of the user's grants (the portal): false when the user has no such live grant. */
  async revokeGrant(userId: string, grantId: string): Promise<boolean> {
    const { changes } = await this.#db.run(
      "UPDATE oauth_grants SET revoked_at = ?, revoked_reason = 'user' WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
      [this.#now(), grantId, userId],
    );
    return changes === 1;
  }

  /** Deletes codes and tokens expired a day ago, and grants ended (revoked or expired) 30 days ago with their tokens. */
  async sweep(): Promise<void> {
    const now = this.#now();
    await this.#db.run('DELETE FROM oauth_codes WHERE expires_at < ?', [now - 86_400_000]);
    await this.#db.run('DELETE FROM oauth_tokens WHERE expires_at < ?', [now - 86_400_000]);
    const monthAgo = now - 30 * 86_400_000;
    await this.#db.run('DELETE FROM oauth_grants WHERE revoked_at < ? OR expires_at < ?', [monthAgo, monthAgo]);
  }
}
