/**
 * @module bench/search-evaluation
 * The search evaluation: the real catalog read from `plugins/<name>/manifest.json` (JSON data,
 * never plugin code), the labelled queries of `test/fixtures/discovery/queries-*.json`, and recall@k (a
 * query hits when any of its expected tools is in the top k), whether search reports the words of
 * a query that match nothing (queries with `unmatched`), and how often the weak-match hint fires on
 * queries answered right, answered wrong, and on negative queries (no tool here serves them). Used by
 * the evaluation tests, `scripts/eval-search.mjs` and `bench/search.ts`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CatalogTool } from '../host/discovery/catalog-tool.js';
import type { SearchIndex } from '../host/discovery/search-index.js';
import { isWeakMatch, WEAK_MATCH, type WeakMatchRule } from '../host/discovery/weak-match.js';

export interface LabelledQuery {
  /** the file it came from, e.g. "queries-github.json" */
  file: string;
  query: string;
  /** any of these in the top k is a hit; empty when no tool in the catalog serves the query (a negative) */
  expected: string[];
  /** the words search must report as matching nothing ("gitlab"), when the query says */
  unmatched?: string[];
  /** an expected tool must rank this high or better (a regression the test holds on its own) */
  within?: number;
}

export interface QueryOutcome extends LabelledQuery {
  /** 1-based rank of the first expected tool, or undefined when it is not in the top `depth` */
  rank: number | undefined;
  top: { name: string; score: number }[];
}

export interface EvaluationReport {
  queries: number;
  recallAt1: number;
  recallAt5: number;
  /** mean reciprocal rank over the top `depth` */
  mrr: number;
  /** queries whose expected tools are all missing from the catalog (not counted) */
  skipped: LabelledQuery[];
  outcomes: QueryOutcome[];
  /** queries with `unmatched` whose search reported other words as matching nothing */
  unmatchedMisses: { query: LabelledQuery; got: string[] }[];
}

export interface HintOutcome {
  query: LabelledQuery;
  /** whether search_tools would warn that no tool may fit (or finds nothing at all) */
  fired: boolean;
  /** the best hit, its score and what it leaves out of the query */
  top?: string;
  score?: number;
  coverage?: number;
  missing?: string[];
}

export interface HintGroup {
  queries: number;
  /** how many got the hint, and their share of `queries` (rounded to 3 decimals) */
  fired: number;
  rate: number;
  outcomes: HintOutcome[];
}

export interface HintReport {
  /** queries whose first result is an expected tool: a hint there is a false alarm */
  rightFirst: HintGroup;
  /** queries with a wrong first result: a hint there helps */
  wrongFirst: HintGroup;
  /** queries no tool serves (`"expected": []`): the rate is the detection rate */
  negatives: HintGroup;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every tool of every `plugins/<dir>/manifest.json` under `root`; folders without one are skipped. */
export function loadCatalogFromManifests(root: string): CatalogTool[] {
  const dir = join(root, 'plugins');
  if (!existsSync(dir)) return [];
  const out: CatalogTool[] = [];
  for (const name of readdirSync(dir).sort()) {
    const file = join(dir, name, 'manifest.json');
    if (!existsSync(file)) continue;
    const m: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!isRecord(m) || !Array.isArray(m['tools'])) continue;
    const integration = typeof m['name'] === 'string' ? m['name'] : name;
    const displayName = typeof m['displayName'] === 'string' ? m['displayName'] : integration;
    for (const t of m['tools']) {
      if (!isRecord(t) || typeof t['name'] !== 'string') continue;
      out.push({
        name: t['name'],
        integration,
        integrationDisplayName: displayName,
        description: typeof t['description'] === 'string' ? t['description'] : '',
        inputSchema: isRecord(t['inputSchema']) ? t['inputSchema'] : { type: 'object' },
        annotations: isRecord(t['annotations']) ? t['annotations'] : undefined,
      });
    }
  }
  return out;
}

/**
 * Every query of every `queries-*.json` in `dir`: a JSON array of `{"query": "…", "expected":
 * ["tool_name", …], "unmatched"?: ["word", …], "within"?: k}` (a single string is accepted for
 * `expected`; with `within`, an expected tool must be in the top k for the test to pass). A
 * query for something the catalog does not have has an empty `expected` and says which words must
 * be reported as matching nothing; one without `unmatched` is a plain negative (evaluated only by
 * {@link evaluateHint}).
 */
export function loadLabelledQueries(dir: string): LabelledQuery[] {
  if (!existsSync(dir)) return [];
  const out: LabelledQuery[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => /^queries-.*\.json$/.test(f))
    .sort()) {
    const data: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const list = Array.isArray(data) ? data : isRecord(data) && Array.isArray(data['queries']) ? data['queries'] : [];
    for (const q of list) {
      if (!isRecord(q) || typeof q['query'] !== 'string') continue;
      const e = q['expected'];
      const expected =
        typeof e === 'string' ? [e] : Array.isArray(e) ? e.filter((x): x is string => typeof x === 'string') : [];
      const u = q['unmatched'];
      const unmatched = Array.isArray(u) ? u.filter((x): x is string => typeof x === 'string') : undefined;
      const within = typeof q['within'] === 'number' ? { within: q['within'] } : {};
      // "expected": [] is a negative; an "expected" of no string at all is a mistake and skipped
      if (expected.length > 0 || unmatched !== undefined || (Array.isArray(e) && e.length === 0)) {
        out.push({ file, query: q['query'], expected, ...(unmatched ? { unmatched } : {}), ...within });
      }
    }
  }
  return out;
}

/** Runs every query against `index` and computes recall@1, recall@5 and MRR over the top `depth`. */
export function evaluateSearch(
  index: SearchIndex,
  queries: readonly LabelledQuery[],
  known: ReadonlySet<string>,
  depth = 10,
): EvaluationReport {
  const skipped: LabelledQuery[] = [];
  const outcomes: QueryOutcome[] = [];
  const unmatchedMisses: { query: LabelledQuery; got: string[] }[] = [];
  for (const q of queries) {
    if (q.unmatched) {
      const got = index.query(q.query, { limit: depth }).unmatched;
      if ([...got].sort().join(' ') !== [...q.unmatched].sort().join(' ')) unmatchedMisses.push({ query: q, got });
    }
    if (q.expected.length === 0) continue;
    if (!q.expected.some((name) => known.has(name))) {
      skipped.push(q);
      continue;
    }
    const hits = index.search(q.query, { limit: depth });
    const position = hits.findIndex((h) => q.expected.includes(h.entry.name));
    outcomes.push({
      ...q,
      rank: position >= 0 ? position + 1 : undefined,
      top: hits.slice(0, 5).map((h) => ({ name: h.entry.name, score: h.score })),
    });
  }
  const n = outcomes.length;
  const within = (k: number): number => outcomes.filter((o) => o.rank !== undefined && o.rank <= k).length;
  const ratio = (x: number): number => (n > 0 ? Math.round((x / n) * 1000) / 1000 : 0);
  const rr = outcomes.reduce((sum, o) => sum + (o.rank ? 1 / o.rank : 0), 0);
  return {
    queries: n,
    recallAt1: ratio(within(1)),
    recallAt5: ratio(within(5)),
    mrr: ratio(rr),
    skipped,
    outcomes,
    unmatchedMisses,
  };
}

/**
 * How often the weak-match hint (weak-match.ts, or `rule` in its place) fires: on queries whose
 * first result is right, on those whose first result is wrong, and on negatives. An empty answer
 * counts as fired (it says that nothing matched). Queries waiting for a plugin that is not
 * installed are left out.
 */
export function evaluateHint(
  index: SearchIndex,
  queries: readonly LabelledQuery[],
  known: ReadonlySet<string>,
  rule: WeakMatchRule = WEAK_MATCH,
): HintReport {
  const groups = { rightFirst: [] as HintOutcome[], wrongFirst: [] as HintOutcome[], negatives: [] as HintOutcome[] };
  for (const q of queries) {
    if (q.expected.length > 0 && !q.expected.some((name) => known.has(name))) continue;
    const result = index.query(q.query);
    const best = result.hits[0];
    const outcome: HintOutcome = {
      query: q,
      fired: best === undefined || isWeakMatch(best, rule),
      ...(best ? { top: best.entry.name, score: best.score } : {}),
      ...(result.fit ? { coverage: result.fit.coverage, missing: result.fit.missing } : {}),
    };
    if (q.expected.length === 0) groups.negatives.push(outcome);
    else if (best && q.expected.includes(best.entry.name)) groups.rightFirst.push(outcome);
    else groups.wrongFirst.push(outcome);
  }
  const group = (outcomes: HintOutcome[]): HintGroup => {
    const fired = outcomes.filter((o) => o.fired).length;
    return {
      queries: outcomes.length,
      fired,
      rate: outcomes.length ? Math.round((fired / outcomes.length) * 1000) / 1000 : 0,
      outcomes,
    };
  };
  return {
    rightFirst: group(groups.rightFirst),
    wrongFirst: group(groups.wrongFirst),
    negatives: group(groups.negatives),
  };
}
