/**
 * @module host/portal/login-links
 * One-time sign-in links (`workbench login-link --email E`): 256 random bits, stored hashed, valid
 * for 15 minutes, consumed atomically on first use. Opening the link shows a confirmation button,
 * so a mail scanner or chat unfurler that fetches it does not burn it.
 */
import type { Db } from '../storage/db.js';
import { hashSecret } from '../storage/users.js';
import { randomId } from './sessions.js';

export const LOGIN_LINK_TTL_MS = 15 * 60_000;

/** Creates a link for `userId` and returns its URL (`<publicUrl>/login/link/<token>`). */
export async function createLoginLink(
  db: Db,
  userId: string,
  publicUrl: string,
  ttlMs = LOGIN_LINK_TTL_MS,
): Promise<string> {
  const token = randomId();
  const now = Date.now();
  await db.run(
    'INSERT INTO login_links (token_hash, user_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, NULL)',
    [hashSecret(token), userId, now, now + ttlMs],
  );
  return `${publicUrl.replace(/\/+$/, '')}/login/link/${token}`;
}

const TOKEN = /^[A-Za-z0-9_-]{20,100}$/;

/** The user a still-valid, unused link belongs to (nothing is changed). */
export async function peekLoginLink(db: Db, token: string, now = Date.now()): Promise<string | undefined> {
  if (!TOKEN.test(token)) return undefined;
  const r = await db.get<{ user_id: string }>(
    'SELECT user_id FROM login_links WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?',
    [hashSecret(token), now],
  );
  return r?.user_id;
}

/** Consumes a link; resolves its user id, or undefined when it is unknown, used or expired. */
export async function consumeLoginLink(db: Db, token: string, now = Date.now()): Promise<string | undefined> {
  const userId = await peekLoginLink(db, token, now);
  if (!userId) return undefined;
  const { changes } = await db.run(
    'UPDATE login_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?',
    [now, hashSecret(token), now],
  );
  return changes > 0 ? userId : undefined;
}

/** Deletes links that expired more than a day ago. */
export async function sweepLoginLinks(db: Db, now = Date.now()): Promise<number> {
  return (await db.run('DELETE FROM login_links WHERE expires_at < ?', [now - 86_400_000])).changes;
}
