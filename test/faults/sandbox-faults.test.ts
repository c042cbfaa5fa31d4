/**
 * @module test/faults/sandbox-faults
 * The sandbox fails under the gateway: its process is killed (SIGKILL) with calls in flight, and an
 * isolate runs out of memory. Callers get GW_ERR_SANDBOX_CRASHED / GW_ERR_SANDBOX_MEMORY for the
 * affected calls only; the other calls and the next ones succeed, and every call is audited.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type Item, type TestGateway } from '../helpers/gateway.js';
import { startFaultUpstream, type FaultUpstream } from '../helpers/fault-upstream.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const FAULT_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'fault-plugins');

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('faults: the sandbox fails', () => {
  let gw: TestGateway;
  let up: FaultUpstream;

  before(async () => {
    up = await startFaultUpstream('slow');
    up.slowMs = 1500;
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES, FAULT_PLUGINS],
      upstreams: { 'https://api.faults.test': up.origin },
      workers: 4,
      policy: { sandbox: { maxWorkerShare: 1 }, plugins: { 'fixture-faults': { limits: { memoryMb: 16 } } } },
    });
  });
  after(async () => {
    await gw.close();
    await up.close();
  });

  const batch = async (
    executions: Array<{ tool: string; args?: Record<string, unknown> }>,
    integration = 'fixture-faults',
  ): Promise<Item[]> => {
    const r = await gw.rest(integration, { executions });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return r.json.results as Item[];
  };

  it('SIGKILL of the sandbox process mid-call: in-flight calls get GW_ERR_SANDBOX_CRASHED, the next call succeeds', async () => {
    const stats0 = gw.gateway.sandbox.stats();
    const pid = stats0.pid;
    assert.ok(stats0.ready && typeof pid === 'number', JSON.stringify(stats0));
    const auditBefore = (await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM audit_events'))!.n;
    const inFlight = batch([
      { tool: 'faults_slow', args: { tag: 'a' } },
      { tool: 'faults_slow', args: { tag: 'b' } },
    ]);
    await until(() => up.requests >= 2 && gw.gateway.sandbox.stats().active >= 2, 5000);
    process.kill(pid, 'SIGKILL');
    const items = await inFlight;
    assert.deepEqual(
      items.map((i) => i.code),
      ['GW_ERR_SANDBOX_CRASHED', 'GW_ERR_SANDBOX_CRASHED'],
      JSON.stringify(items),
    );
    assert.ok(items.every((i) => typeof i.error === 'string' && i.error.length > 0));

    const next = await batch([{ tool: 'faults_fast', args: { tag: 'next' } }]);
    assert.deepEqual(next[0]?.result, { tag: 'next' });
    const stats1 = gw.gateway.sandbox.stats();
    assert.notEqual(stats1.pid, pid, 'a new sandbox process took over');
    assert.ok(stats1.crashes >= 1 && stats1.restarts >= 1, JSON.stringify(stats1));
    const rows = await gw.db.all<{ error_code: string | null }>(
      'SELECT error_code FROM audit_events ORDER BY at LIMIT -1 OFFSET ?',
      [auditBefore],
    );
    assert.deepEqual(
      rows.map((r) => r.error_code).sort(),
      [null, 'GW_ERR_SANDBOX_CRASHED', 'GW_ERR_SANDBOX_CRASHED'].sort(),
    );
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /workbench_sandbox_calls_total\{outcome="GW_ERR_SANDBOX_CRASHED"\} 2/);
    const ready = await fetch(`${gw.url}/readyz`);
    assert.equal(ready.status, 200);
  });

  it('an isolate out of memory: that call gets GW_ERR_SANDBOX_MEMORY, the others in the batch succeed', async () => {
    const pid = gw.gateway.sandbox.stats().pid;
    const items = await batch([
      { tool: 'faults_fast', args: { tag: 'before' } },
      { tool: 'faults_oom' },
      { tool: 'faults_fast', args: { tag: 'after' } },
    ]);
    assert.deepEqual(items[0]?.result, { tag: 'before' });
    assert.equal(items[1]?.code, 'GW_ERR_SANDBOX_MEMORY', JSON.stringify(items[1]));
    assert.deepEqual(items[2]?.result, { tag: 'after' });
    // the isolate was disposed, not the process: other plugins never noticed
    assert.equal(gw.gateway.sandbox.stats().pid, pid);
    const echo = await gw.execute('echo_args', { text: 'still here' });
    assert.equal(echo.result?.text, 'still here');
    const again = await batch([{ tool: 'faults_fast', args: { tag: 'again' } }]);
    assert.deepEqual(again[0]?.result, { tag: 'again' });
  });
});
