/**
 * @module test/host/bridge/bridge-buffer-budget.test
 * The bridge's buffer budget (`http.maxBufferedBytes`): response bodies held in the host, all calls
 * together, against real loopback upstreams. Bodies within the budget pass; a body that does not
 * fit fails at once with GW_ERR_BRIDGE_BUSY (also for a plugin over its share); and the budget
 * returns to 0 after every end of a request: success (on return, or once the answer reached the
 * sandbox process), an upstream that breaks off, a timeout, the response cap, a redirect, the
 * call's end. The leak checks use calls that never end, so the call-end fallback cannot hide a leak.
 * Every wait is for a condition (bytes held, requests arrived), never for a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSandbox, type BridgeRequest, type BridgeResult, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge, type CallScope } from '../../../host/bridge/index.js';
import type { EgressPolicy } from '../../../contracts/protocol.js';
import { FOUR_FIT, KiB, MiB, startBodyUpstream, until, type BodyUpstream } from '../../helpers/body-upstream.js';
import { callTool, egressPolicy, manifest, moduleOf } from '../../helpers/sandbox/harness.js';

const API = 'https://api.example.com';
let up: BodyUpstream;
let seq = 0;

function bridgeWith(overrides: Partial<EgressPolicy>): Bridge {
  return createBridge(
    egressPolicy({ upstreams: { [API]: up.origin }, maxResponseBytes: MiB, maxBufferedShare: 1, ...overrides }),
  );
}

/** A call that never ends unless `end` is aborted (so only the request's own paths can release). */
function scopeOf(plugin = 'buffer-plugin', end = new AbortController()): CallScope {
  return {
    manifest: manifest({ name: plugin, auth: { type: 'none' }, egress: ['api.example.com'] }),
    getCredential: async () => undefined,
    requestCount: { n: 0 },
    maxRequests: 100,
    signal: end.signal,
  };
}

const get = (path: string): BridgeRequest => ({ url: `${API}${path}`, method: 'GET', headers: {} });
const codeOf = (r: BridgeResult): string => (r.ok ? 'ok' : r.error.code);
const held = (b: Bridge): number => b.bufferStats().heldBytes;

before(async () => {
  up = await startBodyUpstream();
});
after(async () => {
  await up.close();
});

describe('bridge buffer budget: admission', () => {
  it('passes concurrent bodies that fit together, and holds nothing once they are returned', async () => {
    const b = bridgeWith({ maxBufferedBytes: 3 * MiB });
    const group = `fit-${++seq}`;
    const results = await Promise.all(
      [0, 1, 2].map(() => b.dispatch(get(`/barrier?n=${MiB}&k=3&group=${group}`), scopeOf())),
    );
    assert.deepEqual(results.map(codeOf), ['ok', 'ok', 'ok']);
    for (const r of results) assert.equal(r.ok && r.response.body.length, MiB);
    assert.equal(held(b), 0);
    assert.equal(b.bufferStats().refusals, 0);
    await b.close();
  });

  it('fails a body that does not fit beside the one holding the room with GW_ERR_BRIDGE_BUSY, and passes both when there is room', async () => {
    const b = bridgeWith({ maxBufferedBytes: MiB + 512 * KiB });
    const key = `room-${++seq}`;
    const first = b.dispatch(get(`/held?n=${MiB}&first=${768 * KiB}&key=${key}`), scopeOf());
    await until(() => held(b) >= 768 * KiB, 'the first body holds 768 KiB');
    const second = await b.dispatch(get(`/bytes?n=${MiB}`), scopeOf());
    assert.equal(codeOf(second), 'GW_ERR_BRIDGE_BUSY');
    assert.match(second.ok ? '' : second.error.message, /http\.maxBufferedBytes.*retry later/);
    assert.equal(held(b), 768 * KiB, "the refused body's bytes went back at once; the first body's stay");
    up.finish(key);
    const r = await first;
    assert.equal(r.ok && r.response.body.length, MiB, 'the body holding the room completes');
    assert.equal(held(b), 0);
    assert.equal(
      codeOf(await b.dispatch(get(`/bytes?n=${MiB}`), scopeOf())),
      'ok',
      'with the room back, the same request passes',
    );
    assert.equal(b.bufferStats().refusals, 1);
    await b.close();
  });

  it('8 large bodies at once where 4 fit: those 4 arrive whole, the other 4 fail with GW_ERR_BRIDGE_BUSY, and the budget ends at 0', async () => {
    const b = bridgeWith({ maxBufferedBytes: FOUR_FIT.limit });
    const keys = Array.from({ length: 8 }, (_, i) => `many-${++seq}-${i}`);
    const pending = keys.map((key) =>
      b.dispatch(get(`/held?n=${FOUR_FIT.body}&first=${FOUR_FIT.body - 1}&key=${key}`), scopeOf()),
    );
    await until(
      () => b.bufferStats().refusals === 4 && held(b) === 4 * (FOUR_FIT.body - 1),
      '4 bodies hold all but their last byte, 4 were refused',
    );
    for (const key of keys) up.finish(key);
    const results = await Promise.all(pending);
    assert.deepEqual(results.map(codeOf).sort(), [...Array(4).fill('GW_ERR_BRIDGE_BUSY'), ...Array(4).fill('ok')]);
    for (const r of results) if (r.ok) assert.equal(r.response.body.length, FOUR_FIT.body);
    assert.equal(held(b), 0);
    await b.close();
  });

  it("one plugin holds at most its share (the plugin's share message), while another plugin's body still fits", async () => {
    // share 0.5 of 2 MiB: 1 MiB for one plugin
    const b = bridgeWith({ maxResponseBytes: 512 * KiB, maxBufferedBytes: 2 * MiB, maxBufferedShare: 0.5 });
    const key = `share-${++seq}`;
    const hog = b.dispatch(get(`/held?n=${512 * KiB}&first=${448 * KiB}&key=${key}-a`), scopeOf('hog'));
    const hog2 = b.dispatch(get(`/held?n=${512 * KiB}&first=${320 * KiB}&key=${key}-b`), scopeOf('hog'));
    await until(() => held(b) >= 768 * KiB, 'the hog holds 768 KiB');
    const third = await b.dispatch(get(`/bytes?n=${512 * KiB}`), scopeOf('hog'));
    assert.equal(codeOf(third), 'GW_ERR_BRIDGE_BUSY');
    assert.match(
      third.ok ? '' : third.error.message,
      /this plugin's requests .*\(1048576 bytes of http\.maxBufferedBytes\)/,
    );
    assert.equal(
      codeOf(await b.dispatch(get(`/bytes?n=${512 * KiB}`), scopeOf('other'))),
      'ok',
      'another plugin is not held back by the hog',
    );
    up.finish(`${key}-a`);
    up.finish(`${key}-b`);
    assert.deepEqual([codeOf(await hog), codeOf(await hog2)], ['ok', 'ok']);
    assert.equal(held(b), 0);
    await b.close();
  });
});

describe('bridge buffer budget: every byte comes back', () => {
  it('an upstream that breaks off mid-body (GW_ERR_BRIDGE_NETWORK)', async () => {
    const b = bridgeWith({ maxBufferedBytes: 4 * MiB });
    const key = `broken-${++seq}`;
    const pending = b.dispatch(get(`/held?n=${MiB}&first=${512 * KiB}&key=${key}`), scopeOf());
    await until(() => held(b) >= 512 * KiB, 'half the body is held');
    up.breakOff(key);
    assert.equal(codeOf(await pending), 'GW_ERR_BRIDGE_NETWORK');
    assert.equal(held(b), 0);
    await b.close();
  });

  it('a body that stalls past the request timeout (GW_ERR_BRIDGE_TIMEOUT)', async () => {
    const b = bridgeWith({ maxBufferedBytes: 4 * MiB, requestTimeoutMs: 300 });
    const key = `stall-${++seq}`;
    const r = await b.dispatch(get(`/held?n=${MiB}&first=${512 * KiB}&key=${key}`), scopeOf());
    assert.equal(codeOf(r), 'GW_ERR_BRIDGE_TIMEOUT');
    assert.equal(held(b), 0);
    up.breakOff(key);
    await b.close();
  });

  it('a body over the response cap (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE)', async () => {
    const b = bridgeWith({ maxBufferedBytes: 4 * MiB });
    assert.equal(codeOf(await b.dispatch(get(`/bytes?n=${MiB + 1}`), scopeOf())), 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE');
    assert.equal(held(b), 0);
    await b.close();
  });

  it("a redirect's body, once the redirect is followed (and it counts only while held)", async () => {
    // 768 KiB of redirect body + 768 KiB of final body would not fit in 1 MiB if the first stayed counted
    const b = bridgeWith({ maxBufferedBytes: MiB });
    const r = await b.dispatch(
      get(`/redirect?n=${768 * KiB}&to=${encodeURIComponent(`/bytes?n=${768 * KiB}`)}`),
      scopeOf(),
    );
    assert.equal(codeOf(r), 'ok');
    assert.equal(r.ok && r.response.body.length, 768 * KiB);
    assert.equal(held(b), 0);
    await b.close();
  });

  it('the call ends mid-body (GW_ERR_BRIDGE_CALL_ENDED: a cancelled or finished call)', async () => {
    const b = bridgeWith({ maxBufferedBytes: 4 * MiB });
    const key = `cancel-${++seq}`;
    const end = new AbortController();
    const pending = b.dispatch(get(`/held?n=${MiB}&first=${512 * KiB}&key=${key}`), scopeOf('buffer-plugin', end));
    await until(() => held(b) >= 512 * KiB, 'half the body is held');
    end.abort();
    assert.equal(codeOf(await pending), 'GW_ERR_BRIDGE_CALL_ENDED');
    assert.equal(held(b), 0);
    up.breakOff(key);
    await b.close();
  });

  it('a body handed over: held until `delivered` settles, then released (or at the end of its call, if that comes first)', async () => {
    const b = bridgeWith({ maxBufferedBytes: 4 * MiB });
    let written: () => void = () => undefined;
    const r = await b.dispatch(get(`/bytes?n=${MiB}`), scopeOf(), new Promise<void>((resolve) => (written = resolve)));
    assert.equal(codeOf(r), 'ok');
    assert.equal(held(b), MiB, 'the body counts while the host still holds it for the sandbox');
    written();
    await until(() => held(b) === 0, 'released once written');
    const end = new AbortController();
    const r2 = await b.dispatch(
      get(`/bytes?n=${MiB}`),
      scopeOf('buffer-plugin', end),
      new Promise<void>(() => undefined),
    );
    assert.equal(codeOf(r2), 'ok');
    assert.equal(held(b), MiB);
    end.abort();
    assert.equal(held(b), 0, 'a hand-over that never completes is released when the call ends');
    await b.close();
  });
});

describe('bridge buffer budget: through the sandbox process', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({
      workers: 1,
      maxQueue: 100,
      quarantineAfterCrashes: 100,
      quarantineWindowMs: 1000,
      maxWorkerShare: 1,
    });
  });
  after(async () => {
    await sandbox.close();
  });
  const m = manifest({ name: 'buffer-plugin', auth: { type: 'none' }, egress: ['api.example.com'] });
  const limits = { maxRequestsPerCall: 25, memoryMb: 64, wallMsPerCall: 20_000 };

  it('plugin code sees GW_ERR_BRIDGE_BUSY as a thrown HttpError for the bodies that did not fit, and gets the others whole', async () => {
    const b = bridgeWith({ maxBufferedBytes: FOUR_FIT.limit });
    const keys = Array.from({ length: 8 }, (_, i) => `plugin-${++seq}-${i}`);
    const source = moduleOf(`async function handler(ctx, args) {
      return Promise.all(args.urls.map((u) => ctx.http(u).then((r) => ({ length: r.body.length }), (e) => ({ name: e.name, code: e.code }))));
    }`);
    const urls = keys.map((key) => `${API}/held?n=${FOUR_FIT.body}&first=${FOUR_FIT.body - 1}&key=${key}`);
    const running = callTool(sandbox, b, { source, manifest: m, args: { urls }, limits });
    await until(
      () => b.bufferStats().refusals === 4 && held(b) === 4 * (FOUR_FIT.body - 1),
      '4 bodies hold all but their last byte, 4 were refused',
    );
    for (const key of keys) up.finish(key);
    const call = await running;
    assert.ok(call.outcome.ok, JSON.stringify(call.outcome));
    const outs = (call.result as Array<{ length?: number; name?: string; code?: string }>)
      .map((o) => JSON.stringify(o))
      .sort();
    assert.deepEqual(
      outs,
      [
        ...Array(4).fill(JSON.stringify({ length: FOUR_FIT.body })),
        ...Array(4).fill(JSON.stringify({ name: 'HttpError', code: 'GW_ERR_BRIDGE_BUSY' })),
      ].sort(),
    );
    assert.equal(held(b), 0);
    await b.close();
  });

  it('a body is released once the supervisor has written it to the sandbox process, while its call still runs', async () => {
    const b = bridgeWith({ maxBufferedBytes: 4 * MiB });
    const handedOver: boolean[] = [];
    const written: boolean[] = [];
    const spy: Bridge = {
      ...b,
      dispatch(req, scope, delivered) {
        handedOver.push(delivered !== undefined);
        void delivered?.then(() => written.push(true));
        return b.dispatch(req, scope, delivered);
      },
    };
    const key = `running-${++seq}`;
    const source = moduleOf(`async function handler(ctx, args) {
      const first = await ctx.http(args.first);
      const second = await ctx.http(args.second);
      return { first: first.body.length, second: second.body.length };
    }`);
    const running = callTool(sandbox, spy, {
      source,
      manifest: m,
      args: { first: `${API}/bytes?n=${MiB}`, second: `${API}/held?n=16&first=0&key=${key}` },
      limits,
    });
    // the second request has reached the upstream: the first body reached the plugin
    await until(() => up.arrived(`/held?n=16&first=0&key=${key}`) === 1, 'the plugin made its second request');
    await until(() => held(b) === 0, 'the first body was released after it was written to the sandbox');
    assert.deepEqual(handedOver, [true, true], 'the supervisor hands the bridge a `delivered` for every request');
    assert.deepEqual(written, [true], 'and settles it once the answer is written');
    up.finish(key);
    const call = await running;
    assert.deepEqual(call.result, { first: MiB, second: 16 });
    assert.equal(held(b), 0);
    await b.close();
  });
});
