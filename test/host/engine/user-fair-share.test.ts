/**
 * @module test/host/engine/user-fair-share
 * One user cannot take the whole sandbox (sandbox.maxUserShare, default 0.5), through the real
 * path: a gateway on a SQLite file, the real sandbox, two users of one tenant with their own API
 * keys, plugins calling a loopback upstream that holds alice's requests until the test lets them
 * go. Alice floods two plugins over POST /rest (a runaway script): she holds her share of the calls
 * in flight and the rest wait, so bob's call starts at once and is answered while hers are still
 * held; her calls past her share of the queue are refused (503, GW_ERR_SANDBOX_OVERLOADED, saying
 * it is her share), and counted in workbench_sandbox_refused_total{reason="user_share"}. Nothing is
 * timed: the upstream holds her calls for as long as the test needs, and the test reads the
 * sandbox's own counts.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import type { User } from '../../../host/storage/users.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type RecordedRequest, type Upstream } from '../../helpers/upstream.js';
import { waitFor } from '../../helpers/wait-for.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const FAULT_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'fault-plugins');

// Assertions read arbitrary JSON.
type Json = any;

interface Answer {
  status: number;
  json: Json;
  retryAfter: string | null;
}

const isAlices = (r: RecordedRequest): boolean =>
  r.path.startsWith('/alice/') || (r.query.get('tag') ?? '').startsWith('alice-');

describe('the sandbox shared between users (sandbox.maxUserShare)', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let alice: { user: User; apiKey: string };
  let bob: { user: User; apiKey: string };
  /** lets alice's held requests go */
  let release: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();

  before(async () => {
    upstream = await startUpstream(async (req) => {
      if (isAlices(req)) await gate;
      return { json: { ok: true } };
    });
    // 2 workers × 4 calls: 8 calls in flight, 4 for one user and 4 for one plugin (both shares are
    // the defaults, 0.5); a queue of 8: 4 waiting for one user, 4 for one plugin
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES, FAULT_PLUGINS],
      upstreams: { 'https://api.fixture.test': upstream.origin, 'https://api.faults.test': upstream.origin },
      workers: 2,
      policy: { sandbox: { maxQueue: 8 } },
    });
    alice = await gw.createUser('alice@example.com');
    bob = await gw.createUser('bob@example.com');
    await gw.connect('fixture-http', { token: 'tok-alice' }, alice.user);
    await gw.connect('fixture-http', { token: 'tok-bob' }, bob.user);
  });
  afterEach(() => release());
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const heldForAlice = (): number => upstream.requests.filter(isAlices).length;
  const stats = (): { queued: number } => gw.gateway.sandbox.stats();

  /** one execution over POST /rest/:integration, answered or refused */
  async function call(
    who: { apiKey: string },
    integration: string,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<Answer> {
    const res = await fetch(`${gw.url}/rest/${integration}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${who.apiKey}` },
      body: JSON.stringify({ tool, args }),
    });
    return { status: res.status, json: await res.json(), retryAfter: res.headers.get('retry-after') };
  }

  /** A call whose answer, once it comes, is kept in `answer`. */
  function track(p: Promise<Answer>): { promise: Promise<Answer>; answer: Answer | undefined } {
    const t: { promise: Promise<Answer>; answer: Answer | undefined } = { promise: p, answer: undefined };
    void p.then((a) => (t.answer = a));
    return t;
  }

  /**
   * Alice fills the sandbox as far as she may: 4 calls of fixture-faults held at the upstream, then
   * 4 of fixture-http (without a share of her own, those 8 would take every call in flight).
   */
  async function flood(round: string): Promise<Promise<Answer>[]> {
    upstream.requests.length = 0;
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = [0, 1, 2, 3].map((i) => call(alice, 'fixture-faults', 'faults_slow', { tag: `alice-${round}-${i}` }));
    await waitFor("alice's first four calls to reach the upstream", () => heldForAlice() === 4);
    const http = [4, 5, 6, 7].map((i) => call(alice, 'fixture-http', 'http_get', { path: `/alice/${round}/${i}` }));
    await waitFor("alice's other four calls to be held or to wait", () => heldForAlice() + stats().queued === 8);
    assert.equal(heldForAlice(), 4, 'alice holds her share of the 8 calls in flight, 4');
    assert.equal(stats().queued, 4, 'her other calls wait');
    return [...slow, ...http];
  }

  /** Waits until a call is answered or waits in the sandbox's queue, whichever comes first. */
  async function answeredWithoutWaiting(t: { answer: Answer | undefined }, queuedBefore: number): Promise<boolean> {
    await waitFor(
      'the call to be answered or to wait in the queue',
      () => t.answer !== undefined || stats().queued > queuedBefore,
    );
    return t.answer !== undefined;
  }

  it("alice holding her share leaves room: bob's call starts at once and is answered while hers are still held", async () => {
    const alices = await flood('one');
    const bobs = track(call(bob, 'fixture-http', 'http_get', { path: '/bob/0' }));
    assert.equal(await answeredWithoutWaiting(bobs, 4), true, "bob's call did not wait behind alice's");
    assert.deepEqual(bobs.answer, {
      status: 200,
      json: { integration: 'fixture-http', tool: 'http_get', result: { status: 200, body: { ok: true } } },
      retryAfter: null,
    });
    assert.equal(heldForAlice(), 4, "alice's calls are still held");
    assert.equal(stats().queued, 4);
    release();
    const answers = await Promise.all(alices);
    assert.deepEqual(
      answers.map((a) => a.status),
      Array.from({ length: 8 }, () => 200),
      "then every one of alice's calls runs",
    );
    assert.equal(heldForAlice(), 8);
  });

  it("alice's calls past her share of the queue are refused with GW_ERR_SANDBOX_OVERLOADED saying so, while bob's still run", async () => {
    const alices = await flood('two');
    const ninth = track(call(alice, 'fixture-http', 'http_get', { path: '/alice/two/8' }));
    assert.equal(await answeredWithoutWaiting(ninth, 4), true, 'refused at once, not queued');
    assert.equal(ninth.answer?.status, 503);
    assert.equal(ninth.answer?.retryAfter, '1');
    assert.equal(ninth.answer?.json.code, 'GW_ERR_SANDBOX_OVERLOADED');
    assert.match(
      ninth.answer?.json.error,
      /^this user's share of the sandbox queue is full: 4 of its calls are already waiting, besides those running; retry once some have finished$/,
    );
    // others are not refused: bob's calls run, on a plugin alice has calls waiting for and on another
    const bobs = [
      track(call(bob, 'fixture-http', 'http_get', { path: '/bob/1' })),
      track(call(bob, 'fixture-echo', 'echo_args', { text: 'bob' })),
    ];
    for (const b of bobs) assert.equal(await answeredWithoutWaiting(b, 4), true);
    assert.deepEqual(
      bobs.map((b) => b.answer?.status),
      [200, 200],
    );
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /^workbench_sandbox_refused_total\{reason="user_share"\} 1$/m);
    assert.match(metrics, /^workbench_sandbox_refused_total\{reason="queue_full"\} 0$/m);
    assert.match(metrics, /^workbench_sandbox_refused_total\{reason="plugin_share"\} 0$/m);
    release();
    const answers = await Promise.all(alices);
    assert.deepEqual(
      answers.map((a) => a.status),
      Array.from({ length: 8 }, () => 200),
    );
    assert.equal(stats().queued, 0);
  });
});
