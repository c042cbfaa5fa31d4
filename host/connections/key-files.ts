/**
 * @module host/connections/key-files
 * The key files of a data dir through a rotation (`encryption.key`, `.next` while a rotation runs,
 * `.previous` after it, and a lock so that one rotation runs at a time), and the vault a server or
 * the CLI loads from them. The database side of a rotation is key-rotation.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../storage/db.js';
import { rotateKeys, type RotationResult } from './key-rotation.js';
import {
  KEY_FILE_NAME,
  VaultError,
  createVault,
  fsyncDir,
  generateKey,
  keyIdFor,
  loadVault,
  parseEncryptionKey,
  previousKeysFromEnv,
  readKeyFile,
  replaceFileDurably,
  writeKeyFile,
  type Vault,
} from './vault.js';

export interface StoredKeyRotation extends RotationResult {
  /** where the new key lives: the key file path, or 'env' when the operator must set it */
  storedIn: string;
  /** the new key in base64, only when it lives in the environment (the operator must save it) */
  newKeyBase64?: string;
}

/**
 * The CLI's whole rotation. With a key file: the new key is written to `encryption.key.next` first,
 * the database is re-encrypted, then the file is renamed over `encryption.key` (a crash in between
 * leaves both files; `loadVaultWithPending` reads with either). The old key stays readable as
 * `encryption.key.previous` until the next rotation (running servers re-read the files when they
 * meet the new key). With WORKBENCH_ENCRYPTION_KEY: the new key must be one the command (and so,
 * by the documented order, every server) already reads as a previous key; the database is
 * re-encrypted and the new key returned for the operator to put in the environment.
 */
export async function rotateStoredKey(options: {
  db: Db;
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  newKey?: string;
}): Promise<StoredKeyRotation> {
  const env = options.env ?? process.env;
  const oldVault = loadVaultWithPending({ dataDir: options.dataDir, env });
  // with an environment key the new key lives nowhere but in the operator's hands: it must be one
  // they already keep, not one printed after the database was re-encrypted under it (a lost
  // terminal or a piped --json would leave every credential unreadable)
  if (oldVault.source === 'env' && !options.newKey)
    throw new VaultError(
      'VAULT_BAD_KEY',
      'WORKBENCH_ENCRYPTION_KEY is set: give the new key with --new-key (generate one with `openssl rand -base64 32` and store it where the environment comes from first); nothing changed',
    );
  const newKey = options.newKey ? parseEncryptionKey(options.newKey, '--new-key') : generateKey();
  if (keyIdFor(newKey) === oldVault.keyId)
    throw new VaultError(
      'VAULT_BAD_KEY',
      'the new key is the key already in use; to re-encrypt the connections still sealed with an older key under it, run `workbench keys reseal`; nothing changed',
    );
  if (oldVault.source === 'env') {
    // the documented order: every server reads the new key (as a previous key) before anything is
    // sealed with it; this command runs with a server's environment, so it must read it too
    const newId = keyIdFor(newKey);
    if (!oldVault.hasKey(newId))
      throw new VaultError(
        'VAULT_BAD_KEY',
        `the new key (${newId}) is not in WORKBENCH_ENCRYPTION_KEY_PREVIOUS: servers that do not have it could not read a single connection once they are re-encrypted under it; nothing changed. ` +
          'First add the new key to WORKBENCH_ENCRYPTION_KEY_PREVIOUS on every server and restart them; then run this command with that environment ' +
          `(the current key ${oldVault.keyId} as WORKBENCH_ENCRYPTION_KEY, the new one in WORKBENCH_ENCRYPTION_KEY_PREVIOUS); then set WORKBENCH_ENCRYPTION_KEY to the new key ` +
          'and WORKBENCH_ENCRYPTION_KEY_PREVIOUS to the old one on every server, restart them, and run `workbench keys reseal`',
      );
    const result = await rotateKeys(options.db, oldVault, newKey);
    return { ...result, storedIn: 'env', newKeyBase64: newKey.toString('base64') };
  }
  const file = path.join(options.dataDir, KEY_FILE_NAME);
  const release = lockRotation(file);
  try {
    return await rotateKeyFile(options.db, options.dataDir, file, oldVault, newKey);
  } finally {
    release();
  }
}

/**
 * One file-mode `keys rotate` at a time per data dir: `encryption.key.lock`, created exclusively
 * (another one's settling step would otherwise remove this one's `.next` before its commit, and a
 * crash then loses the key). A lock that exists refuses the rotation, nothing changed, saying
 * which process holds it; one left by a rotation that crashed is deleted by the operator.
 */
function lockRotation(file: string): () => void {
  const lock = `${file}.lock`;
  const mine = `${process.pid} ${new Date().toISOString()}\n`;
  try {
    fs.writeFileSync(lock, mine, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    let holder = '';
    try {
      holder = fs.readFileSync(lock, 'utf8').trim();
    } catch {
      // removed meanwhile: the other rotation just finished
    }
    const [pid, at] = holder.split(' ');
    let running = true;
    try {
      if (pid && /^\d+$/.test(pid)) process.kill(Number(pid), 0);
    } catch (e) {
      running = (e as NodeJS.ErrnoException).code !== 'ESRCH';
    }
    throw new VaultError(
      'VAULT_KEY_FILE',
      `rotation refused, nothing changed: another \`workbench keys rotate\` holds ${lock}${pid ? ` (process ${pid}${at ? `, since ${at}` : ''})` : ''}. ` +
        (running
          ? 'Wait for it to finish and run this command again. '
          : 'That process no longer runs on this host: it stopped mid-rotation. ') +
        `If no \`keys rotate\` is running on this data dir, delete ${lock} and run this command again (it finishes or discards what the stopped one left)`,
    );
  }
  return () => {
    try {
      if (fs.readFileSync(lock, 'utf8') === mine) fs.rmSync(lock);
    } catch {
      // already gone
    }
  };
}

/** The key-file rotation proper, under the lock. */
async function rotateKeyFile(
  db: Db,
  dataDir: string,
  file: string,
  oldVault: Vault,
  newKey: Buffer,
): Promise<StoredKeyRotation> {
  const next = `${file}.next`;
  await settleEarlierRotation(db, dataDir, file, next);
  // on the disk (file and directory entry) before the database is re-encrypted under it, and
  // whole or not at all (a temp file renamed into place: a crash never leaves a torn .next)
  replaceFileDurably(next, newKey.toString('base64') + '\n', 0o600);
  const result = await rotateKeys(db, oldVault, newKey);
  // Servers still running with the old key may seal a few more values before they re-read the key
  // file: keep the old key readable (encryption.key.previous) until the next rotation re-seals everything.
  keepAsPrevious(file);
  writeKeyFile(dataDir, newKey);
  fs.rmSync(next, { force: true });
  fsyncDir(dataDir);
  return { ...result, storedIn: file };
}

/** Copies the key file to `.previous` atomically and durably (a torn or lost copy would lose the key values may still be sealed with). */
function keepAsPrevious(file: string): void {
  replaceFileDurably(`${file}.previous`, fs.readFileSync(file), 0o600);
}

const keyIdOfFile = (f: string): string => keyIdFor(parseEncryptionKey(fs.readFileSync(f, 'utf8'), f));

/**
 * An `encryption.key.next` left by an earlier rotation must not be overwritten by this one before
 * its own commit: connections may be sealed with it (the earlier rotation committed, then stopped
 * before renaming). Nothing sealed with it: it is removed (that rotation stopped before its commit).
 * Otherwise that rotation is finished first (the key file becomes `.previous`, `.next` the key
 * file), unless connections are also sealed with the key in `.previous`, which would then be lost:
 * refused, nothing changed. One that is not a key at all (torn) is removed too.
 */
async function settleEarlierRotation(db: Db, dataDir: string, file: string, next: string): Promise<void> {
  if (!fs.existsSync(next)) return;
  const used = new Set(
    (await db.all<{ key_id: string }>('SELECT DISTINCT key_id FROM connections')).map((r) => r.key_id),
  );
  const nextId = unreadableNext(next) === undefined ? keyIdOfFile(next) : undefined;
  // not a key (torn by a crash while an older version wrote it in place): nothing can be sealed with it
  if (nextId === undefined || !used.has(nextId)) {
    fs.rmSync(next);
    fsyncDir(dataDir);
    return;
  }
  const previous = `${file}.previous`;
  if (fs.existsSync(previous) && used.has(keyIdOfFile(previous)))
    throw new VaultError(
      'VAULT_BAD_KEY',
      `rotation stopped, nothing changed: an earlier rotation did not finish, and connections are sealed with each of ${file}, ${next} and ${previous}; keep all three files, start the gateway once with them (it reads all three) and reconnect or re-import the connections sealed with the oldest key before rotating again`,
    );
  keepAsPrevious(file);
  writeKeyFile(dataDir, parseEncryptionKey(fs.readFileSync(next, 'utf8'), next));
  fs.rmSync(next);
  fsyncDir(dataDir);
}

/**
 * Why `encryption.key.next` is not a key (empty or torn: written in place by a rotation that
 * crashed), or undefined when it is one. No connection can be sealed with such a file, since a
 * key id is derived from a whole key and the rotation commits only after the file is on the disk.
 */
function unreadableNext(next: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(next, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // a file this process cannot read (another owner, an I/O error) may be a whole key that
    // connections are sealed with: never "torn", never removed
    throw new VaultError(
      'VAULT_KEY_FILE',
      `cannot read ${next}: ${(err as Error).message}; it may hold the key of a rotation that did not finish: make it readable to this user, do not delete it`,
    );
  }
  try {
    parseEncryptionKey(text, next);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** On meeting a key it does not have, a key-file vault re-reads unchanged key files at most this often (changed ones at once). */
export const KEY_FILE_REREAD_MS = 5_000;

/**
 * loadVault, plus the key files a rotation leaves beside the key file, accepted for reading only:
 * `encryption.key.next` (a rotation interrupted after the database was re-encrypted) and
 * `encryption.key.previous` (the key before the last rotation, for values sealed meanwhile).
 *
 * With a key file, the vault reads the key files again when they changed (checked with stat
 * before each seal, and when a value names a key it does not have; unchanged files are re-read
 * for an unknown key at most once per KEY_FILE_REREAD_MS): `keys rotate` run beside a running
 * server replaces them, and the server then seals with the key encryption.key holds and reads the
 * rotated connections, without a restart. Keys it read before stay readable in memory.
 */
export function loadVaultWithPending(options: {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  onWarning?: (message: string) => void;
}): Vault {
  const base = loadVault(options);
  if (base.source !== 'file') return base;
  const file = path.join(options.dataDir, KEY_FILE_NAME);
  const keys = new KeyFileKeys(file, base, options.env ?? process.env);
  readSideFilesAtStart(keys, options.onWarning ?? ((m: string) => process.stderr.write(`warning: ${m}\n`)));
  /**
   * Before sealing (and before saying which keys it has): a `keys rotate` beside this process may
   * have replaced encryption.key. A few stat calls, made only when a value is sealed or a key
   * counted (rare next to the database write that follows), so that an idle or write-only
   * server never seals with the key a rotation replaced.
   */
  const refresh = (): void => {
    keys.reread(true);
  };

  return {
    get keyId() {
      refresh();
      return keys.primary.keyId;
    },
    source: 'file',
    keyIdOf: base.keyIdOf,
    hasKey: (id) => {
      refresh();
      return keys.find(id) !== undefined;
    },
    encrypt: (plaintext, aad) => {
      refresh();
      return keys.primary.encrypt(plaintext, aad);
    },
    decrypt: (sealed, aad) => {
      const id = base.keyIdOf(sealed);
      if (id === undefined) return keys.primary.decrypt(sealed, aad); // not a vault value: says so
      const vault = keys.find(id) ?? (keys.reread() ? keys.find(id) : undefined);
      if (!vault) {
        const { primary, rereadProblem } = keys;
        throw new VaultError(
          'VAULT_UNKNOWN_KEY',
          `the stored secret was encrypted with key ${id}, which this server does not have (it seals with key ${primary.keyId} from ${file}, and found ${id} in none of its key files${rereadProblem ? `; reading them again: ${rereadProblem}` : ''}): ` +
            `restore the key file that holds it as ${file}.previous (or add the key to WORKBENCH_ENCRYPTION_KEY_PREVIOUS), then run \`workbench keys reseal\`; without that key the user must reconnect`,
        );
      }
      return vault.decrypt(sealed, aad);
    },
  };
}

/**
 * At start, a bad side file stops the start (as a bad key file does), but for a torn
 * encryption.key.next: no connection can be sealed with it, and refusing it would stop every
 * start and every `keys rotate` (which removes it).
 */
function readSideFilesAtStart(keys: KeyFileKeys, onWarning: (message: string) => void): void {
  const [nextFile, previousFile] = keys.sideFiles as [string, string];
  const torn = unreadableNext(nextFile);
  if (torn !== undefined)
    onWarning(
      `ignoring ${nextFile}: it is not a key (${torn}). A \`workbench keys rotate\` stopped while writing it, before anything was sealed with it: ` +
        'it is safe to delete, and the next `workbench keys rotate` removes it',
    );
  else if (fs.existsSync(nextFile)) keys.addReader(parseEncryptionKey(fs.readFileSync(nextFile, 'utf8'), nextFile));
  if (fs.existsSync(previousFile))
    keys.addReader(parseEncryptionKey(fs.readFileSync(previousFile, 'utf8'), previousFile));
}

/** The keys a key-file vault holds: the primary one it seals with, and the ones it only reads with. */
class KeyFileKeys {
  readonly sideFiles: string[];
  primary: Vault;
  /** keys read from the side files, and keys this process sealed with before a re-read */
  readonly readers: Vault[] = [];
  /** why the latest re-read could not read a key file, if it could not */
  rereadProblem: string | undefined;
  // unknown: the first seal (or count) reads them once more, so a change since they were read at start is not missed
  #readStamp = '';
  #lastReread = -Infinity;

  constructor(
    readonly file: string,
    primary: Vault,
    readonly env: NodeJS.ProcessEnv,
  ) {
    this.sideFiles = ['next', 'previous'].map((suffix) => `${file}.${suffix}`);
    this.primary = primary;
  }

  find(id: string): Vault | undefined {
    return this.primary.hasKey(id) ? this.primary : this.readers.find((r) => r.keyId === id);
  }

  addReader(key: Buffer): void {
    const v = createVault(key, { source: 'file' });
    if (!this.find(v.keyId)) this.readers.push(v);
  }

  /** what the key files looked like (inode, mtime, ctime, size; '-' when absent) when they were last read */
  stamp(): string {
    return [this.file, ...this.sideFiles]
      .map((f) => {
        const st = fs.statSync(f, { throwIfNoEntry: false });
        return st ? `${st.ino}:${st.mtimeMs}:${st.ctimeMs}:${st.size}` : '-';
      })
      .join('|');
  }

  /**
   * Reads the key files again: always when they changed since they were last read, otherwise at
   * most once per KEY_FILE_REREAD_MS (`onlyIfChanged` skips unchanged files altogether). Every
   * re-read takes the primary key from encryption.key, even when the key looked for is in a side
   * file: a rotation seen between its commit and its rename must not leave the old key primary.
   * True when it read them.
   */
  reread(onlyIfChanged = false): boolean {
    const now = performance.now();
    const current = this.stamp();
    const changed = current !== this.#readStamp;
    if (!changed && (onlyIfChanged || now - this.#lastReread < KEY_FILE_REREAD_MS)) return false;
    this.#lastReread = now;
    this.#readStamp = current; // taken before reading: a change made meanwhile is seen next time
    const problems: string[] = [];
    try {
      const key = readKeyFile(this.file);
      if (keyIdFor(key) !== this.primary.keyId) {
        this.readers.unshift(this.primary); // what this process sealed with stays readable
        this.primary = createVault(key, { previous: previousKeysFromEnv(this.env), source: 'file' });
      }
    } catch (err) {
      problems.push((err as Error).message);
    }
    for (const f of this.sideFiles) {
      try {
        if (fs.existsSync(f)) this.addReader(readKeyFile(f));
      } catch (err) {
        problems.push((err as Error).message);
      }
    }
    this.rereadProblem = problems.length ? problems.join('; ') : undefined;
    return true;
  }
}
