/**
 * @module test/sandbox/worker/call-limits.test
 * `ctx.limits` through a started gateway: a plugin sees this call's limits as the policy sets them
 * for it (a per-plugin override included), `requestsLeft()` counts down with each `ctx.http`
 * request, refused ones included, and reads 0 once the call has ended; `timeLeftMs()` counts down
 * the call's wall-clock deadline; the object is frozen.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

let gw: TestGateway;
let up: Upstream;
let root: string;

const PLUGIN = `
let kept;
export default {
  async limits_probe(ctx, args) {
    const seen = [ctx.limits.requestsLeft()];
    for (let i = 0; i < args.requests; i++) {
      try { await ctx.http('https://api.limits.test/ping'); } catch (e) { seen.push(e.code); }
      seen.push(ctx.limits.requestsLeft());
    }
    let frozen = Object.isFrozen(ctx.limits);
    try { ctx.limits.maxRequests = 1000; } catch { /* strict mode: frozen */ }
    kept = ctx.limits;
    return { maxRequests: ctx.limits.maxRequests, maxResultBytes: ctx.limits.maxResultBytes, maxRequestBodyBytes: ctx.limits.maxRequestBodyBytes, seen, frozen, after: ctx.limits.maxRequests };
  },
  async limits_later(ctx) {
    // a per-tenant context keeps module state: an earlier call's limits object reads 0 now
    return { earlier: kept ? kept.requestsLeft() : null, mine: ctx.limits.requestsLeft(), earlierTime: kept ? kept.timeLeftMs() : null };
  },
  async limits_time(ctx) {
    const first = ctx.limits.timeLeftMs();
    await ctx.http('https://api.limits.test/slow');
    return { first, second: ctx.limits.timeLeftMs() };
  },
};
`;

before(async () => {
  up = await startUpstream(async (req) => {
    if (req.path === '/slow') await new Promise((r) => setTimeout(r, 400));
    return { json: { ok: true } };
  });
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-call-limits-'));
  const dir = path.join(root, 'limits-probe');
  fs.mkdirSync(dir);
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      name: 'limits',
      version: '1.0.0',
      displayName: 'Limits probe',
      description: 'Test plugin: reports ctx.limits.',
      auth: { type: 'none' },
      egress: ['api.limits.test'],
      tools: [
        {
          name: 'limits_probe',
          description: 'Reports the call limits.',
          inputSchema: {
            type: 'object',
            properties: { requests: { type: 'integer', minimum: 0, maximum: 10 } },
            required: ['requests'],
          },
        },
        {
          name: 'limits_later',
          description: 'Reads an earlier call limits object.',
          inputSchema: { type: 'object', properties: {} },
        },
        {
          name: 'limits_time',
          description: 'Reads the time left before and after a slow request.',
          inputSchema: { type: 'object', properties: {} },
        },
      ],
    }),
  );
  fs.writeFileSync(path.join(dir, 'plugin.js'), PLUGIN);
  gw = await startGateway({
    plugins: [],
    pluginDirs: [root],
    upstreams: { 'https://api.limits.test': up.origin },
    policy: {
      limits: { maxRequestsPerCall: 5 },
      http: { maxRequestBodyBytes: 4096 },
      plugins: { limits: { limits: { maxRequestsPerCall: 3, maxResultBytes: 50_000, wallMsPerCall: 8000 } } },
      sandbox: { contextMode: 'per-tenant' },
    },
  });
});
after(async () => {
  await gw?.close();
  await up?.close();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe('ctx.limits', () => {
  it("shows this plugin's limits and counts requests down, refused ones included", async () => {
    const item = await gw.execute('limits_probe', { requests: 4 });
    assert.ok('result' in item, JSON.stringify(item));
    assert.deepEqual(item.result, {
      maxRequests: 3,
      maxResultBytes: 50_000,
      maxRequestBodyBytes: 4096,
      seen: [3, 2, 1, 0, 'GW_ERR_BRIDGE_TOO_MANY_REQUESTS', 0],
      frozen: true,
      after: 3,
    });
    assert.equal(up.requests.length, 3);
  });

  it('an earlier call’s limits object reads 0 once that call has ended', async () => {
    await gw.execute('limits_probe', { requests: 0 });
    const item = await gw.execute('limits_later', {});
    assert.deepEqual(item.result, { earlier: 0, mine: 3, earlierTime: 0 });
  });

  it('timeLeftMs() counts down the call’s wall-clock deadline (this plugin’s wallMsPerCall)', async () => {
    const item = await gw.execute('limits_time', {});
    assert.ok('result' in item, JSON.stringify(item));
    const { first, second } = item.result as { first: number; second: number };
    assert.ok(first > 5000 && first <= 8000, `first ${first}`);
    // the upstream held the answer 400 ms
    assert.ok(second <= first - 350 && second > 0, `second ${second} after first ${first}`);
  });
});
