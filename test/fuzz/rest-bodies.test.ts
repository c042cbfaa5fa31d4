/**
 * @module test/fuzz/rest-bodies.test
 * Property-based fuzzing of POST /rest/:integration against a real gateway: arbitrary JSON values,
 * near-miss shapes ({tool, args}, flat, {executions}), broken JSON text, odd content types and
 * integration names. Every answer is a clear JSON error or result, never a 5xx (except the
 * documented 502 of a handler's own failure), never a hang; the server stays up.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { assertClearRestAnswer, postRaw } from '../helpers/fuzz-http.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
/** echo_big is left out on purpose: its documented job is to return megabytes */
const tool = fc.oneof(
  fc.constantFrom('echo_args', 'echo_fail', 'echo_image', 'http_get', 'no_such_tool', '', '__proto__', 'constructor'),
  fc.string({ maxLength: 40 }),
);
const nearArgs = fc.record(
  {
    text: fc.oneof(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 2 })),
    times: fc.oneof(fc.integer({ min: -3, max: 8 }), fc.double(), fc.jsonValue({ maxDepth: 1 })),
    message: fc.string({ maxLength: 30 }),
  },
  { requiredKeys: [] },
);
const args = fc.oneof(
  nearArgs,
  fc.jsonValue({ maxDepth: 4 }),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
);
const execution = fc.oneof(
  { weight: 4, arbitrary: fc.record({ tool, args }, { requiredKeys: ['tool'] }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const body = fc.oneof(
  fc.record({ tool, args }, { requiredKeys: [] }),
  fc.tuple(tool, nearArgs).map(([t, a]) => ({ tool: t, ...a })),
  fc.record({ executions: fc.oneof(fc.array(execution, { maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })) }),
  fc.jsonValue({ maxDepth: 4 }),
);
const text = fc.oneof(
  { weight: 6, arbitrary: body.map((b) => JSON.stringify(b) ?? 'null') },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: body.map((b) => (JSON.stringify(b) ?? '').slice(0, -1)) },
);
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/json; charset=utf-16',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
    ),
  },
);

describe('fuzzing REST bodies', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  });
  after(async () => {
    await gw?.close();
  });

  const headers = (ct: string): Record<string, string> => ({
    authorization: `Bearer ${gw.apiKey}`,
    ...(ct ? { 'content-type': ct } : {}),
  });

  it('answers every body to POST /rest/fixture-echo with a clear JSON error or result', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(text, contentType, async (t, ct) => {
        const a = await postRaw(`${gw.url}/rest/fixture-echo`, t, headers(ct));
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        const b = assertClearRestAnswer(a, `${ct} ${t}`);
        if (a.status === 200 && Array.isArray(b.results)) {
          const sent = JSON.parse(t).executions as unknown[];
          assert.equal(b.results.length, sent.length, 'one item per execution, in order');
        }
      }),
      { numRuns: 250 },
    );
    for (const s of [200, 400, 404, 415])
      assert.ok(statuses.has(s), `the fuzzer reached status ${s}: ${JSON.stringify([...statuses])}`);
  });

  it('answers batches over the limit and odd integration names with 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 51, max: 80 }),
        fc.string({ minLength: 1, maxLength: 60 }),
        async (n, name) => {
          const big = JSON.stringify({
            executions: Array.from({ length: n }, () => ({ tool: 'echo_args', args: { text: 'x' } })),
          });
          const a = await postRaw(`${gw.url}/rest/fixture-echo`, big, headers('application/json'));
          assert.equal(a.status, 400);
          assert.equal(JSON.parse(a.text).code, 'GW_ERR_TRANSPORT_BATCH_TOO_LARGE');
          const b = await postRaw(
            `${gw.url}/rest/${encodeURIComponent(name)}`,
            '{"tool":"echo_args","text":"x"}',
            headers('application/json'),
          );
          if (name !== 'fixture-echo') assert.ok(b.status >= 400 && b.status < 500, `${name} → ${b.status}`);
          assertClearRestAnswer(b, name);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('refuses deeply nested arguments with a clear 4xx instead of an internal error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 5000, max: 20000 }), async (depth) => {
        const deep = '['.repeat(depth) + ']'.repeat(depth);
        const a = await postRaw(
          `${gw.url}/rest/fixture-echo`,
          `{"tool":"echo_image","args":{"d":${deep}}}`,
          headers('application/json'),
        );
        const b = assertClearRestAnswer(a, `depth ${depth}`);
        assert.equal(a.status, 400);
        assert.equal(b.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
        const m = await postRaw(
          `${gw.url}/mcp`,
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_tools","arguments":{"executions":[{"tool":"echo_image","args":{"d":${deep}}}]}}}`,
          { ...headers('application/json'), accept: 'application/json, text/event-stream' },
        );
        assert.ok(m.status < 500 && /GW_ERR_VALIDATION_INVALID_ARGS|Invalid/.test(m.text), m.text.slice(0, 300));
      }),
      { numRuns: 3 },
    );
  });

  it('is still up and healthy afterwards', async () => {
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    const r = await gw.rest('fixture-echo', { tool: 'echo_args', args: { text: 'alive' } });
    assert.equal(r.status, 200);
    assert.equal(r.json.result.text, 'alive');
  });
});
