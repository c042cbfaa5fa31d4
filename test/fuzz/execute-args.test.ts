/**
 * @module test/fuzz/execute-args.test
 * Property-based fuzzing of execute_tools arguments over MCP on a real gateway: arbitrary
 * `arguments`, arbitrary `executions` values, and well-shaped batches of random tools with random
 * args. Every answer is a JSON-RPC result or error; a valid batch gets exactly one item per
 * execution, each a {result} or an {error, code}; never a 5xx or a hang.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { assertClearMcpAnswer, postRaw, type Json } from '../helpers/fuzz-http.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
/** echo_big is left out on purpose: its documented job is to return megabytes */
const tool = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom('echo_args', 'echo_fail', 'echo_image', 'http_get', 'whoami', 'execute_tools'),
  },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
);
const toolArgs = fc.oneof(
  fc.record(
    {
      text: fc.oneof(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 1 })),
      times: fc.oneof(fc.integer({ min: -2, max: 7 }), fc.jsonValue({ maxDepth: 1 })),
      message: fc.string({ maxLength: 20 }),
      path: fc.string({ maxLength: 20 }),
    },
    { requiredKeys: [] },
  ),
  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
);
const goodBatch = fc.array(fc.record({ tool, args: toolArgs }, { requiredKeys: ['tool'] }), {
  minLength: 1,
  maxLength: 8,
});
const anyExecutions = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
  fc.array(fc.record({ tool, args: toolArgs }, { requiredKeys: [] }), { maxLength: 5 }),
);

/** Items of a valid batch are index-aligned and each is a result or an error with a code. */
function isItem(v: Json): boolean {
  return (
    v !== null &&
    typeof v === 'object' &&
    (('result' in v && !('error' in v)) || (typeof v.error === 'string' && typeof v.code === 'string'))
  );
}

describe('fuzzing execute_tools arguments', () => {
  let gw: TestGateway;
  let n = 0;

  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  });
  after(async () => {
    await gw?.close();
  });

  async function call(args: unknown) {
    const id = ++n;
    const t = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'execute_tools', arguments: args },
    });
    const a = await postRaw(`${gw.url}/mcp`, t, {
      authorization: `Bearer ${gw.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    });
    const answer = assertClearMcpAnswer(a, t).find((m) => m.id === id);
    assert.ok(answer, `an answer for id ${id}: ${a.text.slice(0, 300)}`);
    return answer;
  }

  it('answers a well-shaped batch of random tools and args with one item per execution, in order', async () => {
    await fc.assert(
      fc.asyncProperty(goodBatch, async (executions) => {
        const answer = await call({ executions });
        assert.ok('result' in answer, JSON.stringify(answer).slice(0, 300));
        const text = answer.result.content.find((c: Json) => c.type === 'text')?.text;
        const items = JSON.parse(text).results as Json[];
        assert.equal(items.length, executions.length);
        items.forEach((item, i) => {
          assert.ok(isItem(item), JSON.stringify(item));
          const ex = executions[i]!;
          if (ex.tool === 'echo_args' && 'result' in item)
            assert.equal(item.result.args.text, (ex.args as Json).text, 'the item belongs to its execution');
        });
      }),
      { numRuns: 120 },
    );
  });

  it('answers arbitrary arguments and executions with a result or a JSON-RPC error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          anyExecutions.map((executions) => ({ executions })),
        ),
        async (args) => {
          const answer = await call(args);
          if ('error' in answer)
            assert.match(answer.error.message, /execute_tools|Invalid|argument|params/i, JSON.stringify(answer));
          else assert.ok(Array.isArray(answer.result.content), JSON.stringify(answer).slice(0, 300));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('is still up and runs a batch correctly afterwards', async () => {
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    const answer = await call({ executions: [{ tool: 'echo_args', args: { text: 'after fuzz' } }] });
    assert.equal(JSON.parse(answer.result.content[0].text).results[0].result.text, 'after fuzz');
  });
});
