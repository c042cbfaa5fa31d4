/**
 * @module host/storage/users
 * Users, their tenant, and caller API keys. A key is random (256 bits), shown once, and stored only
 * as its SHA-256 hash (invariant 7); the first characters are kept as a prefix for display.
 *
 * Each key records what made it (ApiKeyOrigin): a portal session signed in with another key, a
 * portal session opened with a sign-in link, or an operator. Revoking a key revokes, in the same
 * transaction, every key made in a portal session signed in with it, and the keys made with those,
 * down the chain: someone holding a leaked key can sign in to the portal and mint keys, and
 * revoking the leaked key must evict them, not leave them the keys they minted. A key made while
 * its parent is being revoked cannot slip through: the mint checks the parent under the same user
 * row lock the revocation takes.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from './db.js';
import { WorkbenchError, messageOf } from '../../contracts/errors.js';

export interface User {
  id: string;
  email: string;
  tenant: string;
  createdAt: number;
}

/**
 * What made an API key: a portal session signed in with the key `keyId` (revoking that key revokes
 * this one), a portal session opened with a one-time sign-in link or with single sign-on, or an
 * operator (`workbench users create`, the first start, an embedder or script calling createApiKey).
 */
export type ApiKeyOrigin = { via: 'key'; keyId: string } | { via: 'link' } | { via: 'sso' } | { via: 'operator' };

export interface ApiKeyInfo {
  id: string;
  prefix: string;
  label: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** what made it (ApiKeyOrigin's `via`); null for a key made before its origin was recorded (migration 13) */
  createdVia: ApiKeyOrigin['via'] | null;
  /** the key whose portal session made it, when createdVia is 'key' */
  createdWithKeyId: string | null;
}

/** A revocation: the key, and the keys made with it (at any depth) that were live and are now revoked with it. */
export interface RevokedKeys {
  keyId: string;
  alsoRevoked: string[];
}

/** Where a revocation is reported (the gateway's logger): ids and counts, never a key. */
export interface KeyRevocationLog {
  info(obj: object, msg?: string): void;
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
export class ApiKeyLimitError extends WorkbenchError<'API_KEY_LIMIT'> {
  readonly limit: number;
  constructor(limit: number) {
    super('API_KEY_LIMIT', messageOf('API_KEY_LIMIT', { limit }));
    this.name = 'ApiKeyLimitError';
    this.limit = limit;
  }
}

export function isApiKeyLimitError(err: unknown): err is ApiKeyLimitError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ApiKeyLimitError';
}

/**
 * A new API key refused because the key it was to be made with (the portal session's) is revoked
 * or is not the user's: the session ended, perhaps while this request ran, and a key made with it
 * would outlive the revocation meant to end it.
 */
export class ApiKeyOriginRevokedError extends WorkbenchError<'API_KEY_ORIGIN_REVOKED'> {
  readonly keyId: string;
  constructor(keyId: string) {
    super('API_KEY_ORIGIN_REVOKED', messageOf('API_KEY_ORIGIN_REVOKED', { keyId }));
    this.name = 'ApiKeyOriginRevokedError';
    this.keyId = keyId;
  }
}

export function isApiKeyOriginRevokedError(err: unknown): err is ApiKeyOriginRevokedError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ApiKeyOriginRevokedError';
}

/**
 * Every key made with the key `?` (the first parameter; the user's id the second and third), at any
 * depth: the keys made in portal sessions signed in with it, then those made with them, and so on.
 * Revoked keys are walked through (a key revoked on its own, by hand or by a replica of an earlier
 * release, still leads to the keys made with it). UNION, not UNION ALL: a cycle, which the mint
 * cannot make, would end the walk rather than loop.
 */
const CHAIN = `WITH RECURSIVE chain(id) AS (
    SELECT id FROM api_keys WHERE created_with_key_id = ? AND user_id = ?
    UNION
    SELECT k.id FROM api_keys k JOIN chain c ON k.created_with_key_id = c.id WHERE k.user_id = ?)`;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function validateEmail(email: string): string | undefined {
  return EMAIL.test(email) ? undefined : 'email must look like name@example.com';
}

export function validateTenant(tenant: string): string | undefined {
  return TENANT.test(tenant)
    ? undefined
    : 'tenant must be 1-63 characters: a-z, 0-9, "-" and "_", starting with a letter or digit';
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
  readonly #log: KeyRevocationLog | undefined;
  /** `log`: where revocations are reported (which key, and which keys were revoked with it) */
  constructor(db: Db, options: { log?: KeyRevocationLog } = {}) {
    this.#db = db;
    this.#log = options.log;
  }

  async count(): Promise<number> {
    const row = await this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM users');
    return Number(row?.n ?? 0);
  }

  async create(email: string, tenant: string): Promise<User> {
    const user: User = { id: randomUUID(), email: email.toLowerCase(), tenant, createdAt: Date.now() };
    await this.#db.run('INSERT INTO users (id, email, tenant, created_at) VALUES (?, ?, ?, ?)', [
      user.id,
      user.email,
      user.tenant,
      user.createdAt,
    ]);
    return user;
  }

  /** Creates a user and an API key for it in one transaction: both, or neither. */
  async createWithApiKey(
    email: string,
    tenant: string,
    label = '',
  ): Promise<{ user: User; key: string; info: ApiKeyInfo }> {
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
   * Creates a key and returns it in clear: the only time it is ever available. `origin` says what
   * made it (an operator by default; the portal passes its session's key, or 'link'). Throws
   * ApiKeyLimitError when the user already holds MAX_LIVE_API_KEYS unrevoked keys, and
   * ApiKeyOriginRevokedError when the origin key is revoked (or not the user's). Both checks and the
   * insert are one transaction under the user's row lock, which revokeApiKey takes too: keys created
   * at once (two tabs, two replicas) cannot pass the limit together, and a key made while its
   * parent is being revoked is either refused here or revoked with the parent, never left live.
   */
  async createApiKey(
    userId: string,
    label = '',
    origin: ApiKeyOrigin = { via: 'operator' },
  ): Promise<{ key: string; info: ApiKeyInfo }> {
    return this.#db.transaction(async (tx) => {
      await lockUserRow(tx, userId);
      // read after the lock: a revocation that held it has committed, and is seen
      if (
        origin.via === 'key' &&
        !(await tx.get('SELECT id FROM api_keys WHERE id = ? AND user_id = ? AND revoked_at IS NULL', [
          origin.keyId,
          userId,
        ]))
      )
        throw new ApiKeyOriginRevokedError(origin.keyId);
      const live = await tx.get<{ n: number }>(
        'SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ? AND revoked_at IS NULL',
        [userId],
      );
      if (Number(live?.n ?? 0) >= MAX_LIVE_API_KEYS) throw new ApiKeyLimitError(MAX_LIVE_API_KEYS);
      const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
      const info: ApiKeyInfo = {
        id: randomUUID(),
        prefix: key.slice(0, 10),
        label,
        createdAt: Date.now(),
        lastUsedAt: null,
        revokedAt: null,
        createdVia: origin.via,
        createdWithKeyId: origin.via === 'key' ? origin.keyId : null,
      };
      await tx.run(
        'INSERT INTO api_keys (id, user_id, hash, prefix, label, created_at, created_via, created_with_key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [info.id, userId, hashSecret(key), info.prefix, label, info.createdAt, info.createdVia, info.createdWithKeyId],
      );
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
  /**
   * The key whose secret is `key` (found by its hash), active or revoked, with its user's id: for an
   * operator revoking a leaked key from the CLI. Unlike authenticateKey it records no use.
   */
  async keyBySecret(key: string): Promise<{ userId: string; keyId: string; revokedAt: number | null } | undefined> {
    if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return undefined;
    const r = await this.#db.get<{ user_id: string; id: string; revoked_at: number | null }>(
      'SELECT user_id, id, revoked_at FROM api_keys WHERE hash = ?',
      [hashSecret(key)],
    );
    return r ? { userId: r.user_id, keyId: r.id, revokedAt: r.revoked_at } : undefined;
  }

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
    const rows = await this.#db.all<{
      id: string;
      prefix: string;
      label: string;
      created_at: number;
      last_used_at: number | null;
      revoked_at: number | null;
      created_via: string | null;
      created_with_key_id: string | null;
    }>(
      'SELECT id, prefix, label, created_at, last_used_at, revoked_at, created_via, created_with_key_id FROM api_keys WHERE user_id = ? ORDER BY created_at',
      [userId],
    );
    return rows.map((r) => ({
      id: r.id,
      prefix: r.prefix,
      label: r.label,
      createdAt: Number(r.created_at),
      lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
      revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
      createdVia:
        r.created_via === 'key' || r.created_via === 'link' || r.created_via === 'sso' || r.created_via === 'operator'
          ? r.created_via
          : null,
      createdWithKeyId: r.created_with_key_id,
    }));
  }

  /**
   * Revokes a key: agents presenting it are refused, and portal sessions signed in with it are no
   * longer valid (PortalSessions.resolve checks the key on every request, whoever revoked it).
   * Every key made with it, at any depth, is revoked with it (revokeApiKeyChain). False when the
   * user has no such live key.
   */
  async revokeApiKey(userId: string, keyId: string): Promise<boolean> {
    return (await this.revokeApiKeyChain(userId, keyId)) !== undefined;
  }

  /**
   * Revokes a key and every live key made with it: in portal sessions signed in with it, then in
   * sessions signed in with those, down the chain (their portal sessions end with them). One
   * transaction under the user's row lock, as createApiKey takes: all of them or none, and a key
   * being made with one of them meanwhile is either in the chain or refused. Undefined when the user
   * has no such live key (nothing is done). Reported to the log given to the store. Not to be called
   * on a store over an outer transaction: this process's record of revoked keys and the log line
   * would be written before that transaction commits (or rolls back).
   */
  async revokeApiKeyChain(userId: string, keyId: string): Promise<RevokedKeys | undefined> {
    const done = await this.#db.transaction(async (tx): Promise<RevokedKeys | undefined> => {
      await lockUserRow(tx, userId);
      const now = Date.now();
      const { changes } = await tx.run(
        'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL',
        [now, keyId, userId],
      );
      if (changes === 0) return undefined;
      const live = await tx.all<{ id: string }>(
        `${CHAIN} SELECT k.id FROM api_keys k JOIN chain c ON c.id = k.id WHERE k.revoked_at IS NULL ORDER BY k.created_at, k.id`,
        [keyId, userId, userId],
      );
      const alsoRevoked = live.map((r) => r.id);
      // at most MAX_LIVE_API_KEYS live; in chunks all the same, far below either database's parameter limit
      for (let i = 0; i < alsoRevoked.length; i += 500) {
        const chunk = alsoRevoked.slice(i, i + 500);
        await tx.run(
          `UPDATE api_keys SET revoked_at = ? WHERE revoked_at IS NULL AND id IN (${chunk.map(() => '?').join(', ')})`,
          [now, ...chunk],
        );
      }
      return { keyId, alsoRevoked };
    });
    if (!done) return undefined;
    for (const id of [done.keyId, ...done.alsoRevoked]) this.#revokedHere.add(id);
    this.#log?.info(
      { userId, keyId, alsoRevoked: done.alsoRevoked, alsoRevokedCount: done.alsoRevoked.length },
      done.alsoRevoked.length === 0
        ? 'API key revoked'
        : `API key revoked, with the ${done.alsoRevoked.length} key(s) made with it`,
    );
    return done;
  }

  /**
   * Whether a key is still valid (not revoked). A key revoked through this store is known at once;
   * one revoked elsewhere (another replica, the CLI) is read from the database.
   */
  async keyIsLive(keyId: string): Promise<boolean> {
    if (this.#revokedHere.has(keyId)) return false;
    return (
      (await this.#db.get<{ one: number }>('SELECT 1 AS one FROM api_keys WHERE id = ? AND revoked_at IS NULL', [
        keyId,
      ])) !== undefined
    );
  }

  /** Whether this store revoked the key (no database read: for checks on a hot path). */
  revokedHere(keyId: string): boolean {
    return this.#revokedHere.has(keyId);
  }
}
