/**
 * @module test/host/audit/audit-retention.test
 * audit.retentionDays in a running gateway on a real SQLite file: the rows already stored when it
 * starts are swept at once (the next sweep is an hour away), rows the audit sink writes are swept
 * once they are older than the cutoff (the clock and the interval are injected), the rest is kept;
 * each sweep that deleted something is logged at info with the count and the cutoff, and
 * /metrics counts the rows in workbench_audit_rows_deleted_total. With the stdout sink the start
 * says that only rows stored before are swept; with the default (0) nothing is ever deleted.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { DAY_MS } from '../../../host/audit/retention.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { migrate } from '../../../host/storage/migrations.js';
import { openSqlite } from '../../../host/storage/sqlite.js';
import type { Logger } from '../../../host/telemetry/logger.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait-for.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');

type Line = { level: number; msg: string; [k: string]: unknown };
function capturingLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const stream = new PassThrough();
  stream.on('data', (d: Buffer) =>
    lines.push(
      ...d
        .toString()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line),
    ),
  );
  return { logger: pino({ level: 'info' }, stream), lines };
}

/** A migrated SQLite file holding audit rows at the given times (tool = tag), for a gateway to start on. */
async function databaseWith(rows: Array<[tag: string, at: number]>): Promise<{ file: string; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-retention-'));
  const file = path.join(dir, 'workbench.db');
  const db = openSqlite(file);
  await migrate(db);
  let i = 0;
  for (const [tag, at] of rows)
    await db.run(
      "INSERT INTO audit_events (id, at, action, tenant, user_id, tool, success, duration_ms, transport, request_id) VALUES (?, ?, 'EXECUTE', 'acme', 'u-old', ?, 1, 1, 'test', 'r')",
      [`pre-${++i}`, at, tag],
    );
  await db.close();
  return { file, dir };
}

const count = async (gw: TestGateway, tool: string): Promise<number> =>
  (await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM audit_events WHERE tool = ?', [tool]))!.n;
const metric = async (gw: TestGateway, name: string): Promise<number> => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(await fetch(`${gw.url}/metrics`).then((r) => r.text()));
  assert.ok(m, `${name} is exported`);
  return Number(m[1]);
};

describe('audit retention in a running gateway', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('rows stored before the start are swept at start; kept ones stay; the sweep is logged and counted', async () => {
    const now = Date.now();
    const { file, dir } = await databaseWith([
      ['ancient', 0],
      ['ancient', now - 365 * DAY_MS],
      ['ancient', now - 31 * DAY_MS],
      ['recent', now - 29 * DAY_MS],
      ['recent', now - 60_000],
    ]);
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const { logger, lines } = capturingLogger();
    const gw = await startGateway({
      plugins: [],
      databaseUrl: file,
      logger,
      policy: { audit: { retentionDays: 30 } },
      auditRetention: { intervalMs: 3_600_000 },
    });
    cleanup.push(() => gw.close());
    await waitFor('the sweep at start', async () => (await count(gw, 'ancient')) === 0);
    assert.equal(await count(gw, 'recent'), 2);
    assert.equal(await metric(gw, 'workbench_audit_rows_deleted_total'), 3);
    assert.equal(await metric(gw, 'workbench_audit_retention_failures_total'), 0);
    await waitFor('the info line', () => lines.some((l) => l.msg.startsWith('audit retention: deleted')));
    const info = lines.find((l) => l.msg.startsWith('audit retention: deleted'));
    assert.equal(info?.level, 30);
    assert.equal(info?.['deleted'], 3);
    assert.equal(info?.['retentionDays'], 30);
    assert.ok(
      Math.abs(Date.parse(String(info?.['cutoff'])) - (now - 30 * DAY_MS)) < DAY_MS,
      `cutoff ${String(info?.['cutoff'])} is 30 days back`,
    );
    assert.match(
      info?.msg ?? '',
      /^audit retention: deleted 3 audit rows older than \d{4}-\d\d-\d\dT[\d:.]+Z \(audit\.retentionDays 30\)$/,
    );
  });

  it('rows the audit sink writes are swept on a later sweep once past the cutoff (clock and interval injected)', async () => {
    let clock = Date.now();
    const gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { audit: { retentionDays: 30 } },
      auditRetention: { intervalMs: 20, now: () => clock },
    });
    cleanup.push(() => gw.close());
    const item = await gw.execute('echo_args', { text: 'to be forgotten' });
    assert.equal(item.result?.text, 'to be forgotten', JSON.stringify(item));
    assert.equal(await count(gw, 'echo_args'), 1);
    // a row younger than the cutoff once the clock moves on: kept
    await gw.db.run(
      "INSERT INTO audit_events (id, at, action, tenant, user_id, tool, success, duration_ms, transport, request_id) VALUES ('young', ?, 'EXECUTE', 'acme', ?, 'young_tool', 1, 1, 'test', 'r')",
      [Date.now() + 2 * DAY_MS, gw.user.id],
    );
    clock += 31 * DAY_MS;
    await waitFor('a periodic sweep to delete the executed row', async () => (await count(gw, 'echo_args')) === 0);
    assert.equal(await count(gw, 'young_tool'), 1);
    assert.equal(await metric(gw, 'workbench_audit_rows_deleted_total'), 1);
  });

  it('with the stdout sink, the start says that only rows stored before are swept, and sweeps them', async () => {
    const { file, dir } = await databaseWith([['from_database_days', 1000]]);
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const { logger, lines } = capturingLogger();
    const gw = await startGateway({
      plugins: [],
      databaseUrl: file,
      logger,
      policy: { audit: { sink: 'stdout', retentionDays: 7 } },
      auditRetention: { intervalMs: 3_600_000 },
    });
    cleanup.push(() => gw.close());
    const said = lines.find((l) => l.msg.startsWith('audit.retentionDays applies to the audit rows in the database'));
    assert.ok(said, JSON.stringify(lines));
    assert.match(
      said.msg,
      /with audit\.sink "stdout" none are written, so a sweep deletes only rows stored while the sink was "database"/,
    );
    await waitFor('the sweep at start', async () => (await count(gw, 'from_database_days')) === 0);
  });

  it('by default (retentionDays 0) nothing is deleted, however old', async () => {
    const { file, dir } = await databaseWith([
      ['kept_forever', 0],
      ['kept_forever', 1],
    ]);
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const gw = await startGateway({ plugins: [], databaseUrl: file, auditRetention: { intervalMs: 1 } });
    cleanup.push(() => gw.close());
    assert.equal(gw.gateway.policy.audit.retentionDays, 0);
    assert.equal(await gw.gateway.auditRetention.sweep(), 0);
    assert.equal(await count(gw, 'kept_forever'), 2);
    assert.equal(await metric(gw, 'workbench_audit_rows_deleted_total'), 0);
  });
});
