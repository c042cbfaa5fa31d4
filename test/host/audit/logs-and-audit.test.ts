/**
 * @module test/host/audit/logs-and-audit
 * The structured log line of each run, the stdout audit sink, and that neither — nor the audit
 * table, nor the results — ever contains a credential or an API key. The stdout sink's failures
 * (a writer that throws or calls back with an error, an event JSON cannot hold, a real stdout
 * closed by its reader, a reader that stops reading) are counted and exported as a metric, reported
 * once through the logger, and never thrown into the call nor written to stdout; `serve` with that sink keeps stdout for
 * audit lines (its logs and the first start's key go to stderr). With either sink the first start's
 * key goes to stderr, so that stdout holds JSON lines only.
 */
import assert from 'node:assert/strict';
import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { createGateway, type Gateway } from '../../../host/app.js';
import { createStdoutAuditSink, STDOUT_AUDIT_MAX_BUFFERED_BYTES, type AuditEvent } from '../../../host/audit/audit.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { parsePolicy } from '../../../host/policy/load.js';
import { REDACT_PATHS } from '../../../host/telemetry/logger.js';
import { freePort } from '../../helpers/free-port.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { MAIN_JS, spawnServer } from '../../helpers/server-process.js';

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
    const policy = parsePolicy({
      sandbox: { workers: 2 },
      upstreams: { 'https://api.fixture.test': upstream.origin },
      audit: { sink: 'stdout' },
    });
    gateway = await createGateway(
      {
        port: 0,
        host: '127.0.0.1',
        dataDir,
        databaseUrl: path.join(dataDir, 'w.db'),
        pluginDirs: [FIXTURES, path.join(dataDir, 'no-such-plugins'), path.join(FIXTURES, 'fixture-echo')],
        policyFile: '(inline)',
        logLevel: 'debug',
        publicUrl: 'http://127.0.0.1',
      },
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

  it('warns of a plugins directory that does not exist (a misspelt WORKBENCH_PLUGINS_DIR loaded nothing without a word)', () => {
    const warned = logs
      .map((l) => JSON.parse(l) as { level: number; msg: string; dir?: string })
      .filter((l) => l.level === 40 && l.dir === path.join(dataDir, 'no-such-plugins'));
    assert.equal(warned.length, 1, logs.slice(0, 5).join('\n'));
    assert.match(warned[0]?.msg ?? '', /does not exist: no plugin is loaded from it/);
  });

  it('warns of a plugins directory that is itself a plugin folder, naming its parent (nothing was loaded from it without a word)', () => {
    const itself = path.join(FIXTURES, 'fixture-echo');
    const warned = logs
      .map((l) => JSON.parse(l) as { level: number; msg: string; dir?: string })
      .filter((l) => l.level === 40 && l.dir === itself);
    assert.equal(warned.length, 1, logs.slice(0, 5).join('\n'));
    assert.equal(
      warned[0]?.msg,
      `plugins directory ${itself} is itself a plugin (it holds manifest.json), and only its sub-folders are searched: point WORKBENCH_PLUGINS_DIR at its parent folder, ${FIXTURES}`,
    );
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
    const refused = logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['event'] === 'tool_refused');
    assert.equal(refused?.['tool'], 'nope', 'refusals get a debug-level line');
    assert.equal(refused?.['level'], 20);
    assert.equal(auditLines.length, 2);
    const audits = auditLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(audits.map((a) => [a['tool'], a['success']]).sort(), [
      ['http_get', true],
      ['nope', false],
    ]);
    assert.equal(audits.find((a) => a['tool'] === 'nope')?.['integration'], undefined);
    const everything = [body, ...logs, ...auditLines].join('\n');
    assert.ok(!everything.includes(SECRET), 'the credential appears in no response, log or audit line');
    assert.ok(!everything.includes(apiKey), 'the API key appears nowhere');
    const rows = await gateway.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM audit_events');
    assert.equal(Number(rows[0]?.n), 0, 'the stdout sink writes nothing to the database');
  });
});

describe('the stdout audit sink when a line cannot be written', () => {
  const event = (requestId: string, args?: unknown): AuditEvent => ({
    action: 'EXECUTE',
    tenant: 'acme',
    userId: 'u1',
    tool: 'echo_args',
    integration: 'fixture-echo',
    success: true,
    durationMs: 1,
    transport: 'rest',
    requestId,
    ...(args !== undefined ? { args } : {}),
  });
  /** a logger whose lines land in the returned array */
  const memoryLogger = (): { logger: pino.Logger; lines: Array<Record<string, unknown>> } => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) =>
      lines.push(
        ...d
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      ),
    );
    return { logger: pino({ level: 'info' }, stream), lines };
  };
  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('a writer that throws: each event is counted, the call goes on, the logger hears once', async () => {
    const { logger, lines } = memoryLogger();
    const sink = createStdoutAuditSink({
      logger,
      write: () => {
        throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
      },
    });
    for (const id of ['a', 'b', 'c']) await sink.record(event(id));
    await settle();
    assert.equal(sink.failures, 3);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]?.['level'], 50);
    assert.match(
      String(lines[0]?.['msg']),
      /an audit line could not be written to stdout; further failures are counted in workbench_audit_write_failures_total/,
    );
    assert.equal((lines[0]?.['err'] as { code?: string }).code, 'EPIPE');
    assert.equal((lines[0]?.['event'] as { requestId?: string }).requestId, 'a');
  });

  it('a write that fails later, through its callback, is counted too', async () => {
    const { logger, lines } = memoryLogger();
    const written: string[] = [];
    const sink = createStdoutAuditSink({
      logger,
      write: (line, done) => {
        const first = written.push(line) === 1;
        setImmediate(() => done(first ? null : Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })));
      },
    });
    for (const id of ['ok', 'lost1', 'lost2']) await sink.record(event(id));
    assert.equal(sink.failures, 0, 'not known yet');
    await settle();
    assert.equal(sink.failures, 2);
    assert.equal(written.length, 3);
    assert.equal(lines.length, 1);
  });

  it('an event JSON cannot hold (a BigInt, a circular value) is counted, and the next one is written', async () => {
    const { logger, lines } = memoryLogger();
    const written: string[] = [];
    const sink = createStdoutAuditSink({ logger, write: (line) => written.push(line) });
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    await sink.record(event('big', { n: 10n }));
    await sink.record(event('circular', { circular }));
    await sink.record(event('good', { q: 1 }));
    assert.equal(sink.failures, 2);
    assert.deepEqual(
      written.map((l) => (JSON.parse(l) as AuditEvent).requestId),
      ['good'],
    );
    assert.equal(lines.length, 1);
    assert.match(String(lines[0]?.['msg']), /could not be serialised as JSON/);
    assert.equal((lines[0]?.['event'] as { args?: unknown }).args, undefined, 'the arguments stay out of the log');
  });

  it('without a logger it still counts and never throws', async () => {
    const sink = createStdoutAuditSink({
      write: () => {
        throw new Error('closed');
      },
    });
    await sink.record(event('x'));
    await sink.record(event('y', { n: 1n }));
    assert.equal(sink.failures, 2);
  });

  it('a stalled reader: lines past the buffer cap are dropped and counted, and writing resumes once it drains', async () => {
    const { logger, lines } = memoryLogger();
    const received: string[] = [];
    /** write callbacks withheld until the reader "comes back" */
    let stalled = true;
    let withheld: (() => void) | undefined;
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        received.push(chunk.toString());
        if (stalled) withheld = () => callback();
        else callback();
      },
    });
    const sink = createStdoutAuditSink({ logger, stream });
    const padding = 'x'.repeat(16 * 1024);
    const offered = Math.ceil((3 * STDOUT_AUDIT_MAX_BUFFERED_BYTES) / padding.length);
    let largestBuffer = 0;
    for (let i = 0; i < offered; i++) {
      await sink.record(event(`stalled-${i}`, { padding }));
      largestBuffer = Math.max(largestBuffer, stream.writableLength);
    }
    /** a line is the padding and under 1 KiB of the rest of the event */
    const lineBytes = padding.length + 1024;
    assert.ok(largestBuffer <= STDOUT_AUDIT_MAX_BUFFERED_BYTES + lineBytes, `the stream held ${largestBuffer} bytes`);
    assert.ok(
      largestBuffer >= STDOUT_AUDIT_MAX_BUFFERED_BYTES,
      'lines were buffered up to the cap before any was dropped',
    );
    // three times the cap was offered: about two thirds of it is dropped
    assert.ok(sink.failures > offered / 2 && sink.failures < offered, `${sink.failures} of ${offered} events dropped`);
    assert.equal(received.length, 1, 'the reader took one line and stalled on it');
    await settle();
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.match(
      String(lines[0]?.['msg']),
      /an audit line was dropped: stdout's reader has fallen \d+ bytes behind; further failures are counted in workbench_audit_write_failures_total/,
    );
    assert.equal((lines[0]?.['event'] as { args?: unknown }).args, undefined, 'the arguments stay out of the log');

    const dropped = sink.failures;
    const drained = new Promise((resolve) => stream.once('drain', resolve));
    stalled = false;
    withheld?.();
    await drained;
    assert.equal(stream.writableLength, 0);
    assert.equal(received.length, offered - dropped, 'every line not dropped reached the reader');
    await sink.record(event('after-drain'));
    await settle();
    assert.equal(sink.failures, dropped, 'nothing more is dropped once the reader keeps up');
    assert.equal((JSON.parse(received.at(-1) ?? '{}') as AuditEvent).requestId, 'after-drain');
    assert.equal(lines.length, 1);
  });

  it('a real stdout closed by its reader: the process lives on, counts every event, and logs once to stderr', async () => {
    const child = fork(path.join(path.dirname(fileURLToPath(import.meta.url)), 'audit-stdout-child.js'), ['closed'], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      execArgv: [],
    });
    const messages: unknown[] = [];
    let stderr = '';
    child.on('message', (m) => messages.push(m));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    while (messages.length === 0) await settle();
    child.stdout?.destroy();
    child.send('go');
    const code = await exited;
    assert.equal(code, 0, `the child exits normally: ${stderr}`);
    assert.deepEqual(messages, ['ready', { failures: 3 }]);
    const logged = stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(logged.length, 1, stderr);
    assert.match(String(logged[0]?.['msg']), /could not be written to stdout/);
    assert.equal((logged[0]?.['err'] as { code?: string }).code, 'EPIPE');
  });

  it('a real stdout that is open gets the good events and nothing about the bad ones', async () => {
    const child = fork(
      path.join(path.dirname(fileURLToPath(import.meta.url)), 'audit-stdout-child.js'),
      ['unserialisable'],
      { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], execArgv: [] },
    );
    const messages: unknown[] = [];
    let stdout = '';
    let stderr = '';
    child.on('message', (m) => messages.push(m));
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    while (messages.length === 0) await settle();
    child.send('go');
    assert.equal(await exited, 0, stderr);
    assert.deepEqual(messages, ['ready', { failures: 2 }]);
    const lines = stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => [l['audit'], l['requestId']]),
      [[true, 'good']],
      'stdout holds audit lines only',
    );
    assert.equal(stderr.split('\n').filter(Boolean).length, 1, stderr);
  });

  it('a gateway exports the failures as workbench_audit_write_failures_total', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-audit-stdout-'));
    const { logger, lines } = memoryLogger();
    const policy = parsePolicy({ sandbox: { workers: 1 }, audit: { sink: 'stdout' } });
    const gateway = await createGateway(
      {
        port: 0,
        host: '127.0.0.1',
        dataDir,
        databaseUrl: path.join(dataDir, 'w.db'),
        pluginDirs: [FIXTURES],
        policyFile: '(inline)',
        logLevel: 'info',
        publicUrl: 'http://127.0.0.1',
      },
      {
        policy,
        logger,
        env: {},
        writeAuditLine: () => {
          throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
        },
      },
    );
    try {
      const url = await gateway.listen();
      const user = await gateway.users.create('audit-stdout@example.com', 'acme');
      const { key } = await gateway.users.createApiKey(user.id);
      const res = await fetch(`${url}/rest/fixture-echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({
          executions: [
            { tool: 'echo_args', args: { text: 'one' } },
            { tool: 'echo_args', args: { text: 'two' } },
          ],
        }),
      });
      const body = (await res.json()) as { results: Array<{ result?: { text?: string } }> };
      assert.equal(res.status, 200);
      assert.deepEqual(
        body.results.map((r) => r.result?.text),
        ['one', 'two'],
        'the calls answer as if the lines were written',
      );
      const metrics = await fetch(`${url}/metrics`).then((r) => r.text());
      assert.match(metrics, /^workbench_audit_write_failures_total 2$/m);
      assert.equal(lines.filter((l) => /could not be written to stdout/.test(String(l['msg']))).length, 1);
    } finally {
      await gateway.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('workbench serve with the stdout audit sink', () => {
  it('writes audit lines, and only audit lines, to stdout; its logs go to stderr', async () => {
    const server = await spawnServer({
      pluginDirs: [FIXTURES],
      policy: { sandbox: { workers: 1 }, audit: { sink: 'stdout' } },
      logLevel: 'info',
    });
    try {
      const res = await fetch(`${server.url}/rest/fixture-echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}` },
        body: JSON.stringify({ executions: [{ tool: 'echo_args', args: { text: 'audited' } }, { tool: 'nope' }] }),
      });
      assert.equal(res.status, 200);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const { stdout, stderr } = server.output();
    const lines = stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => [l['audit'], l['tool'], l['success']]).sort(),
      [
        [true, 'echo_args', true],
        [true, 'nope', false],
      ],
      stdout,
    );
    assert.match(stderr, /listening on http:\/\/127\.0\.0\.1:/);
    assert.match(stderr, /"event":"tool_execution"/);
  });

  it("prints the first start's API key to stderr, not into the audit stream", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-audit-first-'));
    const policyFile = path.join(dataDir, 'policy.json');
    fs.writeFileSync(policyFile, JSON.stringify({ sandbox: { workers: 1 }, audit: { sink: 'stdout' } }));
    const env = {
      ...process.env,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      WORKBENCH_DATA_DIR: dataDir,
      WORKBENCH_PLUGINS_DIR: FIXTURES,
      WORKBENCH_POLICY: policyFile,
      LOG_LEVEL: 'info',
    };
    const proc = spawn(process.execPath, ['--no-node-snapshot', MAIN_JS, 'serve'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!/listening on/.test(stderr) && proc.exitCode === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      assert.match(stderr, /Its API key is shown once:\n\n {2}\S+/);
    } finally {
      proc.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    assert.equal(stdout, '', 'nothing but audit lines belongs on stdout');
  });
});

describe("workbench serve: the first start's API key", () => {
  it('with the database sink, the key and the MCP config go to stderr: stdout holds JSON log lines only', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-first-key-'));
    const policyFile = path.join(dataDir, 'policy.json');
    fs.writeFileSync(policyFile, JSON.stringify({ sandbox: { workers: 1 } })); // audit.sink "database", the default
    const env = {
      ...process.env,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      WORKBENCH_DATA_DIR: dataDir,
      WORKBENCH_PLUGINS_DIR: FIXTURES,
      WORKBENCH_POLICY: policyFile,
      LOG_LEVEL: 'info',
    };
    const proc = spawn(process.execPath, ['--no-node-snapshot', MAIN_JS, 'serve'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!/Workbench \S+ listening on/.test(stdout) && proc.exitCode === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const key = /Its API key is shown once:\n\n {2}(\S+)/.exec(stderr)?.[1];
      assert.ok(key, `the key is printed on stderr\n${stderr}`);
      assert.match(stderr, /MCP client configuration:/);
      assert.ok(!stdout.includes(key), 'the key is not in the log stream');
    } finally {
      proc.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    for (const line of stdout.split('\n').filter(Boolean))
      assert.doesNotThrow(() => JSON.parse(line), `a line on stdout that is not JSON: ${line}`);
  });
});
