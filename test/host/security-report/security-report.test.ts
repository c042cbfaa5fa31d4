/**
 * @module test/host/security-report/security-report.test
 * `workbench security report` as an outsider runs it: the real CLI as a process. Classes whose
 * cases are all contained exit 0 with every case counted; a gateway weakened by its policy (loopback
 * allowed) exits 1 and names the cases it let through; the judge fails cases of a test-only
 * catalogue that are not contained, each for its own reason. The report never touches the
 * operator's data directory.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AttackCase } from '../../../host/security-report/catalogue.js';
import { ALL_CASES } from '../../../host/security-report/cases/index.js';
import { runReport } from '../../../host/security-report/run-report.js';
import { runCli } from '../../helpers/cli.js';

const count = (k: string): number => ALL_CASES.filter((c) => c.class === k).length;

describe('workbench security report', () => {
  let dir: string;
  let dataDir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-report-test-'));
    dataDir = path.join(dir, 'operator-data');
    fs.mkdirSync(dataDir);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('lists every case of the catalogue, and refuses a class it does not know', () => {
    const list = runCli({}, 'security', 'report', '--list', '--json');
    assert.equal(list.code, 0, list.stderr);
    const cases = JSON.parse(list.stdout).cases as Array<{ id: string; class: string; origin: string }>;
    assert.deepEqual(
      cases.map((c) => c.id),
      ALL_CASES.map((c) => c.id),
    );
    assert.equal(
      cases.filter((c) => c.origin === 'corpus').length,
      57,
      'the whole research corpus is in the catalogue',
    );
    assert.ok(cases.filter((c) => c.origin === 'new').length >= 40);
    assert.equal(new Set(cases.map((c) => c.id)).size, cases.length, 'case ids are unique');
    const text = runCli({}, 'security', 'report', '--list', '--class', 'cross-user');
    assert.match(text.stdout, /^Cross-user \(cross-user\): \d+ cases/m);
    assert.match(text.stdout, /cu-continuation-of-another-user\s+new/);
    const bad = runCli({}, 'security', 'report', '--class', 'ssrf,nonsense');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--class takes one or more of ssrf, header-smuggling/);
  });

  it('runs the chosen classes against a gateway of its own and counts the contained cases (exit 0)', () => {
    const r = runCli(
      { WORKBENCH_DATA_DIR: dataDir },
      'security',
      'report',
      '--class',
      'header-smuggling,cross-user',
      '--json',
    );
    assert.equal(r.code, 0, `${r.stderr}\n${r.stdout.slice(0, 3000)}`);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(
      report.classes.map((k: { id: string; ran: number; contained: number }) => [k.id, k.ran, k.contained]),
      [
        ['header-smuggling', count('header-smuggling'), count('header-smuggling')],
        ['cross-user', count('cross-user'), count('cross-user')],
      ],
    );
    assert.equal(report.cases.length, count('header-smuggling') + count('cross-user'));
    for (const c of report.cases) {
      assert.deepEqual(Object.keys(c).sort(), [
        'class',
        'contained',
        'happened',
        'id',
        'ms',
        'origin',
        'problems',
        'tries',
      ]);
      assert.equal(c.contained, true, `${c.id}: ${c.problems.join('; ')}`);
      assert.ok(c.happened.length > 0);
    }
    assert.equal(report.policy.file, path.join('policies', 'default.json'));
    assert.match(report.node, /^v\d+/);
    assert.deepEqual(fs.readdirSync(dataDir), [], "the operator's data directory was never touched");
  });

  it('exits 1 and names each case a weakened gateway lets through', () => {
    const policy = path.join(dir, 'weak-policy.json');
    fs.writeFileSync(policy, JSON.stringify({ http: { allowPrivateCidrs: ['127.0.0.0/8', '::1/128'] } }));
    const r = runCli({}, 'security', 'report', '--class', 'ssrf', '--policy', policy);
    assert.equal(r.code, 1, `${r.stderr}\n${r.stdout.slice(0, 3000)}`);
    assert.match(r.stdout, /policy {3}.*weak-policy\.json, with:/);
    const row = /^ {2}SSRF forms \(ssrf\)\s+(\d+)\s+(\d+)\s+(\d+)$/m.exec(r.stdout);
    assert.ok(row, r.stdout.slice(0, 2000));
    assert.equal(Number(row[1]), count('ssrf'));
    assert.equal(Number(row[1]) - Number(row[2]), Number(row[3]));
    assert.ok(Number(row[3]) > 0);
    assert.match(r.stdout, /^Not contained \(\d+\):$/m);
    for (const id of ['ssrf-dns-name-to-loopback', 'ssrf-redirect-301-to-loopback']) {
      assert.match(r.stdout, new RegExp(`^ {2}ssrf / ${id}$`, 'm'), `${id} is named`);
    }
    assert.match(r.stdout, /happened: {2}error GW_ERR_SANDBOX_HANDLER_THREW: HttpError: GW_ERR_BRIDGE_NETWORK/);
    assert.match(r.stdout, /\d+ of \d+ cases not contained/);
  });
});

describe("the report's judge, on cases that are not contained", () => {
  const plain = { origin: 'new', tries: 'a test-only case' } as const;
  const cases: AttackCase[] = [
    {
      ...plain,
      id: 'test-claims-an-escape',
      class: 'isolate-escape',
      handler: `async () => ({ escaped: true })`,
      expected: { outcome: 'any' },
    },
    {
      ...plain,
      id: 'test-reaches-what-it-expects-refused',
      class: 'ssrf',
      handler: `async (ctx) => (await ctx.http('https://api.attack.test/json')).status`,
      expected: { outcome: 'error', codes: ['GW_ERR_BRIDGE_ADDRESS_BLOCKED'] },
    },
    {
      ...plain,
      id: 'test-too-many-upstream-requests',
      class: 'resource-abuse',
      handler: `async (ctx) => { for (let i = 0; i < 3; i++) await ctx.http('https://api.attack.test/json'); return 3; }`,
      expected: { outcome: 'result', upstreamAtMost: 2 },
    },
    {
      ...plain,
      id: 'test-check-fails',
      class: 'result-shape',
      handler: `async () => 1`,
      expected: { outcome: 'result' },
      check: () => 'the check said no',
    },
    {
      ...plain,
      id: 'test-scenario-throws',
      class: 'cross-user',
      handler: `async () => 1`,
      expected: { outcome: 'any' },
      scenario: async () => Promise.reject(new Error('broken scenario')),
    },
    {
      ...plain,
      id: 'test-contained',
      class: 'result-shape',
      handler: `async () => ({ fine: true })`,
      expected: { outcome: 'result' },
    },
  ];

  it('fails each for its own reason, keeps the rest running, and passes the one that is contained', async () => {
    const report = await runReport({ cases });
    const problems = Object.fromEntries(report.cases.map((v) => [v.id, v.problems.join(' | ')]));
    assert.match(problems['test-claims-an-escape'] ?? '', /the attack reports an escape: \$\.escaped/);
    assert.match(
      problems['test-reaches-what-it-expects-refused'] ?? '',
      /expected a refusal \(GW_ERR_BRIDGE_ADDRESS_BLOCKED\), got a result/,
    );
    assert.match(
      problems['test-too-many-upstream-requests'] ?? '',
      /the upstream received 3 requests \(at most 2 may pass\)/,
    );
    assert.match(problems['test-check-fails'] ?? '', /the check said no/);
    assert.match(problems['test-scenario-throws'] ?? '', /could not be run to its end: broken scenario/);
    assert.equal(problems['test-contained'], '');
    assert.deepEqual(
      report.cases.map((v) => v.contained),
      [false, false, false, false, false, true],
    );
    assert.deepEqual(
      report.classes.find((k) => k.id === 'result-shape'),
      { id: 'result-shape', title: 'Result shapes', ran: 2, contained: 1 },
    );
  });
});
