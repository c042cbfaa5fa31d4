/**
 * @module host/discovery/search-index
 * Ranked tool search, pure and dependency-free. A query is analysed like the catalog, each word
 * widened to its synonyms, typo corrections and prefixes (each with a weight below 1), and tools
 * are scored with BM25F, multiplied by how much of the query they cover (squared), how much of
 * their name the query covers, and adjacent-word (bigram) matches. Scores are normalised to 0..1
 * against what a perfect name match would score; ties go to the alphabetically first name. The
 * result also says how much of the query the best hit answers (`fit`), for the weak-match hint.
 */
import { intentWords } from './analyze.js';
import { buildIndexData, type IndexData, type SearchEntry } from './index-build.js';
import { queryIntent } from './intent.js';
import { expandQuery, type Unit } from './query-expansion.js';
import { nameSaturation, RANKING } from './ranking-weights.js';
import { stem } from './stem.js';
import { STOP_WORDS, tokenize } from './tokenize.js';

export type { SearchEntry } from './index-build.js';

export interface SearchOptions {
  /** only tools of this integration (its name or display name, case-insensitive) */
  integration?: string;
  /** how many results (default 10, at most 50) */
  limit?: number;
  /** only entries for which this returns true (e.g. the caller's policy) */
  filter?: (entry: SearchEntry) => boolean;
}

export interface SearchHit {
  entry: SearchEntry;
  /** relevance in 0..1, rounded to 3 decimals */
  score: number;
  /**
   * what the tool does, read from its name without the integration prefix: its terms after
   * phrases and stemming, sorted ("github_merge_pull_request" and "gitlab_merge_merge_request"
   * are both "merg pr")
   */
  job: string;
  /** how much of the query this hit answers (the weak-match hint reads it for the tool shown first) */
  fit: SearchFit;
}

export interface SearchResult {
  hits: SearchHit[];
  /** how many tools match in all (the hits are the first `limit` of them) */
  total: number;
  /**
   * query words (as written, lower-cased) that match nothing in the catalog, not even through a
   * synonym, typo correction or prefix: "gitlab" in "create gitlab merge request"
   */
  unmatched: string[];
  /** how much of the query the best hit answers; undefined when nothing matches */
  fit?: SearchFit;
}

/** What the best hit leaves out of the query (see weak-match.ts). */
export interface SearchFit {
  /**
   * the share of the query's words the best hit matches, in 0..1 (rounded to 3 decimals): a word
   * counts 1 when the hit has it as written, less through a synonym, typo or prefix, and 0 when
   * the hit does not have it; numbers and identifiers ("12", "v2") are not counted
   */
  coverage: number;
  /** the query's words (as written, lower-cased) the best hit does not match at all, unmatched ones included */
  missing: string[];
}

export interface SearchIndex {
  /** number of indexed entries */
  readonly size: number;
  search(query: string, opts?: SearchOptions): SearchHit[];
  /** the hits, and what the query asked for that nothing in the catalog has */
  query(query: string, opts?: SearchOptions): SearchResult;
}

export const DEFAULT_LIMIT = 10;
const HAS_DIGIT = /\p{N}/u;
export const MAX_LIMIT = 50;

/**
 * Whether `entry` belongs to the integration the caller named: its name or display name
 * (case and punctuation ignored), or one dash-separated part of its name ("jira").
 */
export function isIntegrationNamed(
  entry: Pick<SearchEntry, 'integration' | 'integrationDisplayName'>,
  wanted: string,
): boolean {
  const norm = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
  const w = norm(wanted);
  return (
    norm(entry.integration) === w ||
    norm(entry.integrationDisplayName) === w ||
    entry.integration.toLowerCase().split('-').includes(w)
  );
}

function integrationMatcher(wanted: string | undefined): ((e: SearchEntry) => boolean) | undefined {
  if (wanted === undefined || wanted.trim() === '') return undefined;
  return (e) => isIntegrationNamed(e, wanted);
}

function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_LIMIT;
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)));
}

/** Adjacent query units, as "a b" keys with the product of their weights. */
function queryBigrams(units: readonly Unit[]): { key: string; weight: number }[] {
  const out: { key: string; weight: number }[] = [];
  for (let i = 0; i + 1 < units.length; i++) {
    const a = units[i];
    const b = units[i + 1];
    if (!a || !b || a.occurrence.end + 1 !== b.occurrence.start) continue;
    for (const [ta, wa] of a.alternatives) {
      if (wa < RANKING.bigramMinWeight) continue;
      for (const [tb, wb] of b.alternatives) {
        if (wb >= RANKING.bigramMinWeight) out.push({ key: `${ta} ${tb}`, weight: wa * wb });
      }
    }
  }
  return out;
}

/** What the query's units add up to, before any tool is scored as a whole. */
interface QueryTally {
  /** each tool's summed best BM25F score over the units */
  raw: Float64Array;
  /** each tool's summed weight of the units it matches (for coverage) */
  covered: Float64Array;
  /** what a perfect name match would score (the normaliser) */
  ideal: number;
  /** the units that count (numbers and identifiers matching nothing do not) */
  effective: number;
  /** catalog term → best weight any unit gives it (for name coverage) */
  wanted: Map<string, number>;
  unmatched: string[];
  /** the words asked for (no numbers), in query order, with each tool's weight for it (none: it matches nothing) */
  asked: { word: string; weight?: Float64Array }[];
}

function search(data: IndexData, text: string, opts: SearchOptions): SearchResult {
  // full-width and other compatibility forms ("ｌｉｓｔ ＰＲｓ") read as their plain letters
  const query = text.normalize('NFKC');
  const words = tokenize(query);
  // after phrases collapse: "new relic: which alerts are open" reads, though "new" alone would write
  const intent = queryIntent(intentWords(query));
  const units = expandQuery(query, data, intent);
  const tally = tallyUnits(data, units);
  const { unmatched, asked } = tally;
  if (tally.effective === unmatched.length) return { hits: [], total: 0, unmatched };
  const scored = scoreDocs(data, tally, units, words, intent, opts);
  const norm = tally.ideal * (1 + RANKING.nameCoverageBonus) * (1 + RANKING.exactFormBonus);
  const fitOf = (doc: number): SearchFit => {
    // stop words are read only when a query has nothing else ("who are you"); never named as left out
    const missing = [...new Set(asked.filter((a) => (a.weight?.[doc] ?? 0) <= 0).map((a) => a.word))].filter(
      (w) => !STOP_WORDS.has(w),
    );
    const share = asked.length > 0 ? asked.reduce((sum, a) => sum + (a.weight?.[doc] ?? 0), 0) / asked.length : 1;
    return { coverage: Math.round(share * 1000) / 1000, missing };
  };
  const hits = scored.slice(0, clampLimit(opts.limit)).flatMap(({ doc, final }) => {
    const d = data.docs[doc];
    if (!d) return [];
    const score = norm > 0 ? Math.min(1, final / norm) : 0;
    return [{ entry: d.entry, score: Math.round(score * 1000) / 1000, job: d.job, fit: fitOf(doc) }];
  });
  const first = scored[0];
  if (first === undefined) return { hits, total: 0, unmatched };
  return { hits, total: scored.length, unmatched, fit: hits[0]?.fit ?? fitOf(first.doc) };
}

/** Adds up, unit by unit, what each tool scores and covers, and what a perfect match would score. */
function tallyUnits(data: IndexData, units: readonly Unit[]): QueryTally {
  const n = data.docs.length;
  const t: QueryTally = {
    raw: new Float64Array(n),
    covered: new Float64Array(n),
    ideal: 0,
    effective: 0,
    wanted: new Map(),
    unmatched: [],
    asked: [],
  };
  const { raw, covered } = t;
  for (const unit of units) {
    // a word that matches nothing still counts as asked for: "create gitlab merge request" is
    // not fully answered by a GitHub tool, whose coverage (and score) drops accordingly
    if (unit.alternatives.size === 0) {
      // a number or an identifier ("12", "v2", "9am") is a value for an argument, not something asked for
      if (!HAS_DIGIT.test(unit.occurrence.raw)) {
        t.effective++;
        // "lab" of "GitLab" is reported as the word the user wrote
        const word = unit.run ?? unit.occurrence.raw;
        if (!t.unmatched.includes(word)) t.unmatched.push(word);
        t.asked.push({ word });
      }
      continue;
    }
    t.effective++;
    const best = new Float64Array(n);
    const weight = new Float64Array(n);
    let unitIdeal = 0;
    /** the word as written, when the catalog has it: a rarer synonym ("mail" for "email") must not raise the bar */
    let writtenIdeal: number | undefined;
    for (const [term, w] of unit.alternatives) {
      unitIdeal = Math.max(unitIdeal, w * (data.idf.get(term) ?? 0));
      if (w >= 1 && data.idf.has(term)) writtenIdeal = Math.max(writtenIdeal ?? 0, data.idf.get(term) ?? 0);
      if ((t.wanted.get(term) ?? 0) < w) t.wanted.set(term, w);
      for (const p of data.postings.get(term) ?? []) {
        const s = w * p.score;
        if (s > (best[p.doc] ?? 0)) best[p.doc] = s;
        if (w > (weight[p.doc] ?? 0)) weight[p.doc] = w;
      }
    }
    t.ideal += (writtenIdeal ?? unitIdeal) * nameSaturation();
    if (!HAS_DIGIT.test(unit.occurrence.raw)) t.asked.push({ word: unit.occurrence.raw, weight });
    for (let d = 0; d < n; d++) {
      raw[d] = (raw[d] ?? 0) + (best[d] ?? 0);
      covered[d] = (covered[d] ?? 0) + (weight[d] ?? 0);
    }
  }
  return t;
}

/** Every tool that matches and passes the filters, with its final score, best first (ties by name). */
function scoreDocs(
  data: IndexData,
  tally: QueryTally,
  units: readonly Unit[],
  words: readonly string[],
  intent: ReturnType<typeof queryIntent>,
  opts: SearchOptions,
): { doc: number; final: number }[] {
  const { raw, covered, effective, wanted } = tally;
  const bigrams = queryBigrams(units);
  const matchesIntegration = integrationMatcher(opts.integration);
  const spelled = new Set(words);
  /** stems of the words the query writes in a plural form ("issues") */
  const plurals = new Set(
    words.filter((w) => w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && stem(w) !== w).map(stem),
  );
  const scored: { doc: number; final: number }[] = [];
  for (let d = 0; d < data.docs.length; d++) {
    const r = raw[d] ?? 0;
    const doc = data.docs[d];
    if (r <= 0 || !doc) continue;
    if (matchesIntegration && !matchesIntegration(doc.entry)) continue;
    if (opts.filter && !opts.filter(doc.entry)) continue;
    const coverage = (covered[d] ?? 0) / effective;
    let nameCoverage = 0;
    for (const t of doc.nameTerms) nameCoverage += wanted.get(t) ?? 0;
    nameCoverage = doc.nameTerms.length > 0 ? nameCoverage / doc.nameTerms.length : 0;
    let bigram = 0;
    for (const { key, weight } of bigrams) {
      if (doc.nameBigrams.has(key)) bigram += RANKING.nameBigramBonus * weight;
      else if (doc.descriptionBigrams.has(key)) bigram += RANKING.descriptionBigramBonus * weight;
    }
    let exact = 0;
    for (const w of doc.nameWords) if (spelled.has(w)) exact++;
    const exactForm = doc.nameWords.length > 0 ? exact / doc.nameWords.length : 0;
    const mismatch = intent !== undefined && doc.kind !== undefined && doc.kind !== intent;
    const unasked = intent === undefined && doc.kind === 'write';
    // get_issue fetches one issue by its key: "my issues" asks for a list or a search
    const single = doc.getsOne !== undefined && plurals.has(doc.getsOne);
    const final =
      r *
      coverage ** RANKING.coverageExponent *
      (1 + RANKING.nameCoverageBonus * nameCoverage) *
      (1 + RANKING.exactFormBonus * exactForm) *
      (1 + Math.min(bigram, RANKING.bigramBonusCap)) *
      (mismatch ? RANKING.intentMismatch : unasked ? RANKING.noIntentWrite : 1) *
      (single ? RANKING.singleForPlural : 1);
    scored.push({ doc: d, final });
  }
  return scored.sort((a, b) => {
    const diff = b.final - a.final;
    if (Math.abs(diff) > 1e-12) return diff;
    const na = data.docs[a.doc]?.entry.name ?? '';
    const nb = data.docs[b.doc]?.entry.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
}

/**
 * Indexes `entries` for ranked search. The index is immutable: build a new one when the catalog
 * changes (building ~200 tools takes a few milliseconds).
 */
export function createSearchIndex(entries: readonly SearchEntry[]): SearchIndex {
  const data = buildIndexData(entries);
  return {
    size: data.docs.length,
    search: (query, opts = {}) => search(data, query, opts).hits,
    query: (query, opts = {}) => search(data, query, opts),
  };
}
