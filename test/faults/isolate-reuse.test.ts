/**
 * @module test/faults/isolate-reuse
 * Found by the load run: an isolate is reused across calls (a fresh context each time), and its
 * heap grows until it hits the memory limit, so a trivial handler eventually fails with
 * GW_ERR_SANDBOX_MEMORY (about one call in 10,000 per worker at 64 MiB, one in ~150 at 16 MiB).
 * A legitimate plugin must never fail for memory it did not use: the sandbox now replaces an idle
 * isolate past half its heap limit before it serves another call.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type Item, type TestGateway } from '../helpers/gateway.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');

describe('faults: a long-lived isolate', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES], workers: 1, policy: { limits: { memoryMb: 16 } } });
  });
  after(async () => gw.close());

  it('1,500 trivial calls in a row on one worker never fail with GW_ERR_SANDBOX_MEMORY', async () => {
    const codes: Record<string, number> = {};
    for (let round = 0; round < 30; round++) {
      const r = await gw.rest('fixture-echo', {
        executions: Array.from({ length: 50 }, (_, i) => ({ tool: 'echo_args', args: { text: `r${round}-${i}` } })),
      });
      for (const [i, item] of (r.json.results as Item[]).entries()) {
        if (item.code) codes[item.code] = (codes[item.code] ?? 0) + 1;
        else assert.equal(item.result?.text, `r${round}-${i}`);
      }
    }
    assert.deepEqual(codes, {});
  });
});
