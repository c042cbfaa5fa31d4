/**
 * @module test/sandbox/dispatcher.test
 * The admission and CPU-slot dispatcher on its own: waiting calls are served in arrival order
 * across plugins, a plugin at its share is skipped rather than blocking the others, parked calls
 * resume before new calls start, the queue limits refuse cleanly, and a plugin with thousands of
 * calls queued at its share neither delays another plugin's call nor loses or reorders its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Dispatcher, type Lease } from '../../sandbox/supervisor/dispatcher.js';

/** Acquires and records, in `order`, the label of each call as it is granted (or refused). */
function recorder(d: Dispatcher) {
  const order: string[] = [];
  const acquire = (plugin: string, label: string): Promise<Lease | undefined> =>
    d.acquire(plugin).then((lease) => {
      order.push(lease ? label : `refused ${label}`);
      return lease;
    });
  return { order, acquire };
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
    assert.ok(next && next !== 'cancelled', 'the slot went to the call still waiting');
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

  it('refuses beyond maxQueue and beyond a plugin\'s share of the queue, and refuses the waiting calls in order on close', async () => {
    const d = new Dispatcher({ slots: 1, perPlugin: 1, inFlight: 1, perPluginInFlight: 1, maxQueue: 3, perPluginQueue: 2 });
    const { order, acquire } = recorder(d);
    await acquire('a', 'a1');
    const waiting = [acquire('a', 'a2'), acquire('a', 'a3'), acquire('a', 'a4'), acquire('b', 'b1'), acquire('c', 'c1')];
    await settle();
    assert.deepEqual(order, ['a1', 'refused a4', 'refused c1']);
    d.refuseWaiting();
    await Promise.all(waiting);
    assert.deepEqual(order, ['a1', 'refused a4', 'refused c1', 'refused a2', 'refused a3', 'refused b1']);
    assert.equal(d.queued, 0);
  });

  it('with 2,000 calls of one plugin queued at its share, another plugin\'s call starts at once and the queue drains in order', async () => {
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
    assert.ok(cold);
    cold.release();
    // each release hands the slot to the next hot call, in arrival order
    for (let i = 0; i < 2000; i++) {
      (held.shift() as Lease).release();
      held.push((await hot[i]) as Lease);
    }
    assert.deepEqual(granted, Array.from({ length: 2000 }, (_, i) => i));
    assert.equal(d.queued, 0);
    for (const lease of held) lease.release();
    assert.equal(d.inFlight, 0);
  });
});
