/**
 * @module host/portal/sessions
 * Portal sign-in sessions: a random 256-bit id in an httpOnly cookie, stored only as its SHA-256
 * hash, with a per-session CSRF token, a fixed lifetime and server-side revocation (sign out, sign
 * out everywhere). Unlike the seed's 24 h bearer JWT in localStorage, a revoked session is dead at
 * once and script on the page can never read it.
 *
 * A session signed in with an API key records the key's id and lives only as long as the key: a
 * leaked key must not leave its holder a portal session that outlives the revocation (and could
 * mint a new key). The key is checked when the session is resolved, on every request, rather than
 * by ending sessions when a key is revoked: so it holds however the key was revoked (the portal,
 * UserStore.revokeApiKey from an embedder or script, an operator's SQL, a replica still running an
 * older release), costs one primary-key lookup, and needs no second write to stay consistent.
 * Login-link and single sign-on sessions have no key. Each session records how it was signed in
 * (`method`), for the keys it makes (their origin) and for whoever reads the table.
 *
 * One user has at most MAX_LIVE_SESSIONS live sessions: a sign-in past it ends the oldest.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../storage/db.js';
import { hashSecret, lockUserRow } from '../storage/users.js';

/** How a portal session was signed in. */
export type SignInMethod = 'api-key' | 'login-link' | 'sso';

export interface PortalSession {
  idHash: string;
  userId: string;
  /** the API key the session was signed in with; null for a login-link or single sign-on session */
  keyId: string | null;
  /** how it was signed in (for a session opened before this was recorded: by its key, else a link) */
  method: SignInMethod;
  csrf: string;
  expiresAt: number;
}

/** A session that is still valid at `?` (the time): not revoked, not expired, and its key (if any) not revoked. */
const LIVE = `s.revoked_at IS NULL AND s.expires_at > ?
  AND (s.key_id IS NULL OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.key_id AND k.revoked_at IS NULL))`;

export const SESSION_TTL_MS = 12 * 3_600_000;

/**
 * The most portal sessions one user may have live at once. Every sign-in makes one (a row, and a
 * line in the count on the keys page), and a script with a valid key could sign in without end;
 * a sign-in past this ends the user's oldest live sessions (their rows are deleted, with any
 * notice waiting for them), so the newest sessions, the new one among them, stay.
 */
export const MAX_LIVE_SESSIONS = 20;

export function randomId(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Constant-time comparison of two tokens (false for different lengths). */
export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (typeof a !== 'string' || typeof b !== 'string' || a.length === 0) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The stored method, or what a session from before it was recorded was opened with. */
function methodOf(stored: string | null, keyId: string | null): SignInMethod {
  if (stored === 'api-key' || stored === 'login-link' || stored === 'sso') return stored;
  return keyId === null ? 'login-link' : 'api-key';
}

export class PortalSessions {
  readonly #db: Db;
  readonly #now: () => number;
  readonly ttlMs: number;
  constructor(db: Db, now: () => number = Date.now, ttlMs = SESSION_TTL_MS) {
    this.#db = db;
    this.#now = now;
    this.ttlMs = ttlMs;
  }

  /**
   * Starts a session; the returned id goes into the cookie and is never stored. `keyId` is the API
   * key that signed in (the session ends with it), null for a login link or single sign-on; `method`
   * says which (by default: 'api-key' with a key, else 'login-link'). The user's oldest live
   * sessions beyond MAX_LIVE_SESSIONS (the new one counted) end, in the same transaction under the
   * user's row lock, so sign-ins at once (or on two replicas) cannot leave more live. `ended` says
   * how many.
   */
  async create(
    userId: string,
    keyId: string | null = null,
    method: SignInMethod = keyId === null ? 'login-link' : 'api-key',
  ): Promise<{ id: string; session: PortalSession; ended: number }> {
    const id = randomId();
    return this.#db.transaction(async (tx) => {
      await lockUserRow(tx, userId);
      const now = this.#now();
      const session: PortalSession = {
        idHash: hashSecret(id),
        userId,
        keyId,
        method,
        csrf: randomId(),
        expiresAt: now + this.ttlMs,
      };
      await tx.run(
        'INSERT INTO portal_sessions (id_hash, user_id, key_id, csrf, created_at, expires_at, revoked_at, sign_in_method) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)',
        [session.idHash, userId, keyId, session.csrf, now, session.expiresAt, method],
      );
      // newest first; the new session is kept whatever its place among sessions of the same millisecond
      const others = await tx.all<{ id_hash: string }>(
        `SELECT s.id_hash FROM portal_sessions s WHERE s.user_id = ? AND s.id_hash <> ? AND ${LIVE} ORDER BY s.created_at DESC, s.id_hash`,
        [userId, session.idHash, now],
      );
      const over = others.slice(MAX_LIVE_SESSIONS - 1).map((r) => r.id_hash);
      // a few at most once the cap holds; more only for sessions opened before it (in chunks, far
      // below either database's parameter limit)
      for (let i = 0; i < over.length; i += 500) {
        const chunk = over.slice(i, i + 500);
        await tx.run(`DELETE FROM portal_sessions WHERE id_hash IN (${chunk.map(() => '?').join(', ')})`, chunk);
      }
      return { id, session, ended: over.length };
    });
  }

  /** The session behind a cookie value, or undefined when it is unknown, revoked, expired, or its API key was revoked. */
  async resolve(id: string | undefined): Promise<PortalSession | undefined> {
    if (!id || !/^[A-Za-z0-9_-]{20,100}$/.test(id)) return undefined;
    const r = await this.#db.get<{
      id_hash: string;
      user_id: string;
      key_id: string | null;
      csrf: string;
      expires_at: number;
      sign_in_method: string | null;
    }>(
      `SELECT s.id_hash, s.user_id, s.key_id, s.csrf, s.expires_at, s.sign_in_method FROM portal_sessions s WHERE s.id_hash = ? AND ${LIVE}`,
      [hashSecret(id), this.#now()],
    );
    return (
      r && {
        idHash: r.id_hash,
        userId: r.user_id,
        keyId: r.key_id,
        method: methodOf(r.sign_in_method, r.key_id),
        csrf: r.csrf,
        expiresAt: Number(r.expires_at),
      }
    );
  }

  async revoke(idHash: string): Promise<void> {
    await this.#db.run('UPDATE portal_sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL', [
      this.#now(),
      idHash,
    ]);
  }

  /** Ends every session of a user (optionally keeping one); resolves how many were ended. */
  async revokeAll(userId: string, keepIdHash?: string): Promise<number> {
    const { changes } = await this.#db.run(
      'UPDATE portal_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND id_hash <> ?',
      [this.#now(), userId, keepIdHash ?? ''],
    );
    return changes;
  }

  async countActive(userId: string): Promise<number> {
    const r = await this.#db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM portal_sessions s WHERE s.user_id = ? AND ${LIVE}`,
      [userId, this.#now()],
    );
    return Number(r?.n ?? 0);
  }

  /** Deletes sessions that expired or were revoked more than a day ago. */
  async sweep(): Promise<number> {
    const cutoff = this.#now() - 86_400_000;
    const { changes } = await this.#db.run(
      'DELETE FROM portal_sessions WHERE expires_at < ? OR (revoked_at IS NOT NULL AND revoked_at < ?)',
      [cutoff, cutoff],
    );
    return changes;
  }
}
