/**
 * @module test/security/hostile-request-size.test
 * A hostile plugin sends ctx.http requests over the size limits (a 20 MB body in a loop, text or
 * bytes, a body over the cap only in UTF-8 bytes, a long URL, too many or too long headers). The host's bridge
 * refuses them too, but only after each crossed the worker, the sandbox process and the host's IPC
 * at full size, which slowed every other plugin: so each must be refused INSIDE the sandbox, with
 * the bridge's code and wording, and never reach the host's ctx.http handler (the engine's bridge,
 * wrapped here to record what arrives). Requests at the limits still go through.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { BridgeRequest } from '../../host/supervisor/index.js';
import type { CallScope } from '../../host/bridge/index.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { startSecurityGateway, type Json, type SecurityGateway } from '../helpers/security-gateway.js';

const MAX_BODY = 1024 * 1024;
const BAD = 'GW_ERR_BRIDGE_BAD_REQUEST';

describe('a hostile plugin sending oversized ctx.http requests', () => {
  let gw: SecurityGateway;
  let up: Upstream;
  let apiKey: string;
  /** every request that reached the host's ctx.http handler */
  const seen: BridgeRequest[] = [];
  let hostAnswer: (req: BridgeRequest) => Promise<Json>;

  before(async () => {
    up = await startUpstream((req) => ({
      json: { bytes: Buffer.byteLength(req.body, 'utf8'), urlChars: req.url.length },
    }));
    gw = await startSecurityGateway({
      upstreams: { 'https://api.hostile.test': up.origin },
      policy: {
        http: { maxRequestBodyBytes: MAX_BODY },
        plugins: { 'hostile-bulk': { limits: { memoryMb: 128, wallMsPerCall: 20_000, cpuMsPerCall: 5000 } } },
      },
    });
    apiKey = (await gw.createUser('bulk@example.com')).apiKey;
    const engine = gw.gateway.engine;
    const real = engine.bridge;
    engine.bridge = {
      dispatch(req, scope) {
        seen.push(req);
        return real.dispatch(req, scope);
      },
    };
    const manifest = gw.gateway.registry.plugin('hostile-bulk')?.manifest;
    assert.ok(manifest, JSON.stringify(gw.gateway.pluginErrors));
    // what the host's bridge itself answers for a request (the sandbox must answer the same)
    hostAnswer = (req) => {
      const scope: CallScope = {
        manifest,
        getCredential: async () => undefined,
        requestCount: { n: 0 },
        maxRequests: 25,
        signal: new AbortController().signal,
      };
      return real.dispatch(req, scope);
    };
  });

  after(async () => {
    await gw?.close();
    await up?.close();
  });

  beforeEach(() => {
    seen.length = 0;
  });

  async function send(args: Record<string, unknown>): Promise<Json[]> {
    const [item] = await gw.batch('hostile-bulk', [{ tool: 'bulk_send', args }], apiKey);
    assert.ok(Array.isArray(item?.result?.outcomes), JSON.stringify(item).slice(0, 500));
    return item.result.outcomes as Json[];
  }

  const refused = (outcomes: Json[], message: string): void => {
    for (const o of outcomes) assert.deepEqual(o, { code: BAD, message: `${BAD}: ${message}` });
  };

  it(
    'refuses 20 MB bodies sent in a loop inside the sandbox: none reaches the host or the upstream',
    { timeout: 60_000 },
    async () => {
      const upstreamBefore = up.requests.length;
      const outcomes = await send({ count: 10, bodyChars: 20 * 1024 * 1024 });
      assert.equal(outcomes.length, 10);
      refused(outcomes, `the request body is at least ${20 * 1024 * 1024} bytes; the limit is ${MAX_BODY}`);
      assert.deepEqual(seen, [], 'no request reached the host');
      assert.equal(up.requests.length, upstreamBefore);
    },
  );

  it('sends a body of exactly the cap, and refuses one byte more without the host seeing it', async () => {
    const [ok] = await send({ count: 1, bodyChars: MAX_BODY });
    assert.deepEqual(ok, { status: 200, body: { bytes: MAX_BODY, urlChars: '/bulk'.length } });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.body?.length, MAX_BODY);
    seen.length = 0;
    refused(
      await send({ count: 1, bodyChars: MAX_BODY + 1 }),
      `the request body is at least ${MAX_BODY + 1} bytes; the limit is ${MAX_BODY}`,
    );
    assert.deepEqual(seen, []);
  });

  it(
    'refuses 20 MB binary bodies inside the sandbox, counted in bytes; one of exactly the cap goes through, as base64 a third longer',
    { timeout: 60_000 },
    async () => {
      const upstreamBefore = up.requests.length;
      refused(
        await send({ count: 5, bodyBytes: 20 * 1024 * 1024 }),
        `the request body is ${20 * 1024 * 1024} bytes; the limit is ${MAX_BODY}`,
      );
      refused(
        await send({ count: 1, bodyBytes: MAX_BODY + 1 }),
        `the request body is ${MAX_BODY + 1} bytes; the limit is ${MAX_BODY}`,
      );
      assert.deepEqual(seen, [], 'no request reached the host');
      assert.equal(up.requests.length, upstreamBefore);
      const [ok] = await send({ count: 1, bodyBytes: MAX_BODY });
      assert.deepEqual(ok, { status: 200, body: { bytes: MAX_BODY, urlChars: '/bulk'.length } });
      const arrived: BridgeRequest[] = seen.slice();
      assert.deepEqual(
        [arrived.length, arrived[0]?.body, arrived[0]?.bodyBase64?.length],
        [1, undefined, 4 * Math.ceil(MAX_BODY / 3)],
      );
    },
  );

  it("refuses a body within the cap in characters but over it in UTF-8 bytes, with the host's own message", async () => {
    const chars = 400_000; // "€" is 3 bytes in UTF-8
    const outcomes = await send({ count: 3, bodyChars: chars, bodyChar: '€' });
    const host = await hostAnswer({
      url: 'https://api.hostile.test/bulk',
      method: 'POST',
      headers: {},
      body: '€'.repeat(chars),
    });
    assert.deepEqual(host, {
      ok: false,
      error: { code: BAD, message: `the request body is ${3 * chars} bytes; the limit is ${MAX_BODY}` },
    });
    refused(outcomes, host.error.message);
    assert.deepEqual(seen, [], 'refused in the sandbox, not by the host');
  });

  it("refuses URLs and headers over their limits in the sandbox, with the host's messages", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ urlChars: 9000 }, 'the URL is longer than 8192 characters'],
      [{ urlChars: 5 * 8192 }, 'the URL is longer than 8192 characters'],
      [{ headers: 65, headerChars: 10 }, 'at most 64 headers are allowed'],
      [{ headers: 1, headerChars: 8193 }, 'header "x-pad-0" is longer than 8192 characters'],
    ];
    for (const [args, message] of cases) {
      refused(await send({ count: 2, ...args }), message);
      assert.deepEqual(seen, [], JSON.stringify(args));
    }
    // the host's bridge says the same of each
    const headers = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`x-pad-${i}`, 'h']));
    assert.equal(
      (await hostAnswer({ url: `https://api.hostile.test/bulk?pad=${'u'.repeat(9000)}`, method: 'POST', headers: {} }))
        .error?.message,
      cases[0]![1],
    );
    assert.equal(
      (await hostAnswer({ url: 'https://api.hostile.test/bulk', method: 'POST', headers })).error?.message,
      cases[2]![1],
    );
    assert.equal(
      (
        await hostAnswer({
          url: 'https://api.hostile.test/bulk',
          method: 'POST',
          headers: { 'x-pad-0': 'h'.repeat(8193) },
        })
      ).error?.message,
      cases[3]![1],
    );
    assert.equal(seen.length, 0, 'hostAnswer goes around the recording');
  });

  it('lets URLs and headers at their limits through', async () => {
    const cases: Array<Record<string, unknown>> = [
      { urlChars: 8192 },
      { headers: 64, headerChars: 100 },
      { headers: 1, headerChars: 8192 },
    ];
    for (const args of cases) {
      const [o] = await send({ count: 1, ...args });
      assert.equal(o?.status, 200, `${JSON.stringify(args)}: ${JSON.stringify(o).slice(0, 300)}`);
    }
    assert.equal(seen.length, cases.length);
    assert.equal(seen[0]?.url.length, 8192);
  });

  it('still answers a legitimate plugin afterwards', async () => {
    const [echo] = await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: 'fine' } }], apiKey);
    assert.equal(echo.result?.text, 'fine');
  });
});
