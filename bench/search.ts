/**
 * @module bench/search
 * Tool-search latency over the real catalog (plugins/<name>/manifest.json): index build time, then
 * every labelled query of test/fixtures/discovery run round-robin after a warm-up, timed one search at a
 * time, raw (`index.search`) and through the `search_tools` meta-tool handler (policy filter,
 * connection lookups, description trimming). Prints a table and writes bench/results/search.json.
 * Usage: node --no-node-snapshot dist/bench/search.js [--iterations N] (default 5000, at least 2000)
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { toSearchEntry } from '../host/discovery/catalog-tool.js';
import { loadCatalogFromManifests, loadLabelledQueries } from './search-evaluation.js';
import { createDiscoveryMetaTools } from '../host/discovery/meta-tools.js';
import { createSearchIndex } from '../host/discovery/search-index.js';
import type { MetaToolContext } from '../host/meta-tools/types.js';

interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found');
    dir = up;
  }
  return dir;
}

function summarise(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return {
    count: s.length,
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    mean: round(mean),
    max: round(s[s.length - 1] ?? NaN),
  };
}

async function time(n: number, queries: readonly string[], run: (q: string) => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const q = queries[i % queries.length] ?? '';
    const t0 = performance.now();
    await run(q);
    out.push(performance.now() - t0);
  }
  return out;
}

async function main(): Promise<void> {
  const arg = process.argv.indexOf('--iterations');
  const iterations = Math.max(2000, arg > 0 ? Number(process.argv[arg + 1]) || 5000 : 5000);
  const root = repoRoot();
  const catalog = loadCatalogFromManifests(root);
  const labelled = loadLabelledQueries(join(root, 'test', 'fixtures', 'discovery')).map((q) => q.query);
  const queries =
    labelled.length > 0 ? labelled : ['create pull request', 'send a message', 'open incidents', 'serch isues'];
  const entries = catalog.map(toSearchEntry);

  for (let i = 0; i < 5; i++) createSearchIndex(entries); // warm-up
  const builds: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    createSearchIndex(entries);
    builds.push(performance.now() - t0);
  }
  const index = createSearchIndex(entries);
  await time(500, queries, (q) => index.search(q));
  const raw = summarise(await time(iterations, queries, (q) => index.search(q)));

  const [searchTools] = createDiscoveryMetaTools({
    catalog: () => catalog,
    isAllowed: () => true,
    isConnected: async (_user, integration) => integration.length % 2 === 0,
  });
  if (!searchTools) throw new Error('search_tools missing');
  const ctx: MetaToolContext = {
    user: { id: 'bench', email: 'bench@example.com', tenant: 'bench', createdAt: 0 },
    transport: 'mcp',
    signal: new AbortController().signal,
    cancelled: new AbortController().signal,
    progress: async () => undefined,
    requestId: 'bench',
  };
  const handler = (q: string): Promise<unknown> => searchTools.handler(ctx, { query: q.slice(0, 500), limit: 10 });
  await time(500, queries, handler);
  const meta = summarise(await time(iterations, queries, handler));
  const build = summarise(builds);

  const result = {
    benchmark: 'search',
    date: new Date().toISOString(),
    node: process.version,
    tools: catalog.length,
    integrations: new Set(catalog.map((t) => t.integration)).size,
    distinctQueries: queries.length,
    unitMs: true,
    indexBuild: build,
    search: raw,
    searchToolsHandler: meta,
  };
  const row = (name: string, s: Summary): string =>
    `${name.padEnd(22)}${String(s.count).padStart(7)}${s.p50.toFixed(3).padStart(10)}${s.p90.toFixed(3).padStart(10)}${s.p99.toFixed(3).padStart(10)}${s.max.toFixed(3).padStart(10)}`;
  console.log(
    `tool search over ${result.tools} tools (${result.integrations} integrations), ${queries.length} distinct queries`,
  );
  console.log(
    `${'ms'.padEnd(22)}${'n'.padStart(7)}${'p50'.padStart(10)}${'p90'.padStart(10)}${'p99'.padStart(10)}${'max'.padStart(10)}`,
  );
  console.log(row('index build', build));
  console.log(row('index.search', raw));
  console.log(row('search_tools handler', meta));
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'search.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result));
}

await main();
