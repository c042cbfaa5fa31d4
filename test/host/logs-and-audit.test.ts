/**
 * @module test/host/logs-and-audit
 * The structured log line of each run, the stdout audit sink, and that neither — nor the audit
 * table, nor the results — ever contains a credential or an API key.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createGateway, type Gateway } from '../../host/app.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { parsePolicy } from '../../host/policy/load.js';
import { REDACT_PATHS } from '../../host/telemetry/logger.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const SECRET = `SECRET-TOKEN-${Date.now()}-${Math.random().toString(36).slice(2)}`;

describe('logs and audit', () => {
  let gateway: Gateway;
  let upstream: Upstream;
  let url: string;
  let apiKey: string;
  let dataDir: string;
  const logs: string[] = [];
  const auditLines: string[] = [];

  before(async () => {
    upstream = await startUpstream((req) => ({ json: { echoed: req.headers.authorization ?? null } }));
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-logs-'));
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) => logs.push(...d.toString().split('\n').filter(Boolean)));
    const logger = pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, stream);
    const policy = parsePolicy({ sandbox: { workers: 2 }, upstreams: { 'https://api.fixture.test': upstream.origin }, audit: { sink: 'stdout' } });
    gateway = await createGateway(
      { port: 0, host: '127.0.0.1', dataDir, databaseUrl: path.join(dataDir, 'w.db'), pluginDirs: [FIXTURES], policyFile: '(inline)', logLevel: 'debug', publicUrl: 'http://127.0.0.1' },
      { policy, logger, env: {}, writeAuditLine: (l) => auditLines.push(l) },
    );
    url = await gateway.listen();
    const user = await gateway.users.create('logs@example.com', 'acme');
    apiKey = (await gateway.users.createApiKey(user.id)).key;
    const plugin = gateway.registry.plugin('fixture-http');
    assert.ok(plugin);
    await gateway.connections.importConnection({ userId: user.id, manifest: plugin.manifest, token: SECRET });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes one JSON log line per run and one stdout audit line per execution, with no secret anywhere', async () => {
    const res = await fetch(`${url}/rest/fixture-http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ executions: [{ tool: 'http_get', args: { path: '/who' } }, { tool: 'nope' }] }),
    });
    const body = await res.text();
    assert.equal(res.status, 200);
    assert.equal(upstream.last().headers.authorization, `Bearer ${SECRET}`, 'the upstream got the credential');
    await new Promise((r) => setTimeout(r, 50));
    const line = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['event'] === 'tool_execution');
    assert.ok(line, 'a tool_execution log line');
    assert.equal(line['tool'], 'http_get');
    assert.equal(line['integration'], 'fixture-http');
    assert.equal(line['success'], true);
    assert.equal(typeof line['durationMs'], 'number');
    const refused = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['event'] === 'tool_refused');
    assert.equal(refused?.['tool'], 'nope', 'refusals get a debug-level line');
    assert.equal(refused?.['level'], 20);
    assert.equal(auditLines.length, 2);
    const audits = auditLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(audits.map((a) => [a['tool'], a['success']]).sort(), [['http_get', true], ['nope', false]]);
    assert.equal(audits.find((a) => a['tool'] === 'nope')?.['integration'], undefined);
    const everything = [body, ...logs, ...auditLines].join('\n');
    assert.ok(!everything.includes(SECRET), 'the credential appears in no response, log or audit line');
    assert.ok(!everything.includes(apiKey), 'the API key appears nowhere');
    const rows = await gateway.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM audit_events');
    assert.equal(Number(rows[0]?.n), 0, 'the stdout sink writes nothing to the database');
  });
});
