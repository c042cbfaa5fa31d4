/**
 * @module host/storage/users
 * Users, their tenant, and caller API keys. A key is random (256 bits), shown once, and stored only
 * as its SHA-256 hash (invariant 7); the first characters are kept as a prefix for display.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from './db.js';

export interface User {
  id: string;
  email: string;
  tenant: string;
  createdAt: number;
}

export interface ApiKeyInfo {
  id: string;
  prefix: string;
  label: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

const EMAIL = /^[^\s@<>"']{1,64}@[^\s@<>"']{1,255}$/;
const TENANT = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const API_KEY_PREFIX = 'wb_';

/**
 * The most API keys one user may hold unrevoked. Each key is a row and a line of the portal's keys
 * page, and a signed-in session (or a script posting the form) could otherwise mint them without
 * bound (300 in a loop made a 117 KB page); 50 is far more than the agents and machines of one
 * person need. Past it, a new key is refused until one is revoked.
 */
export const MAX_LIVE_API_KEYS = 50;

/** A new API key refused because the user already holds MAX_LIVE_API_KEYS unrevoked ones. */
export class ApiKeyLimitError extends Error {
  readonly code = 'API_KEY_LIMIT';
  readonly limit: number;
  constructor(limit: number) {
    super(`this account already has ${limit} active API keys, the most it may have: revoke one it no longer uses, then create the new one`);
    this.name = 'ApiKeyLimitError';
    this.limit = limit;
  }
}

export function isApiKeyLimitError(err: unknown): err is ApiKeyLimitError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ApiKeyLimitError';
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function validateEmail(email: string): string | undefined {
  return EMAIL.test(email) ? undefined : 'email must look like name@example.com';
}

export function validateTenant(tenant: string): string | undefined {
  return TENANT.test(tenant) ? undefined : 'tenant must be 1-63 characters: a-z, 0-9, "-" and "_", starting with a letter or digit';
}

interface UserRow {
  id: string;
  email: string;
  tenant: string;
  created_at: number;
}

const toUser = (r: UserRow): User => ({ id: r.id, email: r.email, tenant: r.tenant, createdAt: Number(r.created_at) });

/**
 * Serialises one user's count-then-insert limits (connect links, API keys, portal sessions) until
 * the transaction `tx` ends: two requests for the same user, on one server or on two replicas,
 * must not both count below a limit and both insert. On PostgreSQL a READ COMMITTED transaction
 * does not see another's uncommitted rows, so each would count without the other's row; the
 * user's row is locked instead, and the count that follows the lock sees what the holder
 * committed. FOR NO KEY UPDATE, not FOR UPDATE: the foreign-key checks of inserts that reference
 * the user (FOR KEY SHARE) go on unhindered. On SQLite the transaction (BEGIN IMMEDIATE, one writer
 * on the file) already excludes every other writer, in this process and in others.
 */
export async function lockUserRow(tx: Db, userId: string): Promise<void> {
  if (tx.kind === 'postgres') await tx.get('SELECT id FROM users WHERE id = ? FOR NO KEY UPDATE', [userId]);
}

export class UserStore {
  readonly #db: Db;
  /** keys this process revoked (a handful of ids): refused at once, without a database read */
  readonly #revokedHere = new Set<string>();
  constructor(db: Db) {
    this.#db = db;
  }

  async count(): Promise<number> {
    const row = await this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM users');
    return Number(row?.n ?? 0);
  }

  async create(email: string, tenant: string): Promise<User> {
    const user: User = { id: randomUUID(), email: email.toLowerCase(), tenant, createdAt: Date.now() };
    await this.#db.run('INSERT INTO users (id, email, tenant, created_at) VALUES (?, ?, ?, ?)', [user.id, user.email, user.tenant, user.createdAt]);
    return user;
  }

  /** Creates a user and an API key for it in one transaction: both, or neither. */
  async createWithApiKey(email: string, tenant: string, label = ''): Promise<{ user: User; key: string; info: ApiKeyInfo }> {
    return this.#db.transaction(async (tx) => {
      const store = new UserStore(tx);
      const user = await store.create(email, tenant);
      return { user, ...(await store.createApiKey(user.id, label)) };
    });
  }

  async byEmail(email: string): Promise<User | undefined> {
    const r = await this.#db.get<UserRow>('SELECT * FROM users WHERE email = ?', [email.toLowerCase()]);
    return r && toUser(r);
  }

  async byId(id: string): Promise<User | undefined> {
    const r = await this.#db.get<UserRow>('SELECT * FROM users WHERE id = ?', [id]);
    return r && toUser(r);
  }

  /**
   * Creates a key and returns it in clear: the only time it is ever available. Throws
   * ApiKeyLimitError when the user already holds MAX_LIVE_API_KEYS unrevoked keys; the count and the
   * insert are one transaction under the user's row lock, so keys created at once (two tabs, two
   * replicas) cannot pass the limit together.
   */
  async createApiKey(userId: string, label = ''): Promise<{ key: string; info: ApiKeyInfo }> {
    return this.#db.transaction(async (tx) => {
      await lockUserRow(tx, userId);
      const live = await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ? AND revoked_at IS NULL', [userId]);
      if (Number(live?.n ?? 0) >= MAX_LIVE_API_KEYS) throw new ApiKeyLimitError(MAX_LIVE_API_KEYS);
      const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
      const info: ApiKeyInfo = { id: randomUUID(), prefix: key.slice(0, 10), label, createdAt: Date.now(), lastUsedAt: null, revokedAt: null };
      await tx.run('INSERT INTO api_keys (id, user_id, hash, prefix, label, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
        info.id,
        userId,
        hashSecret(key),
        info.prefix,
        label,
        info.createdAt,
      ]);
      return { key, info };
    });
  }

  /** Resolves a presented key to its user, or undefined for unknown and revoked keys. */
  async authenticate(key: string): Promise<User | undefined> {
    return (await this.authenticateKey(key))?.user;
  }

  /**
   * Like authenticate, and also says which key it was: a portal session signed in with a key
   * records it, so that revoking the key ends the session too.
   */
  async authenticateKey(key: string): Promise<{ user: User; keyId: string } | undefined> {
    if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return undefined;
    const r = await this.#db.get<UserRow & { key_id: string; last_used_at: number | null }>(
      `SELECT u.*, k.id AS key_id, k.last_used_at FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.hash = ? AND k.revoked_at IS NULL`,
      [hashSecret(key)],
    );
    if (!r) return undefined;
    const now = Date.now();
    // last_used_at is informational: write it at most once a minute per key, and never let a
    // failed write (database locked, read-only or full) refuse an otherwise valid key.
    if (r.last_used_at === null || now - Number(r.last_used_at) > 60_000)
      await this.#db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [now, r.key_id]).catch(() => undefined);
    return { user: toUser(r), keyId: r.key_id };
  }

  async listApiKeys(userId: string): Promise<ApiKeyInfo[]> {
    const rows = await this.#db.all<{ id: string; prefix: string; label: string; created_at: number; last_used_at: number | null; revoked_at: number | null }>(
      'SELECT id, prefix, label, created_at, last_used_at, revoked_at FROM api_keys WHERE user_id = ? ORDER BY created_at',
      [userId],
    );
    return rows.map((r) => ({
      id: r.id,
      prefix: r.prefix,
      label: r.label,
      createdAt: Number(r.created_at),
      lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
      revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    }));
  }

  /**
   * Revokes a key: agents presenting it are refused, and portal sessions signed in with it are no
   * longer valid (PortalSessions.resolve checks the key on every request, whoever revoked it).
   */
  async revokeApiKey(userId: string, keyId: string): Promise<boolean> {
    const { changes } = await this.#db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL', [Date.now(), keyId, userId]);
    if (changes > 0) this.#revokedHere.add(keyId);
    return changes > 0;
  }

  /**
   * Whether a key is still valid (not revoked). A key revoked through this store is known at once;
   * one revoked elsewhere (another replica, the CLI) is read from the database.
   */
  async keyIsLive(keyId: string): Promise<boolean> {
    if (this.#revokedHere.has(keyId)) return false;
    return (await this.#db.get<{ one: number }>('SELECT 1 AS one FROM api_keys WHERE id = ? AND revoked_at IS NULL', [keyId])) !== undefined;
  }

  /** Whether this store revoked the key (no database read: for checks on a hot path). */
  revokedHere(keyId: string): boolean {
    return this.#revokedHere.has(keyId);
  }
}
