/**
 * @module test/sandbox/worker/isolate-recycling.test
 * A reused isolate must never fail a small call for memory earlier calls left behind (contexts of
 * past calls are reclaimed slowly): on the real sandbox, an idle isolate whose heap is over half
 * its limit is replaced, so 1,500 trivial calls in a row on one worker at 16 MiB all succeed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useOneWorkerSandbox } from '../../helpers/sandbox/harness.js';

const shared = useOneWorkerSandbox();

describe('isolates are recycled before they fill up', () => {
  it('1,500 trivial calls on one worker at 16 MiB never fail with GW_ERR_SANDBOX_MEMORY', async () => {
    const source = `export default { async run(ctx, args) { return { text: args.text, args }; } };`;
    const codes: Record<string, number> = {};
    for (let round = 0; round < 30; round++) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          shared.run({ name: 'trivial', source, args: { text: `r${round}-${i}` }, limits: { memoryMb: 16 } }),
        ),
      );
      for (const [i, r] of batch.entries()) {
        if (!r.outcome.ok) codes[r.outcome.error.code] = (codes[r.outcome.error.code] ?? 0) + 1;
        else assert.equal((r.result as { text: string }).text, `r${round}-${i}`);
      }
    }
    assert.deepEqual(codes, {});
  });
});
