/**
 * @module test/host/transport/stdio-transport
 * MCP over stdio keeps serving after a line it cannot take: an over-long line (beyond
 * requests.bodyLimitBytes) is skipped and answered -32600 with the request's id, a line that is
 * not JSON -32700, JSON that is not JSON-RPC -32600, a batch -32600; the next request is answered.
 * Through the real `workbench stdio` command, and the line reader alone on streams.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { leadingId, StdioLineTransport } from '../../../host/transport/stdio-transport.js';
import { startGateway, stdioCommand, type TestGateway } from '../../helpers/gateway.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const LIMIT = 4096;

// Assertions read arbitrary JSON.
type Json = any;

/** Reads newline-delimited JSON from a stream; `next(pred)` resolves with the first matching message. */
function messagesFrom(stream: NodeJS.ReadableStream) {
  const seen: Json[] = [];
  let waiters: Array<{ pred: (m: Json) => boolean; resolve: (m: Json) => void }> = [];
  let rest = '';
  stream.on('data', (chunk: Buffer | string) => {
    rest += chunk.toString();
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (!line.trim()) continue;
      const m = JSON.parse(line);
      seen.push(m);
      waiters = waiters.filter((w) => (w.pred(m) ? (w.resolve(m), false) : true));
    }
  });
  return {
    seen,
    next(pred: (m: Json) => boolean): Promise<Json> {
      const found = seen.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ pred, resolve }));
    },
  };
}

const request = (id: number, method: string, params: Json = {}): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';

describe('workbench stdio: lines it cannot take are answered, and it keeps serving', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  });
  after(async () => gw.close());

  it(
    'answers an over-long line -32600 with its id, bad lines with -32700 / -32600, then the next request',
    { timeout: 60_000 },
    async () => {
      const policyFile = path.join(gw.dataDir, 'small-body-policy.json');
      fs.writeFileSync(policyFile, JSON.stringify({ sandbox: { workers: 1 }, requests: { bodyLimitBytes: LIMIT } }));
      const cli = stdioCommand(gw, FIXTURES, policyFile);
      const child = spawn(cli.command, cli.args, { env: cli.env, stdio: ['pipe', 'pipe', 'pipe'] });
      const out = messagesFrom(child.stdout);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        child.stdin.write(
          request(1, 'initialize', {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 't', version: '0' },
          }),
        );
        assert.ok((await out.next((m) => m.id === 1)).result.serverInfo);
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');

        // an over-long line, written in pieces as a pipe delivers it
        const long = request(7, 'tools/call', { name: 'search_tools', arguments: { query: 'x'.repeat(LIMIT * 3) } });
        for (let i = 0; i < long.length; i += 1000) child.stdin.write(long.slice(i, i + 1000));
        const tooLarge = await out.next((m) => m.id === 7);
        assert.equal(tooLarge.error.code, -32600);
        assert.match(tooLarge.error.message, new RegExp(`Request too large: a line may hold at most ${LIMIT} bytes`));

        child.stdin.write('this is not json\n');
        const parseError = await out.next((m) => m.error?.code === -32700);
        assert.equal(parseError.id, null);
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 5 }) + '\n');
        const invalid = await out.next((m) => m.id === 8);
        assert.equal(invalid.error.code, -32600);
        assert.match(invalid.error.message, /^Invalid Request: /);
        child.stdin.write(JSON.stringify([JSON.parse(request(9, 'ping'))]) + '\n');
        const batch = await out.next((m) => m.error?.code === -32600 && m.id === null);
        assert.match(batch.error.message, /batches are not accepted over stdio/);

        child.stdin.write(request(10, 'tools/list'));
        const listed = await out.next((m) => m.id === 10);
        assert.ok(
          listed.result.tools.some((t: Json) => t.name === 'execute_tools'),
          'still serving after every bad line',
        );
        assert.equal(child.exitCode, null);
        assert.equal(out.seen.filter((m) => m.id === 9).length, 0, 'nothing of the refused batch ran');
      } finally {
        child.stdin.end();
        assert.equal(await exited, 0);
      }
    },
  );
});

describe('the stdio line reader', () => {
  it('finds the id of an over-long request only among its leading top-level members', () => {
    assert.equal(leadingId('{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"na'), 42);
    assert.equal(leadingId('{"id":"a\\"b","jsonrpc":"2.0"'), 'a"b');
    assert.equal(leadingId(' { "jsonrpc" : "2.0" , "method" : "x" , "id" : -3 }'), -3);
    assert.equal(
      leadingId('{"jsonrpc":"2.0","method":"tools/call","params":{"id":5'),
      undefined,
      'an id inside params is not the request id',
    );
    assert.equal(leadingId('{"params":{},"id":5'), undefined);
    assert.equal(leadingId('{"jsonrpc":"2.0","id":1.5,'), undefined);
    assert.equal(leadingId('{"jsonrpc":"2.0","id":12345678901234567890,'), undefined);
    assert.equal(leadingId('[{"id":1,'), undefined);
  });

  it('reads lines split across chunks and several in one chunk, and skips an over-long one without holding it', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const out = messagesFrom(output);
    const transport = new StdioLineTransport(input, output, { maxLineBytes: 64 });
    const got: Json[] = [];
    const errors: string[] = [];
    transport.onmessage = (m) => void got.push(m);
    transport.onerror = (e) => void errors.push(e.message);
    await transport.start();
    input.write('{"jsonrpc":"2.0","id":1,"me');
    input.write('thod":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n\n');
    input.write('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"x":"');
    input.write('y'.repeat(10_000));
    input.write('"}}\n{"jsonrpc":"2.0","id":4,"method":"ping"}\n');
    const refused = await out.next((m) => m.id === 3);
    assert.equal(refused.error.code, -32600);
    assert.deepEqual(
      got.map((m) => m.id),
      [1, 2, 4],
    );
    assert.equal(errors.length, 1);
    await transport.send({ jsonrpc: '2.0', id: 4, result: {} });
    assert.ok((await out.next((m) => m.id === 4)).result);
    let closed = false;
    transport.onclose = () => void (closed = true);
    await transport.close();
    assert.ok(closed);
    input.write('{"jsonrpc":"2.0","id":5,"method":"ping"}\n');
    await new Promise((r) => setImmediate(r));
    assert.ok(!got.some((m) => m.id === 5), 'nothing is read after close');
  });
});
