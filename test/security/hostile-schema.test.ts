/**
 * @module test/security/hostile-schema.test
 * A hostile plugin attacks the host through its manifest rather than its code: an inputSchema
 * pattern with catastrophic backtracking (^(a+)+$). Argument validation runs in the host process,
 * so one crafted argument must not stall the gateway for everyone else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startSecurityGateway, type SecurityGateway } from '../helpers/security-gateway.js';

/** ~2^28 backtracking steps with ^(a+)+$: over a second of blocked event loop on this machine */
const EVIL = `${'a'.repeat(28)}!`;

describe('a hostile plugin with a catastrophic schema pattern', () => {
  let gw: SecurityGateway;
  let apiKey: string;

  before(async () => {
    gw = await startSecurityGateway();
    apiKey = (await gw.createUser('redos@example.com')).apiKey;
  });
  after(async () => {
    await gw?.close();
  });

  it('validates a benign argument against the pattern', async () => {
    const [ok] = await gw.batch('hostile-redos', [{ tool: 'redos_check', args: { s: 'aaaa' } }], apiKey);
    assert.deepEqual(ok, { result: { length: 4 } });
    const [bad] = await gw.batch('hostile-redos', [{ tool: 'redos_check', args: { s: 'ab' } }], apiKey);
    assert.equal(bad.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
  });

  it('keeps /healthz and other callers answering while one argument is validated', async () => {
    // The gateway runs in this process: a blocked event loop shows as event-loop delay here.
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const t0 = performance.now();
    const attack = gw.batch('hostile-redos', [{ tool: 'redos_check', args: { s: EVIL } }], apiKey);
    const health = await fetch(`${gw.url}/healthz`);
    const [item] = await attack;
    const totalMs = performance.now() - t0;
    delay.disable();
    const blockedMs = delay.max / 1e6;
    assert.equal(health.status, 200);
    assert.equal(item.code, 'GW_ERR_VALIDATION_INVALID_ARGS', JSON.stringify(item));
    assert.ok(
      blockedMs < 300,
      `the gateway's event loop was blocked for ${Math.round(blockedMs)} ms (attack took ${Math.round(totalMs)} ms)`,
    );
  });
});
