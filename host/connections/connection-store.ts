/**
 * @module host/connections/connection-store
 * The `connections` table: one row per (user, integration) holding the sealed secret, non-secret
 * config, expiry, status and a version that every secret change increments. The refresh lease
 * (migration 3) lets exactly one process at a time spend a refresh token, across replicas.
 */
import { isUniqueViolation, type Db } from '../storage/db.js';
import { fail } from '../../contracts/errors.js';

export interface ConnectionRow {
  id: string;
  user_id: string;
  integration: string;
  status: string;
  status_reason: string | null;
  secret: string;
  config: string;
  expires_at: number | null;
  scopes: string | null;
  /** the origin of the connection's own instance; null for the provider's default (migration 19) */
  instance_url: string | null;
  key_id: string;
  created_at: number;
  updated_at: number;
  /** when the connection was last made or remade (upsert only; a refresh or a status change leaves it) */
  connected_at: number;
  version: number;
  refresh_lease_owner: string | null;
  refresh_lease_until: number | null;
}

/**
 * The database's clock in epoch milliseconds, as an SQL expression. Refresh leases are judged with
 * it, so replicas whose own clocks disagree still agree on when a lease ends: PostgreSQL's clock is
 * the server's, one for every replica. SQLite has no server: its clock is the host's, and every
 * process sharing a SQLite file runs on that host.
 */
export function dbClockSql(kind: Db['kind']): string {
  return kind === 'postgres'
    ? '(extract(epoch from clock_timestamp()) * 1000)::bigint'
    : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function normalise(r: ConnectionRow | undefined): ConnectionRow | undefined {
  if (!r) return undefined;
  return {
    ...r,
    instance_url: r.instance_url ?? null,
    expires_at: num(r.expires_at),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    connected_at: num(r.connected_at) ?? Number(r.created_at),
    version: Number(r.version),
    refresh_lease_until: num(r.refresh_lease_until),
  };
}

export interface UpsertInput {
  id: string;
  userId: string;
  integration: string;
  /**
   * seals the secret for the row id; `existing` is the sealed secret a reconnect replaces and
   * `existingStatus` that row's status (both undefined for a new row)
   */
  secret: (
    connectionId: string,
    existing: string | undefined,
    existingStatus: string | undefined,
  ) => { sealed: string; keyId: string };
  /** the connection's non-secret config; undefined keeps what an existing connection has (a reconnect) */
  config: Record<string, unknown> | undefined;
  /** the instance the credential belongs to (null: the provider's default); every save names it */
  instanceUrl: string | null;
  expiresAt: number | null;
  scopes: string | null;
  now: number;
}

export class ConnectionStore {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async byUser(userId: string, integration: string): Promise<ConnectionRow | undefined> {
    return normalise(
      await this.#db.get<ConnectionRow>('SELECT * FROM connections WHERE user_id = ? AND integration = ?', [
        userId,
        integration,
      ]),
    );
  }

  async byId(id: string): Promise<ConnectionRow | undefined> {
    return normalise(await this.#db.get<ConnectionRow>('SELECT * FROM connections WHERE id = ?', [id]));
  }

  async listForUser(userId: string): Promise<ConnectionRow[]> {
    const rows = await this.#db.all<ConnectionRow>('SELECT * FROM connections WHERE user_id = ? ORDER BY integration', [
      userId,
    ]);
    return rows.map((r) => normalise(r) as ConnectionRow);
  }

  /**
   * Connected rows of `integrations` whose token expires before `until`, soonest first, leaving out
   * the ids in `skip` (rows the caller put off after failed attempts).
   */
  async expiring(
    until: number,
    limit: number,
    integrations: readonly string[],
    skip: readonly string[] = [],
  ): Promise<ConnectionRow[]> {
    if (integrations.length === 0) return [];
    const inList = (n: number): string => Array.from({ length: n }, () => '?').join(', ');
    const rows = await this.#db.all<ConnectionRow>(
      `SELECT * FROM connections WHERE status = 'connected' AND expires_at IS NOT NULL AND expires_at < ?
         AND integration IN (${inList(integrations.length)})${skip.length > 0 ? ` AND id NOT IN (${inList(skip.length)})` : ''}
       ORDER BY expires_at LIMIT ${Math.max(1, Math.floor(limit))}`,
      [until, ...integrations, ...skip],
    );
    return rows.map((r) => normalise(r) as ConnectionRow);
  }

  /**
   * Inserts or replaces the user's connection for an integration. A reconnect keeps the row id (the
   * secret is sealed with that id as AAD), resets the status, bumps the version and sets
   * connected_at (which nothing else sets: a refresh or a status change leaves it).
   */
  async upsert(input: UpsertInput): Promise<string> {
    try {
      return await this.#upsertOnce(input);
    } catch (err) {
      // Two first connects raced (another replica inserted the row first): update that row instead.
      if (isUniqueViolation(err)) return this.#upsertOnce(input);
      throw err;
    }
  }

  async #upsertOnce(input: UpsertInput): Promise<string> {
    return this.#db.transaction(async (tx) => {
      const find = (): Promise<{ id: string; secret: string; status: string } | undefined> =>
        tx.get<{ id: string; secret: string; status: string }>(
          `SELECT id, secret, status FROM connections WHERE user_id = ? AND integration = ?${tx.kind === 'postgres' ? ' FOR UPDATE' : ''}`,
          [input.userId, input.integration],
        );
      let existing = await find();
      const config = input.config === undefined ? null : JSON.stringify(input.config);
      if (!existing) {
        const { sealed, keyId } = input.secret(input.id, undefined, undefined);
        const { changes } = await tx.run(
          `INSERT INTO connections (id, user_id, integration, status, status_reason, secret, config, expires_at, scopes, instance_url, key_id, created_at, updated_at, connected_at, version)
           VALUES (?, ?, ?, 'connected', NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1) ON CONFLICT (user_id, integration) DO NOTHING`,
          [
            input.id,
            input.userId,
            input.integration,
            sealed,
            config ?? '{}',
            input.expiresAt,
            input.scopes,
            input.instanceUrl,
            keyId,
            input.now,
            input.now,
            input.now,
          ],
        );
        if (changes > 0) return input.id;
        // Another replica inserted it after our SELECT (PostgreSQL, read committed): update that row.
        existing = await find();
        if (!existing)
          throw fail('GW_ERR_CONNECTION_CONFLICT', {
            message: `connection ${input.integration} changed concurrently; try again`,
          });
      }
      const id = existing.id;
      const { sealed, keyId } = input.secret(id, existing.secret, existing.status);
      await tx.run(
        `UPDATE connections SET status = 'connected', status_reason = NULL, secret = ?, config = COALESCE(?, config), expires_at = ?, scopes = ?,
           instance_url = ?, key_id = ?, updated_at = ?, connected_at = ?, version = version + 1, refresh_lease_owner = NULL, refresh_lease_until = NULL WHERE id = ?`,
        [sealed, config, input.expiresAt, input.scopes, input.instanceUrl, keyId, input.now, input.now, id],
      );
      return id;
    });
  }

  /**
   * Sets the status if the row is still at `version` (the one the caller judged); resolves false
   * when it changed meanwhile (a reconnect or a refresh bumped it), so a verdict about an old secret
   * never lands on a new one.
   */
  async setStatusIf(
    id: string,
    version: number,
    status: 'connected' | 'needs_reauth',
    reason: string | null,
    now: number,
  ): Promise<boolean> {
    const { changes } = await this.#db.run(
      'UPDATE connections SET status = ?, status_reason = ?, updated_at = ?, refresh_lease_owner = NULL, refresh_lease_until = NULL WHERE id = ? AND version = ?',
      [status, reason, now, id, version],
    );
    return changes > 0;
  }

  async remove(id: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM connections WHERE id = ?', [id])).changes > 0;
  }

  /** Deletes the row only if it is still at `version` (the one the caller read); false when it changed or is gone. */
  async removeIf(id: string, version: number): Promise<boolean> {
    return (await this.#db.run('DELETE FROM connections WHERE id = ? AND version = ?', [id, version])).changes > 0;
  }

  /**
   * Takes the refresh lease for `leaseMs` when the row is still at `version` and nobody holds an
   * unexpired lease. Expiry is judged with the database's clock (dbClockSql), not the caller's.
   */
  async tryLease(id: string, version: number, owner: string, leaseMs: number): Promise<boolean> {
    const clock = dbClockSql(this.#db.kind);
    const { changes } = await this.#db.run(
      `UPDATE connections SET refresh_lease_owner = ?, refresh_lease_until = ${clock} + ?
        WHERE id = ? AND version = ? AND status = 'connected' AND (refresh_lease_until IS NULL OR refresh_lease_until < ${clock})`,
      [owner, Math.max(0, Math.floor(leaseMs)), id, version],
    );
    return changes > 0;
  }

  async releaseLease(id: string, owner: string): Promise<void> {
    await this.#db.run(
      'UPDATE connections SET refresh_lease_owner = NULL, refresh_lease_until = NULL WHERE id = ? AND refresh_lease_owner = ?',
      [id, owner],
    );
  }

  /**
   * Stores a refreshed secret if the row is still at `version`, the one whose refresh token was
   * spent (a compare-and-set: a reconnect or a disconnect since then wins, and so does nothing
   * else). The lease is not required: tokens the provider issued after the lease ran out are still
   * the only valid ones, and must not be dropped. Resolves false when the row changed or is gone.
   */
  async commitRefresh(
    id: string,
    version: number,
    sealed: string,
    keyId: string,
    expiresAt: number | null,
    scopes: string | null,
    now: number,
  ): Promise<boolean> {
    const { changes } = await this.#db.run(
      `UPDATE connections SET secret = ?, key_id = ?, expires_at = ?, scopes = COALESCE(?, scopes), updated_at = ?, version = version + 1,
          status = 'connected', status_reason = NULL, refresh_lease_owner = NULL, refresh_lease_until = NULL
        WHERE id = ? AND version = ?`,
      [sealed, keyId, expiresAt, scopes, now, id, version],
    );
    return changes > 0;
  }
}
