/**
 * @module test/host/connections/vault.unit.test
 * The vault: AES-256-GCM round trips, tamper and row-swap detection, key parsing and the key file,
 * and key rotation that keeps every connection (or changes nothing when one row is unreadable).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { loadVaultWithPending, rotateStoredKey } from '../../../host/connections/key-files.js';
import {
  keyUsage,
  keyUsageWarnings,
  type KeyUsage,
  resealKeys,
  rotateKeys,
} from '../../../host/connections/key-rotation.js';
import { createConnectionService } from '../../../host/connections/service.js';
import {
  KEY_FILE_NAME,
  createVault,
  generateKey,
  loadVault,
  parseEncryptionKey,
  type Vault,
} from '../../../host/connections/vault.js';
import { openSqlite } from '../../../host/storage/sqlite.js';
import { apiKeyManifest, oauthManifest, openTestDb, type TestDb } from '../../helpers/connections-db.js';

const code = (c: string) => (err: unknown) => (err as { code?: string }).code === c;
/** the counts of a key usage (without the key ids it was taken with) */
const counts = ({ primary, older, unknown }: KeyUsage) => ({ primary, older, unknown });

describe('vault', () => {
  const vault = createVault(generateKey());

  it('round-trips and never produces the same ciphertext twice', () => {
    const a = vault.encrypt('s3cret-token', 'row-1');
    const b = vault.encrypt('s3cret-token', 'row-1');
    assert.notEqual(a, b);
    assert.ok(!a.includes('s3cret'));
    assert.match(a, new RegExp(`^v1\\.${vault.keyId}\\.`));
    assert.equal(vault.decrypt(a, 'row-1'), 's3cret-token');
    assert.equal(vault.decrypt(vault.encrypt('', 'r'), 'r'), '');
  });

  it('detects tampering with the ciphertext, tag or IV, and a value moved to another row', () => {
    const sealed = vault.encrypt('{"values":{"token":"abc"}}', 'row-1');
    const parts = sealed.split('.');
    for (const i of [2, 3, 4]) {
      const bytes = Buffer.from(parts[i] as string, 'base64url');
      bytes[0] = (bytes[0] as number) ^ 1;
      const bad = parts.map((p, j) => (j === i ? bytes.toString('base64url') : p)).join('.');
      assert.throws(() => vault.decrypt(bad, 'row-1'), code('VAULT_DECRYPT_FAILED'));
    }
    assert.throws(() => vault.decrypt(sealed, 'row-2'), code('VAULT_DECRYPT_FAILED'));
    assert.throws(() => vault.decrypt('not-a-vault-value', 'row-1'), code('VAULT_DECRYPT_FAILED'));
  });

  it('names the key when a value was sealed with another one', () => {
    const other = createVault(generateKey());
    const sealed = other.encrypt('x', 'r');
    assert.throws(
      () => vault.decrypt(sealed, 'r'),
      (err: Error & { code?: string }) => err.code === 'VAULT_UNKNOWN_KEY' && err.message.includes(other.keyId),
    );
    const both = createVault(generateKey(), { previous: [] });
    assert.throws(() => both.decrypt(sealed, 'r'));
    // the advice is one that works: restore the key as a previous one, then re-seal
    assert.throws(
      () => vault.decrypt(sealed, 'r'),
      (err: Error) =>
        /WORKBENCH_ENCRYPTION_KEY_PREVIOUS/.test(err.message) &&
        /workbench keys reseal/.test(err.message) &&
        !/keys rotate/.test(err.message),
    );
  });

  it('parses hex and base64 keys and explains bad ones', () => {
    const key = generateKey();
    assert.deepEqual(parseEncryptionKey(key.toString('hex')), key);
    assert.deepEqual(parseEncryptionKey(key.toString('base64')), key);
    assert.deepEqual(parseEncryptionKey(` ${key.toString('base64url')}\n`), key);
    for (const bad of [
      '',
      'short',
      'z'.repeat(64),
      Buffer.alloc(16).toString('base64'),
      Buffer.alloc(33).toString('hex'),
    ])
      assert.throws(
        () => parseEncryptionKey(bad),
        (err: Error & { code?: string }) =>
          err.code === 'VAULT_BAD_KEY' && /64 hex characters or 44 base64/.test(err.message),
      );
  });

  it('creates the key file with mode 0600 once, reuses it, and prefers WORKBENCH_ENCRYPTION_KEY', async () => {
    const t = await openTestDb();
    try {
      const first = loadVault({ dataDir: t.dir, env: {} });
      assert.equal(first.created, true);
      assert.equal(first.source, 'file');
      const file = path.join(t.dir, KEY_FILE_NAME);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const second = loadVault({ dataDir: t.dir, env: {} });
      assert.equal(second.created, false);
      assert.equal(second.keyId, first.keyId);
      assert.equal(second.decrypt(first.encrypt('x', 'r'), 'r'), 'x');
      const envKey = generateKey();
      const fromEnv = loadVault({ dataDir: t.dir, env: { WORKBENCH_ENCRYPTION_KEY: envKey.toString('hex') } });
      assert.equal(fromEnv.source, 'env');
      assert.equal(fromEnv.keyId, createVault(envKey).keyId);
      assert.throws(() => loadVault({ dataDir: t.dir, env: { WORKBENCH_ENCRYPTION_KEY: 'password123' } }), {
        code: 'VAULT_BAD_KEY',
        message: /WORKBENCH_ENCRYPTION_KEY must be 32 random bytes/,
      });
      fs.chmodSync(file, 0o644);
      assert.throws(() => loadVault({ dataDir: t.dir, env: {} }), {
        code: 'VAULT_KEY_FILE',
        message: /readable by other users/,
      });
    } finally {
      await t.close();
    }
  });

  it("a process starting beside the one creating the first key file never sees it empty: it appears whole, and the loser reads the winner's key", async () => {
    const t = await openTestDb();
    const file = path.join(t.dir, KEY_FILE_NAME);
    let seenWhileWriting: boolean | undefined;
    let other: ReturnType<typeof loadVault> | undefined;
    const realWrite = fs.writeFileSync;
    const writes = mock.method(fs, 'writeFileSync', (...a: unknown[]) => {
      // while the first process writes its key, a second one starts on the same data dir
      if (other === undefined && seenWhileWriting === undefined) {
        seenWhileWriting = fs.existsSync(file);
        if (!seenWhileWriting) other = loadVault({ dataDir: t.dir, env: {} });
      }
      return (realWrite as (...b: unknown[]) => void)(...a);
    });
    try {
      const first = loadVault({ dataDir: t.dir, env: {} });
      assert.equal(seenWhileWriting, false, 'the key file exists only once it is whole');
      assert.equal(other?.created, true);
      assert.equal(first.created, false, "the one whose link lost reads the other's key");
      assert.equal(first.keyId, other?.keyId);
      assert.deepEqual(
        fs.readdirSync(t.dir).filter((f) => f.startsWith(KEY_FILE_NAME)),
        [KEY_FILE_NAME],
        'no temp file left',
      );
    } finally {
      writes.mock.restore();
      await t.close();
    }
  });
});

describe('key rotation', () => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb();
  });
  afterEach(async () => t.close());

  const oauth = oauthManifest({ authorizeUrl: 'https://auth.example.com/a', tokenUrl: 'https://auth.example.com/t' });
  const keyed = apiKeyManifest();

  async function populate(vault: Vault, n: number): Promise<string[]> {
    const svc = createConnectionService({ db: t.db, vault, clientFor: () => undefined });
    const userIds: string[] = [];
    for (let i = 0; i < n; i++) {
      const u = await t.users.create(`u${i}@example.com`, 'acme');
      userIds.push(u.id);
      await svc.importConnection({
        userId: u.id,
        manifest: oauth,
        token: `tok-${i}`,
        refreshToken: `rt-${i}`,
        expiresInSec: 3600,
      });
      await svc.importConnection({
        userId: u.id,
        manifest: keyed,
        values: { apiKey: `k_abcdefgh${i}` },
        config: { region: 'eu' },
      });
    }
    return userIds;
  }

  it('re-encrypts every connection; the old key no longer reads them, the new one reads them all', async () => {
    const oldVault = createVault(generateKey());
    const userIds = await populate(oldVault, 25);
    const result = await rotateKeys(t.db, oldVault, generateKey());
    assert.equal(result.rotated, 50);
    const rows = await t.db.all<{ id: string; secret: string; key_id: string }>(
      'SELECT id, secret, key_id FROM connections',
    );
    assert.equal(rows.length, 50);
    for (const r of rows) {
      assert.equal(r.key_id, result.keyId);
      assert.throws(() => oldVault.decrypt(r.secret, r.id));
    }
    const svc = createConnectionService({ db: t.db, vault: result.vault, clientFor: () => undefined });
    for (const [i, id] of userIds.entries()) {
      assert.equal((await svc.credential(id, oauth))?.values['token'], `tok-${i}`);
      assert.equal((await svc.credential(id, keyed))?.values['apiKey'], `k_abcdefgh${i}`);
      const look = await svc.lookup(id, keyed);
      assert.deepEqual(look.connected && look.config, { region: 'eu' });
    }
  });

  it('changes nothing when one row cannot be decrypted, and names that row', async () => {
    const oldVault = createVault(generateKey());
    await populate(oldVault, 3);
    const victim = await t.db.get<{ id: string }>('SELECT id FROM connections ORDER BY id LIMIT 1 OFFSET 2');
    await t.db.run('UPDATE connections SET secret = ? WHERE id = ?', [
      createVault(generateKey()).encrypt('x', victim?.id ?? ''),
      victim?.id ?? '',
    ]);
    const before = await t.db.all<{ id: string; secret: string }>('SELECT id, secret FROM connections ORDER BY id');
    await assert.rejects(
      rotateKeys(t.db, oldVault, generateKey()),
      (err: Error & { code?: string }) =>
        err.code === 'VAULT_DECRYPT_FAILED' &&
        err.message.includes(victim?.id ?? '?') &&
        /nothing changed/.test(err.message),
    );
    assert.deepEqual(await t.db.all('SELECT id, secret FROM connections ORDER BY id'), before);
  });

  it('rotates the key file: the new file reads every connection and no .next file is left', async () => {
    const fileVault = loadVault({ dataDir: t.dir, env: {} });
    const userIds = await populate(fileVault, 4);
    const res = await rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} });
    assert.equal(res.rotated, 8);
    assert.equal(res.storedIn, path.join(t.dir, KEY_FILE_NAME));
    assert.equal(res.newKeyBase64, undefined);
    assert.ok(!fs.existsSync(path.join(t.dir, `${KEY_FILE_NAME}.next`)));
    assert.equal(fs.statSync(res.storedIn).mode & 0o777, 0o600);
    const reloaded = loadVaultWithPending({ dataDir: t.dir, env: {} });
    assert.equal(reloaded.keyId, res.keyId);
    assert.notEqual(reloaded.keyId, fileVault.keyId);
    const svc = createConnectionService({ db: t.db, vault: reloaded, clientFor: () => undefined });
    for (const [i, id] of userIds.entries())
      assert.equal((await svc.credential(id, oauth))?.values['token'], `tok-${i}`);

    // A server that has not restarted yet still seals with the old key: still readable, and the
    // next rotation re-seals it under the newest key.
    const stale = createConnectionService({ db: t.db, vault: fileVault, clientFor: () => undefined });
    const late = await t.users.create('late@example.com', 'acme');
    await stale.importConnection({ userId: late.id, manifest: keyed, values: { apiKey: 'k_latelate1' } });
    assert.equal((await svc.credential(late.id, keyed))?.values['apiKey'], 'k_latelate1');
    const again = await rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} });
    assert.equal(again.rotated, 9);
    const keyIds = await t.db.all<{ key_id: string }>('SELECT DISTINCT key_id FROM connections');
    assert.deepEqual(keyIds, [{ key_id: again.keyId }]);
  });

  it('puts every key file on the disk before it is relied on: .next before the commit, each rename and its directory synced', async () => {
    const fileVault = loadVault({ dataDir: t.dir, env: {} });
    await populate(fileVault, 1);
    // what reaches the disk, in order: file syncs (by name), renames, directory syncs, the commit
    const events: string[] = [];
    const names = new Map<number, string>();
    const name = (p: string): string => (p === t.dir ? '<dir>' : path.basename(p).replace(/\.\d+\.tmp$/, '.tmp'));
    const realOpen = fs.openSync;
    const opens = mock.method(fs, 'openSync', (p: fs.PathLike, ...rest: unknown[]) => {
      const fd = (realOpen as (...a: unknown[]) => number)(p, ...rest);
      names.set(fd, name(String(p)));
      return fd;
    });
    const realFsync = fs.fsyncSync;
    const syncs = mock.method(fs, 'fsyncSync', (fd: number) => {
      realFsync(fd);
      events.push(`sync ${names.get(fd)}`);
    });
    const realRename = fs.renameSync;
    const renames = mock.method(fs, 'renameSync', (a: fs.PathLike, b: fs.PathLike) => {
      realRename(a, b);
      events.push(`rename ${name(String(a))} ${name(String(b))}`);
    });
    const db = {
      ...t.db,
      transaction: async <T>(fn: (tx: typeof t.db) => Promise<T>): Promise<T> => {
        const r = await t.db.transaction(fn);
        events.push('commit');
        return r;
      },
    };
    try {
      await rotateStoredKey({ db, dataDir: t.dir, env: {} });
    } finally {
      opens.mock.restore();
      syncs.mock.restore();
      renames.mock.restore();
    }
    const at = (e: string): number => {
      const i = events.indexOf(e);
      assert.ok(i >= 0, `${e} in ${events.join(', ')}`);
      return i;
    };
    // .next whole or not at all: a synced temp file renamed into place (a torn one would stop every start)
    const next = at('rename encryption.key.next.tmp encryption.key.next');
    assert.ok(
      at('sync encryption.key.next.tmp') < next &&
        events.indexOf('sync <dir>', next) > next &&
        events.indexOf('sync <dir>', next) < at('commit'),
      events.join(', '),
    );
    const prev = at('rename encryption.key.previous.tmp encryption.key.previous');
    assert.ok(
      at('sync encryption.key.previous.tmp') < prev && events.indexOf('sync <dir>', prev) > prev,
      events.join(', '),
    );
    const key = at('rename encryption.key.tmp encryption.key');
    assert.ok(
      events.lastIndexOf('sync encryption.key.tmp') < key && events.indexOf('sync <dir>', key) > key,
      events.join(', '),
    );
    assert.ok(at('commit') < prev, 'the key file is replaced only after the commit');
  });

  /** two users' connections, after a rotation that committed and died before renaming encryption.key.next */
  async function interruptedRotation(): Promise<{ fileVault: Vault; userIds: string[] }> {
    const fileVault = loadVault({ dataDir: t.dir, env: {} });
    const userIds = await populate(fileVault, 2);
    const next = generateKey();
    fs.writeFileSync(path.join(t.dir, `${KEY_FILE_NAME}.next`), next.toString('base64'), { mode: 0o600 });
    await rotateKeys(t.db, fileVault, next); // ...and the process died before renaming the file
    return { fileVault, userIds };
  }

  it('reads every connection after a rotation interrupted between the database and the key file', async () => {
    const { fileVault, userIds } = await interruptedRotation();
    const reader = loadVaultWithPending({ dataDir: t.dir, env: {} });
    assert.equal(reader.keyId, fileVault.keyId);
    const svc = createConnectionService({ db: t.db, vault: reader, clientFor: () => undefined });
    for (const [i, id] of userIds.entries())
      assert.equal((await svc.credential(id, oauth))?.values['token'], `tok-${i}`);
  });

  it('a rotation after one interrupted between the database and the key file finishes that one first', async () => {
    const { userIds } = await interruptedRotation();
    // one row that no key reads: this rotation stops, and must not have destroyed the key in .next
    const victim = await t.users.create('victim@example.com', 'acme');
    await createConnectionService({
      db: t.db,
      vault: createVault(generateKey()),
      clientFor: () => undefined,
    }).importConnection({ userId: victim.id, manifest: keyed, values: { apiKey: 'k_unreadable1' } });
    await assert.rejects(rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} }), {
      code: 'VAULT_DECRYPT_FAILED',
      message: /rotation stopped, nothing changed/,
    });
    const reader = loadVaultWithPending({ dataDir: t.dir, env: {} });
    const svc = createConnectionService({ db: t.db, vault: reader, clientFor: () => undefined });
    for (const [i, id] of userIds.entries())
      assert.equal((await svc.credential(id, oauth))?.values['token'], `tok-${i}`, 'still readable');
    // without the unreadable row, the next rotation goes through and reads everything
    await t.db.run('DELETE FROM connections WHERE user_id = ?', [victim.id]);
    const res = await rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} });
    assert.equal(res.rotated, 4);
    const after = createConnectionService({
      db: t.db,
      vault: loadVaultWithPending({ dataDir: t.dir, env: {} }),
      clientFor: () => undefined,
    });
    for (const [i, id] of userIds.entries())
      assert.equal((await after.credential(id, oauth))?.values['token'], `tok-${i}`);
    assert.ok(!fs.existsSync(path.join(t.dir, `${KEY_FILE_NAME}.next`)));
  });

  it('a running server seals with the new key after `keys rotate` without decrypting anything first, also when it met the new key before the rename', async () => {
    // (A) an idle or write-only server: rotated beside it, its next seal uses the new key
    const server = loadVaultWithPending({ dataDir: t.dir, env: {} });
    await populate(server, 1);
    const res = await rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} });
    const svc = createConnectionService({ db: t.db, vault: server, clientFor: () => undefined });
    const late = await t.users.create('late@example.com', 'acme');
    await svc.importConnection({ userId: late.id, manifest: keyed, values: { apiKey: 'k_latelate1' } });
    assert.deepEqual(await t.db.all('SELECT DISTINCT key_id FROM connections'), [{ key_id: res.keyId }]);
    assert.equal(server.keyId, res.keyId);

    // (B) it reads a row sealed with the next key between the rotation's commit and its rename
    // (the key only in encryption.key.next), then the rename happens: it must seal with that key
    const next = generateKey();
    fs.writeFileSync(path.join(t.dir, `${KEY_FILE_NAME}.next`), next.toString('base64'), { mode: 0o600 });
    const committed = await rotateKeys(t.db, loadVaultWithPending({ dataDir: t.dir, env: {} }), next);
    assert.equal((await svc.credential(late.id, keyed))?.values['apiKey'], 'k_latelate1');
    assert.equal(server.keyId, res.keyId, 'encryption.key still holds the old key');
    fs.copyFileSync(path.join(t.dir, KEY_FILE_NAME), path.join(t.dir, `${KEY_FILE_NAME}.previous`));
    fs.renameSync(path.join(t.dir, `${KEY_FILE_NAME}.next`), path.join(t.dir, KEY_FILE_NAME));
    const later = await t.users.create('later@example.com', 'acme');
    await svc.importConnection({ userId: later.id, manifest: keyed, values: { apiKey: 'k_laterlate' } });
    assert.deepEqual(await t.db.all('SELECT DISTINCT key_id FROM connections'), [{ key_id: committed.keyId }]);
  });

  it('an encryption.key.next torn by a crash while it was written is ignored with a warning at start, and `keys rotate` removes it', async () => {
    const fileVault = loadVault({ dataDir: t.dir, env: {} });
    const userIds = await populate(fileVault, 1);
    const next = path.join(t.dir, `${KEY_FILE_NAME}.next`);
    for (const torn of ['', generateKey().toString('base64').slice(0, 20)]) {
      fs.writeFileSync(next, torn, { mode: 0o600 });
      const warnings: string[] = [];
      const server = loadVaultWithPending({ dataDir: t.dir, env: {}, onWarning: (m) => warnings.push(m) });
      assert.equal(server.keyId, fileVault.keyId);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0] ?? '', /ignoring .*encryption\.key\.next: it is not a key .*safe to delete/);
      const svc = createConnectionService({ db: t.db, vault: server, clientFor: () => undefined });
      assert.equal((await svc.credential(userIds[0] ?? '', oauth))?.values['token'], 'tok-0');
    }
    const res = await rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} });
    assert.equal(res.rotated, 2);
    assert.ok(!fs.existsSync(next));
    assert.equal(loadVaultWithPending({ dataDir: t.dir, env: {} }).keyId, res.keyId);
  });

  it('an encryption.key.next this process cannot read is never taken for torn: start-up and `keys rotate` stop, and it stays', async () => {
    const fileVault = loadVault({ dataDir: t.dir, env: {} });
    await populate(fileVault, 1);
    const next = path.join(t.dir, `${KEY_FILE_NAME}.next`);
    // unreadable whatever the user (the tests may run as root, which reads any mode): a directory
    fs.mkdirSync(next);
    try {
      assert.throws(() => loadVaultWithPending({ dataDir: t.dir, env: {} }), {
        code: 'VAULT_KEY_FILE',
        message: /cannot read .*encryption\.key\.next: .*do not delete it/,
      });
      await assert.rejects(rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} }), {
        code: 'VAULT_KEY_FILE',
        message: /cannot read .*encryption\.key\.next/,
      });
      assert.ok(fs.statSync(next).isDirectory(), 'it was not removed');
    } finally {
      fs.rmSync(next, { recursive: true, force: true });
    }
  });

  it('one key-file rotation at a time: a rotation while another holds the lock is refused, nothing changed; the lock goes with the rotation', async () => {
    const fileVault = loadVault({ dataDir: t.dir, env: {} });
    await populate(fileVault, 1);
    const file = path.join(t.dir, KEY_FILE_NAME);
    const lock = `${file}.lock`;
    // another rotation, mid-way: its lock, and its key in .next before its commit
    fs.writeFileSync(lock, `${process.pid} ${new Date().toISOString()}\n`, { mode: 0o600 });
    fs.writeFileSync(`${file}.next`, generateKey().toString('base64'), { mode: 0o600 });
    const before = {
      key: fs.readFileSync(file, 'utf8'),
      next: fs.readFileSync(`${file}.next`, 'utf8'),
      rows: await t.db.all('SELECT id, secret, key_id FROM connections ORDER BY id'),
    };
    await assert.rejects(
      rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} }),
      (err: Error & { code?: string }) =>
        err.code === 'VAULT_KEY_FILE' &&
        /rotation refused, nothing changed: another `workbench keys rotate` holds .*encryption\.key\.lock \(process \d+, since /.test(
          err.message,
        ) &&
        /delete .*encryption\.key\.lock/.test(err.message),
    );
    assert.deepEqual(
      {
        key: fs.readFileSync(file, 'utf8'),
        next: fs.readFileSync(`${file}.next`, 'utf8'),
        rows: await t.db.all('SELECT id, secret, key_id FROM connections ORDER BY id'),
      },
      before,
      "the other rotation's .next is kept",
    );
    assert.ok(fs.existsSync(lock), "the other one's lock is kept");
    // the other one stopped before its commit; its lock deleted as documented, the rotation goes through
    fs.rmSync(lock);
    const res = await rotateStoredKey({ db: t.db, dataDir: t.dir, env: {} });
    assert.equal(res.rotated, 2);
    assert.ok(!fs.existsSync(lock) && !fs.existsSync(`${file}.next`));
  });

  it("a new data dir and database are the owner's only", async () => {
    const dir = path.join(t.dir, 'fresh', 'data');
    const db = openSqlite(path.join(dir, 'workbench.db'));
    try {
      assert.equal(fs.statSync(dir).mode & 0o077, 0, 'data dir');
      assert.equal(fs.statSync(path.join(dir, 'workbench.db')).mode & 0o077, 0, 'database file');
    } finally {
      await db.close();
    }
  });

  it('a connection a not-yet-restarted replica sealed with the old environment key after a rotation is counted at start and re-sealed', async () => {
    const K1 = generateKey().toString('base64');
    const K2 = generateKey().toString('base64');
    const a = await t.users.create('a@example.com', 'acme');
    const b = await t.users.create('b@example.com', 'acme');
    const onK1 = createConnectionService({
      db: t.db,
      vault: loadVaultWithPending({ dataDir: t.dir, env: { WORKBENCH_ENCRYPTION_KEY: K1 } }),
      clientFor: () => undefined,
    });
    await onK1.saveApiKey(a.id, keyed, { apiKey: 'k_aaaaaaaaaa' });
    // the documented order: every server reads K2 (as a previous key) before the rotation
    assert.equal(
      (
        await rotateStoredKey({
          db: t.db,
          dataDir: t.dir,
          env: { WORKBENCH_ENCRYPTION_KEY: K1, WORKBENCH_ENCRYPTION_KEY_PREVIOUS: K2 },
          newKey: K2,
        })
      ).rotated,
      1,
    );
    const stillOnK1 = createConnectionService({
      db: t.db,
      vault: loadVaultWithPending({
        dataDir: t.dir,
        env: { WORKBENCH_ENCRYPTION_KEY: K1, WORKBENCH_ENCRYPTION_KEY_PREVIOUS: K2 },
      }),
      clientFor: () => undefined,
    });
    assert.equal(
      (await stillOnK1.credential(a.id, keyed))?.values['apiKey'],
      'k_aaaaaaaaaa',
      'a replica not restarted yet reads the rotated row',
    );
    await stillOnK1.saveApiKey(b.id, keyed, { apiKey: 'k_bbbbbbbbbb' }); // ...and seals a new one with K1

    // every server restarted on K2, K1 kept as previous: the start-up count names the row left on K1
    const onK2 = loadVaultWithPending({
      dataDir: t.dir,
      env: { WORKBENCH_ENCRYPTION_KEY: K2, WORKBENCH_ENCRYPTION_KEY_PREVIOUS: K1 },
    });
    const k1Id = createVault(parseEncryptionKey(K1)).keyId;
    const usage = await keyUsage(t.db, onK2);
    assert.deepEqual(counts(usage), { primary: 1, older: { [k1Id]: 1 }, unknown: {} });
    const [warning] = keyUsageWarnings(usage);
    assert.match(warning ?? '', /1 connection\(s\) are sealed with an older key.*workbench keys reseal/);
    // without K1, the row is reported as unreadable
    const k2Only = loadVaultWithPending({ dataDir: t.dir, env: { WORKBENCH_ENCRYPTION_KEY: K2 } });
    assert.deepEqual(counts(await keyUsage(t.db, k2Only)), { primary: 1, older: {}, unknown: { [k1Id]: 1 } });
    assert.match(
      keyUsageWarnings(await keyUsage(t.db, k2Only)).join('\n'),
      /1 connection\(s\) are sealed with a key this server does not have/,
    );

    // rotating to the key in use is refused, pointing at the re-seal; the re-seal moves the row to K2
    await assert.rejects(
      rotateStoredKey({
        db: t.db,
        dataDir: t.dir,
        env: { WORKBENCH_ENCRYPTION_KEY: K2, WORKBENCH_ENCRYPTION_KEY_PREVIOUS: K1 },
        newKey: K2,
      }),
      { code: 'VAULT_BAD_KEY', message: /keys reseal/ },
    );
    assert.deepEqual(await resealKeys(t.db, onK2), { resealed: 1, keyId: onK2.keyId, left: 0 });
    assert.deepEqual(counts(await keyUsage(t.db, k2Only)), { primary: 2, older: {}, unknown: {} });
    assert.deepEqual(keyUsageWarnings(await keyUsage(t.db, k2Only)), []);
    // now K1 can go: K2 alone reads both
    const after = createConnectionService({ db: t.db, vault: k2Only, clientFor: () => undefined });
    assert.equal((await after.credential(a.id, keyed))?.values['apiKey'], 'k_aaaaaaaaaa');
    assert.equal((await after.credential(b.id, keyed))?.values['apiKey'], 'k_bbbbbbbbbb');
    assert.equal((await resealKeys(t.db, onK2)).resealed, 0);
  });

  it('a re-seal changes nothing when a row is sealed with a key it does not have, and names the row', async () => {
    const oldKey = generateKey();
    await populate(createVault(oldKey), 2);
    const vault = createVault(generateKey(), { previous: [oldKey] });
    const victim = await t.db.get<{ id: string }>('SELECT id FROM connections ORDER BY id LIMIT 1');
    await t.db.run('UPDATE connections SET secret = ?, key_id = ? WHERE id = ?', [
      createVault(generateKey()).encrypt('x', victim?.id ?? ''),
      'feedfacefeedface',
      victim?.id ?? '',
    ]);
    const before = await t.db.all('SELECT id, secret, key_id FROM connections ORDER BY id');
    await assert.rejects(
      resealKeys(t.db, vault),
      (err: Error & { code?: string }) =>
        err.code === 'VAULT_DECRYPT_FAILED' &&
        err.message.includes(victim?.id ?? '?') &&
        /nothing changed/.test(err.message),
    );
    assert.deepEqual(await t.db.all('SELECT id, secret, key_id FROM connections ORDER BY id'), before);
  });

  it('rotates an environment key to the key the operator gives (never to one printed afterwards)', async () => {
    const envKey = generateKey().toString('base64');
    const env = { WORKBENCH_ENCRYPTION_KEY: envKey };
    await populate(loadVault({ dataDir: t.dir, env }), 2);
    const before = await t.db.all('SELECT id, secret FROM connections ORDER BY id');
    await assert.rejects(rotateStoredKey({ db: t.db, dataDir: t.dir, env }), {
      code: 'VAULT_BAD_KEY',
      message: /give the new key with --new-key.*nothing changed/,
    });
    assert.deepEqual(await t.db.all('SELECT id, secret FROM connections ORDER BY id'), before);
    const given = generateKey().toString('base64');
    // not read as a previous key yet (so, by the documented order, not by every server either): refused
    await assert.rejects(rotateStoredKey({ db: t.db, dataDir: t.dir, env, newKey: given }), {
      code: 'VAULT_BAD_KEY',
      message: /is not in WORKBENCH_ENCRYPTION_KEY_PREVIOUS: .*nothing changed/,
    });
    assert.deepEqual(await t.db.all('SELECT id, secret FROM connections ORDER BY id'), before);
    const res = await rotateStoredKey({
      db: t.db,
      dataDir: t.dir,
      env: { ...env, WORKBENCH_ENCRYPTION_KEY_PREVIOUS: given },
      newKey: given,
    });
    assert.equal(res.storedIn, 'env');
    assert.equal(res.newKeyBase64, given);
    const next = loadVault({ dataDir: t.dir, env: { WORKBENCH_ENCRYPTION_KEY: res.newKeyBase64 } });
    const rows = await t.db.all<{ id: string; secret: string }>('SELECT id, secret FROM connections');
    for (const r of rows) assert.match(next.decrypt(r.secret, r.id), /values/);
    await assert.rejects(
      rotateStoredKey({
        db: t.db,
        dataDir: t.dir,
        env: { WORKBENCH_ENCRYPTION_KEY: res.newKeyBase64 },
        newKey: res.newKeyBase64,
      }),
      { code: 'VAULT_BAD_KEY', message: /already in use/ },
    );
  });
});
