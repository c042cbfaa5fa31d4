/**
 * @module test/host/mcp-errors
 * Which JSON-RPC error POST /mcp answers for what (docs/errors.md, "MCP protocol errors"): params
 * that do not fit their method are -32602 naming the field, and a failure of the gateway's own code
 * is -32603 without its details. Raw POSTs to a real gateway on 127.0.0.1, plus the SDK client.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ClientRequestSchema, ListToolsResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { PACKAGE_ROOT } from '../../host/paths.js';
import type { User } from '../../host/storage/users.js';
import { createLogger } from '../../host/telemetry/logger.js';
import { REQUEST_SCHEMAS } from '../../host/transport/mcp-params.js';
import { buildMcpServer } from '../../host/transport/mcp-server.js';
import { mcpMessages, postRaw, type Json } from '../fuzz/fuzz-http.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const USER: User = { id: 'u1', email: 'u1@example.com', tenant: 't1', createdAt: 0 };

async function post(gw: TestGateway, body: string): Promise<{ status: number; messages: Json[] }> {
  const a = await postRaw(`${gw.url}/mcp`, body, { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${gw.apiKey}` });
  return { status: a.status, messages: a.text === '' ? [] : mcpMessages(a) };
}

describe('MCP: params that do not fit their method', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  });
  after(async () => gw.close());

  const cases: { method: string; params?: unknown; field: RegExp }[] = [
    { method: 'tools/call', field: /^params: / },
    { method: 'tools/call', params: { name: 5 }, field: /^params\.name: .*expected string/ },
    { method: 'tools/call', params: { name: 'whoami', arguments: 5 }, field: /^params\.arguments: / },
    { method: 'logging/setLevel', params: { level: 'loud' }, field: /^params\.level: .*"debug"/ },
    { method: 'tools/list', params: { cursor: 5 }, field: /^params\.cursor: .*expected string/ },
    { method: 'initialize', params: { capabilities: {}, clientInfo: { name: 'raw', version: '1' } }, field: /^params\.protocolVersion: / },
  ];
  for (const [i, c] of cases.entries()) {
    it(`${c.method} with params ${JSON.stringify(c.params)} is -32602 naming the field`, async () => {
      const a = await post(gw, JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: c.method, ...(c.params !== undefined ? { params: c.params } : {}) }));
      assert.equal(a.status, 200);
      assert.equal(a.messages.length, 1);
      const [m] = a.messages;
      assert.equal(m.id, 100 + i);
      assert.equal(m.error.code, -32602, JSON.stringify(m));
      const prefix = `Invalid params for ${c.method}: `;
      assert.ok(m.error.message.startsWith(prefix), m.error.message);
      assert.match(m.error.message.slice(prefix.length), c.field);
      assert.ok(m.error.message.length < 300 && !m.error.message.includes('\n'), `short and on one line: ${m.error.message}`);
    });
  }

  it('answers the rest of a batch: the bad request gets -32602, the good one its result', async () => {
    const a = await post(gw, JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7 } }, { jsonrpc: '2.0', id: 2, method: 'ping' }]));
    assert.equal(a.status, 200);
    assert.equal(a.messages.find((m) => m.id === 1)?.error?.code, -32602);
    assert.deepEqual(a.messages.find((m) => m.id === 2)?.result, {});
  });

  it('leaves what it does not check to the SDK: an unknown method is still -32601', async () => {
    const a = await post(gw, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'resources/list', params: { cursor: 5 } }));
    assert.equal(a.messages[0].error.code, -32601);
  });

  it('the SDK client gets an McpError with code -32602', async () => {
    const client = await gw.mcpClient();
    await assert.rejects(
      client.request({ method: 'tools/list', params: { cursor: 5 as unknown as string } }, ListToolsResultSchema),
      (err: unknown) => err instanceof McpError && err.code === -32602 && /params\.cursor/.test(err.message),
    );
    await client.close();
  });
});

describe('MCP: the params check covers every method the server answers', () => {
  it('has the SDK schema of exactly the methods with a handler', () => {
    const server = buildMcpServer({ metaTools: () => [], version: 'test', logger: createLogger({ destination: 'silent' }) }, USER, 'mcp');
    const handled: string[] = [];
    for (const schema of ClientRequestSchema.options) {
      const method = schema.shape.method.value;
      try {
        server.assertCanSetRequestHandler(method);
      } catch {
        handled.push(method);
        assert.equal(REQUEST_SCHEMAS.get(method), schema, `${method} is checked with the SDK's own schema`);
      }
    }
    assert.deepEqual(handled.sort(), [...REQUEST_SCHEMAS.keys()].sort());
  });
});

describe('MCP: a failure of the gateway itself', () => {
  it('is -32603 with a request reference, never its own message (which is logged)', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const metaTools = (): never => {
      throw new Error('connect ECONNREFUSED db.internal:5432 password=hunter2');
    };
    const server = buildMcpServer({ metaTools, version: 'test', logger }, USER, 'mcp');
    const [s, c] = InMemoryTransport.createLinkedPair();
    await server.connect(s);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(c);
    try {
      for (const call of [() => client.listTools(), () => client.callTool({ name: 'whoami', arguments: {} })]) {
        await assert.rejects(call(), (err: unknown) => {
          assert.ok(err instanceof McpError);
          assert.equal(err.code, -32603);
          assert.match(err.message, /Internal error \(request [0-9a-f-]{36}\)/);
          assert.doesNotMatch(err.message, /hunter2|ECONNREFUSED/);
          return true;
        });
      }
      assert.ok(lines.some((l) => l.includes('hunter2') && l.includes('MCP request failed')), 'the details are in the log');
    } finally {
      await client.close();
    }
  });
});
