/**
 * @module host/connections/key-rotation
 * `workbench keys rotate`: re-encrypts every connection secret under a new key in one transaction.
 * Every row is decrypted with the old key first; if any row fails, nothing is written and the error
 * names the row, so a rotation can never orphan a connection (the seed had no rotation at all).
 * Also the key a rotation moved to (kept in the database, so that a reseal run with the keys from
 * before it is refused) and which keys the stored rows use. The key files themselves: key-files.ts.
 */
import type { Db } from '../storage/db.js';
import { VaultError, createVault, type Vault } from './vault.js';

export interface RotationResult {
  /** connections re-encrypted */
  rotated: number;
  /** id of the new key */
  keyId: string;
  /** a vault that reads and writes with the new key */
  vault: Vault;
}

/** Re-encrypts every connection from `oldVault` to `newKey` atomically; verifies each row before commit. */
export async function rotateKeys(db: Db, oldVault: Vault, newKey: Buffer): Promise<RotationResult> {
  const vault = createVault(newKey, { source: 'memory' });
  const rotated = await db.transaction(async (tx) => {
    // PostgreSQL: lock the rows, so that a token refresh or a reconnect another server commits
    // meanwhile is read here, not overwritten with the secret read before it (SQLite's
    // transactions already exclude other writers)
    const lock = tx.kind === 'postgres' ? ' FOR UPDATE' : '';
    const rows = await tx.all<{ id: string; integration: string; secret: string }>(
      `SELECT id, integration, secret FROM connections ORDER BY id${lock}`,
    );
    for (const row of rows) {
      let plain: string;
      try {
        plain = oldVault.decrypt(row.secret, row.id);
      } catch (err) {
        const msg = err instanceof VaultError ? err.message : String(err);
        throw new VaultError(
          'VAULT_DECRYPT_FAILED',
          `rotation stopped, nothing changed: connection ${row.id} (${row.integration}) cannot be read with the current key: ${msg}`,
        );
      }
      const sealed = vault.encrypt(plain, row.id);
      if (vault.decrypt(sealed, row.id) !== plain)
        throw new VaultError(
          'VAULT_DECRYPT_FAILED',
          `rotation stopped, nothing changed: verification failed for ${row.id}`,
        );
      await tx.run('UPDATE connections SET secret = ?, key_id = ? WHERE id = ?', [sealed, vault.keyId, row.id]);
    }
    // with the rows: `keys reseal` and start-up compare their current key with it
    await tx.run(
      'INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      [ROTATED_TO, vault.keyId, Date.now()],
    );
    return rows.length;
  });
  return { rotated, keyId: vault.keyId, vault };
}

/** The settings row naming the key the last `keys rotate` re-encrypted every connection under. */
const ROTATED_TO = 'encryption.rotated_to';

export interface RotationTarget {
  /** id of the key the last `keys rotate` moved the connections to */
  keyId: string;
  /** when (epoch ms) */
  at: number;
}

/** The key the last `keys rotate` moved the connections to (undefined before the first rotation). `forUpdate` locks the row (PostgreSQL). */
export async function rotationTarget(db: Db, forUpdate = false): Promise<RotationTarget | undefined> {
  const lock = forUpdate && db.kind === 'postgres' ? ' FOR UPDATE' : '';
  const row = await db.get<{ value: string; updated_at: number | string }>(
    `SELECT value, updated_at FROM settings WHERE name = ?${lock}`,
    [ROTATED_TO],
  );
  return row && { keyId: row.value, at: Number(row.updated_at) };
}

/** What to do when a server or `keys reseal` runs with a current key other than the one `keys rotate` moved the connections to. */
function runWithRotatedKey(vault: Pick<Vault, 'source' | 'keyId'>, target: RotationTarget): string {
  return vault.source === 'file'
    ? `the key file in its data dir (encryption.key) holds ${vault.keyId}: use the data dir whose encryption.key holds ${target.keyId} (a rotation that stopped before replacing encryption.key is finished by running \`workbench keys rotate\` again)`
    : `set WORKBENCH_ENCRYPTION_KEY to the key whose id is ${target.keyId}, and keep ${vault.keyId} in WORKBENCH_ENCRYPTION_KEY_PREVIOUS`;
}

export interface KeyUsage {
  /** the vault's primary key (the one it seals with) */
  keyId: string;
  /** the key the last `keys rotate` moved the connections to, when there was one */
  rotatedTo?: RotationTarget;
  /** connections sealed with the vault's primary key */
  primary: number;
  /** connections sealed with another key the vault can still read (a previous one), by key id */
  older: Record<string, number>;
  /** connections sealed with a key the vault does not have, by key id: unreadable until it is restored */
  unknown: Record<string, number>;
}

/** How many connections each key seals, as this vault sees them (start-up warnings, `keys reseal`). */
export async function keyUsage(db: Db, vault: Vault): Promise<KeyUsage> {
  const rows = await db.all<{ key_id: string; n: number }>(
    'SELECT key_id, COUNT(*) AS n FROM connections GROUP BY key_id ORDER BY key_id',
  );
  const out: KeyUsage = { keyId: vault.keyId, primary: 0, older: {}, unknown: {} };
  const target = await rotationTarget(db);
  if (target) out.rotatedTo = target;
  for (const r of rows) {
    const n = Number(r.n);
    if (r.key_id === vault.keyId) out.primary += n;
    else if (vault.hasKey(r.key_id)) out.older[r.key_id] = n;
    else out.unknown[r.key_id] = n;
  }
  return out;
}

const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);

/** Warnings for the start-up log about connections not sealed with the primary key (none when all are). */
export function keyUsageWarnings(usage: KeyUsage, vault: Pick<Vault, 'source'> = { source: 'env' }): string[] {
  const out: string[] = [];
  const older = total(usage.older);
  const target = usage.rotatedTo;
  if (target && target.keyId !== usage.keyId)
    // a replica restarted with the environment from before the rotation: its "older" rows are the
    // rotated ones, and a re-seal run with its environment would move them all back
    out.push(
      `this server runs with key ${usage.keyId}, but \`workbench keys rotate\` moved the connections to key ${target.keyId} (${new Date(target.at).toISOString()}): ` +
        `connections it saves are sealed with the old key, and \`workbench keys reseal\` with this configuration is refused. Restart it with the new key: ${runWithRotatedKey({ source: vault.source, keyId: usage.keyId }, target)}`,
    );
  else if (older > 0)
    out.push(
      `${older} connection(s) are sealed with an older key (${Object.keys(usage.older).join(', ')}) that this server can still read: ` +
        'run `workbench keys reseal` once every server runs with the current key, and keep the older key (WORKBENCH_ENCRYPTION_KEY_PREVIOUS or encryption.key.previous) until it reports 0 left',
    );
  const unknown = total(usage.unknown);
  if (unknown > 0)
    out.push(
      `${unknown} connection(s) are sealed with a key this server does not have (${Object.keys(usage.unknown).join(', ')}) and cannot be used: ` +
        'add that key to WORKBENCH_ENCRYPTION_KEY_PREVIOUS (or restore encryption.key.previous) and run `workbench keys reseal`, or the users must reconnect',
    );
  return out;
}

export interface ResealResult {
  /** connections re-encrypted under the primary key */
  resealed: number;
  /** the primary key's id */
  keyId: string;
  /** connections still sealed with a key other than the primary afterwards (0 after a success) */
  left: number;
}

/**
 * Re-encrypts, under the vault's primary key, every connection sealed with another key (one the
 * vault reads as a previous key), in one transaction: a rotation made while a replica still
 * sealed with the old key leaves such rows. A row no key of the vault reads stops it, nothing
 * changed, and the error names the row.
 */
export async function resealKeys(db: Db, vault: Vault): Promise<ResealResult> {
  const resealed = await db.transaction(async (tx) => {
    const lock = tx.kind === 'postgres' ? ' FOR UPDATE' : '';
    // Run with the configuration from before a rotation (its old key current, the new one
    // previous), a re-seal would move every connection back to the old key and report 0 left: the
    // very signal for removing the old key.
    const target = await rotationTarget(tx, true);
    if (target && target.keyId !== vault.keyId)
      throw new VaultError(
        'VAULT_NOT_ROTATED_KEY',
        `re-seal refused, nothing changed: \`workbench keys rotate\` moved the connections to key ${target.keyId} (${new Date(target.at).toISOString()}), ` +
          `but this command runs with key ${vault.keyId} as its current key${vault.hasKey(target.keyId) ? ` (and ${target.keyId} only as a previous key)` : ''}: ` +
          `it would re-encrypt every connection back under ${vault.keyId}. Run it with the configuration of a server that runs with the new key: ${runWithRotatedKey(vault, target)}`,
      );
    const rows = await tx.all<{ id: string; integration: string; secret: string; key_id: string }>(
      `SELECT id, integration, secret, key_id FROM connections WHERE key_id <> ? ORDER BY id${lock}`,
      [vault.keyId],
    );
    for (const row of rows) {
      let plain: string;
      try {
        plain = vault.decrypt(row.secret, row.id);
      } catch (err) {
        const msg = err instanceof VaultError ? err.message : String(err);
        throw new VaultError(
          'VAULT_DECRYPT_FAILED',
          `re-seal stopped, nothing changed: connection ${row.id} (${row.integration}) cannot be read: ${msg}`,
        );
      }
      const sealed = vault.encrypt(plain, row.id);
      if (vault.decrypt(sealed, row.id) !== plain)
        throw new VaultError(
          'VAULT_DECRYPT_FAILED',
          `re-seal stopped, nothing changed: verification failed for ${row.id}`,
        );
      await tx.run('UPDATE connections SET secret = ?, key_id = ? WHERE id = ? AND secret = ?', [
        sealed,
        vault.keyId,
        row.id,
        row.secret,
      ]);
    }
    return rows.length;
  });
  const usage = await keyUsage(db, vault);
  return { resealed, keyId: vault.keyId, left: total(usage.older) + total(usage.unknown) };
}
