/**
 * @module test/sandbox/process/balancer.unit.test
 * The affinity balancer alone (sandbox/process/balancer.ts): homes given out PLUGINS_PER_HOME to a
 * worker, in the pool's order; a busy or vanished home; no homes while workers are still starting.
 * plugin-affinity.test.ts shows the effect on the real sandbox.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { affinityBalancer, PLUGINS_PER_HOME, type BalancedWorker } from '../../../sandbox/process/balancer.js';

const worker = (id: number, currentUsage = 0): BalancedWorker => ({ id, currentUsage, isRunningAbortableTask: false });
const task = { isAbortable: false };

describe('the affinity balancer', () => {
  it(`gives out homes ${PLUGINS_PER_HOME} plugins to a worker, in the pool's order, and sends each call home`, () => {
    const b = affinityBalancer<BalancedWorker>(4, 3);
    const pool = [worker(11), worker(12), worker(13)];
    const homes = Array.from(
      { length: PLUGINS_PER_HOME + 2 },
      (_, i) => b.routing(`p${i}`, () => b.balance(task, pool))?.id,
    );
    assert.deepEqual(homes, [...Array<number>(PLUGINS_PER_HOME).fill(11), 12, 12]);
    // the same plugin again: its home, even though an earlier worker is idle too
    assert.equal(b.routing(`p${PLUGINS_PER_HOME}`, () => b.balance(task, pool))?.id, 12);
    assert.equal(b.homeOf('p0'), 11);
  });

  it("a busy home: the first idle worker, else the least busy; the home stays the plugin's", () => {
    const b = affinityBalancer<BalancedWorker>(4, 2);
    assert.equal(b.routing('p', () => b.balance(task, [worker(1), worker(2)]))?.id, 1);
    assert.equal(b.routing('p', () => b.balance(task, [worker(1, 1), worker(2)]))?.id, 2);
    assert.equal(b.routing('p', () => b.balance(task, [worker(1, 3), worker(2, 2)]))?.id, 2);
    assert.equal(
      b.routing('p', () => b.balance(task, [worker(1, 4), worker(2, 4)])),
      null,
      'every worker full: the task waits in the queue',
    );
    assert.equal(b.homeOf('p'), 1);
    assert.equal(b.routing('p', () => b.balance(task, [worker(1), worker(2)]))?.id, 1);
  });

  it('a home whose worker is gone is given again; a task balanced outside routing() has no affinity', () => {
    const b = affinityBalancer<BalancedWorker>(4, 2);
    b.routing('p', () => b.balance(task, [worker(1), worker(2)]));
    assert.equal(b.homeOf('p'), 1);
    assert.equal(b.routing('p', () => b.balance(task, [worker(2), worker(3)]))?.id, 2);
    assert.equal(b.homeOf('p'), 2);
    // from Piscina's queue (no plugin named): the first idle worker, not p's home
    assert.equal(b.balance(task, [worker(3), worker(2)])?.id, 3);
  });

  it('no homes are given out while workers are still starting (Piscina shows only the ready ones)', () => {
    const b = affinityBalancer<BalancedWorker>(4, 4);
    for (let i = 0; i < 10; i++) assert.equal(b.routing(`p${i}`, () => b.balance(task, [worker(1)]))?.id, 1);
    assert.equal(b.homeOf('p0'), undefined, 'no home on the one worker up first');
    const pool = [worker(1), worker(2), worker(3), worker(4)];
    const homes = Array.from({ length: 10 }, (_, i) => b.routing(`p${i}`, () => b.balance(task, pool))?.id);
    assert.deepEqual(homes, [...Array<number>(PLUGINS_PER_HOME).fill(1), 2, 2, 2, 2]);
    // a home stays while its worker is there, even when another worker is being replaced
    assert.equal(b.routing('p9', () => b.balance(task, [worker(2), worker(3)]))?.id, 2);
    assert.equal(b.homeOf('p9'), 2);
  });
});
