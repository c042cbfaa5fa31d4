/**
 * @module test/faults/db-faults
 * The database fails under a running gateway: locked by another process for longer than
 * busy_timeout, its disk full, read-only at start-up, or read-only while serving. Executions still
 * return their results,
 * audit failures are counted (and logged), nothing crashes, and once the fault clears new audit
 * rows are written and the file is intact.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { migrate } from '../../host/storage/migrations.js';
import { openSqlite } from '../../host/storage/sqlite.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const BETTER_SQLITE = createRequire(import.meta.url).resolve('better-sqlite3');

/** starts the test gateway with its data dir on the given file system */
async function gatewayOn(dir: string): Promise<TestGateway> {
  const saved = process.env['TMPDIR'];
  process.env['TMPDIR'] = dir;
  try {
    return await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  } finally {
    if (saved === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = saved;
  }
}

const auditCount = async (gw: TestGateway): Promise<number> =>
  (await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM audit_events'))!.n;

/** Another process takes the write lock of the file and holds it for `ms`. Resolves once it holds it. */
async function holdLock(file: string, ms: number): Promise<{ done: Promise<number | null> }> {
  const script = `
    const Database = require(${JSON.stringify(BETTER_SQLITE)});
    const db = new Database(${JSON.stringify(file)});
    db.pragma('busy_timeout = 2000');
    db.exec('BEGIN EXCLUSIVE');
    db.prepare("INSERT INTO audit_events (id, at, action, tenant, user_id, tool, success, duration_ms, transport, request_id) VALUES ('lock-holder', 0, 'EXECUTE', 't', 'u', 'x', 1, 0, 'test', 'r')").run();
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('ROLLBACK'); db.close(); process.exit(0); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const done = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.on('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
  });
  return { done };
}

describe('faults: the database is locked, full or read-only', () => {
  let fsys: Tmpfs | string;
  before(() => {
    fsys = mountTmpfs(24);
  });
  after(() => {
    if (typeof fsys !== 'string') fsys.unmount();
  });

  it('locked by another process beyond busy_timeout: calls still answer, the audit failure is counted, rows resume after', async () => {
    // needs no special file system: on the tmpfs when there is one, else in the usual temp dir
    const gw =
      typeof fsys === 'string'
        ? await startGateway({ plugins: [], pluginDirs: [FIXTURES] })
        : await gatewayOn(fsys.dir);
    try {
      await gw.execute('echo_args', { text: 'warm' }); // the main key's last_used_at is now fresh
      const other = await gw.createUser('second@example.com'); // a key never used: authenticating it writes
      const rows0 = await auditCount(gw);
      const failures0 = gw.gateway.engine.audit.failures;
      // held far longer than the call's waits for busy_timeout (5 s each), which a busy machine stretches
      const lockMs = 20_000;
      const lock = await holdLock(path.join(gw.dataDir, 'workbench.db'), lockMs);
      const t0 = performance.now();
      const item = await gw.execute('echo_args', { text: 'while locked' }, other.apiKey);
      const ms = performance.now() - t0;
      assert.equal(item.result?.text, 'while locked', JSON.stringify(item));
      assert.ok(ms < lockMs, `the call waited for busy_timeout, not for the lock (${ms} ms)`);
      assert.equal(gw.gateway.engine.audit.failures, failures0 + 1, 'the lost audit event is counted');
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(metrics, /workbench_audit_write_failures_total 1/);
      assert.equal(await lock.done, 0);
      const after = await gw.execute('echo_args', { text: 'unlocked' }, other.apiKey);
      assert.equal(after.result?.text, 'unlocked');
      assert.equal(await auditCount(gw), rows0 + 1, 'the row after the fault is written; the lost one is not invented');
      assert.deepEqual(await gw.db.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    } finally {
      await gw.close();
    }
  });

  it('disk full: calls still answer, audit failures are counted, rows resume once space is freed', async (t) => {
    if (typeof fsys === 'string') return t.skip(fsys);
    const gw = await gatewayOn(fsys.dir);
    try {
      await gw.execute('echo_args', { text: 'warm' });
      const failures0 = gw.gateway.engine.audit.failures;
      const filler = fsys.fill();
      const batch = Array.from({ length: 50 }, (_, i) => ({
        tool: 'echo_args',
        args: { text: `full-${i}-${'x'.repeat(500)}` },
      }));
      let answered = 0;
      for (let round = 0; round < 40 && gw.gateway.engine.audit.failures === failures0; round++) {
        const r = await gw.rest('fixture-echo', { executions: batch });
        assert.equal(r.status, 200, JSON.stringify(r.json).slice(0, 300));
        assert.ok(
          r.json.results.every(
            (x: { result?: { text?: string } }, i: number) => x.result?.text === batch[i]!.args.text,
          ),
        );
        answered += 50;
      }
      assert.ok(
        gw.gateway.engine.audit.failures > failures0,
        `no audit write failed after ${answered} executions on a full disk`,
      );
      const ready = await fetch(`${gw.url}/readyz`);
      assert.ok(ready.status === 200 || ready.status === 503, 'readiness answers');
      fs.rmSync(filler);
      const rows0 = await auditCount(gw);
      const item = await gw.execute('echo_args', { text: 'space again' });
      assert.equal(item.result?.text, 'space again');
      assert.equal(await auditCount(gw), rows0 + 1);
      assert.deepEqual(await gw.db.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    } finally {
      await gw.close();
    }
  });

  it('read-only while serving: results still answer, an oversized result says it was not stored, nothing stored is lost', async () => {
    // A mount cannot turn read-only under files open for writing (remount fails with EBUSY, and
    // SQLite keeps the database, -wal and -shm open), so SQLite itself is made to refuse writes on
    // the gateway's own connection: every write then fails with SQLITE_READONLY, as on a file
    // system that went read-only after a disk error.
    const gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
    try {
      await gw.execute('echo_args', { text: 'before' });
      const other = await gw.createUser('readonly@example.com'); // never used: authenticating it writes
      const rows0 = await auditCount(gw);
      const users0 = await gw.db.all('SELECT id, email FROM users ORDER BY id');
      const failures0 = gw.gateway.engine.audit.failures;
      await gw.db.run('PRAGMA query_only = ON');
      await assert.rejects(
        gw.db.run("DELETE FROM audit_events WHERE id = 'none'"),
        /readonly/i,
        'writes are refused now',
      );

      const item = await gw.execute('echo_args', { text: 'read-only' }, other.apiKey);
      assert.equal(item.result?.text, 'read-only', JSON.stringify(item));
      assert.equal(gw.gateway.engine.audit.failures, failures0 + 1, 'the lost audit event is counted');

      const client = await gw.mcpClient();
      const r = (await client.callTool({
        name: 'execute_tools',
        arguments: {
          executions: [
            { tool: 'echo_big', args: { chars: 150_000 } },
            { tool: 'echo_args', args: { text: 'small' } },
          ],
        },
      })) as { content: { type: string; text?: string }[]; isError?: boolean };
      const text = r.content[0]?.text ?? '';
      assert.ok(text.length <= 60_000, `text is ${text.length} chars`);
      const body = JSON.parse(text) as { results: { result?: { text?: string }; error?: string; code?: string }[] };
      assert.equal(body.results.length, 2, 'one item per execution');
      assert.equal(body.results[0]?.code, 'GW_ERR_RESULT_NOT_STORED', text.slice(0, 500));
      assert.match(body.results[0]?.error ?? '', /could not be stored/);
      assert.equal(body.results[1]?.result?.text, 'small', 'the other item is intact');
      assert.notEqual(r.isError, true, 'not every item failed');
      const ready = await fetch(`${gw.url}/readyz`);
      assert.equal(ready.status, 200, 'reads still work, so the gateway stays ready');
      await client.close();

      await gw.db.run('PRAGMA query_only = OFF');
      const again = await gw.execute('echo_args', { text: 'writable again' });
      assert.equal(again.result?.text, 'writable again');
      assert.ok((await auditCount(gw)) > rows0, 'rows are written again without a restart');
      assert.deepEqual(await gw.db.all('SELECT id, email FROM users ORDER BY id'), users0, 'stored users are intact');
      assert.deepEqual(await gw.db.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    } finally {
      await gw.close();
    }
  });

  it(
    'the first user cannot be stored at first start: serve stops with the reason instead of starting with no way in',
    { timeout: 60_000 },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-first-user-'));
      try {
        const db = openSqlite(path.join(dir, 'workbench.db'));
        await migrate(db);
        await db.run(
          "CREATE TRIGGER refuse_users BEFORE INSERT ON users BEGIN SELECT RAISE(ABORT, 'the disk is full'); END",
        );
        await db.close();
        const env = {
          ...process.env,
          PORT: '0',
          WORKBENCH_DATA_DIR: dir,
          WORKBENCH_PLUGINS_DIR: FIXTURES,
          LOG_LEVEL: 'silent',
        };
        const served = spawnSync(
          process.execPath,
          ['--no-node-snapshot', path.join(PACKAGE_ROOT, 'dist', 'host', 'cli', 'main.js'), 'serve'],
          { env, encoding: 'utf8', timeout: 30_000 },
        );
        assert.notEqual(served.status, null, `serve did not stop (it started with no user): ${served.stderr}`);
        assert.notEqual(served.status, 0);
        assert.match(served.stderr, /could not create the first user: the disk is full/, served.stderr);
        assert.doesNotMatch(served.stdout, /API key is shown once/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('read-only file system at start-up: serve exits 2 with a message naming the database', async (t) => {
    const ro = mountTmpfs(8);
    if (typeof ro === 'string') return t.skip(ro);
    try {
      const env = {
        ...process.env,
        PORT: '0',
        WORKBENCH_DATA_DIR: ro.dir,
        WORKBENCH_PLUGINS_DIR: FIXTURES,
        LOG_LEVEL: 'silent',
      };
      const main = path.join(PACKAGE_ROOT, 'dist', 'host', 'cli', 'main.js');
      const created = spawnSync(
        process.execPath,
        ['--no-node-snapshot', main, 'users', 'create', '--email', 'ro@example.com', '--json'],
        { env, encoding: 'utf8', timeout: 30_000 },
      );
      assert.equal(created.status, 0, created.stderr);
      ro.remount('ro');
      const served = spawnSync(process.execPath, ['--no-node-snapshot', main, 'serve'], {
        env,
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(served.status, 2, `stdout: ${served.stdout}\nstderr: ${served.stderr}`);
      assert.match(served.stderr, /workbench\.db/, served.stderr);
      assert.match(served.stderr, /read-only|readonly|unable to open/i, served.stderr);
    } finally {
      ro.unmount();
    }
  });
});
