/**
 * @module test/security/hostile-results.test
 * A hostile plugin returns poisonous results: huge, deep, cyclic, BigInt, functions, symbols,
 * throwing getters and toJSON, proxies, prototype keys, lone surrogates, fake images and fake error
 * shapes. Through REST and MCP, each gets a clear code (or passes as the JSON it is), every response
 * is valid JSON, the host is not polluted, and a legitimate plugin answers right after.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rpcMessages, startSecurityGateway, type Json, type SecurityGateway } from '../helpers/security-gateway.js';

const MAX_RESULT = 1024 * 1024;

/** kind → the expected error code, or 'result' when the value is valid JSON after all */
const EXPECTED: Record<string, RegExp | 'result'> = {
  huge: /^GW_ERR_SANDBOX_RESULT_TOO_LARGE$/,
  huge_many: /^GW_ERR_SANDBOX_RESULT_TOO_LARGE$/,
  huge_tojson: /^GW_ERR_SANDBOX_RESULT_TOO_LARGE$/,
  deep: /^GW_ERR_SANDBOX_(RESULT_INVALID|TIMEOUT)$/,
  deep_array: /^GW_ERR_SANDBOX_RESULT_INVALID$/,
  cyclic: /^GW_ERR_SANDBOX_RESULT_INVALID$/,
  bigint: /^GW_ERR_SANDBOX_RESULT_INVALID$/,
  function: /^GW_ERR_SANDBOX_RESULT_INVALID$/,
  symbol: /^GW_ERR_SANDBOX_RESULT_INVALID$/,
  undefined: /^GW_ERR_SANDBOX_RESULT_INVALID$/,
  throwing_getter: /^GW_ERR_SANDBOX_RESULT_INVALID$/,
  throwing_tojson: /^GW_ERR_SANDBOX_RESULT_INVALID$/,
  proxy: /^GW_ERR_SANDBOX_(RESULT_INVALID|HANDLER_THREW)$/,
  proto_key: 'result',
  lone_surrogate: 'result',
  nan: 'result',
  fake_image: 'result',
  fake_error_shape: 'result',
  sse_frame: 'result',
};
const KINDS = Object.keys(EXPECTED);

describe('a hostile plugin returning poisonous results', () => {
  let gw: SecurityGateway;
  let apiKey: string;

  before(async () => {
    // the step limit leaves room for a busy machine: building and counting a huge result is not
    // what is under test here (a result too deep may still end as a timeout)
    gw = await startSecurityGateway({
      policy: { plugins: { 'hostile-poison': { limits: { maxResultBytes: MAX_RESULT, cpuMsPerCall: 5000 } } } },
    });
    apiKey = (await gw.createUser('poison@example.com')).apiKey;
  });

  after(async () => {
    await gw?.close();
  });

  function checkItems(items: Json[], transport: string): void {
    assert.equal(items.length, KINDS.length);
    items.forEach((item, i) => {
      const kind = KINDS[i]!;
      const want = EXPECTED[kind]!;
      if (want === 'result')
        assert.ok('result' in item && !('code' in item), `${transport} ${kind}: ${JSON.stringify(item).slice(0, 300)}`);
      else {
        assert.equal(item.result, undefined, `${transport} ${kind} must not pass`);
        assert.match(item.code, want, `${transport} ${kind}: ${JSON.stringify(item).slice(0, 300)}`);
        assert.ok(
          typeof item.error === 'string' && item.error.length > 0 && item.error.length <= 2100,
          `${transport} ${kind}: a bounded message`,
        );
      }
    });
    const byKind = (k: string) => items[KINDS.indexOf(k)];
    assert.deepEqual(byKind('nan').result, { a: null, b: null, c: 0 });
    assert.deepEqual(
      byKind('fake_error_shape').result,
      { error: 'NOT_CONNECTED', code: 'GW_ERR_ENGINE_NOT_CONNECTED' },
      'a result that looks like an error stays a result',
    );
    assert.equal(byKind('lone_surrogate').result.nul, 'a\u0000b');
    assert.match(byKind('sse_frame').result.s, /^\n\nevent: message\ndata: /, 'SSE framing travels as data');
  }

  it('answers every kind over REST with a clear code or the JSON value, in order', async () => {
    const res = await gw.post(
      '/rest/hostile-poison',
      { executions: KINDS.map((kind) => ({ tool: 'poison_value', args: { kind } })) },
      apiKey,
    );
    assert.equal(res.status, 200);
    assert.doesNotThrow(() => JSON.parse(res.text), 'the response is valid JSON');
    checkItems(res.json.results, 'rest');
    const proto = res.json.results[KINDS.indexOf('proto_key')].result;
    assert.deepEqual(
      Object.keys(proto).sort(),
      ['__proto__', 'constructor'],
      'prototype-named keys travel as plain data',
    );
    assert.equal(({} as Json).isAdmin, undefined, 'the host realm is not polluted');
  });

  it('answers every kind over MCP, with a valid JSON-RPC message and no image block for a fake image', async () => {
    const res = await gw.post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'execute_tools',
          arguments: { executions: KINDS.map((kind) => ({ tool: 'poison_value', args: { kind } })) },
        },
      },
      apiKey,
    );
    assert.equal(res.status, 200);
    const messages = rpcMessages(res.text);
    assert.equal(messages.length, 1, 'a result that contains SSE framing cannot add events to the stream');
    const msg = messages.find((m) => m.id === 7);
    const content = msg?.result?.content as Array<{ type: string; text?: string; mimeType?: string }>;
    assert.ok(Array.isArray(content), res.text.slice(0, 300));
    assert.deepEqual(
      content.filter((c) => c.type !== 'text'),
      [],
      'a text/html "image" with bad base64 is not lifted into an image block',
    );
    const items = JSON.parse(content[0]?.text ?? '{}').results as Json[];
    checkItems(items, 'mcp');
    assert.equal(({} as Json).isAdmin, undefined);
  });

  it('keeps prototype-named keys of a result over MCP as it does over REST', async () => {
    const [item] = await gw.mcpExecute([{ tool: 'poison_value', args: { kind: 'proto_key' } }], apiKey);
    assert.deepEqual(Object.keys(item.result).sort(), ['__proto__', 'constructor']);
  });

  it('reduces every thrown value to a bounded, clean message with GW_ERR_SANDBOX_HANDLER_THREW', async () => {
    const kinds = [
      'huge_message',
      'control_chars',
      'null',
      'undefined',
      'function',
      'symbol',
      'bigint',
      'throwing_getters',
      'throwing_to_string',
      'proxy',
      'fake_code',
      'fake_json',
    ];
    const items = await gw.batch(
      'hostile-poison',
      kinds.map((kind) => ({ tool: 'poison_throw', args: { kind } })),
      apiKey,
    );
    items.forEach((item, i) => {
      assert.equal(item.code, 'GW_ERR_SANDBOX_HANDLER_THREW', `${kinds[i]}: ${JSON.stringify(item).slice(0, 200)}`);
      assert.deepEqual(
        Object.keys(item).sort(),
        ['code', 'error'],
        `${kinds[i]}: nothing but the message and the code`,
      );
      assert.ok(item.error.length > 0 && item.error.length <= 2100, `${kinds[i]}: ${item.error.length} chars`);
      // The point is that none survive.
      assert.doesNotMatch(item.error, /[\u0000-\u0008\u000b-\u001f\u007f]/, `${kinds[i]}: no control characters`);
    });
    assert.match(
      items[kinds.indexOf('fake_code')].error,
      /pretend/,
      'a plugin cannot pass its error off as a gateway code',
    );
  });

  it('audits each poisonous call and still answers a legitimate call', async () => {
    const rows = await gw.gateway.db.all<{ success: number; error_code: string | null }>(
      "SELECT success, error_code FROM audit_events WHERE integration = 'hostile-poison' AND tool = 'poison_value'",
    );
    const failures = KINDS.filter((k) => EXPECTED[k] !== 'result').length;
    assert.equal(rows.filter((r) => r.success === 0).length, 2 * failures);
    assert.ok(rows.filter((r) => r.success === 0).every((r) => /^GW_ERR_SANDBOX_/.test(r.error_code ?? '')));
    const [echo] = await gw.mcpExecute([{ tool: 'echo_args', args: { text: 'fine' } }], apiKey);
    assert.equal(echo.result?.text, 'fine');
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  });
});
