#!/usr/bin/env node
// Runs the compiled test files (dist/test/**/*.test.js) with Node's test runner, with
// --no-node-snapshot (isolated-vm needs it). `npm test` builds first and runs every file.
//
// The test tree mirrors the source: the tests of host/<area>/ are in test/host/<area>/, of
// sandbox/<part>/ in test/sandbox/<part>/, of contracts/ and common/ in test/contracts/ and
// test/common/, of sdk/ in test/sdk/, of
// plugins/<name>/ in test/plugins/<name>.test.ts; suites that cross the whole gateway have their
// own folders (e2e, security, faults, fuzz, invariants, conformance, load, architecture); shared
// set-up is in test/helpers/ and data in test/fixtures/.
//
// Two tiers, told apart by the file name:
//   *.unit.test.ts  the unit tier: pure modules in this process only. Such a file starts no
//                   gateway, no sandbox process or worker, no child process and opens no socket
//                   (no loopback server either: a test that needs one is a system test). A
//                   temp-dir SQLite file and an MCP client over the SDK's InMemoryTransport are
//                   fine. `npm run test:unit` (or `--unit` here) runs them all in one process, in
//                   seconds.
//   *.test.ts       everything else: the system tests, each file in its own process.
// A test that no longer fits its tier's rule moves (the file is renamed), it does not stay.
//
// Usage: node --no-node-snapshot scripts/run-tests.mjs [--unit | --system] [fragment ...]
//   fragments select files by path (`sandbox plugins/github`); --unit runs only the unit tier,
//   --system only the rest. WORKBENCH_TEST_CONCURRENCY sets how many files run at once (default 2).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const testRoot = path.join(root, 'dist', 'test');
const UNIT_SUFFIX = '.unit.test.js';

function collect(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return collect(p);
    return e.name.endsWith('.test.js') ? [p] : [];
  });
}

const args = process.argv.slice(2);
const tier = args.includes('--unit') ? 'unit' : args.includes('--system') ? 'system' : 'all';
const filters = args.filter((a) => a !== '--unit' && a !== '--system');
const files = collect(testRoot)
  // A compiled file whose source is gone (moved or deleted) is stale output, not a test.
  .filter((f) => fs.existsSync(path.join(root, path.relative(path.join(root, 'dist'), f).replace(/\.js$/, '.ts'))))
  .filter((f) => tier === 'all' || (tier === 'unit') === f.endsWith(UNIT_SUFFIX))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/test (did the build run?)');
  process.exit(1);
}
const env = { ...process.env, WORKBENCH_TEST: '1' };
const concurrency = process.env.WORKBENCH_TEST_CONCURRENCY ?? '2';
// The unit tier shares one process: starting a process per file would cost more than the tests.
const unitEntry =
  "import { pathToFileURL } from 'node:url'; for (const f of process.argv.slice(1)) await import(pathToFileURL(f).href);";
const argv =
  tier === 'unit'
    ? ['--no-node-snapshot', '--test-reporter=spec', '--input-type=module', '-e', unitEntry, ...files]
    : ['--no-node-snapshot', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files];
const result = spawnSync(process.execPath, argv, { stdio: 'inherit', cwd: root, env });
process.exit(result.status ?? 1);
