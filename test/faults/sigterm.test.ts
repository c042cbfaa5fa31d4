/**
 * @module test/faults/sigterm
 * SIGTERM reaches the real server process with calls in flight (REST and MCP, each waiting on an
 * upstream that answers after 1 s): every in-flight call completes with 200 (or a clear error),
 * new connections are refused, the process exits 0, and the audit rows equal the executions that
 * completed: nothing is half-written. A connection that never sent a request (clients pre-connect)
 * does not hold the exit up: Node counts it as active until its headers timeout, a minute later.
 * The answer to a call in flight says `Connection: close` (Node would say keep-alive) and its
 * connection is closed after it.
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { startFaultUpstream, type FaultUpstream } from '../helpers/fault-upstream.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const FAULT_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'fault-plugins');

describe('faults: SIGTERM with calls in flight', () => {
  let up: FaultUpstream;
  let server: ServerProcess;

  before(async () => {
    up = await startFaultUpstream('slow');
    up.slowMs = 1000;
    server = await spawnServer({
      pluginDirs: [FIXTURES, FAULT_PLUGINS],
      policy: { upstreams: { 'https://api.faults.test': up.origin }, sandbox: { workers: 4, maxWorkerShare: 1 } },
      logLevel: 'info',
    });
  });
  after(async () => {
    await server.stop();
    await up.close();
  });

  it('drains: in-flight calls finish, new connections are refused, exit 0, audit rows = completed executions', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}` };
    const rest = (tag: string) =>
      fetch(`${server.url}/rest/fixture-faults`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ executions: [{ tool: 'faults_slow', args: { tag } }] }),
      }).then(async (r) => ({
        status: r.status,
        json: (await r.json()) as { results: Array<{ result?: { tag: string }; code?: string }> },
      }));
    const client = new Client({ name: 'sigterm-test', version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.apiKey}` } },
      }),
    );
    const warm = await rest('warm');
    assert.equal(warm.status, 200);

    const requestsBefore = up.requests;
    const restCalls = ['r1', 'r2', 'r3', 'r4'].map(rest);
    const mcpCall = client.callTool({
      name: 'execute_tools',
      arguments: {
        executions: [
          { tool: 'faults_slow', args: { tag: 'm1' } },
          { tool: 'faults_fast', args: { tag: 'm2' } },
        ],
      },
    });
    const deadline = Date.now() + 10_000;
    while (up.requests < requestsBefore + 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(up.requests, requestsBefore + 5, 'all slow calls reached the upstream before SIGTERM');

    server.proc.kill('SIGTERM');
    // once the signal has been handled, a new request is refused (or 503 on a kept-alive connection)
    let late: { status: number } | { refused: string } = { status: 0 };
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 50));
      late = await fetch(`${server.url}/healthz`).then(
        (r) => ({ status: r.status }),
        (err: Error & { cause?: { code?: string } }) => ({ refused: err.cause?.code ?? err.message }),
      );
      if (!('status' in late && late.status === 200)) break;
    }
    assert.ok(
      'refused' in late ? late.refused === 'ECONNREFUSED' : late.status === 503,
      `a new connection during the drain: ${JSON.stringify(late)}`,
    );

    const results = await Promise.all(restCalls);
    for (const [i, r] of results.entries()) {
      assert.equal(r.status, 200);
      assert.equal(r.json.results[0]?.result?.tag, `r${i + 1}`, JSON.stringify(r.json));
    }
    const mcp = (await mcpCall) as { content: Array<{ type: string; text: string }> };
    const mcpItems = JSON.parse(mcp.content[0]!.text) as { results: Array<{ result?: { tag: string } }> };
    assert.deepEqual(
      mcpItems.results.map((x) => x.result?.tag),
      ['m1', 'm2'],
    );
    await client.close().catch(() => undefined);

    const code = await server.exited;
    assert.equal(code, 0, server.output().stderr.slice(-2000));
    assert.match(server.output().stdout + server.output().stderr, /shutting down: draining calls in flight/);

    const db = new Database(server.dbFile, { readonly: true });
    try {
      const rows = db.prepare('SELECT tool, success FROM audit_events').all() as Array<{
        tool: string;
        success: number;
      }>;
      // warm-up (1) + four REST calls + two MCP items: each completed, each audited once
      assert.equal(rows.length, 7, JSON.stringify(rows));
      assert.ok(rows.every((r) => r.success === 1));
      assert.deepEqual(db.prepare('PRAGMA integrity_check').all(), [{ integrity_check: 'ok' }]);
    } finally {
      db.close();
    }
  });
});

describe('faults: SIGTERM with an open connection that never sent a request', () => {
  let up: FaultUpstream;
  let server: ServerProcess;

  before(async () => {
    up = await startFaultUpstream('slow');
    up.slowMs = 1000;
    server = await spawnServer({
      pluginDirs: [FAULT_PLUGINS],
      policy: { upstreams: { 'https://api.faults.test': up.origin }, sandbox: { workers: 2 } },
    });
  });
  after(async () => {
    await server.stop();
    await up.close();
  });

  // Without the drain, the exit waits on the silent connection indefinitely: the timeout turns that into a failure.
  it(
    'exits once the call in flight is answered (with Connection: close, then its connection closed), ending the silent connection instead of waiting on it',
    { timeout: 40_000 },
    async () => {
      const { port } = new URL(server.url);
      const silent = net.connect(Number(port), '127.0.0.1');
      await new Promise<void>((resolve, reject) => silent.once('connect', resolve).once('error', reject));
      const silentClosed = new Promise<void>((resolve) => silent.once('close', () => resolve()));
      silent.on('error', () => undefined);

      // the call goes over a raw connection, so the test sees the header as sent and the server's own close
      const requestsBefore = up.requests;
      const caller = net.connect(Number(port), '127.0.0.1');
      let received = '';
      caller.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      const callerEnded = new Promise<void>((resolve, reject) => caller.once('end', resolve).once('error', reject));
      const body = JSON.stringify({ executions: [{ tool: 'faults_slow', args: { tag: 's1' } }] });
      caller.write(
        [
          'POST /rest/fixture-faults HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          'Content-Type: application/json',
          `Authorization: Bearer ${server.apiKey}`,
          `Content-Length: ${Buffer.byteLength(body)}`,
          '',
          body,
        ].join('\r\n'),
      );
      const deadline = Date.now() + 10_000;
      while (up.requests === requestsBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const signalled = Date.now();
      server.proc.kill('SIGTERM');

      // 'end': the server closed the connection once the answer was out
      await callerEnded;
      const [head = '', answer = ''] = received.split('\r\n\r\n');
      const [status, ...lines] = head.split('\r\n');
      assert.equal(status, 'HTTP/1.1 200 OK', 'the call in flight still gets its whole answer');
      assert.ok(
        lines.some((l) => /^connection:\s*close$/i.test(l)),
        `the answer tells the client not to reuse the connection: ${head}`,
      );
      assert.equal(
        (JSON.parse(answer) as { results: Array<{ result?: { tag: string } }> }).results[0]?.result?.tag,
        's1',
      );
      assert.equal(await server.exited, 0);
      await silentClosed;
      // Without the drain the process stayed up until Node's headersTimeout (60 s) closed the silent
      // connection; the slow call itself takes 1 s.
      const took = Date.now() - signalled;
      assert.ok(took < 20_000, `exit took ${took} ms after SIGTERM`);
    },
  );
});
