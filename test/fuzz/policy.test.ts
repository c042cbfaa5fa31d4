/**
 * @module test/fuzz/policy.test
 * Property-based fuzzing of policy files: parsePolicy on arbitrary values and on near-valid
 * policies with mutated fields, loadPolicyFile on arbitrary file text. Each either returns a policy
 * (which validates again to itself) or throws GW_ERR_POLICY_INVALID naming the problem; nothing
 * else ever escapes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { isGatewayError } from '../../host/errors.js';
import { loadPolicyFile, parsePolicy } from '../../host/policy/load.js';

function show(v: unknown): string {
  try {
    return String(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x))).slice(0, 300);
  } catch {
    return String(v).slice(0, 300);
  }
}

function parsesOrRefuses(run: () => unknown, input: unknown): unknown {
  try {
    return run();
  } catch (err) {
    assert.ok(isGatewayError(err), `not a GatewayError for ${show(input)}: ${String(err)}`);
    assert.equal(err.code, 'GW_ERR_POLICY_INVALID');
    assert.ok(err.message.length > 0 && err.message.length < 20_000, 'a bounded message');
    return undefined;
  }
}

const odd = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 12, arbitrary: good }, { weight: 1, arbitrary: bad });
const num = odd(
  fc.integer({ min: 1024, max: 4000 }),
  fc.oneof(
    fc.integer({ min: -10, max: 5_000_000_000 }),
    fc.double(),
    fc.constantFrom(0, 0.5, 1e9, -0),
    fc.string({ maxLength: 8 }),
    fc.constant(null),
  ),
);
const strList = odd(
  fc.array(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 4 }),
  fc.jsonValue({ maxDepth: 1 }),
);
// Lists whose entries must have a shape (rule entries, host names, CIDRs): mostly well formed, so
// that enough fuzzed policies are valid to check the round trip, and sometimes anything at all.
const shaped = (good: fc.Arbitrary<string>) => odd(fc.array(good, { maxLength: 4 }), strList);
const ruleList = shaped(fc.oneof(fc.constant('*'), fc.stringMatching(/^[a-z0-9][a-z0-9_.-]{0,19}$/)));
const hostList = shaped(fc.domain());
const cidrList = shaped(fc.constantFrom('10.0.0.0/8', '192.168.1.0/24', '127.0.0.1', 'fd00::/8', '::1'));
const origin = fc.oneof(
  fc.constantFrom(
    'https://api.github.com',
    'http://127.0.0.1:4010',
    'https://x.test/',
    'https://x.test/path',
    'ftp://x',
    'https://user:pw@x.test',
  ),
  fc.webUrl(),
  fc.string({ maxLength: 20 }),
);
const section = <T>(arb: fc.Arbitrary<T>) => odd(arb, fc.jsonValue({ maxDepth: 2 }));
const nearPolicy = fc.record(
  {
    limits: section(
      fc.record(
        {
          memoryMb: num,
          cpuMsPerCall: num,
          wallMsPerCall: num,
          maxResultBytes: num,
          maxArgsBytes: num,
          maxRequestsPerCall: num,
        },
        { requiredKeys: [] },
      ),
    ),
    http: section(
      fc.record(
        {
          requestTimeoutMs: num,
          maxResponseBytes: num,
          maxRedirects: odd(fc.integer({ min: 0, max: 10 }), num),
          allowPrivateCidrs: cidrList,
          denyHosts: hostList,
        },
        { requiredKeys: [] },
      ),
    ),
    sandbox: section(
      fc.record(
        {
          workers: odd(fc.integer({ min: 1, max: 64 }), num),
          contextMode: odd(fc.constantFrom('per-call', 'per-tenant'), fc.constantFrom('shared', '')),
          maxQueue: num,
          maxWorkerShare: odd(fc.double({ min: 0.05, max: 1, noNaN: true }), num),
          maxUserShare: odd(fc.double({ min: 0.01, max: 1, noNaN: true }), num),
          quarantineWindowMs: odd(fc.integer({ min: 1000, max: 1e7 }), num),
        },
        { requiredKeys: [] },
      ),
    ),
    requests: section(
      fc.record(
        {
          maxBatch: odd(fc.integer({ min: 1, max: 1000 }), num),
          bodyLimitBytes: num,
          perUserPerMinute: num,
          perTenantPerMinute: num,
        },
        { requiredKeys: [] },
      ),
    ),
    resultCap: section(fc.record({ maxChars: num, continuationTtlSec: num }, { requiredKeys: [] })),
    upstreams: section(
      fc.dictionary(
        fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom('https://api.github.com', 'https://x.test') },
          { weight: 1, arbitrary: origin },
        ),
        fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom('http://127.0.0.1:4010', 'https://y.test') },
          { weight: 1, arbitrary: origin },
        ),
        { maxKeys: 2 },
      ),
    ),
    schemaErrors: odd(fc.constantFrom('reject', 'passthrough'), fc.jsonValue({ maxDepth: 1 })),
    tenants: section(
      fc.dictionary(
        fc.string({ minLength: 1, maxLength: 10 }),
        fc.record(
          { allowPlugins: ruleList, denyPlugins: ruleList, allowTools: ruleList, denyTools: ruleList },
          { requiredKeys: [] },
        ),
        { maxKeys: 3 },
      ),
    ),
    plugins: section(
      fc.dictionary(
        fc.string({ minLength: 1, maxLength: 10 }),
        fc.record(
          { limits: fc.record({ memoryMb: num, cpuMsPerCall: num }, { requiredKeys: [] }) },
          { requiredKeys: [] },
        ),
        { maxKeys: 3 },
      ),
    ),
    audit: section(
      fc.record(
        {
          sink: odd(fc.constantFrom('database', 'stdout'), fc.constant('file')),
          storeArguments: odd(fc.boolean(), fc.jsonValue({ maxDepth: 0 })),
          retentionDays: odd(fc.integer({ min: 0, max: 3650 }), num),
        },
        { requiredKeys: [] },
      ),
    ),
    images: section(fc.record({ allowSvg: odd(fc.boolean(), fc.jsonValue({ maxDepth: 0 })) }, { requiredKeys: [] })),
    $schema: fc.string({ maxLength: 10 }),
  },
  { requiredKeys: [] },
);

describe('fuzzing policy files', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-policy-fuzz-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('parsePolicy returns or throws GW_ERR_POLICY_INVALID for any value at all', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withNullPrototype: true,
          withBigInt: true,
          withMap: true,
          withSet: true,
          withDate: true,
          withTypedArray: true,
          withSparseArray: true,
          withBoxedValues: true,
          withObjectString: true,
          maxDepth: 3,
        }),
        (v) => {
          parsesOrRefuses(() => parsePolicy(v), v);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('parsePolicy on near-valid policies: refuses with the field, or returns a policy that validates to itself', () => {
    let accepted = 0;
    fc.assert(
      fc.property(nearPolicy, (p) => {
        const out = parsesOrRefuses(() => parsePolicy(p, 'fuzzed.json'), p);
        if (out === undefined) return;
        accepted++;
        const text = JSON.stringify(out);
        assert.equal(
          JSON.stringify(parsePolicy(JSON.parse(text))),
          text,
          'a returned policy, written out as a file, reads back to itself',
        );
      }),
      { numRuns: 1500 },
    );
    assert.ok(accepted > 5, `some fuzzed policies were valid (${accepted})`);
  });

  it('names the file and the field when it refuses', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('limits', 'http', 'sandbox', 'requests', 'resultCap'),
        fc.string({ maxLength: 6 }),
        (key, bad) => {
          try {
            parsePolicy({ [key]: { nonsense: bad } }, 'mine.json');
            assert.fail('an unknown key is refused');
          } catch (err) {
            assert.ok(isGatewayError(err) && err.code === 'GW_ERR_POLICY_INVALID');
            assert.match(err.message, new RegExp(`^mine\\.json: .*${key}`));
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it('loadPolicyFile returns or throws GW_ERR_POLICY_INVALID for any file text', () => {
    let i = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          nearPolicy.map((p) => JSON.stringify(p)),
          nearPolicy.map((p) => JSON.stringify(p).slice(0, -2)),
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
        ),
        (text) => {
          const file = path.join(dir, `p${i++}.json`);
          fs.writeFileSync(file, text);
          parsesOrRefuses(() => loadPolicyFile(file), text);
        },
      ),
      { numRuns: 400 },
    );
    parsesOrRefuses(() => loadPolicyFile(path.join(dir, 'missing.json')), 'missing');
    parsesOrRefuses(() => loadPolicyFile(dir), 'a directory');
  });
});
