#!/usr/bin/env node
// Builds every first-party plugin written in TypeScript (plugins/<name>/plugin.ts) into its own
// folder: the generated manifest.json and plugin.js that the gateway loads, committed beside the
// sources. `--check` builds into a temporary folder instead and fails, naming the files, when a
// committed file differs from what its sources give. Run after `npm run build`:
//   node --no-node-snapshot scripts/build-plugins.mjs [--check] [--plugins DIR] [name ...]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { buildPlugin } = await import(path.join(root, 'dist', 'host', 'plugin-sdk', 'build.js'));
const args = process.argv.slice(2);
const check = args.includes('--check');
const dirAt = args.indexOf('--plugins');
const pluginsDir = dirAt >= 0 ? path.resolve(args[dirAt + 1] ?? '') : path.join(root, 'plugins');
const only = args.filter((a, i) => !a.startsWith('--') && (dirAt < 0 || i !== dirAt + 1));
const names = fs
  .readdirSync(pluginsDir)
  .filter((n) => fs.existsSync(path.join(pluginsDir, n, 'plugin.ts')))
  .filter((n) => only.length === 0 || only.includes(n))
  .sort();

let stale = 0;
for (const name of names) {
  const dir = path.join(pluginsDir, name);
  const outDir = check ? fs.mkdtempSync(path.join(os.tmpdir(), `workbench-${name}-`)) : dir;
  try {
    const built = await buildPlugin({ dir, outDir });
    for (const w of built.warnings) console.warn(`${name}: ${w}`);
    if (!check) {
      console.log(`${name}: ${built.manifest.tools.length} tools, plugin.js ${built.pluginBytes} bytes`);
      continue;
    }
    for (const file of ['manifest.json', 'plugin.js']) {
      const committed = path.join(dir, file);
      const same =
        fs.existsSync(committed) &&
        fs.readFileSync(committed, 'utf8') === fs.readFileSync(path.join(outDir, file), 'utf8');
      if (!same) {
        stale++;
        console.log(`${name}/${file} differs from what ${name}/plugin.ts builds`);
      }
    }
  } finally {
    if (check) fs.rmSync(outDir, { recursive: true, force: true });
  }
}
if (stale > 0) {
  console.log(`${stale} generated file(s) out of date: run \`npm run build:plugins\` and commit them`);
  process.exit(1);
}
if (check) console.log(`${names.length} plugins: generated files current`);
