#!/usr/bin/env node
/**
 * @module scripts/eval-search
 * Prints the tool-search evaluation: recall@1, recall@5 and MRR over test/discovery/queries-*.json
 * against the real catalog (plugins/<name>/manifest.json), per file and in total, then every query
 * whose expected tool is not first. Run `npx tsc -p .` first (it imports dist/).
 * Usage: node scripts/eval-search.mjs [--json] [--all]   (--all also lists rank-1 hits)
 */
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createSearchIndex } from '../dist/host/discovery/search-index.js';
import { toSearchEntry } from '../dist/host/discovery/catalog-tool.js';
import { evaluateSearch, loadCatalogFromManifests, loadLabelledQueries } from '../dist/host/discovery/evaluation.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const catalog = loadCatalogFromManifests(root);
const index = createSearchIndex(catalog.map(toSearchEntry));
const queries = loadLabelledQueries(join(root, 'test', 'discovery'));
const known = new Set(catalog.map((t) => t.name));
const report = evaluateSearch(index, queries, known);

if (process.argv.includes('--json')) {
  const { outcomes, ...figures } = report;
  console.log(JSON.stringify({ ...figures, tools: catalog.length, misses: outcomes.filter((o) => o.rank !== 1) }, null, 2));
  process.exit(0);
}

const files = [...new Set(report.outcomes.map((o) => o.file))];
console.log(`catalog: ${catalog.length} tools in ${new Set(catalog.map((t) => t.integration)).size} integrations`);
console.log('file                          queries  recall@1  recall@5');
for (const file of files) {
  const sub = evaluateSearch(index, queries.filter((q) => q.file === file), known);
  console.log(`${file.padEnd(30)}${String(sub.queries).padStart(7)}  ${sub.recallAt1.toFixed(3).padStart(8)}  ${sub.recallAt5.toFixed(3).padStart(8)}`);
}
console.log(`${'TOTAL'.padEnd(30)}${String(report.queries).padStart(7)}  ${report.recallAt1.toFixed(3).padStart(8)}  ${report.recallAt5.toFixed(3).padStart(8)}   (MRR@10 ${report.mrr.toFixed(3)})`);
if (report.skipped.length) {
  console.log(`\nskipped ${report.skipped.length} queries whose expected tools are not in the catalog:`);
  for (const q of report.skipped) console.log(`  [${q.file}] "${q.query}" → ${q.expected.join(' | ')}`);
}
if (report.unmatchedMisses.length) {
  console.log(`\nwords matching nothing reported wrongly (${report.unmatchedMisses.length}):`);
  for (const m of report.unmatchedMisses) console.log(`  [${m.query.file}] "${m.query.query}" → want [${m.query.unmatched.join(', ')}], got [${m.got.join(', ')}]`);
}
const shown = report.outcomes.filter((o) => process.argv.includes('--all') || o.rank !== 1);
if (shown.length) console.log(`\nnot first (${shown.length}):`);
for (const o of shown) {
  console.log(`  [${o.file}] "${o.query}" → ${o.expected.join(' | ')}: rank ${o.rank ?? '>10'}`);
  console.log(`      got ${o.top.map((t) => `${t.name} ${t.score}`).join(', ')}`);
}
