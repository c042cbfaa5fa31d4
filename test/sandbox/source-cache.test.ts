/**
 * @module test/sandbox/source-cache.test
 * A call carries its plugin source across the process and thread boundaries only when the other
 * side does not have it: on the real sandbox, every plugin version runs its own source, also after
 * the sandbox process and the worker have evicted it (more versions than they keep), and after a
 * sandbox process restart.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_CACHED_SOURCES } from '../../sandbox/source-cache.js';
import { useOneWorkerSandbox } from '../helpers/sandbox/harness.js';

const shared = useOneWorkerSandbox();
const version = (n: number): string => `export default { async run() { return { version: ${n} }; } };`;
const call = (n: number) =>
  shared
    .run({ name: 'versioned', source: version(n) })
    .then((r) => (r.outcome.ok ? (r.result as { version: number }).version : r.outcome.error.code));

describe('plugin sources sent once per process and worker', () => {
  it('each version runs its own source, the second call of a version too', async () => {
    for (const n of [1, 2, 1, 2, 3]) assert.equal(await call(n), n);
  });

  it('a version evicted from the sandbox process and the worker is asked for again', async () => {
    const count = MAX_CACHED_SOURCES + 6;
    for (let n = 100; n < 100 + count; n++) assert.equal(await call(n), n);
    // the oldest ones were evicted on both sides; the host still believes it sent them
    for (const n of [100, 101, 102, 100 + count - 1]) assert.equal(await call(n), n);
  });
});
