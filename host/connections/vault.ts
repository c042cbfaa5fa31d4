/**
 * @module host/connections/vault
 * Encryption at rest for connection secrets (invariant 7): AES-256-GCM with a random 96-bit IV per
 * value and the connection id as additional authenticated data, so a ciphertext copied onto another
 * row does not decrypt. Every value names the key that sealed it (a key id derived from the key),
 * which lets rotation and mixed-key reads fail with a clear message instead of garbage.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../errors.js';
import { WorkbenchError, type ErrorCodeOf } from '../../contracts/errors.js';
import { isPostgresUrl } from '../storage/db.js';

const FORMAT = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type VaultErrorCode = ErrorCodeOf<'vault'>;

/** Raised for key configuration problems and for values that fail to decrypt (tampered or wrong key). */
export class VaultError extends WorkbenchError<VaultErrorCode> {
  constructor(code: VaultErrorCode, message: string) {
    super(code, message);
    this.name = 'VaultError';
  }
}

export interface Vault {
  /** id of the key new values are sealed with */
  readonly keyId: string;
  /** where the primary key came from (for start-up logs; never the key itself) */
  readonly source: 'env' | 'file' | 'memory';
  /** Seals `plaintext`, bound to `aad` (the connection id). Returns `v1.<keyId>.<iv>.<tag>.<ciphertext>`. */
  encrypt(plaintext: string, aad: string): string;
  /** Opens a sealed value; throws VaultError on tampering, a different `aad` or an unknown key. */
  decrypt(sealed: string, aad: string): string;
  /** the key id a sealed value names (undefined when it is not a vault value) */
  keyIdOf(sealed: string): string | undefined;
  /** whether this vault holds the key with this id (the primary or one it may still read with) */
  hasKey(keyId: string): boolean;
}

/** A short public fingerprint of a key, stored beside each value. It reveals nothing usable about the key. */
export function keyIdFor(key: Buffer): string {
  return createHash('sha256').update('workbench-vault-key-id\0').update(key).digest('hex').slice(0, 16);
}

export function generateKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** Parses a 32-byte key given as 64 hex characters or as base64 / base64url (44 or 43 characters). */
export function parseEncryptionKey(text: string, source = 'WORKBENCH_ENCRYPTION_KEY'): Buffer {
  const t = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(t)) key = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(t)) key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!key || key.length !== KEY_BYTES)
    throw new VaultError(
      'VAULT_BAD_KEY',
      `${source} must be 32 random bytes written as 64 hex characters or 44 base64 characters ` +
        `(got ${t.length} characters); generate one with: openssl rand -base64 32`,
    );
  return key;
}

export function createVault(
  primary: Buffer,
  options: { previous?: readonly Buffer[]; source?: Vault['source'] } = {},
): Vault {
  if (primary.length !== KEY_BYTES)
    throw new VaultError('VAULT_BAD_KEY', `an encryption key must be ${KEY_BYTES} bytes, got ${primary.length}`);
  const keys = new Map<string, Buffer>();
  for (const k of [primary, ...(options.previous ?? [])]) keys.set(keyIdFor(k), Buffer.from(k));
  const keyId = keyIdFor(primary);

  const keyIdOf = (sealed: string): string | undefined => {
    const parts = sealed.split('.');
    return parts.length === 5 && parts[0] === FORMAT ? parts[1] : undefined;
  };

  return {
    keyId,
    source: options.source ?? 'memory',
    keyIdOf,
    hasKey: (id) => keys.has(id),
    encrypt(plaintext, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', primary, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [FORMAT, keyId, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
    },
    decrypt(sealed, aad) {
      const parts = sealed.split('.');
      if (parts.length !== 5 || parts[0] !== FORMAT)
        throw new VaultError('VAULT_DECRYPT_FAILED', 'the stored secret is not a vault value (corrupted row?)');
      const [, id, ivText, tagText, ctText] = parts as [string, string, string, string, string];
      const key = keys.get(id);
      if (!key)
        throw new VaultError(
          'VAULT_UNKNOWN_KEY',
          `the stored secret was encrypted with key ${id}, which this server does not have (its key is ${keyId}): ` +
            'add that key to WORKBENCH_ENCRYPTION_KEY_PREVIOUS (or restore it as encryption.key.previous), then run `workbench keys reseal`; without that key the user must reconnect',
        );
      const iv = Buffer.from(ivText, 'base64url');
      const tag = Buffer.from(tagText, 'base64url');
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
        throw new VaultError('VAULT_DECRYPT_FAILED', 'the stored secret is malformed (bad IV or tag length)');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(aad, 'utf8'));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(Buffer.from(ctText, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        // GCM authentication failed: the value, its tag or its row binding was altered.
        throw new VaultError(
          'VAULT_DECRYPT_FAILED',
          'the stored secret failed authentication (tampered, or moved from another row)',
        );
      }
    },
  };
}

export const KEY_FILE_NAME = 'encryption.key';

/**
 * Reads `<dataDir>/encryption.key`, creating it (mode 0600) when it does not exist: written whole
 * to a temp file of this process, synced, then linked into place (link fails when the file
 * exists), so a process starting beside this one never reads it empty or torn: it either sees no
 * key file or the whole key, and the one whose link lost reads the winner's.
 */
export function readOrCreateKeyFile(dataDir: string): { key: Buffer; file: string; created: boolean } {
  const file = path.join(dataDir, KEY_FILE_NAME);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let created = false;
  if (!fs.existsSync(file)) {
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      const key = generateKey().toString('base64') + '\n';
      writeFileSynced(tmp, key, { flag: 'wx', mode: 0o600 });
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        // a file system without hard links (some network and removable ones): create it exclusively
        if (!['EPERM', 'ENOTSUP', 'ENOSYS', 'EOPNOTSUPP'].includes((err as NodeJS.ErrnoException).code ?? ''))
          throw err;
        writeFileSynced(file, key, { flag: 'wx', mode: 0o600 });
      }
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new VaultError('VAULT_KEY_FILE', `cannot create ${file}: ${(err as Error).message}`);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
    fsyncDir(dataDir);
  }
  return { key: readKeyFile(file), file, created };
}

/** Reads an existing key file, refusing one that other users may read. */
export function readKeyFile(file: string): Buffer {
  const stat = fs.statSync(file);
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0)
    throw new VaultError(
      'VAULT_KEY_FILE',
      `${file} is readable by other users (mode ${(stat.mode & 0o777).toString(8)}): run chmod 600 on it`,
    );
  return parseEncryptionKey(fs.readFileSync(file, 'utf8'), file);
}

/**
 * Writes `data` to `file` and flushes it to the disk before returning (a key that only sat in the
 * page cache when the machine lost power would be gone, and every connection sealed with it).
 */
export function writeFileSynced(file: string, data: string | Buffer, options: { mode: number; flag?: string }): void {
  const fd = fs.openSync(file, options.flag ?? 'w', options.mode);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Flushes a directory's entries (a new, renamed or removed file) to the disk. No-op where a directory cannot be opened (Windows). */
export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fs.fsyncSync(fd);
  } catch (err) {
    // some file systems refuse fsync on a directory; the file itself was synced
    if (!['EINVAL', 'EISDIR', 'EPERM', 'EBADF'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
  } finally {
    fs.closeSync(fd);
  }
}

/** Replaces `file` with `data` atomically and durably: a synced temp file, renamed over it, then the directory synced. */
export function replaceFileDurably(file: string, data: string | Buffer, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSynced(tmp, data, { mode });
  fs.renameSync(tmp, file);
  fsyncDir(path.dirname(file));
}

/** Atomically and durably replaces the key file with `key` (written beside it, synced, renamed, directory synced), mode 0600. */
export function writeKeyFile(dataDir: string, key: Buffer): string {
  const file = path.join(dataDir, KEY_FILE_NAME);
  replaceFileDurably(file, key.toString('base64') + '\n', 0o600);
  return file;
}

/**
 * The vault for this process: WORKBENCH_ENCRYPTION_KEY when set (validated), otherwise the key file
 * in the data dir (generated on first start). WORKBENCH_ENCRYPTION_KEY_PREVIOUS (comma-separated)
 * names older keys that may still be read, for a rolling rotation.
 */
export function loadVault(options: {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
}): Vault & { keyFile?: string; created: boolean } {
  const env = options.env ?? process.env;
  const previous = previousKeysFromEnv(env);
  const fromEnv = env['WORKBENCH_ENCRYPTION_KEY'];
  if (fromEnv !== undefined && fromEnv.trim() !== '')
    return { ...createVault(parseEncryptionKey(fromEnv), { previous, source: 'env' }), created: false };
  const { key, file, created } = readOrCreateKeyFile(options.dataDir);
  return { ...createVault(key, { previous, source: 'file' }), keyFile: file, created };
}

/** The keys in WORKBENCH_ENCRYPTION_KEY_PREVIOUS (comma-separated), validated. */
export function previousKeysFromEnv(env: NodeJS.ProcessEnv): Buffer[] {
  return (env['WORKBENCH_ENCRYPTION_KEY_PREVIOUS'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => parseEncryptionKey(s, 'WORKBENCH_ENCRYPTION_KEY_PREVIOUS'));
}

/**
 * With PostgreSQL, a database several servers may share, the key must come from
 * WORKBENCH_ENCRYPTION_KEY (the same on every server): a key file generated in this server's data
 * dir would seal connections no other server can read. Throws GW_ERR_CONFIG_INVALID, saying what
 * to set (and which key file to take it from, when this data dir has one).
 */
export function requireSharedKey(databaseUrl: string | undefined, dataDir: string, env: NodeJS.ProcessEnv): void {
  if (!isPostgresUrl(databaseUrl) || (env['WORKBENCH_ENCRYPTION_KEY'] ?? '').trim() !== '') return;
  const file = path.join(dataDir, KEY_FILE_NAME);
  let hint = '';
  if (fs.existsSync(file))
    hint =
      ` This data dir has a key file (${file}): if connections were stored with it, set WORKBENCH_ENCRYPTION_KEY to its contents` +
      (fs.existsSync(`${file}.previous`)
        ? `, and WORKBENCH_ENCRYPTION_KEY_PREVIOUS to the contents of ${file}.previous`
        : '') +
      ', on every server.';
  throw new GatewayError(
    'GW_ERR_CONFIG_INVALID',
    'WORKBENCH_ENCRYPTION_KEY is required with a PostgreSQL DATABASE_URL: set it to the same key on every server that uses the database ' +
      '(generate one with `openssl rand -base64 32` and keep it in your secret store). Without it this server would seal credentials with a key file ' +
      `of its own, which no other server has.${hint}`,
  );
}
