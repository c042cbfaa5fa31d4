/**
 * @module test/host/transport/mcp-errors
 * Which JSON-RPC error POST /mcp answers for what (docs/errors.md, "MCP protocol errors"): text
 * that is not JSON is -32700, JSON that is not a JSON-RPC message -32600 (HTTP 400), params that do
 * not fit their method -32602 naming the field, and a failure of the gateway's own code -32603
 * without its details. Raw POSTs to a real gateway on 127.0.0.1, plus the SDK client.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ClientRequestSchema, ListToolsResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import type { User } from '../../../host/storage/users.js';
import { createLogger } from '../../../host/telemetry/logger.js';
import { REQUEST_SCHEMAS } from '../../../host/transport/mcp-params.js';
import { buildMcpServer } from '../../../host/transport/mcp-server.js';
import { mcpMessages, postRaw, type Json } from '../../helpers/fuzz-http.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const USER: User = { id: 'u1', email: 'u1@example.com', tenant: 't1', createdAt: 0 };

async function post(gw: TestGateway, body: string): Promise<{ status: number; messages: Json[] }> {
  const a = await postRaw(`${gw.url}/mcp`, body, {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${gw.apiKey}`,
  });
  return { status: a.status, messages: a.text === '' ? [] : mcpMessages(a) };
}

describe('MCP: a body that is not a JSON-RPC message', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  });
  after(async () => gw.close());

  const cases: { body: string; id: string | number | null; problem: RegExp }[] = [
    { body: '{}', id: null, problem: /^jsonrpc: must be "2\.0"$/ },
    { body: '{"jsonrpc":"2.0"}', id: null, problem: /no method, result or error/ },
    { body: '{"jsonrpc":"1.0","id":1,"method":"ping"}', id: 1, problem: /^jsonrpc: must be "2\.0"$/ },
    {
      body: '{"jsonrpc":"2.0","id":null,"method":"ping"}',
      id: null,
      problem: /^id: must be a string or an integer, not null$/,
    },
    { body: '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', id: null, problem: /^id: must be a string or an integer$/ },
    { body: '{"jsonrpc":"2.0","id":"a","method":5}', id: 'a', problem: /^method: .*expected string/ },
    { body: '{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}', id: 2, problem: /^params: .*expected object/ },
    { body: '{"jsonrpc":"2.0","id":3,"method":"ping","extra":true}', id: 3, problem: /"extra"/ },
    { body: '[1,2]', id: null, problem: /^batch entry 0: not a JSON object$/ },
    { body: '"x"', id: null, problem: /^not a JSON object$/ },
    { body: '42', id: null, problem: /^not a JSON object$/ },
    { body: 'null', id: null, problem: /^not a JSON object$/ },
  ];
  for (const c of cases) {
    it(`${c.body} is 400 -32600 with id ${c.id}`, async () => {
      const a = await post(gw, c.body);
      assert.equal(a.status, 400);
      assert.equal(a.messages.length, 1);
      const [m] = a.messages;
      assert.equal(m.jsonrpc, '2.0');
      assert.equal(m.error.code, -32600, JSON.stringify(m));
      assert.ok(m.error.message.startsWith('Invalid Request: '), m.error.message);
      assert.match(m.error.message.slice('Invalid Request: '.length), c.problem);
      assert.equal(m.id, c.id);
    });
  }

  it('text that is not JSON at all, or no text, stays -32700', async () => {
    for (const body of ['nope', '{"jsonrpc":', '', '  ']) {
      const a = await post(gw, body);
      assert.equal(a.status, 400, body);
      assert.equal(a.messages[0].error.code, -32700, body);
      assert.equal(a.messages[0].id, null);
    }
  });

  it('refuses a whole batch with a bad entry, naming its index, and runs none of it', async () => {
    const count = async (): Promise<number> =>
      (await gw.db.all("SELECT id FROM audit_events WHERE tool = 'echo_args'")).length;
    const before = await count();
    const run = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'execute_tools', arguments: { executions: [{ tool: 'echo_args', args: { text: 'never' } }] } },
    };
    const a = await post(
      gw,
      JSON.stringify([run, { jsonrpc: '2.0', id: 2, method: 'ping' }, { jsonrpc: '2.0', id: {}, method: 'ping' }]),
    );
    assert.equal(a.status, 400);
    assert.equal(a.messages.length, 1);
    assert.equal(a.messages[0].error.code, -32600);
    assert.match(a.messages[0].error.message, /^Invalid Request: batch entry 2: id: /);
    assert.equal(a.messages[0].id, null);
    assert.equal(await count(), before, 'the valid request of the batch did not run');
    const ok = await post(gw, JSON.stringify([run, { jsonrpc: '2.0', id: 2, method: 'ping' }]));
    assert.equal(ok.status, 200);
    assert.equal(await count(), before + 1, 'the same batch without the bad entry runs');
  });

  it('still passes every kind of JSON-RPC message to the SDK: a notification and a response are 202', async () => {
    for (const body of [
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":9,"result":{}}',
      '{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"no"}}',
    ]) {
      const a = await post(gw, body);
      assert.equal(a.status, 202, body);
    }
  });
});

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
    {
      method: 'initialize',
      params: { capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      field: /^params\.protocolVersion: /,
    },
  ];
  for (const [i, c] of cases.entries()) {
    it(`${c.method} with params ${JSON.stringify(c.params)} is -32602 naming the field`, async () => {
      const a = await post(
        gw,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 100 + i,
          method: c.method,
          ...(c.params !== undefined ? { params: c.params } : {}),
        }),
      );
      assert.equal(a.status, 200);
      assert.equal(a.messages.length, 1);
      const [m] = a.messages;
      assert.equal(m.id, 100 + i);
      assert.equal(m.error.code, -32602, JSON.stringify(m));
      const prefix = `Invalid params for ${c.method}: `;
      assert.ok(m.error.message.startsWith(prefix), m.error.message);
      assert.match(m.error.message.slice(prefix.length), c.field);
      assert.ok(
        m.error.message.length < 300 && !m.error.message.includes('\n'),
        `short and on one line: ${m.error.message}`,
      );
    });
  }

  it('answers the rest of a batch: the bad request gets -32602, the good one its result', async () => {
    const a = await post(
      gw,
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7 } },
        { jsonrpc: '2.0', id: 2, method: 'ping' },
      ]),
    );
    assert.equal(a.status, 200);
    assert.equal(a.messages.find((m) => m.id === 1)?.error?.code, -32602);
    assert.deepEqual(a.messages.find((m) => m.id === 2)?.result, {});
  });

  it('leaves what it does not check to the SDK: an unknown method is still -32601', async () => {
    const a = await post(
      gw,
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'resources/list', params: { cursor: 5 } }),
    );
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
    const server = buildMcpServer(
      { metaTools: () => [], version: 'test', logger: createLogger({ destination: 'silent' }) },
      USER,
      'mcp',
    );
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
      assert.ok(
        lines.some((l) => l.includes('hunter2') && l.includes('MCP request failed')),
        'the details are in the log',
      );
    } finally {
      await client.close();
    }
  });
});
