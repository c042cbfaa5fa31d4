#!/usr/bin/env node
/**
 * @module scripts/eval-search
 * Prints the tool-search evaluation: recall@1, recall@5 and MRR over test/fixtures/discovery/queries-*.json
 * against the real catalog (plugins/<name>/manifest.json), per file and in total, then every query
 * whose expected tool is not first; then how often the weak-match hint fires on queries answered right
 * (false alarms), answered wrong, and on negatives (detection), with the false alarms and the missed
 * negatives. Run `npx tsc -p .` first (it imports dist/).
 * Usage: node scripts/eval-search.mjs [--json] [--all] [--hint-curve]
 *   --all         also lists rank-1 hits
 *   --hint-curve  also prints the hint's rates under other limits (score alone, and coverage or score)
 */
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createSearchIndex } from '../dist/host/discovery/search-index.js';
import { toSearchEntry } from '../dist/host/discovery/catalog-tool.js';
import {
  evaluateHint,
  evaluateSearch,
  loadCatalogFromManifests,
  loadLabelledQueries,
} from '../dist/bench/search-evaluation.js';
import { WEAK_MATCH } from '../dist/host/discovery/weak-match.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const catalog = loadCatalogFromManifests(root);
const index = createSearchIndex(catalog.map(toSearchEntry));
const queries = loadLabelledQueries(join(root, 'test', 'fixtures', 'discovery'));
const known = new Set(catalog.map((t) => t.name));
const report = evaluateSearch(index, queries, known);
const hint = evaluateHint(index, queries, known);
const rates = (h) =>
  Object.fromEntries(Object.entries(h).map(([k, g]) => [k, { queries: g.queries, fired: g.fired, rate: g.rate }]));

if (process.argv.includes('--json')) {
  const { outcomes, ...figures } = report;
  console.log(
    JSON.stringify(
      {
        ...figures,
        tools: catalog.length,
        misses: outcomes.filter((o) => o.rank !== 1),
        hint: { rule: WEAK_MATCH, ...rates(hint) },
      },
      null,
      2,
    ),
  );
  process.exit(0);
}

const files = [...new Set(report.outcomes.map((o) => o.file))];
console.log(`catalog: ${catalog.length} tools in ${new Set(catalog.map((t) => t.integration)).size} integrations`);
console.log('file                          queries  recall@1  recall@5');
for (const file of files) {
  const sub = evaluateSearch(
    index,
    queries.filter((q) => q.file === file),
    known,
  );
  console.log(
    `${file.padEnd(30)}${String(sub.queries).padStart(7)}  ${sub.recallAt1.toFixed(3).padStart(8)}  ${sub.recallAt5.toFixed(3).padStart(8)}`,
  );
}
console.log(
  `${'TOTAL'.padEnd(30)}${String(report.queries).padStart(7)}  ${report.recallAt1.toFixed(3).padStart(8)}  ${report.recallAt5.toFixed(3).padStart(8)}   (MRR@10 ${report.mrr.toFixed(3)})`,
);
if (report.skipped.length) {
  console.log(`\nskipped ${report.skipped.length} queries whose expected tools are not in the catalog:`);
  for (const q of report.skipped) console.log(`  [${q.file}] "${q.query}" → ${q.expected.join(' | ')}`);
}
if (report.unmatchedMisses.length) {
  console.log(`\nwords matching nothing reported wrongly (${report.unmatchedMisses.length}):`);
  for (const m of report.unmatchedMisses)
    console.log(
      `  [${m.query.file}] "${m.query.query}" → want [${m.query.unmatched.join(', ')}], got [${m.got.join(', ')}]`,
    );
}
const shown = report.outcomes.filter((o) => process.argv.includes('--all') || o.rank !== 1);
if (shown.length) console.log(`\nnot first (${shown.length}):`);
for (const o of shown) {
  console.log(`  [${o.file}] "${o.query}" → ${o.expected.join(' | ')}: rank ${o.rank ?? '>10'}`);
  console.log(`      got ${o.top.map((t) => `${t.name} ${t.score}`).join(', ')}`);
}

const pct = (g) =>
  `${String(g.fired).padStart(3)}/${String(g.queries).padEnd(3)} ${(g.rate * 100).toFixed(1).padStart(5)}%`;
console.log(
  `\nweak-match hint (score < ${WEAK_MATCH.score} or coverage <= ${WEAK_MATCH.coverage}; an empty answer counts as fired):`,
);
console.log(`  first result right (false alarms) ${pct(hint.rightFirst)}`);
console.log(`  first result wrong                ${pct(hint.wrongFirst)}`);
console.log(`  negatives (detected)              ${pct(hint.negatives)}`);
const describe = (o) =>
  `"${o.query.query}" → ${o.top ?? 'nothing'}${o.top ? ` ${o.score}, coverage ${o.coverage}, leaves out [${o.missing.join(', ')}]` : ''}`;
const alarms = hint.rightFirst.outcomes.filter((o) => o.fired);
if (alarms.length) console.log(`\nfalse alarms (${alarms.length}):`);
for (const o of alarms) console.log(`  [${o.query.file}] ${describe(o)}`);
const silent = hint.negatives.outcomes.filter((o) => !o.fired);
if (silent.length) console.log(`\nnegatives without the hint (${silent.length}):`);
for (const o of silent) console.log(`  [${o.query.file}] ${describe(o)}`);

if (process.argv.includes('--hint-curve')) {
  console.log('\nthe hint under other limits:            right-first  wrong-first  negatives');
  const line = (label, rule) => {
    const h = evaluateHint(index, queries, known, rule);
    const r = (g) => `${(g.rate * 100).toFixed(1).padStart(6)}%`;
    console.log(`  ${label.padEnd(36)}  ${r(h.rightFirst)}      ${r(h.wrongFirst)}     ${r(h.negatives)}`);
  };
  // coverage -1: never weak by coverage, the score alone decides
  for (const score of [0.05, 0.1, 0.15, 0.2, 0.25]) line(`score < ${score}`, { score, coverage: -1 });
  for (const coverage of [0.4, 0.45, 0.5, 0.55, 0.6]) {
    for (const score of [0, 0.05, 0.08, 0.1, 0.12, 0.15])
      line(`coverage <= ${coverage} or score < ${score}`, { score, coverage });
  }
}
