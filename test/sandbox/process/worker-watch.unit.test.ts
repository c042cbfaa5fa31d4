/**
 * @module test/sandbox/process/worker-watch.unit.test
 * The sandbox process's watch over its workers' marks (sandbox/process/worker-watch.ts) read with
 * explicit clock values: a mark held past its budget and the grace names the call it was set for
 * (and that call's plugin) once; a mark that moves, or no mark, is never reported. The marks are
 * written with the worker's own `marked` (sandbox/worker/busy-mark.ts), here on this thread.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { marked, markBuffer, NO_CALL } from '../../../sandbox/worker/busy-mark.js';
import { WorkerWatch, type Wedged } from '../../../sandbox/process/worker-watch.js';

const plugin = (name: string) => ({ name, version: '1.0.0', sourceHash: `hash-${name}` });

function watching(): { watch: WorkerWatch; reports: Wedged[] } {
  const reports: Wedged[] = [];
  const watch = new WorkerWatch((w) => reports.push(w), { graceMs: 2000 });
  watch.add(markBuffer);
  watch.stop(); // the test drives check() itself
  return { watch, reports };
}

describe('watching the workers for a wedged thread', () => {
  it('names the call (and its plugin) whose mark outlives its budget and the grace, once', () => {
    const { watch, reports } = watching();
    watch.started(7, plugin('fast'));
    watch.started(8, plugin('wedger'));
    marked(8, 500, () => {
      watch.check(1000); // first seen
      watch.check(3000);
      watch.check(3500); // 2,500 ms: budget + grace, not past it
      assert.deepEqual(reports, []);
      watch.check(3501);
      watch.check(9000);
    });
    assert.equal(reports.length, 1);
    assert.deepEqual(reports[0], { callId: 8, plugin: plugin('wedger'), heldMs: 2501, budgetMs: 500 });
  });

  it('starts counting again when the mark moves, and ignores a worker with no mark', () => {
    const { watch, reports } = watching();
    watch.started(1, plugin('a'));
    marked(1, 100, () => watch.check(0));
    // another stretch for the same call: a new sequence number
    marked(1, 100, () => {
      watch.check(5000);
      watch.check(7000);
    });
    watch.check(100_000);
    watch.check(200_000);
    assert.deepEqual(reports, []);
  });

  it('maps a mark back to call ids past 2^31, and reports a call it no longer knows without a plugin', () => {
    const { watch, reports } = watching();
    const big = 2 ** 31 + 5;
    watch.started(big, plugin('late'));
    marked(big, 0, () => {
      watch.check(0);
      watch.check(2001);
    });
    assert.deepEqual(reports, [{ callId: big, plugin: plugin('late'), heldMs: 2001, budgetMs: 0 }]);

    const other = watching();
    marked(42, 0, () => {
      other.watch.check(0);
      other.watch.check(2001);
    });
    assert.deepEqual(other.reports, [{ callId: 42, plugin: undefined, heldMs: 2001, budgetMs: 0 }]);
  });

  it('forgets the mark of a worker whose thread ended', () => {
    const { watch, reports } = watching();
    watch.started(3, plugin('gone'));
    marked(3, 0, () => {
      watch.check(0);
      watch.remove(markBuffer);
      watch.check(10_000);
    });
    assert.deepEqual(reports, []);
  });

  it('marks nothing for work that belongs to no call', () => {
    const { watch, reports } = watching();
    assert.equal(
      marked(NO_CALL, 0, () => 'ran'),
      'ran',
    );
    marked(NO_CALL, 0, () => {
      watch.check(0);
      watch.check(10_000);
    });
    assert.deepEqual(reports, []);
  });
});
