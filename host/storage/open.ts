/**
 * @module host/storage/open
 * Chooses the database from DATABASE_URL: a `postgres://` URL selects PostgreSQL, anything else is
 * a SQLite file path (default `<data dir>/workbench.db`; readConfig refuses other `scheme://` URLs). Migrations run before the handle is returned.
 */
import path from 'node:path';
import { isPostgresUrl, type Db } from './db.js';
import { migrate } from './migrations.js';
import { openSqlite } from './sqlite.js';

export async function openDatabase(databaseUrl: string | undefined, dataDir: string): Promise<Db> {
  let db: Db;
  if (databaseUrl && isPostgresUrl(databaseUrl)) {
    const { openPostgres } = await import('./postgres.js');
    db = await openPostgres(databaseUrl);
  } else {
    const file =
      databaseUrl && databaseUrl.length > 0
        ? databaseUrl.replace(/^sqlite:(\/\/)?/i, '')
        : path.join(dataDir, 'workbench.db');
    db = openSqlite(file);
  }
  await migrate(db);
  return db;
}
