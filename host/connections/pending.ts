/**
 * @module host/connections/pending
 * Pending connects (the `connect` meta-tool's links), kept in the database so any replica can serve
 * the link, the OAuth callback and `wait_for_connection`. A link is a claim, not a capability: it
 * opens only for the user who asked, only once, and only before it expires. The OAuth state is
 * stored hashed, the PKCE verifier sealed with the vault; both move the record along atomically
 * (a conditional UPDATE), so a replayed callback or a second click finds nothing to take.
 */
import { EventEmitter } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../storage/db.js';
import { lockUserRow } from '../storage/users.js';
import type { Vault } from './vault.js';

/** How the link is finished: the provider's consent (OAuth2), the API-key form, or signing in in a live browser (cookie). */
export type PendingType = 'oauth2' | 'apikey' | 'cookie';

export type PendingStatus = 'pending' | 'opened' | 'exchanging' | 'connected' | 'denied' | 'expired' | 'failed';
export const TERMINAL: ReadonlySet<PendingStatus> = new Set(['connected', 'denied', 'expired', 'failed']);

export interface PendingConnect {
  id: string;
  userId: string;
  integration: string;
  type: PendingType;
  /** the stored status; `pending`/`opened` past `expiresAt` are reported as expired (`exchanging` only EXCHANGE_GRACE_MS later) */
  status: PendingStatus;
  statusReason: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  /**
   * the instance of the provider: the one the agent's connect suggested (the link's page shows it
   * to the person, who may change it), then, once an OAuth2 link is opened, the one its round trip
   * goes to (its token endpoint and client); null for the provider's default
   */
  instanceUrl: string | null;
}

interface Row {
  id: string;
  user_id: string;
  integration: string;
  type: string;
  status: string;
  status_reason: string | null;
  code_verifier: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  instance_url?: string | null;
}

/**
 * How many connect links one user may create in a sliding window, whichever way they are made (the
 * agent's `connect` meta-tool or the portal's Connect button): each link is a database row, so
 * this bounds what one signed-in user or script can write.
 */
export const CONNECT_LINK_LIMIT = { max: 30, windowMs: 10 * 60_000 } as const;

export type CreateLimitedResult =
  | { ok: true; pending: PendingConnect }
  | {
      ok: false;
      limit: number;
      windowMs: number;
      /** when the user may create the next link */ retryAt: number;
      retryAfterSec: number;
    };

export type OpenResult =
  { ok: true; pending: PendingConnect } | { ok: false; reason: 'unknown' | 'other_user' | 'used' | 'expired' };

export type TakeResult =
  | { ok: true; pending: PendingConnect; codeVerifier: string | undefined }
  | { ok: false; reason: 'unknown' | 'other_user' | 'used' | 'expired' }
  /** the record could not be used and is now settled `failed` (see its statusReason) */
  | { ok: false; reason: 'failed'; pending: PendingConnect };

/** Why a callback failed when the link's stored PKCE verifier could not be decrypted. */
export const UNREADABLE_VERIFIER_REASON =
  "the sign-in could not be completed: the link's stored PKCE verifier cannot be decrypted (was the encryption key changed?); ask for a new link";

const hash = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * How long past its expiry an `exchanging` record (the callback took it; the code exchange and the
 * save are under way) is still reported as exchanging: far beyond any exchange (its request times
 * out after 15 s), so the replica doing it settles it; only one that died meanwhile leaves it to
 * be reported expired.
 */
export const EXCHANGE_GRACE_MS = 5 * 60_000;

async function countRecentIn(db: Db, userId: string, sinceMs: number): Promise<number> {
  const r = await db.get<{ n: number }>(
    'SELECT COUNT(*) AS n FROM pending_connects WHERE user_id = ? AND created_at > ?',
    [userId, sinceMs],
  );
  return Number(r?.n ?? 0);
}

function toPending(r: Row, now: number): PendingConnect {
  let status = r.status as PendingStatus;
  // a link whose exchange is under way is not expired by the clock: the exchange settles it
  const deadline = Number(r.expires_at) + (status === 'exchanging' ? EXCHANGE_GRACE_MS : 0);
  if (!TERMINAL.has(status) && deadline <= now) status = 'expired';
  return {
    id: r.id,
    userId: r.user_id,
    integration: r.integration,
    type: r.type === 'apikey' || r.type === 'cookie' ? r.type : 'oauth2',
    status,
    statusReason: r.status_reason,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    usedAt: r.used_at === null ? null : Number(r.used_at),
    instanceUrl: r.instance_url ?? null,
  };
}

/**
 * Whether the person is finishing this very link now: an OAuth2 link whose callback took it (the
 * code exchange and the save are under way), or an API-key link whose form was posted (the save is
 * under way). Its connection is stored a moment before the link is settled `connected`, so a
 * connection that appears meanwhile is this link's doing, not another way of connecting.
 */
export function isBeingCompleted(p: PendingConnect): boolean {
  return p.status === 'exchanging' || (p.type === 'apikey' && p.status === 'opened');
}

export interface PendingOptions {
  db: Db;
  vault: Vault;
  now: () => number;
  /** how long a link may be opened, and then how long the provider round trip may take (default 10 min) */
  ttlMs?: number;
}

/** What a new link is for. */
interface NewLink {
  userId: string;
  integration: string;
  type: PendingType;
  instanceUrl: string | null;
}

export class PendingConnects {
  readonly #db: Db;
  readonly #vault: Vault;
  readonly #now: () => number;
  readonly ttlMs: number;
  /** emits 'settled' with the pending id when this process moves a record to a terminal status */
  readonly events = new EventEmitter();

  constructor(o: PendingOptions) {
    this.#db = o.db;
    this.#vault = o.vault;
    this.#now = o.now;
    this.ttlMs = o.ttlMs ?? 10 * 60_000;
    this.events.setMaxListeners(0);
  }

  /** Creates a link for `userId`, outside any limit. The id is 256 random bits; the unused state hash is a placeholder. */
  async create(
    userId: string,
    integration: string,
    type: PendingType,
    instanceUrl: string | null = null,
  ): Promise<PendingConnect> {
    return this.#insert(this.#db, { userId, integration, type, instanceUrl }, this.#now());
  }

  /** Inserts a link through `db` (a transaction's handle, when called from one) and answers it without reading it back. */
  async #insert(db: Db, link: NewLink, now: number): Promise<PendingConnect> {
    const { userId, integration, type, instanceUrl } = link;
    const row: Row = {
      id: randomBytes(24).toString('base64url'),
      user_id: userId,
      integration,
      type,
      status: 'pending',
      status_reason: null,
      code_verifier: null,
      created_at: now,
      expires_at: now + this.ttlMs,
      used_at: null,
      instance_url: instanceUrl,
    };
    await db.run(
      `INSERT INTO pending_connects (id, user_id, integration, type, state_hash, code_verifier, status, status_reason, created_at, expires_at, used_at, instance_url)
       VALUES (?, ?, ?, ?, ?, NULL, 'pending', NULL, ?, ?, NULL, ?)`,
      [
        row.id,
        userId,
        integration,
        type,
        hash(randomBytes(32).toString('base64url')),
        row.created_at,
        row.expires_at,
        instanceUrl,
      ],
    );
    return toPending(row, now);
  }

  /**
   * Creates a link unless the user already created `max` in the last CONNECT_LINK_LIMIT.windowMs;
   * then says when the oldest of those leaves the window. Every path that mints links for a
   * user goes through here, so they share one count. The count and the insert are one transaction
   * under the user's row lock (lockUserRow): requests racing for the last places (a JSON-RPC batch
   * of `connect` calls, two replicas) are counted one after the other, never past `max`.
   */
  async createLimited(
    userId: string,
    integration: string,
    type: PendingType,
    max: number = CONNECT_LINK_LIMIT.max,
    instanceUrl: string | null = null,
  ): Promise<CreateLimitedResult> {
    const { windowMs } = CONNECT_LINK_LIMIT;
    return this.#db.transaction(async (tx): Promise<CreateLimitedResult> => {
      await lockUserRow(tx, userId);
      const now = this.#now();
      const since = now - windowMs;
      const count = await countRecentIn(tx, userId, since);
      if (count >= max) {
        // The link whose leaving the window brings the count below max (the oldest, unless the
        // limit was lowered, or links were made past it before it was enforced atomically).
        const r = await tx.get<{ created_at: number }>(
          'SELECT created_at FROM pending_connects WHERE user_id = ? AND created_at > ? ORDER BY created_at LIMIT 1 OFFSET ?',
          [userId, since, count - max],
        );
        const retryAt = Math.max(now, Number(r?.created_at ?? now) + windowMs);
        return {
          ok: false,
          limit: max,
          windowMs,
          retryAt,
          retryAfterSec: Math.max(1, Math.ceil((retryAt - now) / 1000)),
        };
      }
      return { ok: true, pending: await this.#insert(tx, { userId, integration, type, instanceUrl }, now) };
    });
  }

  async get(id: string): Promise<PendingConnect | undefined> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return undefined;
    const r = await this.#db.get<Row>('SELECT * FROM pending_connects WHERE id = ?', [id]);
    return r && toPending(r, this.#now());
  }

  /** Number of links a user created since `sinceMs` (a bound on link minting). */
  async countRecent(userId: string, sinceMs: number): Promise<number> {
    return countRecentIn(this.#db, userId, sinceMs);
  }

  /** Why a link cannot be opened by `userId`, or the pending record when it can (nothing is changed). */
  async check(id: string, userId: string): Promise<OpenResult> {
    const p = await this.get(id);
    if (!p) return { ok: false, reason: 'unknown' };
    if (p.userId !== userId) return { ok: false, reason: 'other_user' };
    if (p.status === 'expired') return { ok: false, reason: 'expired' };
    if (p.usedAt !== null || p.status !== 'pending') return { ok: false, reason: 'used' };
    return { ok: true, pending: p };
  }

  /**
   * Consumes the link for its owner (single use). For OAuth2, `state` and `codeVerifier` are the
   * values sent to the provider, and `instance` the (checked) instance the round trip goes to; the
   * callback window restarts from now.
   */
  async open(
    id: string,
    userId: string,
    oauth?: { state: string; codeVerifier: string | undefined; instance?: string | undefined },
  ): Promise<OpenResult> {
    const checked = await this.check(id, userId);
    if (!checked.ok) return checked;
    const now = this.#now();
    const verifier = oauth?.codeVerifier ? this.#vault.encrypt(oauth.codeVerifier, `pkce:${id}`) : null;
    const stateHash = oauth ? hash(oauth.state) : hash(randomBytes(32).toString('base64url'));
    const { changes } = await this.#db.run(
      `UPDATE pending_connects SET status = 'opened', used_at = ?, state_hash = ?, code_verifier = ?, expires_at = ?,
          instance_url = ? WHERE id = ? AND user_id = ? AND status = 'pending' AND used_at IS NULL AND expires_at > ?`,
      [now, stateHash, verifier, now + this.ttlMs, oauth?.instance ?? null, id, userId, now],
    );
    if (changes === 0) return { ok: false, reason: 'used' }; // lost a race with another click
    return { ok: true, pending: (await this.get(id)) as PendingConnect };
  }

  /**
   * Takes an opened OAuth2 record by its state for the callback (once: it moves to `exchanging`).
   * Resolves the record and the PKCE verifier, or a reason it cannot be taken. A verifier that
   * cannot be decrypted (the key changed, the row was damaged) settles the record `failed` (reason
   * 'failed'), so the agent's wait ends with that reason instead of the link hanging until expiry.
   */
  async takeByState(state: string, userId: string): Promise<TakeResult> {
    const r = await this.#db.get<Row>('SELECT * FROM pending_connects WHERE state_hash = ?', [hash(state)]);
    if (!r) return { ok: false, reason: 'unknown' };
    const p = toPending(r, this.#now());
    if (p.userId !== userId) return { ok: false, reason: 'other_user' };
    if (p.status === 'expired') {
      // only a link still waiting for the provider: one being exchanged is settled by its exchange
      if (r.status === 'opened' || r.status === 'pending')
        await this.settle(p.id, 'expired', 'the link expired before the provider answered', ['pending', 'opened']);
      return { ok: false, reason: 'expired' };
    }
    if (p.status !== 'opened') return { ok: false, reason: 'used' };
    // decrypted before the record moves on: a failure must not leave it `exchanging` for good
    let codeVerifier: string | undefined;
    try {
      codeVerifier = r.code_verifier ? this.#vault.decrypt(r.code_verifier, `pkce:${p.id}`) : undefined;
    } catch {
      await this.settle(p.id, 'failed', UNREADABLE_VERIFIER_REASON);
      return {
        ok: false,
        reason: 'failed',
        pending: (await this.get(p.id)) ?? { ...p, status: 'failed', statusReason: UNREADABLE_VERIFIER_REASON },
      };
    }
    const { changes } = await this.#db.run(
      `UPDATE pending_connects SET status = 'exchanging' WHERE id = ? AND status = 'opened'`,
      [p.id],
    );
    if (changes === 0) return { ok: false, reason: 'used' };
    return { ok: true, pending: { ...p, status: 'exchanging' }, codeVerifier };
  }

  /** Moves a record to a terminal status (only from one of `from`, by default any non-terminal one) and wakes local waiters. */
  async settle(
    id: string,
    status: 'connected' | 'denied' | 'expired' | 'failed',
    reason: string | null,
    from: readonly ('pending' | 'opened' | 'exchanging')[] = ['pending', 'opened', 'exchanging'],
  ): Promise<boolean> {
    const { changes } = await this.#db.run(
      `UPDATE pending_connects SET status = ?, status_reason = ?, code_verifier = NULL, used_at = COALESCE(used_at, ?)
        WHERE id = ? AND status IN (${from.map(() => '?').join(', ')})`,
      [status, reason, this.#now(), id, ...from],
    );
    this.events.emit('settled', id);
    return changes > 0;
  }

  /** Deletes records that ended (or expired) more than `olderThanMs` ago. */
  async sweep(olderThanMs = 24 * 3_600_000): Promise<number> {
    const { changes } = await this.#db.run('DELETE FROM pending_connects WHERE expires_at < ?', [
      this.#now() - olderThanMs,
    ]);
    return changes;
  }
}
