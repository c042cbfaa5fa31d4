/**
 * @module test/host/storage/migrate-child
 * A separate process for the concurrent-migration test: opens the database named on the command
 * line, waits for the shared start time so that every process migrates at once, then migrates and
 * prints `{"applied": n}`.
 */
import { migrate } from '../../../host/storage/migrations.js';
import { openPostgres } from '../../../host/storage/postgres.js';
import { openSqlite } from '../../../host/storage/sqlite.js';

const [url = '', startAt = '0'] = process.argv.slice(2);
const db = /^postgres(ql)?:\/\//.test(url) ? await openPostgres(url) : openSqlite(url);
await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
const applied = await migrate(db);
await db.close();
process.stdout.write(JSON.stringify({ applied }) + '\n');
