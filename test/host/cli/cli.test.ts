/**
 * @module test/host/cli/cli.test
 * The `workbench` command as operators run it (the real bin, a temporary data dir): a misspelt
 * option is refused (exit 2) instead of ignored, a serve that cannot listen creates no first user
 * (the next start does, and prints its key), re-importing a connection says it replaced one and
 * keeps its config unless --config is given, and key rotation (keys rotate, keys reseal) keeps
 * every connection readable by the servers that use them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import { BUILTIN_PLUGINS_DIR } from '../../../host/paths.js';
import { openSqlite } from '../../../host/storage/sqlite.js';
import { migrate } from '../../../host/storage/migrations.js';
import { BIN, runCli, startServe } from '../../helpers/cli.js';
import { startGateway } from '../../helpers/gateway.js';
import { startUpstream } from '../../helpers/upstream.js';

describe('the workbench command', () => {
  let dir: string;
  const run = (...argv: string[]) => runCli({ WORKBENCH_DATA_DIR: dir }, ...argv);
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-cli-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('serve exits 2 (and stops its sandbox process) when the port is taken or the policy does not validate', async () => {
    const taken = net.createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = String((taken.address() as net.AddressInfo).port);
    try {
      const busy = spawnSync(process.execPath, ['--no-node-snapshot', BIN, 'serve'], {
        env: {
          PATH: process.env['PATH'] ?? '',
          WORKBENCH_DATA_DIR: dir,
          LOG_LEVEL: 'silent',
          HOST: '127.0.0.1',
          PORT: port,
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(busy.status, 2, `exit ${busy.status} (null: still running at the timeout)\n${busy.stderr}`);
      assert.match(busy.stderr, /EADDRINUSE|in use/);
    } finally {
      taken.close();
    }
    const policy = path.join(dir, 'bad-policy.json');
    fs.writeFileSync(policy, JSON.stringify({ http: { allowPrivateCidrs: ['10.0.0.0/33'] } }));
    const bad = spawnSync(process.execPath, ['--no-node-snapshot', BIN, 'serve'], {
      env: {
        PATH: process.env['PATH'] ?? '',
        WORKBENCH_DATA_DIR: dir,
        LOG_LEVEL: 'silent',
        HOST: '127.0.0.1',
        PORT: '0',
        WORKBENCH_POLICY: policy,
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /GW_ERR_POLICY_INVALID.*http\.allowPrivateCidrs\.0/);
  });

  it('serve refuses a DATABASE_URL of another scheme (a misspelt postgres://) instead of opening a SQLite file of that name', () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-cli-cwd-'));
    try {
      const r = spawnSync(process.execPath, ['--no-node-snapshot', BIN, 'serve'], {
        cwd,
        env: {
          PATH: process.env['PATH'] ?? '',
          WORKBENCH_DATA_DIR: path.join(cwd, 'data'),
          LOG_LEVEL: 'silent',
          HOST: '127.0.0.1',
          PORT: '0',
          DATABASE_URL: 'postgress://wb:s3cret@127.0.0.1:1/wb',
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.status, 2, `exit ${r.status}\n${r.stderr}`);
      assert.match(
        r.stderr,
        /GW_ERR_CONFIG_INVALID.*DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL, or a SQLite file path; got a "postgress:" URL/,
      );
      assert.doesNotMatch(r.stderr + r.stdout, /s3cret/);
      assert.deepEqual(fs.readdirSync(cwd), [], 'nothing was created');
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('serve on a taken port creates no user and prints no key, so the next start that listens creates it and prints its key', async () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-cli-first-'));
    const env = { PATH: process.env['PATH'] ?? '', WORKBENCH_DATA_DIR: fresh, LOG_LEVEL: 'info', HOST: '127.0.0.1' };
    const taken = net.createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const port = String((taken.address() as net.AddressInfo).port);
      const busy = spawnSync(process.execPath, ['--no-node-snapshot', BIN, 'serve'], {
        env: { ...env, PORT: port },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(busy.status, 2, busy.stderr);
      assert.match(busy.stderr, /EADDRINUSE/);
      assert.doesNotMatch(busy.stdout + busy.stderr, /API key is shown once/);
      const db = openSqlite(path.join(fresh, 'workbench.db'));
      try {
        assert.deepEqual(await db.all('SELECT email FROM users'), [], 'no user was created');
      } finally {
        await db.close();
      }
      taken.close();
      await once(taken, 'close');
      // the next start, once the port is free, is the first start
      const server = await startServe({ ...env, PORT: port });
      try {
        assert.match(
          server.stderr(),
          /Workbench created a local user \(local@workbench\.local\)\. Its API key is shown once:\n\n {2}wb_\S+/,
          server.output(),
        );
        const made = openSqlite(path.join(fresh, 'workbench.db'));
        try {
          // made by an operator: no key stands behind it, and revoking another key never revokes it
          assert.deepEqual(await made.all('SELECT created_via, created_with_key_id FROM api_keys'), [
            { created_via: 'operator', created_with_key_id: null },
          ]);
        } finally {
          await made.close();
        }
      } finally {
        assert.equal(await server.stop(), 0, server.output());
      }
    } finally {
      if (taken.listening) taken.close();
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('serve whose first API key cannot be stored stops (server closed, exit 2) and leaves no user, so the next start prints a key', async () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-cli-nokey-'));
    const env = {
      PATH: process.env['PATH'] ?? '',
      WORKBENCH_DATA_DIR: fresh,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
    };
    try {
      const db = openSqlite(path.join(fresh, 'workbench.db'));
      try {
        await migrate(db);
        // a database that takes the user and refuses the key
        await db.run(
          "CREATE TRIGGER refuse_keys BEFORE INSERT ON api_keys BEGIN SELECT RAISE(ABORT, 'api_keys refused by the test'); END",
        );
      } finally {
        await db.close();
      }
      const r = spawnSync(process.execPath, ['--no-node-snapshot', BIN, 'serve'], {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.signal, null, `the server kept running after the failure:\n${r.stderr}`);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /could not create the first user: .*api_keys refused by the test/);
      assert.doesNotMatch(r.stderr, /API key is shown once/);
      const after = openSqlite(path.join(fresh, 'workbench.db'));
      try {
        assert.deepEqual(await after.all('SELECT email FROM users'), [], 'no user without a key');
        await after.run('DROP TRIGGER refuse_keys');
      } finally {
        await after.close();
      }
      const server = await startServe(env);
      try {
        assert.match(server.stderr(), /Its API key is shown once:\n\n {2}wb_\S+/, server.output());
      } finally {
        assert.equal(await server.stop(), 0, server.output());
      }
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  });

  it("users keys lists a user's keys; users revoke-key revokes a leaked key by its text, or by prefix or id with --email, with the keys created with it, and a running server refuses it", async () => {
    const made = JSON.parse(run('users', 'create', '--email', 'leak@example.com', '--json').stdout) as {
      userId: string;
      apiKey: string;
    };
    const spare = JSON.parse(run('users', 'create', '--email', 'spare@example.com', '--json').stdout) as {
      userId: string;
      apiKey: string;
    };
    // a key made in a portal session signed in with the first one (as the keys page records it)
    const db = openSqlite(path.join(dir, 'workbench.db'));
    let child: string;
    try {
      const { UserStore } = await import('../../../host/storage/users.js');
      const store = new UserStore(db);
      const parent = await store.keyBySecret(made.apiKey);
      assert.ok(parent);
      child = (await store.createApiKey(made.userId, 'minted', { via: 'key', keyId: parent.keyId })).key;
    } finally {
      await db.close();
    }
    const listed = JSON.parse(run('users', 'keys', '--email', 'leak@example.com', '--json').stdout) as {
      keys: Array<{ id: string; prefix: string; revokedAt: string | null; createdVia: string }>;
    };
    assert.deepEqual(
      listed.keys.map((k) => [k.createdVia, k.revokedAt]),
      [
        ['operator', null],
        ['key', null],
      ],
    );
    const text = run('users', 'keys', '--email', 'leak@example.com');
    assert.equal(text.code, 0);
    assert.match(
      text.stdout,
      new RegExp(`${listed.keys[1]!.prefix}… +active +minted +created with key ${listed.keys[0]!.prefix}…`),
    );
    assert.ok(!text.stdout.includes(made.apiKey) && !text.stdout.includes(child), 'never a secret');

    const server = await startServe({ WORKBENCH_DATA_DIR: dir });
    try {
      const status = async (key: string) =>
        (
          await fetch(`${server.url}/mcp`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              authorization: `Bearer ${key}`,
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          })
        ).status;
      assert.deepEqual([await status(made.apiKey), await status(child)], [200, 200]);
      // the leaked key's text alone is enough
      const revoked = run('users', 'revoke-key', '--key', made.apiKey, '--json');
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.deepEqual(JSON.parse(revoked.stdout), { userId: made.userId, revoked: listed.keys.map((k) => k.id) });
      // the running server re-checks keys every second
      const deadline = Date.now() + 10_000;
      while ((await status(child)) !== 401 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual([await status(made.apiKey), await status(child)], [401, 401]);
      assert.equal(await status(spare.apiKey), 200, "another user's key is untouched");
    } finally {
      assert.equal(await server.stop(), 0, server.output());
    }
    // by the prefix `users keys` shows (with or without its …), with --email
    const prefix = (
      JSON.parse(run('users', 'keys', '--email', 'spare@example.com', '--json').stdout) as {
        keys: Array<{ prefix: string }>;
      }
    ).keys[0]!.prefix;
    const byPrefix = run('users', 'revoke-key', '--email', 'spare@example.com', '--key', `${prefix}…`);
    assert.equal(byPrefix.code, 0, byPrefix.stderr);
    assert.match(byPrefix.stdout, new RegExp(`^Revoked ${prefix}…\\. Servers refuse it within a second`));
    // refusals, each saying why and changing nothing
    const refusals: Array<[string[], RegExp]> = [
      [['--key', made.apiKey], /already revoked/],
      [['--key', prefix], /not the full text of a key: give the user with --email/],
      [['--email', 'nobody@example.com', '--key', prefix], /no user with email nobody@example\.com/],
      [['--email', 'spare@example.com', '--key', prefix], /has no active key/],
      [['--email', 'leak@example.com', '--key', 'wb_'], /has no active key/],
    ];
    for (const [argv, why] of refusals) {
      const r = run('users', 'revoke-key', ...argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, why, argv.join(' '));
    }
  });

  it('refuses an option the command does not take, and creates nothing', () => {
    const r = run('users', 'create', '--email', 'a@example.com', '--tenat', 'acme', '--json');
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /users create does not take --tenat \(it takes --email, --tenant, --json\)/);
    assert.equal(r.stdout, '');
    const rotate = run('keys', 'rotate', '--newkey', 'x');
    assert.equal(rotate.code, 2);
    assert.match(rotate.stderr, /keys rotate does not take --newkey/);
    assert.equal(fs.existsSync(path.join(dir, 'encryption.key.next')), false, 'no key written');
  });

  it("users create makes a key created by an operator, which no other key's revocation takes along", async () => {
    const r = run('users', 'create', '--email', 'origin@example.com', '--json');
    assert.equal(r.code, 0, r.stderr);
    const { userId } = JSON.parse(r.stdout) as { userId: string };
    const db = openSqlite(path.join(dir, 'workbench.db'));
    try {
      assert.deepEqual(
        await db.all('SELECT created_via, created_with_key_id FROM api_keys WHERE user_id = ?', [userId]),
        [{ created_via: 'operator', created_with_key_id: null }],
      );
    } finally {
      await db.close();
    }
  });

  it('keys reseal re-encrypts the connections left on the previous key file under the current key', () => {
    assert.equal(run('users', 'create', '--email', 'reseal@example.com', '--json').code, 0);
    const imported = run(
      'connections',
      'import',
      '--email',
      'reseal@example.com',
      '--integration',
      'github',
      '--token',
      'gho_reseal',
      '--json',
    );
    assert.equal(imported.code, 0, imported.stderr);
    const rotated = run('keys', 'rotate', '--json');
    assert.equal(rotated.code, 0, rotated.stderr);
    // a server still on the old key seals one more connection with it: here, the old key file
    const oldKey = fs.readFileSync(path.join(dir, 'encryption.key.previous'), 'utf8');
    const newKey = fs.readFileSync(path.join(dir, 'encryption.key'), 'utf8');
    fs.writeFileSync(path.join(dir, 'encryption.key'), oldKey, { mode: 0o600 });
    fs.rmSync(path.join(dir, 'encryption.key.previous'));
    assert.equal(run('users', 'create', '--email', 'late@example.com', '--json').code, 0);
    assert.equal(
      run(
        'connections',
        'import',
        '--email',
        'late@example.com',
        '--integration',
        'github',
        '--token',
        'gho_late',
        '--json',
      ).code,
      0,
    );
    fs.writeFileSync(path.join(dir, 'encryption.key'), newKey, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'encryption.key.previous'), oldKey, { mode: 0o600 });
    const r = run('keys', 'reseal', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { resealed: 1, keyId: JSON.parse(rotated.stdout).keyId, left: 0 });
    const again = run('keys', 'reseal');
    assert.match(again.stdout, /Re-encrypted 0 connection\(s\).*0 left/);
  });

  it('keys reseal run with the configuration from before a rotation is refused (it would move every connection back), and a server started with it is warned', async () => {
    const own = fs.mkdtempSync(path.join(dir, 'rotated-'));
    const OLD = generateKey().toString('base64');
    const NEW = generateKey().toString('base64');
    const oldId = createVault(Buffer.from(OLD, 'base64')).keyId;
    const newId = createVault(Buffer.from(NEW, 'base64')).keyId;
    const env = (key: string, previous: string): Record<string, string> => ({
      WORKBENCH_DATA_DIR: own,
      WORKBENCH_ENCRYPTION_KEY: key,
      WORKBENCH_ENCRYPTION_KEY_PREVIOUS: previous,
    });
    for (const n of [1, 2, 3]) {
      assert.equal(runCli(env(OLD, NEW), 'users', 'create', '--email', `r${n}@example.com`).code, 0);
      const imported = runCli(
        env(OLD, NEW),
        'connections',
        'import',
        '--email',
        `r${n}@example.com`,
        '--integration',
        'github',
        '--token',
        `gho_${n}`,
      );
      assert.equal(imported.code, 0, imported.stderr);
    }
    const rotated = runCli(env(OLD, NEW), 'keys', 'rotate', '--new-key', NEW, '--json');
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.equal(JSON.parse(rotated.stdout).keyId, newId);
    const keyIds = async (): Promise<string[]> => {
      const db = openSqlite(path.join(own, 'workbench.db'));
      try {
        return (await db.all<{ key_id: string }>('SELECT key_id FROM connections ORDER BY id')).map((r) => r.key_id);
      } finally {
        await db.close();
      }
    };
    assert.deepEqual(await keyIds(), [newId, newId, newId]);

    // a replica restarted mid-way with the old configuration: the old key current, the new one previous
    const stale = runCli(env(OLD, NEW), 'keys', 'reseal', '--json');
    assert.equal(stale.code, 2, stale.stdout + stale.stderr);
    assert.equal(stale.stdout, '');
    assert.match(
      stale.stderr,
      new RegExp(
        `re-seal refused, nothing changed: .*moved the connections to key ${newId}.*runs with key ${oldId} as its current key.*set WORKBENCH_ENCRYPTION_KEY to the key whose id is ${newId}`,
      ),
    );
    assert.deepEqual(await keyIds(), [newId, newId, newId], 'every connection stays on the new key');
    const server = await startServe(env(OLD, NEW));
    await server.stop();
    assert.ok(server.url, server.output());
    assert.match(
      server.output(),
      new RegExp(
        `this server runs with key ${oldId}, but \`workbench keys rotate\` moved the connections to key ${newId}`,
      ),
    );
    assert.doesNotMatch(
      server.output(),
      /run `workbench keys reseal` once every server runs/,
      'no advice to re-seal with this configuration',
    );

    // with the new configuration it goes through and reports the key rotate printed
    const good = runCli(env(NEW, OLD), 'keys', 'reseal', '--json');
    assert.equal(good.code, 0, good.stderr);
    assert.deepEqual(JSON.parse(good.stdout), { resealed: 0, keyId: newId, left: 0 });
  });

  it('keys rotate beside a running server with a key file: the server reads the rotated connections and seals new ones with the new key, without a restart', async () => {
    const upstream = await startUpstream((req) => ({ json: { login: 'octo', auth: req.headers['authorization'] } }));
    const gw = await startGateway({ plugins: ['github'], upstreams: { 'https://api.github.com': upstream.origin } });
    try {
      await gw.connect('github', { token: 'gho_before' });
      assert.equal((await gw.execute('github_get_me')).result?.login, 'octo');
      const env = { WORKBENCH_DATA_DIR: gw.dataDir, DATABASE_URL: path.join(gw.dataDir, 'workbench.db') };
      const rotated = runCli(env, 'keys', 'rotate', '--json');
      assert.equal(rotated.code, 0, rotated.stderr);
      const { keyId } = JSON.parse(rotated.stdout) as { keyId: string };
      const after = await gw.execute('github_get_me');
      assert.equal(after.result?.login, 'octo', JSON.stringify(after));
      assert.equal(upstream.last().headers['authorization'], 'Bearer gho_before');
      // a connection the running server makes now is sealed with the new key: nothing to re-seal
      const other = await gw.createUser('after-rotation@example.com');
      await gw.connect('github', { token: 'gho_after' }, other.user);
      assert.deepEqual(await gw.db.all('SELECT DISTINCT key_id FROM connections'), [{ key_id: keyId }]);
      const resealed = runCli(env, 'keys', 'reseal', '--json');
      assert.equal(resealed.code, 0, resealed.stderr);
      assert.deepEqual(JSON.parse(resealed.stdout), { resealed: 0, keyId, left: 0 });
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  it('a torn encryption.key.next (a rotation that crashed writing it) stops neither keys reseal nor keys rotate, which removes it', () => {
    const own = fs.mkdtempSync(path.join(dir, 'torn-next-'));
    const env = { WORKBENCH_DATA_DIR: own };
    const first = runCli(env, 'keys', 'rotate', '--json');
    assert.equal(first.code, 0, first.stderr);
    const next = path.join(own, 'encryption.key.next');
    fs.writeFileSync(next, 'q1w2e3', { mode: 0o600 });
    const reseal = runCli(env, 'keys', 'reseal', '--json');
    assert.equal(reseal.code, 0, reseal.stderr);
    assert.match(reseal.stderr, /ignoring .*encryption\.key\.next: it is not a key .*safe to delete/);
    const rotated = runCli(env, 'keys', 'rotate', '--json');
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.ok(!fs.existsSync(next));
    const after = runCli(env, 'keys', 'reseal', '--json');
    assert.equal(after.code, 0, after.stderr);
    assert.equal(after.stderr, '');
    assert.equal(
      (JSON.parse(after.stdout) as { keyId: string }).keyId,
      (JSON.parse(rotated.stdout) as { keyId: string }).keyId,
    );
  });

  it('keys rotate --new-key with environment keys is refused, nothing changed, unless the new key is already in WORKBENCH_ENCRYPTION_KEY_PREVIOUS', async () => {
    const own = fs.mkdtempSync(path.join(dir, 'env-rotate-'));
    const OLD = generateKey().toString('base64');
    const NEW = generateKey().toString('base64');
    const newId = createVault(Buffer.from(NEW, 'base64')).keyId;
    const onOld = { WORKBENCH_DATA_DIR: own, WORKBENCH_ENCRYPTION_KEY: OLD };
    assert.equal(runCli(onOld, 'users', 'create', '--email', 'env@example.com').code, 0);
    assert.equal(
      runCli(
        onOld,
        'connections',
        'import',
        '--email',
        'env@example.com',
        '--integration',
        'github',
        '--token',
        'gho_env',
      ).code,
      0,
    );
    const refused = runCli(onOld, 'keys', 'rotate', '--new-key', NEW, '--json');
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      new RegExp(
        `the new key \\(${newId}\\) is not in WORKBENCH_ENCRYPTION_KEY_PREVIOUS: .*nothing changed\\. First add the new key to WORKBENCH_ENCRYPTION_KEY_PREVIOUS on every server and restart them`,
      ),
    );
    const db = openSqlite(path.join(own, 'workbench.db'));
    try {
      const before = createVault(Buffer.from(OLD, 'base64')).keyId;
      assert.deepEqual(await db.all('SELECT key_id FROM connections'), [{ key_id: before }]);
      const done = runCli(
        { ...onOld, WORKBENCH_ENCRYPTION_KEY_PREVIOUS: NEW },
        'keys',
        'rotate',
        '--new-key',
        NEW,
        '--json',
      );
      assert.equal(done.code, 0, done.stderr);
      assert.equal(JSON.parse(done.stdout).keyId, newId);
      assert.deepEqual(await db.all('SELECT key_id FROM connections'), [{ key_id: newId }]);
    } finally {
      await db.close();
    }
  });

  it('a call whose stored credential the server cannot read tells the agent to contact the operator, without key ids or operator steps; the log has them', async () => {
    const own = fs.mkdtempSync(path.join(dir, 'unreadable-'));
    const K0 = generateKey().toString('base64');
    const K1 = generateKey().toString('base64');
    const k0Id = createVault(Buffer.from(K0, 'base64')).keyId;
    const k1Id = createVault(Buffer.from(K1, 'base64')).keyId;
    const created = runCli(
      { WORKBENCH_DATA_DIR: own, WORKBENCH_ENCRYPTION_KEY: K0 },
      'users',
      'create',
      '--email',
      'lost@example.com',
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };
    assert.equal(
      runCli(
        { WORKBENCH_DATA_DIR: own, WORKBENCH_ENCRYPTION_KEY: K0 },
        'connections',
        'import',
        '--email',
        'lost@example.com',
        '--integration',
        'github',
        '--token',
        'gho_lost',
      ).code,
      0,
    );
    // the server runs with another key, and not the one the connection was sealed with
    const server = await startServe({ WORKBENCH_DATA_DIR: own, WORKBENCH_ENCRYPTION_KEY: K1 });
    let item: { code?: string; error?: string } | undefined;
    try {
      assert.ok(server.url, server.output());
      const res = await fetch(`${server.url}/rest/github`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ executions: [{ tool: 'github_get_me', args: {} }] }),
      });
      item = ((await res.json()) as { results: { code?: string; error?: string }[] }).results[0];
    } finally {
      await server.stop();
    }
    assert.equal(item?.code, 'GW_ERR_ENGINE_CREDENTIAL_FAILED', JSON.stringify(item));
    assert.match(
      item?.error ?? '',
      /the stored github credential cannot be read on this server .*contact the operator of this Workbench server/,
    );
    assert.doesNotMatch(
      item?.error ?? '',
      new RegExp(`${k0Id}|${k1Id}|WORKBENCH_ENCRYPTION_KEY|keys reseal|encryption\\.key|reconnect`),
      'no key ids or operator steps for the agent',
    );
    // the operator's log names both keys and what to do
    const logged = server
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"the stored github credential of connection'));
    assert.equal(logged.length, 1, server.output());
    assert.match(
      logged[0] ?? '',
      new RegExp(
        `encrypted with key ${k0Id}, which this server does not have \\(its key is ${k1Id}\\): add that key to WORKBENCH_ENCRYPTION_KEY_PREVIOUS`,
      ),
    );
  });

  it('refuses a flag given twice and a value for an on/off flag, and creates nothing', async () => {
    const twice = run('users', 'create', '--email', 'x@example.com', '--email', 'y@example.com', '--json');
    assert.equal(twice.code, 2, twice.stderr);
    assert.match(twice.stderr, /--email is given more than once/);
    const valued = run('users', 'create', '--email', 'z@example.com', '--json=false');
    assert.equal(valued.code, 2, valued.stderr);
    assert.match(valued.stderr, /--json takes no value/);
    assert.equal(twice.stdout + valued.stdout, '');
    const db = openSqlite(path.join(dir, 'workbench.db'));
    try {
      assert.deepEqual(
        await db.all("SELECT email FROM users WHERE email IN ('x@example.com', 'y@example.com', 'z@example.com')"),
        [],
      );
    } finally {
      await db.close();
    }
  });

  it('re-importing a connection says it replaced one, and keeps its config unless --config is given', async () => {
    const created = run('users', 'create', '--email', 'b@example.com', '--tenant', 'acme', '--json');
    assert.equal(created.code, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).tenant, 'acme');
    const first = run(
      'connections',
      'import',
      '--email',
      'b@example.com',
      '--integration',
      'atlassian-jira',
      '--token',
      't1',
      '--config',
      '{"site":"team-a"}',
      '--json',
    );
    assert.equal(first.code, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).replaced, false);
    const second = run(
      'connections',
      'import',
      '--email',
      'b@example.com',
      '--integration',
      'atlassian-jira',
      '--token',
      't2',
    );
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^Replaced the atlassian-jira connection of b@example\.com/);
    // API-key fields: a number is taken as written and null leaves the field out; an object is refused
    const keyed = run(
      'connections',
      'import',
      '--email',
      'b@example.com',
      '--integration',
      'newrelic',
      '--values',
      '{"apiKey":"NRAK-abcdefgh","region":"eu","accountId":1234567}',
    );
    assert.equal(keyed.code, 0, keyed.stderr);
    const nulled = run(
      'connections',
      'import',
      '--email',
      'b@example.com',
      '--integration',
      'newrelic',
      '--values',
      '{"apiKey":"NRAK-abcdefgh","accountId":null}',
      '--json',
    );
    assert.equal(nulled.code, 0, nulled.stderr);
    const objected = run(
      'connections',
      'import',
      '--email',
      'b@example.com',
      '--integration',
      'newrelic',
      '--values',
      '{"apiKey":{"k":"NRAK-abcdefgh"}}',
    );
    assert.notEqual(objected.code, 0);
    assert.match(
      objected.stderr,
      /--values: field "apiKey" must be a string \(or a number, or null to leave it out\), not object/,
    );
    const db = openSqlite(path.join(dir, 'workbench.db'));
    try {
      const rows = await db.all<{ config: string }>(
        "SELECT config FROM connections WHERE integration = 'atlassian-jira'",
      );
      assert.deepEqual(
        rows.map((r) => JSON.parse(r.config)),
        [{ site: 'team-a' }],
      );
      const relic = await db.get<{ config: string }>("SELECT config FROM connections WHERE integration = 'newrelic'");
      assert.deepEqual(
        JSON.parse(relic?.config ?? '{}'),
        { region: 'eu', accountId: '1234567' },
        'the null accountId was left out (not stored as "null"): the re-import kept both stored fields',
      );
    } finally {
      await db.close();
    }
  });
  it('plugin validate runs plugin.js in a sandbox: an import, a syntax error, no default export, a top-level throw or a missing handler exit 1 naming it', () => {
    const root = fs.mkdtempSync(path.join(dir, 'validate-'));
    const write = (name: string, source: string, tools = [`${name}_x`]): string => {
      const folder = path.join(root, name);
      fs.mkdirSync(folder);
      const manifest = {
        name,
        version: '0.1.0',
        displayName: name,
        description: 'test',
        auth: { type: 'none' },
        egress: [],
        tools: tools.map((t) => ({
          name: t,
          description: `does ${t}`,
          inputSchema: { type: 'object', properties: {} },
        })),
      };
      fs.writeFileSync(path.join(folder, 'manifest.json'), JSON.stringify(manifest));
      fs.writeFileSync(path.join(folder, 'plugin.js'), source);
      return folder;
    };
    const good = run('plugin', 'validate', write('good', 'export default { good_x: async () => 1 };'));
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /^ok: good@0\.1\.0: 1 tool\(s\)/);
    const cases: [string, string, RegExp, string[]?][] = [
      [
        'importer',
        'import fs from "node:fs";\nexport default { importer_x: async () => 1 };',
        /the module failed to load: import "node:fs" is not allowed/,
      ],
      ['syntaxerr', 'export default { async syntaxerr_x() { return 1; } ;', /the module failed to load: SyntaxError: /],
      ['nodefault', 'export const nodefault_x = async () => 1;', /the module has no default export object/],
      [
        'topthrow',
        'throw new Error("top-level boom");\nexport default {};',
        /the module failed to load: top-level boom/,
      ],
      [
        'nohandler',
        'export default { nohandler_x: async () => 1 };',
        /the default export has no function for tool "nohandler_y"/,
        ['nohandler_x', 'nohandler_y'],
      ],
    ];
    const tsFolder = path.join(root, 'ts-source');
    fs.mkdirSync(tsFolder);
    fs.writeFileSync(path.join(tsFolder, 'plugin.ts'), 'export default {};');
    const ts = run('plugin', 'validate', tsFolder);
    assert.equal(ts.code, 1);
    assert.equal(
      ts.stderr,
      `invalid: ${path.join(tsFolder, 'manifest.json')}: missing: this is a TypeScript plugin's source folder (plugin.ts); the gateway loads what \`workbench plugin build\` writes. Build it, then validate the output: workbench plugin build ${tsFolder} && workbench plugin validate ${path.join(tsFolder, 'dist')}\n`,
    );
    for (const [name, source, message, tools] of cases) {
      const folder = write(name, source, tools);
      const r = run('plugin', 'validate', folder);
      assert.equal(r.code, 1, `${name}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.ok(r.stderr.startsWith(`invalid: ${path.join(folder, 'plugin.js')}: `), r.stderr);
      assert.match(r.stderr, message, name);
    }
  });
  it('plugin validate checks tool names against the prefix, the meta-tools and the plugins installed (exit 1 naming the clash)', () => {
    const root = fs.mkdtempSync(path.join(dir, 'names-'));
    const write = (folder: string, name: string, tools: string[]): string => {
      const at = path.join(root, folder);
      fs.mkdirSync(at);
      const manifest = {
        name,
        version: '2.0.0',
        displayName: name,
        description: 'test',
        auth: { type: 'none' },
        egress: [],
        tools: tools.map((t) => ({ name: t, description: `does ${t}`, inputSchema: { type: 'object' } })),
      };
      fs.writeFileSync(path.join(at, 'manifest.json'), JSON.stringify(manifest));
      fs.writeFileSync(
        path.join(at, 'plugin.js'),
        `export default { ${tools.map((t) => `${t}: async () => 1`).join(', ')} };`,
      );
      return at;
    };
    const offPrefix = run('plugin', 'validate', write('off', 'weather', ['forecast_now']));
    assert.equal(offPrefix.code, 1);
    assert.match(
      offPrefix.stderr,
      /^invalid: .*manifest\.json: tools: every tool name of plugin "weather" starts with one prefix, the same for all its tools: "weather_" .*"forecast_now" does not start with "weather_"\n$/,
    );
    const meta = run('plugin', 'validate', write('meta', 'execute', ['execute_tools']));
    assert.match(
      meta.stderr,
      /tools\.0\.name: "execute_tools" is the name of one of the gateway's own meta-tools, which no plugin may take/,
    );
    const thief = write('thief', 'acme-github', ['github_export']);
    const clash = run('plugin', 'validate', thief);
    assert.equal(clash.code, 1);
    assert.equal(
      clash.stderr,
      `invalid: ${path.join(thief, 'manifest.json')}: clashes with plugin "github" in ${path.join(BUILTIN_PLUGINS_DIR, 'github')}: both name their tools "github_…". ` +
        'Installed beside it, neither would load: rename this plugin (its name, and its tool names with it) or remove the other\n',
    );
    const upgrade = run('plugin', 'validate', write('upgrade', 'github', ['github_only_tool']));
    assert.equal(upgrade.code, 0, upgrade.stderr);
    assert.equal(
      upgrade.stderr,
      `note: github@1.0.0 is installed in ${path.join(BUILTIN_PLUGINS_DIR, 'github')}: install this one in its place (two folders of one plugin would refuse both)\n`,
    );
    const installed = run('plugin', 'validate', path.join(BUILTIN_PLUGINS_DIR, 'github'));
    assert.equal(installed.code, 0, installed.stderr);
    assert.equal(installed.stderr, '', 'an installed plugin is not compared with itself');
  });
  it('connections import: --token fills a single secret field beside optional ones, a re-import keeps the fields it does not give, and a missing integration names the folders searched', async () => {
    assert.equal(run('users', 'create', '--email', 'c@example.com').code, 0);
    const token = run(
      'connections',
      'import',
      '--email',
      'c@example.com',
      '--integration',
      'newrelic',
      '--token',
      'NRAK-first-key',
    );
    assert.equal(token.code, 0, token.stderr);
    const eu = run(
      'connections',
      'import',
      '--email',
      'c@example.com',
      '--integration',
      'newrelic',
      '--values',
      '{"apiKey":"NRAK-second","region":"eu","accountId":"42"}',
    );
    assert.equal(eu.code, 0, eu.stderr);
    const again = run(
      'connections',
      'import',
      '--email',
      'c@example.com',
      '--integration',
      'newrelic',
      '--values',
      '{"apiKey":"NRAK-third","accountId":"43"}',
    );
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      /its config \(non-secret fields\) is kept where --config or --values did not give a new value/,
    );
    const db = openSqlite(path.join(dir, 'workbench.db'));
    try {
      const row = await db.get<{ config: string }>(
        "SELECT c.config FROM connections c JOIN users u ON u.id = c.user_id WHERE u.email = 'c@example.com' AND c.integration = 'newrelic'",
      );
      assert.deepEqual(
        JSON.parse(row?.config ?? '{}'),
        { region: 'eu', accountId: '43' },
        'the region chosen before is kept',
      );
    } finally {
      await db.close();
    }
    // two secret fields: --token cannot tell which one it is
    const plugins = fs.mkdtempSync(path.join(dir, 'plugins-'));
    fs.mkdirSync(path.join(plugins, 'basic'));
    const fields = [
      { name: 'username', label: 'User', secret: true },
      { name: 'password', label: 'Password', secret: true },
    ];
    const manifest = {
      name: 'basic',
      version: '1.0.0',
      displayName: 'Basic',
      description: 'test',
      auth: { type: 'apikey', fields, inject: { format: 'Basic {base64:username:password}' } },
      egress: ['api.example.com'],
      tools: [{ name: 'basic_x', description: 'x', inputSchema: { type: 'object' } }],
    };
    fs.writeFileSync(path.join(plugins, 'basic', 'manifest.json'), JSON.stringify(manifest));
    fs.writeFileSync(path.join(plugins, 'basic', 'plugin.js'), 'export default { basic_x: async () => 1 };');
    const two = runCli(
      { WORKBENCH_DATA_DIR: dir, WORKBENCH_PLUGINS_DIR: plugins },
      'connections',
      'import',
      '--email',
      'c@example.com',
      '--integration',
      'basic',
      '--token',
      'secret',
    );
    assert.equal(two.code, 2);
    assert.match(
      two.stderr,
      /--token fills only the single secret field of an API-key integration; basic has 2 \(username, password\): use --values '\{"username":"…","password":"…"\}'/,
    );
    const missing = run(
      'connections',
      'import',
      '--email',
      'c@example.com',
      '--integration',
      'basic',
      '--token',
      'secret',
    );
    assert.equal(missing.code, 2);
    // the shipped plugins, by folder name, in the order the command lists them
    const shipped = fs
      .readdirSync(BUILTIN_PLUGINS_DIR)
      .filter((d) => fs.existsSync(path.join(BUILTIN_PLUGINS_DIR, d, 'manifest.json')))
      .sort();
    assert.ok(shipped.includes('github') && shipped.includes('slack'));
    assert.ok(
      missing.stderr.includes(
        `plugins (found: ${shipped.join(', ')}). Run this command with the server's WORKBENCH_PLUGINS_DIR`,
      ),
      missing.stderr,
    );
    assert.match(missing.stderr, /no integration named "basic" in the plugin folders searched: /);
  });
});
