/**
 * @module test/security/hostile-buffering.test
 * A plugin floods ctx.http with large bodies, through a real gateway (REST, engine, sandbox
 * process, bridge) and a loopback upstream: the host holds at most `http.maxBufferedBytes` of them,
 * the requests past it fail in plugin code with GW_ERR_BRIDGE_BUSY (caught, or failing the handler
 * when not), the others arrive whole, and /metrics shows the bytes held going back to 0. A call with
 * 20 requests in flight at once prints no MaxListenersExceededWarning (the gateway runs in this
 * process). Every wait is for a condition, never for a time.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { FOUR_FIT, startBodyUpstream, until, type BodyUpstream } from '../helpers/body-upstream.js';
import { startGateway, type Item, type TestGateway } from '../helpers/gateway.js';

const BUFFER_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'buffer-plugins');

describe('a plugin flooding ctx.http with large bodies', () => {
  let gw: TestGateway;
  let up: BodyUpstream;
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => void warnings.push(w);

  before(async () => {
    process.on('warning', onWarning);
    up = await startBodyUpstream();
    gw = await startGateway({
      plugins: [],
      pluginDirs: [BUFFER_PLUGINS],
      upstreams: { 'https://bodies.fixture.test': up.origin },
      // a share of 1: the whole budget is this plugin's, so FOUR_FIT's arithmetic applies
      policy: {
        http: { maxResponseBytes: FOUR_FIT.body, maxBufferedBytes: FOUR_FIT.limit },
        sandbox: { maxWorkerShare: 1 },
      },
    });
  });
  after(async () => {
    process.off('warning', onWarning);
    await gw?.close();
    await up?.close();
  });

  async function metric(name: string): Promise<number | undefined> {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
    return m?.[1] === undefined ? undefined : Number(m[1]);
  }

  it('holds at most http.maxBufferedBytes: the bodies past it fail with GW_ERR_BRIDGE_BUSY in plugin code, the rest arrive whole, and the gauge returns to 0', async () => {
    assert.equal(await metric('workbench_bridge_buffered_limit_bytes'), FOUR_FIT.limit);
    const keys = Array.from({ length: 12 }, (_, i) => `flood-${i}`);
    const flood = gw.execute('bodies_fetch', {
      paths: keys.map((key) => `/held?n=${FOUR_FIT.body}&first=${FOUR_FIT.body - 1}&key=${key}`),
    });
    await until(
      async () =>
        (await metric('workbench_bridge_busy_total')) === 8 &&
        (await metric('workbench_bridge_buffered_bytes')) === 4 * (FOUR_FIT.body - 1),
      '4 bodies hold all but their last byte and 8 were refused',
    );

    // while the room is taken, a handler that does not catch fails with the code in its message
    const thrown: Item = await gw.execute('bodies_fetch', { paths: [`/bytes?n=${FOUR_FIT.body}`], rethrow: true });
    assert.equal(thrown.code, 'GW_ERR_SANDBOX_HANDLER_THREW', JSON.stringify(thrown));
    assert.match(thrown.error ?? '', /GW_ERR_BRIDGE_BUSY/);

    for (const key of keys) up.finish(key);
    const item = await flood;
    const outs = (item.result as Array<Record<string, unknown>>).map((o) => JSON.stringify(o)).sort();
    assert.deepEqual(
      outs,
      [
        ...Array(8).fill(JSON.stringify({ name: 'HttpError', code: 'GW_ERR_BRIDGE_BUSY' })),
        ...Array(4).fill(JSON.stringify({ length: FOUR_FIT.body })),
      ].sort(),
      JSON.stringify(item).slice(0, 500),
    );
    assert.equal(await metric('workbench_bridge_buffered_bytes'), 0);
    assert.equal(await metric('workbench_bridge_busy_total'), 9);

    const after = await gw.execute('bodies_fetch', {
      paths: [`/bytes?n=${FOUR_FIT.body}`, `/bytes?n=${FOUR_FIT.body}`],
    });
    assert.deepEqual(
      after.result,
      [{ length: FOUR_FIT.body }, { length: FOUR_FIT.body }],
      'with the room back, large bodies pass again',
    );
    assert.equal(await metric('workbench_bridge_buffered_bytes'), 0);
  });

  it('a call with 20 requests in flight at once prints no MaxListenersExceededWarning', async () => {
    // the upstream answers none of them until all 20 have arrived
    const item = await gw.execute('bodies_fetch', {
      paths: Array.from({ length: 20 }, () => '/barrier?n=16&k=20&group=listeners'),
    });
    assert.deepEqual(item.result, Array(20).fill({ length: 16 }), JSON.stringify(item).slice(0, 300));
    await new Promise((r) => setImmediate(r)); // process warnings are emitted on a later tick
    assert.deepEqual(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
      [],
    );
  });
});
