#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with Node's test runner, with
// --no-node-snapshot (isolated-vm needs it). `npm test` builds first. Pass file or folder
// fragments to run a subset: `npm test -- sandbox plugins/github`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const testRoot = path.join(root, 'dist', 'test');

function collect(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return collect(p);
    return e.name.endsWith('.test.js') ? [p] : [];
  });
}

const filters = process.argv.slice(2);
const files = collect(testRoot)
  .filter((f) => fs.existsSync(path.join(root, path.relative(path.join(root, 'dist'), f).replace(/\.js$/, '.ts'))))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/test (did the build run?)');
  process.exit(1);
}
const concurrency = process.env.WORKBENCH_TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  ['--no-node-snapshot', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', cwd: root, env: { ...process.env, WORKBENCH_TEST: '1' } },
);
process.exit(result.status ?? 1);
