/**
 * @module test/fuzz/mcp-jsonrpc.test
 * Property-based fuzzing of JSON-RPC bodies to POST /mcp on a real gateway: well-formed and
 * malformed envelopes (jsonrpc, id, method, params of every type), batches, notifications, known
 * and unknown methods, meta-tool calls with arbitrary arguments, broken JSON and odd Accept
 * headers. Each answer is a clear JSON-RPC result or error (or 202 for a notification), never a
 * 5xx or a hang, and the server stays up. Its error codes follow docs/errors.md: -32700 only for
 * text that is not JSON, and never -32603 (nothing here breaks the gateway itself).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { assertClearMcpAnswer, postRaw } from '../helpers/fuzz-http.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
/** wait_for_connection is left out: waiting up to its timeout is its documented job */
const META_TOOLS = [
  'execute_tools',
  'continue_tool_result',
  'whoami',
  'list_integrations',
  'connect',
  'disconnect',
  'search_tools',
  'get_tool_schema',
];
const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'notifications/initialized',
  'notifications/cancelled',
  'resources/list',
  'prompts/list',
  'logging/setLevel',
  'completion/complete',
  'rpc.discover',
];

const ABSENT = Symbol('absent');
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(ABSENT) });
const id = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 20 }),
  fc.constant(null),
  fc.double(),
  fc.jsonValue({ maxDepth: 1 }),
);
const toolCallParams = fc.record(
  {
    name: fc.oneof(fc.constantFrom(...META_TOOLS), fc.string({ maxLength: 30 })),
    arguments: fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    ),
  },
  { requiredKeys: [] },
);
const initializeParams = fc.record(
  {
    protocolVersion: fc.oneof(fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05'), fc.string({ maxLength: 12 })),
    capabilities: fc.jsonValue({ maxDepth: 2 }),
    clientInfo: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);
const message = fc
  .record({
    jsonrpc: maybe(
      fc.oneof({ weight: 5, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) }),
    ),
    id: maybe(id),
    method: maybe(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...METHODS) },
        { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
      ),
    ),
    params: maybe(fc.oneof(toolCallParams, initializeParams, fc.jsonValue({ maxDepth: 3 }))),
  })
  .map((m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== ABSENT)));
/** envelopes that are right, so the fuzzing reaches the methods themselves */
const wellFormed = fc.oneof(
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.integer(),
    method: fc.constant('tools/call'),
    params: toolCallParams,
  }),
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.integer(),
    method: fc.constantFrom('ping', 'tools/list'),
    params: fc.constantFrom({}, undefined),
  }),
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.integer(),
    method: fc.constant('initialize'),
    params: initializeParams,
  }),
);
const text = fc.oneof(
  { weight: 4, arbitrary: wellFormed.map((m) => JSON.stringify(m)) },
  { weight: 6, arbitrary: message.map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.array(message, { minLength: 1, maxLength: 4 }).map((ms) => JSON.stringify(ms)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 120 }) },
);
const isJson = (t: string): boolean => {
  try {
    JSON.parse(t);
    return t.trim() !== '';
  } catch {
    return false;
  }
};
const accept = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json, text/event-stream') },
  { weight: 1, arbitrary: fc.constantFrom('application/json', 'text/event-stream', '*/*', '') },
);

describe('fuzzing JSON-RPC bodies to POST /mcp', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  });
  after(async () => {
    await gw?.close();
  });

  it('answers every body with a clear JSON-RPC result or error, never a 5xx', async () => {
    const seen = { result: 0, error: 0, accepted: 0 };
    await fc.assert(
      fc.asyncProperty(text, accept, async (t, acc) => {
        const headers: Record<string, string> = {
          authorization: `Bearer ${gw.apiKey}`,
          'content-type': 'application/json',
        };
        if (acc) headers['accept'] = acc;
        const a = await postRaw(`${gw.url}/mcp`, t, headers);
        if (a.status === 406 || a.status === 415) return; // refused by content negotiation: a clear 4xx
        const messages = assertClearMcpAnswer(a, `${acc} ${t}`);
        const codes = messages.filter((m) => 'error' in m).map((m) => m.error.code as number);
        if (isJson(t))
          assert.ok(
            !codes.includes(-32700),
            `valid JSON is not a parse error: ${t.slice(0, 300)} → ${a.text.slice(0, 300)}`,
          );
        assert.ok(!codes.includes(-32603), `no internal error: ${t.slice(0, 300)} → ${a.text.slice(0, 300)}`);
        if (messages.length === 0) seen.accepted++;
        for (const m of messages)
          if ('result' in m) seen.result++;
          else if ('error' in m) seen.error++;
      }),
      { numRuns: 300 },
    );
    assert.ok(
      seen.result > 10 && seen.error > 10,
      `the fuzzer reached both results and errors: ${JSON.stringify(seen)}`,
    );
  });

  it('answers tools/call of every meta-tool with arbitrary arguments', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...META_TOOLS),
        fc.jsonValue({ maxDepth: 3 }),
        fc.integer({ min: 1, max: 1e6 }),
        async (name, args, n) => {
          const t = JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name, arguments: args } });
          const a = await postRaw(`${gw.url}/mcp`, t, {
            authorization: `Bearer ${gw.apiKey}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          });
          const messages = assertClearMcpAnswer(a, t);
          assert.ok(
            messages.some((m) => m.id === n),
            `the answer carries id ${n}`,
          );
          assert.ok(!messages.some((m) => m.error?.code === -32603), `no internal error: ${a.text.slice(0, 300)}`);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('is still up and serving MCP afterwards', async () => {
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    const client = await gw.mcpClient();
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'execute_tools'));
  });
});
