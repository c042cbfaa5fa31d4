/**
 * @module test/common/dispatcher.unit.test
 * The admission and CPU-slot dispatcher on its own: waiting calls are served in arrival order
 * across plugins, a plugin at its share is skipped rather than blocking the others, parked calls
 * resume before new calls start, the queue limits refuse cleanly (saying which), and a plugin with
 * thousands of calls queued at its share neither delays another plugin's call nor loses or reorders
 * its own. Between users: a user at its share is skipped, a call must fit its plugin's share and its
 * user's, a freed slot goes to the user with the fewest calls in flight (round robin among equals),
 * a user's calls past its share of the queue are refused, and calls with no user have no share.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Dispatcher, type Lease } from '../../common/dispatcher.js';

/**
 * Acquires and records, in `order`, the label of each call as it is granted (or why it was
 * refused); `leases` holds each granted call's lease by label.
 */
function recorder(d: Dispatcher) {
  const order: string[] = [];
  const leases = new Map<string, Lease>();
  const acquire = (plugin: string, label: string, user?: string): Promise<Lease | undefined> =>
    d.acquire(plugin, undefined, user).then((lease) => {
      if (typeof lease === 'object') {
        order.push(label);
        leases.set(label, lease);
        return lease;
      }
      order.push(`${lease} ${label}`);
      return undefined;
    });
  /** ends the call granted as `label` */
  const release = (label: string): void => (leases.get(label) as Lease).release();
  return { order, acquire, release };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the dispatcher', () => {
  it('a waiting call whose signal is aborted leaves the queue at once and is never admitted', async () => {
    const d = new Dispatcher({ slots: 1, perPlugin: 1, inFlight: 1, perPluginInFlight: 1, maxQueue: 10 });
    const first = (await d.acquire('a')) as Lease;
    const stop = new AbortController();
    const cancelledOne = d.acquire('a', stop.signal);
    const kept = d.acquire('a', new AbortController().signal);
    await settle();
    assert.equal(d.queued, 2);
    stop.abort();
    assert.equal(await cancelledOne, 'cancelled');
    assert.equal(d.queued, 1, 'the cancelled call left the queue');
    first.release();
    const next = await kept;
    assert.ok(typeof next === 'object', 'the slot went to the call still waiting');
    assert.equal(d.inFlight, 1);
    // an already-aborted signal is not queued at all; aborting after admission takes nothing back
    assert.equal(await d.acquire('a', AbortSignal.abort()), 'cancelled');
    assert.equal(d.queued, 0);
    stop.abort();
    next.release();
    assert.equal(d.inFlight, 0);
    const late = new AbortController();
    const admitted = await d.acquire('a', late.signal);
    late.abort();
    assert.equal(d.inFlight, 1);
    (admitted as Lease).release();
  });

  it('serves waiting calls in arrival order, skipping a plugin at its share', async () => {
    const d = new Dispatcher({ slots: 2, perPlugin: 1, inFlight: 2, perPluginInFlight: 1, maxQueue: 10 });
    const { order, acquire } = recorder(d);
    const a1 = (await acquire('a', 'a1')) as Lease;
    const b1 = (await acquire('b', 'b1')) as Lease;
    const a2 = acquire('a', 'a2');
    const a3 = acquire('a', 'a3');
    const c1 = acquire('c', 'c1');
    const b2 = acquire('b', 'b2');
    await settle();
    assert.deepEqual(order, ['a1', 'b1']);
    assert.equal(d.queued, 4);
    a1.release(); // a2 is first in line and a may start one
    await settle();
    b1.release(); // a3 is next in line but a is at its share: c1 goes first
    await settle();
    assert.deepEqual(order, ['a1', 'b1', 'a2', 'c1']);
    (await a2)?.release(); // a3 (arrived before b2)
    await settle();
    (await c1)?.release(); // b2
    await settle();
    assert.deepEqual(order, ['a1', 'b1', 'a2', 'c1', 'a3', 'b2']);
    assert.equal(d.queued, 0);
    (await a3)?.release();
    (await b2)?.release();
    assert.equal(d.inFlight, 0);
  });

  it('resumes a parked call before a new call starts', async () => {
    const d = new Dispatcher({ slots: 1, perPlugin: 1, inFlight: 4, perPluginInFlight: 4, maxQueue: 10 });
    const { order, acquire } = recorder(d);
    const first = (await acquire('p', 'first')) as Lease;
    first.park(); // waits on ctx.http: its slot goes to the next call
    const second = (await acquire('p', 'second')) as Lease;
    const third = acquire('p', 'third');
    let resumed = false;
    const back = first.resume().then(() => (resumed = true));
    await settle();
    assert.equal(resumed, false);
    second.release(); // the parked call's answer came first: it takes the slot, not `third`
    await back;
    await settle();
    assert.deepEqual(order, ['first', 'second']);
    first.release();
    assert.ok(await third);
  });

  it("refuses beyond maxQueue and beyond a plugin's share of the queue, and refuses the waiting calls in order on close", async () => {
    const d = new Dispatcher({
      slots: 1,
      perPlugin: 1,
      inFlight: 1,
      perPluginInFlight: 1,
      maxQueue: 3,
      perPluginQueue: 2,
    });
    const { order, acquire } = recorder(d);
    await acquire('a', 'a1');
    const waiting = [
      acquire('a', 'a2'),
      acquire('a', 'a3'),
      acquire('a', 'a4'),
      acquire('b', 'b1'),
      acquire('c', 'c1'),
    ];
    await settle();
    assert.deepEqual(order, ['a1', 'plugin-queue-full a4', 'queue-full c1']);
    d.refuseWaiting();
    await Promise.all(waiting);
    assert.deepEqual(order, ['a1', 'plugin-queue-full a4', 'queue-full c1', 'closed a2', 'closed a3', 'closed b1']);
    assert.equal(d.queued, 0);
  });

  it("with 2,000 calls of one plugin queued at its share, another plugin's call starts at once and the queue drains in order", async () => {
    const d = new Dispatcher({ slots: 4, perPlugin: 2, inFlight: 4, perPluginInFlight: 2, maxQueue: 5000 });
    const granted: number[] = [];
    const held: Lease[] = [];
    for (let i = 0; i < 2; i++) held.push((await d.acquire('hot')) as Lease);
    const hot = Array.from({ length: 2000 }, (_, i) =>
      d.acquire('hot').then((lease) => {
        granted.push(i);
        return lease;
      }),
    );
    assert.equal(d.queued, 2000);
    const cold = await d.acquire('cold'); // a free slot, and cold is under its share
    assert.ok(typeof cold === 'object');
    cold.release();
    // each release hands the slot to the next hot call, in arrival order
    for (let i = 0; i < 2000; i++) {
      (held.shift() as Lease).release();
      held.push((await hot[i]) as Lease);
    }
    assert.deepEqual(
      granted,
      Array.from({ length: 2000 }, (_, i) => i),
    );
    assert.equal(d.queued, 0);
    for (const lease of held) lease.release();
    assert.equal(d.inFlight, 0);
  });
});

describe('the dispatcher between users', () => {
  it("holds a user to its share of the calls in flight, and skips it rather than blocking another user's call of the same plugin; calls with no user have no share", async () => {
    const d = new Dispatcher({
      slots: 5,
      perPlugin: 5,
      inFlight: 5,
      perPluginInFlight: 5,
      maxQueue: 10,
      perUserInFlight: 2,
      perUserQueue: 1,
    });
    const { order, acquire, release } = recorder(d);
    await acquire('p', 'a1', 'alice');
    await acquire('p', 'a2', 'alice');
    const a3 = acquire('p', 'a3', 'alice'); // three slots are free, but alice holds her share
    await settle();
    assert.deepEqual(order, ['a1', 'a2']);
    assert.equal(d.queued, 1);
    assert.ok(await acquire('p', 'b1', 'bob'), "bob's call, arrived after a3, starts at once");
    assert.equal(d.inFlight, 3);
    // calls for no user (start-up probes): past any user's share of the calls in flight and of the queue
    const none = ['n1', 'n2', 'n3', 'n4'].map((label) => acquire('p', label));
    await settle();
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'n1', 'n2']);
    assert.equal(d.queued, 3);
    release('a1'); // alice is under her share again, and her call came first
    await settle();
    assert.deepEqual(order.slice(5), ['a3']);
    for (const label of ['a2', 'b1', 'n1', 'n2', 'a3']) release(label);
    await Promise.all([a3, ...none]);
    assert.deepEqual(order.slice(5), ['a3', 'n3', 'n4']);
    release('n3');
    release('n4');
    assert.equal(d.inFlight, 0);
  });

  it("a call must fit both its plugin's share and its user's: one held by either waits, and a later call that fits both starts past it", async () => {
    const d = new Dispatcher({
      slots: 6,
      perPlugin: 2,
      inFlight: 6,
      perPluginInFlight: 2,
      maxQueue: 10,
      perUserInFlight: 2,
    });
    const { order, acquire, release } = recorder(d);
    await acquire('p', 'alice-p1', 'alice');
    await acquire('q', 'alice-q1', 'alice');
    await acquire('p', 'bob-p1', 'bob');
    // alice is at her share (her plugin q is not at its share); plugin p is at its share (bob is not at his)
    const waiting = [
      acquire('q', 'alice-q2', 'alice'),
      acquire('p', 'bob-p2', 'bob'),
      acquire('q', 'carol-q1', 'carol'),
    ];
    await settle();
    assert.deepEqual(
      order,
      ['alice-p1', 'alice-q1', 'bob-p1', 'carol-q1'],
      "carol's call fits both shares and starts at once",
    );
    assert.equal(d.queued, 2);
    release('alice-q1'); // alice is under her share; p is still at its share
    await settle();
    assert.deepEqual(order.slice(4), ['alice-q2']);
    release('alice-p1'); // p has room again
    await settle();
    assert.deepEqual(order.slice(4), ['alice-q2', 'bob-p2']);
    await Promise.all(waiting);
    for (const label of ['bob-p1', 'carol-q1', 'alice-q2', 'bob-p2']) release(label);
    assert.equal(d.inFlight, 0);
  });

  it('gives a freed slot to the user with the fewest calls in flight, among equals round robin, whatever the arrival order', async () => {
    const d = new Dispatcher({ slots: 2, perPlugin: 2, inFlight: 2, perPluginInFlight: 2, maxQueue: 100 });
    const { order, acquire, release } = recorder(d);
    await acquire('p', 'a1', 'alice');
    await acquire('p', 'a2', 'alice');
    const waiting = [
      ...['a3', 'a4', 'a5', 'a6'].map((label) => acquire('p', label, 'alice')),
      ...['b1', 'b2'].map((label) => acquire('p', label, 'bob')),
      acquire('p', 'c1', 'carol'),
    ];
    await settle();
    // each time, the call that has held its slot longest ends and the slot goes to a waiting one
    for (let i = 0; i < waiting.length; i++) {
      release(order[i] as string);
      await settle();
    }
    // a1 ends: bob and carol have none in flight, bob came first; a2 ends: alice has none in
    // flight and was served before carol came; b1 ends: carol (served never) before bob; …
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'a3', 'c1', 'b2', 'a4', 'a5', 'a6']);
    await Promise.all(waiting);
    release('a5');
    release('a6');
    assert.equal(d.inFlight, 0);
  });

  it("with 2,000 calls of one user queued, another user's call gets the next free slot, and the queue then drains in order", async () => {
    const d = new Dispatcher({ slots: 2, perPlugin: 2, inFlight: 2, perPluginInFlight: 2, maxQueue: 5000 });
    const held: Lease[] = [
      (await d.acquire('p', undefined, 'alice')) as Lease,
      (await d.acquire('p', undefined, 'alice')) as Lease,
    ];
    const granted: number[] = [];
    const alice = Array.from({ length: 2000 }, (_, i) =>
      d.acquire('p', undefined, 'alice').then((lease) => {
        granted.push(i);
        return lease as Lease;
      }),
    );
    let bobStarted = false;
    const bob = d.acquire('p', undefined, 'bob').then((lease) => {
      bobStarted = true;
      return lease as Lease;
    });
    await settle();
    assert.equal(d.queued, 2001);
    (held.shift() as Lease).release();
    await settle();
    assert.equal(bobStarted, true, "bob's call took the freed slot");
    assert.deepEqual(granted, []);
    (await bob).release();
    for (let i = 0; i < 2000; i++) {
      (held.shift() as Lease).release();
      held.push(await (alice[i] as Promise<Lease>));
    }
    assert.deepEqual(
      granted,
      Array.from({ length: 2000 }, (_, i) => i),
    );
    for (const lease of held) lease.release();
    assert.equal(d.inFlight, 0);
    assert.equal(d.queued, 0);
  });

  it("refuses a user's calls beyond its share of the queue while others still queue; a call cancelled while it waits gives its place back", async () => {
    const d = new Dispatcher({
      slots: 1,
      perPlugin: 1,
      inFlight: 1,
      perPluginInFlight: 1,
      maxQueue: 10,
      perUserQueue: 2,
    });
    const { order, acquire } = recorder(d);
    await acquire('p', 'a1', 'alice');
    const stop = new AbortController();
    const waiting = [
      acquire('p', 'a2', 'alice'),
      d.acquire('p', stop.signal, 'alice'),
      acquire('p', 'a4', 'alice'),
      acquire('p', 'b1', 'bob'),
    ];
    await settle();
    assert.deepEqual(order, ['a1', 'user-queue-full a4']);
    assert.equal(d.queued, 3);
    stop.abort();
    assert.equal(await waiting[1], 'cancelled');
    const a5 = acquire('p', 'a5', 'alice');
    await settle();
    assert.deepEqual(order, ['a1', 'user-queue-full a4'], 'a5 waits in the place the cancelled call gave back');
    assert.equal(d.queued, 3);
    d.refuseWaiting();
    await Promise.all([...waiting, a5]);
    assert.deepEqual(order.slice(2), ['closed a2', 'closed b1', 'closed a5']);
  });
});
