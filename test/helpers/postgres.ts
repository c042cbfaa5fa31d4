/**
 * @module test/helpers/postgres
 * A throwaway PostgreSQL server for one test file, from the machine's server binaries (Debian's
 * `postgresql` package): initdb into a temp dir, start on a free 127.0.0.1 port with fsync off,
 * create databases on demand, and remove everything on stop. Without the binaries the tests skip,
 * except in CI (CI=true), where a missing server is a failure.
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const run = promisify(execFile);
const ROOT = '/usr/lib/postgresql';

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:PORT/DB of the database created at start */
  url: string;
  port: number;
  /** creates another empty database and resolves its URL */
  createDatabase(name?: string): Promise<string>;
  stop(): Promise<void>;
}

/** The bin dir of the newest installed server version, or undefined. */
export function findPostgresBin(): string | undefined {
  if (!fs.existsSync(ROOT)) return undefined;
  const versions = fs
    .readdirSync(ROOT)
    .filter(
      (v) =>
        /^\d+(\.\d+)?$/.test(v) &&
        fs.existsSync(path.join(ROOT, v, 'bin', 'initdb')) &&
        fs.existsSync(path.join(ROOT, v, 'bin', 'pg_ctl')),
    )
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(ROOT, versions[0], 'bin') : undefined;
}

/**
 * Why PostgreSQL tests cannot run here (a message for `skip`), or undefined when they can.
 * Throws in CI: there the server must be installed (.ci/run installs it).
 */
export function postgresSkipReason(): string | undefined {
  if (findPostgresBin()) return undefined;
  const msg = `PostgreSQL server binaries not found under ${ROOT} (install Debian's "postgresql" package)`;
  if (process.env['CI']) throw new Error(`${msg}; they are required when CI is set`);
  return `${msg}: skipping the PostgreSQL tests`;
}

/** initdb and pg_ctl refuse to run as root: as root, run them as the `postgres` system user. */
async function asServerUser(bin: string, args: string[]): Promise<void> {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root) await run('runuser', ['-u', 'postgres', '--', bin, ...args], { timeout: 60_000 });
  else await run(bin, args, { timeout: 60_000 });
}

let counter = 0;

export async function startPostgres(): Promise<TestPostgres> {
  const bin = findPostgresBin();
  if (!bin) throw new Error(postgresSkipReason() ?? 'no PostgreSQL server binaries');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    fs.chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  fs.chmodSync(dir, 0o700);
  try {
    await asServerUser(path.join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
      '--no-instructions',
    ]);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`);
  }
  let port: number;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    const opts = `-k ${dir} -h 127.0.0.1 -p ${port} -F -c full_page_writes=off -c synchronous_commit=off -c max_connections=100`;
    try {
      await asServerUser(path.join(bin, 'pg_ctl'), ['start', '-w', '-t', '30', '-D', data, '-l', log, '-o', opts]);
      break;
    } catch (err) {
      if (attempt < 2) continue; // the port may have been taken between freePort() and the start
      const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-2000) : '';
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`pg_ctl start failed: ${(err as Error).message}\n${tail}`);
    }
  }
  const base = `postgres://postgres@127.0.0.1:${port}`;
  // A test process that dies without calling stop() must not leave a server behind.
  const onExit = (): void => {
    const args = ['stop', '-D', data, '-m', 'immediate'];
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    spawnSync(
      root ? 'runuser' : path.join(bin, 'pg_ctl'),
      root ? ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), ...args] : args,
      { stdio: 'ignore' },
    );
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const stop = async (): Promise<void> => {
    process.off('exit', onExit);
    await asServerUser(path.join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'immediate', '-w']).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const createDatabase = async (name = `wb_test_${process.pid}_${++counter}`): Promise<string> => {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`bad database name "${name}"`);
    const client = new pg.Client({ connectionString: `${base}/postgres` });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return `${base}/${name}`;
  };
  try {
    const url = await createDatabase();
    return { url, port, createDatabase, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
