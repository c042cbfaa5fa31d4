/**
 * @module test/host/transport/mcp-answers
 * The cheaper MCP answer path: one JSON body unless something must stream (progress asked for, a
 * waiting tool), progress still delivered over SSE, the shared tools/list answer following its
 * meta-tool list, and strict caller isolation while per-request servers share what is built once.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import * as z from 'zod';
import type { MetaTool } from '../../../host/meta-tools/types.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import type { User } from '../../../host/storage/users.js';
import { createLogger } from '../../../host/telemetry/logger.js';
import { needsStream } from '../../../host/transport/mcp-http.js';
import { buildMcpServer } from '../../../host/transport/mcp-server.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
// Assertions read arbitrary JSON.
type Json = any;

interface Answer {
  status: number;
  contentType: string;
  messages: Json[];
}

async function post(
  gw: TestGateway,
  body: unknown,
  apiKey = gw.apiKey,
  accept = 'application/json, text/event-stream',
): Promise<Answer> {
  const res = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  let messages: Json[] = [];
  if (contentType.startsWith('text/event-stream')) {
    messages = text
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)));
  } else if (text !== '') {
    const v = JSON.parse(text);
    messages = Array.isArray(v) ? v : [v];
  }
  return { status: res.status, contentType, messages };
}

const call = (id: number, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Json => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

const itemsOf = (m: Json): Json[] => (JSON.parse(m.result.content[0].text) as { results: Json[] }).results;

describe('MCP answers: JSON unless something must stream', () => {
  let gw: TestGateway;
  let beta: { user: User; apiKey: string };

  before(async () => {
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { tenants: { beta: { denyPlugins: ['fixture-echo'] } } },
    });
    beta = await gw.createUser('beta@example.com', 'beta');
  });
  after(async () => gw.close());

  it('answers initialize, tools/list and a plain tools/call with one JSON body', async () => {
    const init = await post(gw, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    assert.equal(init.status, 200);
    assert.match(init.contentType, /^application\/json/);
    assert.equal(init.messages[0].result.serverInfo.name, 'workbench');

    const list = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    assert.match(list.contentType, /^application\/json/);
    assert.ok(list.messages[0].result.tools.some((t: Json) => t.name === 'execute_tools'));

    const exec = await post(
      gw,
      call(3, 'execute_tools', { executions: [{ tool: 'echo_args', args: { text: 'plain' } }] }),
    );
    assert.equal(exec.status, 200);
    assert.match(exec.contentType, /^application\/json/);
    assert.equal(exec.messages.length, 1);
    assert.equal(exec.messages[0].id, 3);
    assert.equal(itemsOf(exec.messages[0])[0].result.text, 'plain');

    const note = await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(note.status, 202);
  });

  it('answers a batch the SDK would leave hanging (one cancelling its own request, an empty one) with -32600', async () => {
    const cancelsOwn = await Promise.race([
      post(gw, [
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      ]),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5000)),
    ]);
    assert.ok(cancelsOwn, 'answered, not left hanging');
    assert.equal(cancelsOwn.status, 400);
    assert.equal(cancelsOwn.messages[0]?.error?.code, -32600);
    const empty = await post(gw, []);
    assert.equal(empty.status, 400);
    assert.equal(empty.messages[0]?.error?.code, -32600);
  });

  it('a meta-tool argument the tool does not take is refused by name, not ignored', async () => {
    const typo = await post(gw, call(7, 'search_tools', { query: 'echo', integraton: 'fixture-echo' }));
    assert.equal(typo.status, 200);
    assert.equal(typo.messages[0]?.result?.isError, true, JSON.stringify(typo.messages[0]).slice(0, 300));
    const refused = JSON.parse(typo.messages[0].result.content[0].text);
    assert.equal(refused.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
    assert.match(refused.error, /^Invalid arguments for search_tools: .*integraton/);
  });

  it('never answers JSON to a client that does not accept it', async () => {
    const a = await post(gw, call(4, 'whoami', {}), gw.apiKey, 'text/event-stream');
    assert.equal(a.status, 406);
    assert.equal(a.messages[0].error.code, -32000);
  });

  it('streams SSE with the progress notifications when the request carries a progressToken', async () => {
    const executions = Array.from({ length: 5 }, (_, i) => ({ tool: 'echo_args', args: { text: `p${i}` } }));
    const a = await post(gw, call(7, 'execute_tools', { executions }, { progressToken: 'tok-7' }));
    assert.equal(a.status, 200);
    assert.match(a.contentType, /^text\/event-stream/);
    const progress = a.messages.filter((m) => m.method === 'notifications/progress');
    assert.ok(progress.length >= 1, 'progress notifications were streamed');
    for (const p of progress) assert.equal(p.params.progressToken, 'tok-7');
    assert.equal(progress[progress.length - 1].params.progress, 5);
    const result = a.messages.find((m) => m.id === 7);
    assert.deepEqual(
      itemsOf(result).map((x) => x.result.text),
      ['p0', 'p1', 'p2', 'p3', 'p4'],
    );
  });

  it('streams a JSON-RPC batch when one of its requests asks for progress, and answers every request', async () => {
    const a = await post(gw, [
      call(8, 'whoami', {}),
      call(9, 'execute_tools', { executions: [{ tool: 'echo_args', args: { text: 'b' } }] }, { progressToken: 9 }),
    ]);
    assert.match(a.contentType, /^text\/event-stream/);
    assert.equal(a.messages.find((m) => m.id === 8)?.result.content[0].text.includes(gw.user.id), true);
    assert.equal(itemsOf(a.messages.find((m) => m.id === 9))[0].result.text, 'b');
    assert.ok(a.messages.some((m) => m.method === 'notifications/progress' && m.params.progressToken === 9));
  });

  it('always streams wait_for_connection, even without a progressToken (keep-alives reach the client)', async () => {
    const a = await post(gw, call(10, 'wait_for_connection', { connectionId: 'nope', timeoutSec: 1 }));
    assert.match(a.contentType, /^text\/event-stream/);
    const result = a.messages.find((m) => m.id === 10);
    assert.equal(JSON.parse(result.result.content[0].text).code, 'GW_ERR_CONNECTION_LINK_INVALID');
  });

  it('the SDK client gets progress callbacks and the same results either way', async () => {
    const client = await gw.mcpClient();
    const progress: number[] = [];
    const withProgress = await client.callTool(
      { name: 'execute_tools', arguments: { executions: [{ tool: 'echo_args', args: { text: 'x' } }] } },
      undefined,
      {
        onprogress: (p) => void progress.push(p.progress),
      },
    );
    const without = await client.callTool({
      name: 'execute_tools',
      arguments: { executions: [{ tool: 'echo_args', args: { text: 'x' } }] },
    });
    assert.ok(progress.length >= 1);
    assert.deepEqual(withProgress, without);
  });

  it('keeps callers apart under interleaved concurrent requests: identity, tenant policy, results and audit', async () => {
    const acmeSearch = await post(gw, call(20, 'search_tools', { query: 'echo the arguments' }));
    const betaSearch = await post(gw, call(21, 'search_tools', { query: 'echo the arguments' }), beta.apiKey);
    const names = (a: Answer): string[] =>
      (JSON.parse(a.messages[0].result.content[0].text) as { tools?: Json[] }).tools?.map((t) => t.name) ?? [];
    assert.ok(names(acmeSearch).includes('echo_args'), 'acme sees the echo tools');
    assert.ok(!names(betaSearch).includes('echo_args'), 'beta, whose tenant denies fixture-echo, does not');

    const auditBefore = await gw.db.all<{ user_id: string }>('SELECT user_id FROM audit_events');
    const rounds = 12;
    const answers = await Promise.all(
      Array.from({ length: rounds }, (_, i) => {
        const who = i % 2 === 0 ? { key: gw.apiKey, user: gw.user } : { key: beta.apiKey, user: beta.user };
        return Promise.all([
          post(gw, call(100 + i, 'whoami', {}), who.key),
          post(
            gw,
            call(200 + i, 'execute_tools', {
              executions: [{ tool: 'echo_args', args: { text: `${who.user.tenant}-${i}` } }],
            }),
            who.key,
          ),
        ]).then(([me, exec]) => ({ i, who, me, exec }));
      }),
    );
    for (const { i, who, me, exec } of answers) {
      assert.equal(me.messages[0].id, 100 + i);
      assert.deepEqual(JSON.parse(me.messages[0].result.content[0].text), {
        id: who.user.id,
        email: who.user.email,
        tenant: who.user.tenant,
      });
      assert.equal(exec.messages[0].id, 200 + i);
      const item = itemsOf(exec.messages[0])[0];
      if (who.user.tenant === 'beta') assert.equal(item.code, 'GW_ERR_POLICY_FORBIDDEN');
      else assert.equal(item.result.text, `acme-${i}`);
    }
    const rows = (
      await gw.db.all<{ user_id: string; tool: string; error_code: string | null }>(
        'SELECT user_id, tool, error_code FROM audit_events',
      )
    ).slice(auditBefore.length);
    const execRows = rows.filter((r) => r.tool === 'echo_args');
    assert.equal(execRows.filter((r) => r.user_id === gw.user.id && r.error_code === null).length, rounds / 2);
    assert.equal(
      execRows.filter((r) => r.user_id === beta.user.id && r.error_code === 'GW_ERR_POLICY_FORBIDDEN').length,
      rounds / 2,
    );
  });
});

describe('a client that goes away before its JSON answer', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let upstreamDone: () => void = () => undefined;

  before(async () => {
    upstream = await startUpstream(async () => {
      await new Promise((r) => setTimeout(r, 400));
      upstreamDone();
      return { json: { slow: true } };
    });
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      upstreams: { 'https://api.fixture.test': upstream.origin },
    });
    await gw.connect('fixture-http', { token: 'tok' });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('costs the gateway nothing but the call: it is still audited and the next request is answered', async () => {
    const finished = new Promise<void>((r) => (upstreamDone = r));
    const abort = new AbortController();
    const gone = fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${gw.apiKey}`,
      },
      body: JSON.stringify(call(1, 'execute_tools', { executions: [{ tool: 'http_get', args: { path: '/slow' } }] })),
      signal: abort.signal,
    });
    await new Promise((r) => setTimeout(r, 150));
    abort.abort();
    await assert.rejects(gone, (err: Error) => err.name === 'AbortError');
    await finished;
    let rows: { tool: string }[] = [];
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      rows = await gw.db.all<{ tool: string }>("SELECT tool FROM audit_events WHERE tool = 'http_get'");
    }
    assert.equal(rows.length, 1, 'the abandoned call was audited');
    const next = await post(gw, call(2, 'whoami', {}));
    assert.match(next.contentType, /^application\/json/);
    assert.equal(JSON.parse(next.messages[0].result.content[0].text).id, gw.user.id);
  });
});

describe('needsStream', () => {
  it('streams only for a progressToken or a waiting tool, and never throws on odd bodies', () => {
    assert.equal(needsStream(call(1, 'execute_tools', {})), false);
    assert.equal(needsStream(call(1, 'execute_tools', {}, { progressToken: 0 })), true);
    assert.equal(needsStream(call(1, 'execute_tools', {}, { other: 1 })), false);
    assert.equal(needsStream([call(1, 'whoami', {}), call(2, 'search_tools', {}, { progressToken: 'a' })]), true);
    assert.equal(needsStream(call(1, 'wait_for_connection', {})), true);
    assert.equal(
      needsStream({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { name: 'wait_for_connection' } }),
      false,
    );
    for (const odd of [null, undefined, 1, 'x', [], [null, 3], { params: null }, { params: { _meta: null } }])
      assert.equal(needsStream(odd), false);
  });
});

describe('the shared tools/list answer', () => {
  const tool = (name: string, order: number): MetaTool => ({
    name,
    order,
    title: name,
    description: `the ${name} tool`,
    inputSchema: z.object({ n: z.number().default(1) }),
    handler: async (ctx, args) => ({ json: { name, user: ctx.user.id, args } }),
  });
  const a: MetaTool[] = [tool('beta_tool', 2), tool('alpha_tool', 1)];
  const b: MetaTool[] = [tool('gamma_tool', 1)];

  async function connect(metaTools: () => readonly MetaTool[], user: User): Promise<Client> {
    const server = buildMcpServer(
      { metaTools, version: 'test', logger: createLogger({ destination: 'silent' }) },
      user,
      'mcp',
    );
    const [s, c] = InMemoryTransport.createLinkedPair();
    await server.connect(s);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(c);
    return client;
  }

  it('follows the list it was built from: a new list answers with its own tools, the old one still with its own', async () => {
    let current: readonly MetaTool[] = a;
    const u1: User = { id: 'u1', email: 'u1@example.com', tenant: 't1', createdAt: 0 };
    const u2: User = { id: 'u2', email: 'u2@example.com', tenant: 't2', createdAt: 0 };
    const c1 = await connect(() => current, u1);
    const c2 = await connect(() => a, u2);
    try {
      const first = await c1.listTools();
      assert.deepEqual(
        first.tools.map((t) => t.name),
        ['alpha_tool', 'beta_tool'],
      );
      assert.deepEqual((first.tools[0]?.inputSchema as Json).properties.n, { type: 'number', default: 1 });
      // A client mangling what it got changes nothing for the next caller: over HTTP it holds a
      // copy; in process (this in-memory transport) it may hold the shared answer itself, which
      // is frozen, so the write is refused.
      const mangle = (f: () => void): void => {
        try {
          f();
        } catch (err) {
          assert.ok(err instanceof TypeError, String(err));
        }
      };
      mangle(() => ((first.tools[0] as Json).name = 'mangled'));
      mangle(() => ((first.tools[0]?.inputSchema as Json).properties.n.type = 'string'));
      const second = await c2.listTools();
      assert.deepEqual(
        second.tools.map((t) => t.name),
        ['alpha_tool', 'beta_tool'],
      );
      assert.equal((second.tools[0]?.inputSchema as Json).properties.n.type, 'number');

      current = b;
      assert.deepEqual(
        (await c1.listTools()).tools.map((t) => t.name),
        ['gamma_tool'],
      );
      const called = await c1.callTool({ name: 'gamma_tool', arguments: {} });
      assert.deepEqual(JSON.parse((called.content as Json)[0].text), {
        name: 'gamma_tool',
        user: 'u1',
        args: { n: 1 },
      });
      await assert.rejects(c1.callTool({ name: 'alpha_tool', arguments: {} }), /Tool not found: alpha_tool/);
      assert.deepEqual(
        (await c2.listTools()).tools.map((t) => t.name),
        ['alpha_tool', 'beta_tool'],
      );
      const other = await c2.callTool({ name: 'alpha_tool', arguments: { n: 2 } });
      assert.deepEqual(JSON.parse((other.content as Json)[0].text), { name: 'alpha_tool', user: 'u2', args: { n: 2 } });
    } finally {
      await c1.close();
      await c2.close();
    }
  });
});
