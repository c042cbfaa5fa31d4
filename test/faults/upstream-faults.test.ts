/**
 * @module test/faults/upstream-faults
 * A misbehaving upstream, through the real gateway, sandbox and bridge: 500s, a hang past
 * http.requestTimeoutMs, a connection reset, a trickle of bytes and an endless body beyond
 * http.maxResponseBytes. Each call ends with its documented error (docs/operations.md), quickly,
 * with an audit row, and the next call after the fault succeeds.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startFaultUpstream, type FaultUpstream } from '../helpers/fault-upstream.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const TIMEOUT_MS = 500;
const MAX_RESPONSE = 1024 * 1024;

describe('faults: the upstream misbehaves', () => {
  let gw: TestGateway;
  let up: FaultUpstream;

  before(async () => {
    up = await startFaultUpstream();
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      upstreams: { 'https://api.fixture.test': up.origin },
      policy: { http: { requestTimeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_RESPONSE } },
    });
    await gw.connect('fixture-http', { token: 'tok_faults' });
  });
  after(async () => {
    await gw.close();
    await up.close();
  });
  beforeEach(() => {
    up.mode = 'ok';
  });

  const auditRows = async (): Promise<Array<{ success: number; error_code: string | null; error: string | null }>> =>
    gw.db.all('SELECT success, error_code, error FROM audit_events ORDER BY at');

  /** the call after a fault must succeed again */
  const recovers = async (): Promise<void> => {
    up.mode = 'ok';
    const item = await gw.execute('http_get', { path: '/after' });
    assert.deepEqual(item.result, { status: 200, body: { ok: true, url: '/after' } });
  };

  it('500 answers: the handler error reaches the caller (REST 502), audited as a failure', async () => {
    up.mode = 'error500';
    const before = (await auditRows()).length;
    const item = await gw.execute('http_get', { path: '/boom' });
    assert.equal(item.code, 'GW_ERR_SANDBOX_HANDLER_THREW');
    assert.match(item.error ?? '', /answered 500: .*upstream exploded/);
    const single = await gw.rest('fixture-http', { tool: 'http_get', args: { path: '/boom' } });
    assert.equal(single.status, 502);
    const rows = (await auditRows()).slice(before);
    assert.equal(rows.length, 2);
    assert.ok(rows.every((r) => r.success === 0 && r.error_code === 'GW_ERR_SANDBOX_HANDLER_THREW'));
    await recovers();
  });

  it('a hang past http.requestTimeoutMs ends with GW_ERR_BRIDGE_TIMEOUT, near the timeout', async () => {
    up.mode = 'hang';
    const t0 = performance.now();
    const item = await gw.execute('http_get', { path: '/hang' });
    const ms = performance.now() - t0;
    assert.match(item.error ?? '', /GW_ERR_BRIDGE_TIMEOUT/, JSON.stringify(item));
    assert.ok(ms >= TIMEOUT_MS - 50 && ms < TIMEOUT_MS + 2500, `took ${ms} ms`);
    await recovers();
  });

  it('a connection reset ends with GW_ERR_BRIDGE_NETWORK', async () => {
    up.mode = 'reset';
    const item = await gw.execute('http_get', { path: '/reset' });
    assert.match(item.error ?? '', /GW_ERR_BRIDGE_NETWORK/, JSON.stringify(item));
    assert.doesNotMatch(item.error ?? '', /127\.0\.0\.1/, 'the mapped target is not revealed');
    await recovers();
  });

  it('a trickle of bytes slower than the timeout ends with GW_ERR_BRIDGE_TIMEOUT, bounded in time', async () => {
    up.mode = 'trickle';
    const t0 = performance.now();
    const item = await gw.execute('http_get', { path: '/trickle' });
    const ms = performance.now() - t0;
    assert.match(item.error ?? '', /GW_ERR_BRIDGE_TIMEOUT/, JSON.stringify(item));
    assert.ok(
      ms < TIMEOUT_MS + 2500,
      `took ${ms} ms (a trickle must not hold a call for the whole 60 s it would last)`,
    );
    await recovers();
  });

  it('an endless body beyond http.maxResponseBytes ends with GW_ERR_BRIDGE_RESPONSE_TOO_LARGE, fast, with memory bounded', async () => {
    up.mode = 'huge';
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const item = await gw.execute('http_get', { path: '/huge' });
    const ms = performance.now() - t0;
    await up.hugeDone;
    const grown = process.memoryUsage().rss - rss0;
    assert.match(item.error ?? '', /GW_ERR_BRIDGE_RESPONSE_TOO_LARGE/, JSON.stringify(item).slice(0, 500));
    assert.ok(ms < 3000, `took ${ms} ms`);
    // the upstream stops as soon as the bridge stops reading: a few socket buffers past the cap, not 1 GiB
    assert.ok(up.hugeBytesSent < 32 * MAX_RESPONSE, `upstream wrote ${up.hugeBytesSent} bytes`);
    assert.ok(grown < 128 * 1024 * 1024, `rss grew by ${grown} bytes`);
    await recovers();
  });
});
