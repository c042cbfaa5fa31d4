/**
 * @module test/sandbox/isolate/attack-corpus.test
 * Every case of the attack catalogue (test/fixtures/sandbox/attack-corpus.json, format in
 * sandbox.md §2.1) runs against the real sandbox: a supervised sandbox process, a Piscina worker,
 * isolated-vm isolates, and the host-side bridge in front of a loopback upstream. Besides each
 * case's own expectation, every case must leave the sandbox process up, the next call in the same
 * worker clean (probe), the host realm unpolluted, and the credential canary nowhere.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createSandbox, type Sandbox } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge } from '../../../host/bridge/index.js';
import { fakeResolver } from '../../helpers/sandbox/fake-dns.js';
import {
  callTool,
  captureLogger,
  egressPolicy,
  LIMITS,
  manifest,
  moduleOf,
  ROOMY,
  type CallRecord,
} from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

interface AttackCase {
  id: string;
  category: string;
  handler: string;
  expect: 'error' | 'isolated' | 'timeout' | 'oom' | 'blocked-egress' | 'no-leak';
  alsoAccept?: string[];
  runs?: number;
}

const corpus = JSON.parse(
  fs.readFileSync(new URL('../../../../test/fixtures/sandbox/attack-corpus.json', import.meta.url), 'utf8'),
) as AttackCase[];
const CANARY = `wbcanary_${randomBytes(12).toString('hex')}`;
const BLOCKING = new Set([
  'GW_ERR_BRIDGE_HOST_NOT_ALLOWED',
  'GW_ERR_BRIDGE_ADDRESS_BLOCKED',
  'GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED',
  'GW_ERR_BRIDGE_TOO_MANY_REQUESTS',
  'GW_ERR_BRIDGE_TOO_MANY_REDIRECTS',
]);
/** cases whose requests are refused by the per-call budget inside the sandbox, before the host sees them */
const BUDGET_CASES = new Set(['dos-fetch-flood']);
const LIMITS_HERE = { ...LIMITS, memoryMb: 32, cpuMsPerCall: 750, wallMsPerCall: 1500 };
const EGRESS = ['api.example.com', 'rebind.example.com'];

/** Runs in the same plugin (same isolate unless it was disposed) right after each attack. */
const PROBE = `probe: async (ctx, args) => ({
  protoKeys: Object.getOwnPropertyNames(Object.prototype).length,
  polluted: ['__tenantLeak', 'polluted', 'isAdmin'].filter((k) => k in {}),
  pushNative: Function.prototype.toString.call(Array.prototype.push).includes('[native code]'),
  jsonParse: JSON.parse('{"a":1}').a === 1,
  stash: typeof globalThis.__stash,
  prepareStackTrace: typeof Error.prepareStackTrace,
  node: ['process', 'require', 'Buffer', 'module', '__wb_bridge', '__wb_start', '__wb_deliver'].filter((k) => typeof globalThis[k] !== 'undefined'),
  status: (await ctx.http.fetch('https://api.example.com/json')).status,
})`;

function findEscapes(value: unknown, path = '$', out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.startsWith('LEAK')) out.push(`${path}: ${value.slice(0, 80)}`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => findEscapes(v, `${path}[${i}]`, out));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'escaped' && v === true) out.push(`${path}.escaped`);
      if (k === 'leaks' && Array.isArray(v) && v.length > 0)
        out.push(`${path}.leaks: ${JSON.stringify(v).slice(0, 200)}`);
      findEscapes(v, `${path}.${k}`, out);
    }
  }
  return out;
}

let up: Upstream;
let sandbox: Sandbox;
let bridge: Bridge;
const logger = captureLogger();

before(async () => {
  up = await startUpstream();
  sandbox = await createSandbox({
    workers: 1,
    maxQueue: 100,
    quarantineAfterCrashes: 100,
    quarantineWindowMs: 1000,
    maxWorkerShare: 1,
    logger,
  });
  bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin }, requestTimeoutMs: 1000 }), {
    resolver: fakeResolver({ 'rebind.example.com': ['169.254.169.254'] }),
  });
});

after(async () => {
  await sandbox.close();
  await bridge.close();
  await up.close();
});

describe('attack corpus', () => {
  it('has the 57 cases of sandbox.md §2', () => assert.equal(corpus.length, 57));

  for (const c of corpus) {
    it(`${c.category}: ${c.id} → ${c.expect}`, async () => {
      const source = moduleOf(c.handler, PROBE);
      const m = manifest({ name: `attack-${c.id}`.slice(0, 60), egress: EGRESS });
      // a case that must end in an error or out of memory, where a timeout would fail it, gets time
      // to get there on a busy machine; the others keep the tight limits (a timeout is theirs to give)
      const roomy = (c.expect === 'error' || c.expect === 'oom') && !c.alsoAccept?.includes('timeout');
      const spec = {
        source,
        manifest: m,
        credential: { values: { token: CANARY } },
        limits: roomy ? { ...LIMITS_HERE, ...ROOMY } : LIMITS_HERE,
      };
      const records: CallRecord[] = [];
      for (let run = 0; run < (c.runs ?? 1); run++)
        records.push(await callTool(sandbox, bridge, { ...spec, args: { run } }));
      const accept = [c.expect, ...(c.alsoAccept ?? [])];

      for (const r of records) {
        const o = r.outcome;
        const describeOutcome = JSON.stringify(o).slice(0, 400);
        assert.ok(
          o.ok || !['GW_ERR_SANDBOX_CRASHED', 'GW_ERR_SANDBOX_UNAVAILABLE'].includes(o.error.code),
          `sandbox broke: ${describeOutcome}`,
        );
        assert.ok(!JSON.stringify(o).includes(CANARY), 'canary leaked into the outcome');
        assert.deepEqual(findEscapes(r.result), [], `escape reported: ${describeOutcome}`);
        const code = o.ok ? undefined : o.error.code;
        const blocked =
          r.results.some((x) => !x.ok && BLOCKING.has(x.error.code)) ||
          (BUDGET_CASES.has(c.id) && r.requests.length === LIMITS_HERE.maxRequestsPerCall);
        const okays: Record<string, boolean> = {
          isolated: true,
          'no-leak': true,
          error: !o.ok && code !== 'GW_ERR_SANDBOX_TIMEOUT' && code !== 'GW_ERR_SANDBOX_MEMORY',
          timeout: code === 'GW_ERR_SANDBOX_TIMEOUT',
          oom: code === 'GW_ERR_SANDBOX_MEMORY',
          'blocked-egress': blocked,
        };
        assert.ok(
          accept.some((a) => okays[a]),
          `expected ${accept.join(' or ')}, got ${describeOutcome}`,
        );
        for (const x of r.results)
          if (x.ok)
            assert.equal(new URL(x.response.url).hostname, 'api.example.com', 'only the allow-listed host answered');
      }
      if (c.id === 'cross-call-global-state') {
        const second = records[1]?.result as { seen?: unknown };
        assert.deepEqual(second.seen, { stash: null, proto: null });
      }

      const probe = await callTool(sandbox, bridge, { ...spec, tool: 'probe' });
      assert.ok(probe.outcome.ok, `probe failed after ${c.id}: ${JSON.stringify(probe.outcome)}`);
      assert.deepEqual(probe.result, {
        protoKeys: 12,
        polluted: [],
        pushNative: true,
        jsonParse: true,
        stash: 'undefined',
        prepareStackTrace: 'undefined',
        node: [],
        status: 200,
      });
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined, 'host Object.prototype polluted');
      assert.equal(({} as Record<string, unknown>)['isAdmin'], undefined, 'host Object.prototype polluted');
      assert.ok(!JSON.stringify(logger.lines).includes(CANARY), 'canary leaked into logs');
    });
  }

  it('kept one sandbox process alive through the whole corpus', () => {
    const s = sandbox.stats();
    assert.equal(s.crashes, 0);
    assert.equal(s.ready, true);
  });
});
