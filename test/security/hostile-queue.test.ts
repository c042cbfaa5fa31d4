/**
 * @module test/security/hostile-queue.test
 * A hostile plugin floods the sandbox with calls that never settle. Its running calls are capped
 * by maxWorkerShare, and so are its WAITING calls (ceil(share × maxQueue) = 4 here): they must not
 * use up the queue that other plugins' calls need (GW_ERR_SANDBOX_OVERLOADED for everyone else).
 * One user makes every call here, so the user's own share (maxUserShare) is lifted: it is tested
 * in test/host/user-fair-share.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startSecurityGateway, type Json, type SecurityGateway } from '../helpers/security-gateway.js';

describe('a hostile plugin flooding the sandbox queue', () => {
  let gw: SecurityGateway;
  let apiKey: string;

  before(async () => {
    gw = await startSecurityGateway({
      policy: {
        sandbox: { workers: 2, callsPerWorker: 1, maxWorkerShare: 0.5, maxUserShare: 1, maxQueue: 8 },
        plugins: { 'hostile-hog': { limits: { wallMsPerCall: 300 } } },
      },
    });
    apiKey = (await gw.createUser('flood@example.com')).apiKey;
    await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: 'warm' } }], apiKey);
  });
  after(async () => {
    await gw?.close();
  });

  it("refuses the hostile plugin's own excess with GW_ERR_SANDBOX_OVERLOADED, each call with a clear code", async () => {
    const items = await gw.batch(
      'hostile-hog',
      Array.from({ length: 8 }, () => ({ tool: 'hog_never' })),
      apiKey,
    );
    assert.equal(items.length, 8);
    for (const it of items) assert.match(it.code, /^GW_ERR_SANDBOX_(TIMEOUT|OVERLOADED)$/, JSON.stringify(it));
    assert.ok(
      items.some((i: Json) => i.code === 'GW_ERR_SANDBOX_OVERLOADED'),
      'the queue bound is enforced',
    );
  });

  it('answers a single REST call refused for a full queue 503 with Retry-After, not 502', async () => {
    const calls = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`${gw.url}/rest/hostile-hog`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
          body: JSON.stringify({ tool: 'hog_never' }),
        }),
      ),
    );
    const answers = await Promise.all(
      calls.map(async (r) => ({
        status: r.status,
        retryAfter: r.headers.get('retry-after'),
        code: ((await r.json()) as Json).code,
      })),
    );
    for (const a of answers) {
      if (a.code === 'GW_ERR_SANDBOX_OVERLOADED')
        assert.deepEqual(a, { status: 503, retryAfter: '1', code: 'GW_ERR_SANDBOX_OVERLOADED' });
      else assert.deepEqual(a, { status: 502, retryAfter: null, code: 'GW_ERR_SANDBOX_TIMEOUT' });
    }
    assert.ok(
      answers.some((a) => a.status === 503),
      JSON.stringify(answers),
    );
  });

  it("still runs other plugins' calls while the hostile plugin fills the queue", async () => {
    const flood = gw.batch(
      'hostile-hog',
      Array.from({ length: 8 }, () => ({ tool: 'hog_never' })),
      apiKey,
    );
    await new Promise((r) => setTimeout(r, 50));
    const legit = await gw.batch(
      'fixture-echo',
      Array.from({ length: 4 }, (_, i) => ({ tool: 'echo_args', args: { text: `legit-${i}` } })),
      apiKey,
    );
    await flood;
    assert.deepEqual(
      legit.map((r: Json) => r.result?.text ?? r.code),
      ['legit-0', 'legit-1', 'legit-2', 'legit-3'],
    );
  });

  it('recovers: once the flood is over, legitimate batches within the queue bound run in full', async () => {
    const legit = await gw.batch(
      'fixture-echo',
      Array.from({ length: 4 }, (_, i) => ({ tool: 'echo_args', args: { text: `after-${i}` } })),
      apiKey,
    );
    assert.deepEqual(
      legit.map((r: Json) => r.result?.text),
      Array.from({ length: 4 }, (_, i) => `after-${i}`),
    );
  });
});
