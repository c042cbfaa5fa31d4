/**
 * @module test/helpers/storage-backends
 * The storage backends the table-driven suites run against: a SQLite file in a temp dir, and a
 * database on a throwaway PostgreSQL server (skipped, with a message, when the server binaries are
 * missing outside CI).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../host/storage/db.js';
import { migrate } from '../../host/storage/migrations.js';
import { openPostgres } from '../../host/storage/postgres.js';
import { openSqlite } from '../../host/storage/sqlite.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from './postgres.js';

export interface Backend {
  name: 'sqlite' | 'postgres';
  /** a reason to skip, or false */
  skip: string | false;
  /** prepares the backend (starts the server); call in `before` */
  start(): Promise<void>;
  /** a fresh, empty database: its URL (or SQLite path) */
  freshUrl(): Promise<string>;
  /** a handle on a database (not migrated) */
  open(url: string): Promise<Db>;
  stop(): Promise<void>;
}

function sqliteBackend(): Backend {
  let dir = '';
  let n = 0;
  return {
    name: 'sqlite',
    skip: false,
    async start() {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-storage-'));
    },
    async freshUrl() {
      return path.join(dir, `db-${++n}.sqlite`);
    },
    async open(url) {
      return openSqlite(url);
    },
    async stop() {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresBackend(): Backend {
  let server: TestPostgres | undefined;
  return {
    name: 'postgres',
    skip: postgresSkipReason() ?? false,
    async start() {
      server = await startPostgres();
    },
    async freshUrl() {
      if (!server) throw new Error('PostgreSQL was not started');
      return server.createDatabase();
    },
    async open(url) {
      return openPostgres(url);
    },
    async stop() {
      await server?.stop();
    },
  };
}

export function backends(): Backend[] {
  return [sqliteBackend(), postgresBackend()];
}

/** A fresh database of `backend` (started), migrated, and a second handle on it: another replica. */
export async function freshPair(backend: Backend): Promise<{ url: string; db: Db; other: Db; applied: number }> {
  const url = await backend.freshUrl();
  const db = await backend.open(url);
  const applied = await migrate(db);
  const other = await backend.open(url);
  return { url, db, other, applied };
}
