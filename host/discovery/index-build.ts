/**
 * @module host/discovery/index-build
 * Builds the inverted index behind tool search: per field term frequencies combined BM25F-style
 * (weights in ranking-weights.ts: name > integration > description > parameters, each
 * length-normalised), saturated once,
 * multiplied by the term's idf and stored as one precomputed score per (term, tool). A search is
 * then only posting-list look-ups.
 */
import { analyze, bigramsOf, type TermOccurrence } from './analyze.js';
import { synonymVocabulary } from './synonyms.js';
import { verbIntent, type Intent } from './intent.js';
import { RANKING } from './ranking-weights.js';
import { stem } from './stem.js';
import { Vocabulary } from './vocabulary.js';

/** One tool as search sees it. */
export interface SearchEntry {
  name: string;
  integration: string;
  integrationDisplayName: string;
  description: string;
  /** property names of the input schema, and their descriptions */
  parameters: string[];
}

const FIELD_KEYS = ['name', 'integration', 'description', 'parameters'] as const;
const GET = stem('get');

export interface Posting {
  doc: number;
  /** idf × saturated field-weighted frequency */
  score: number;
}

export interface DocData {
  entry: SearchEntry;
  /**
   * distinct name terms without the leading integration words ("github_create_issue" → creat, issu)
   * and without the words of a phrase ("list_pull_requests" → list, pr)
   */
  nameTerms: string[];
  /** the name terms sorted and joined: what the tool does, whatever its integration ("merg pr") */
  job: string;
  /** what the leading name verb says the tool does (list → read, create → write) */
  kind: Intent | undefined;
  /** the name's words as written, lower-cased, without the integration prefix */
  nameWords: string[];
  nameBigrams: Set<string>;
  descriptionBigrams: Set<string>;
  /** for a name "get_<thing>" whose thing is written in the singular ("get_issue"): the thing's stem */
  getsOne: string | undefined;
}

export interface IndexData {
  docs: DocData[];
  postings: Map<string, Posting[]>;
  idf: Map<string, number>;
  vocabulary: Vocabulary;
}

function termCounts(occ: readonly TermOccurrence[], unique: boolean): Map<string, number> {
  const m = new Map<string, number>();
  for (const o of occ) m.set(o.term, unique ? 1 : (m.get(o.term) ?? 0) + 1);
  return m;
}

/** Drops leading name words that only repeat the integration ("jira" in "jira_create_issue"). */
function stripIntegrationPrefix(name: TermOccurrence[], integrationTerms: ReadonlySet<string>): TermOccurrence[] {
  let i = 0;
  while (i < name.length - 1 && integrationTerms.has(name[i]?.term ?? '')) i++;
  return name.slice(i);
}

/** Analyses and indexes `entries`; the order of `entries` is the document number. */
export function buildIndexData(entries: readonly SearchEntry[]): IndexData {
  const raws = new Map<string, string>();
  const perDoc: { fields: Map<string, number>[]; lengths: number[] }[] = [];
  const docs: DocData[] = [];
  const totals = FIELD_KEYS.map(() => 0);
  const { fields: weights, k1, idfExponent } = RANKING;

  for (const entry of entries) {
    const integrationOcc = analyze(`${entry.integration} ${entry.integrationDisplayName}`, 'index');
    const integrationTerms = new Set(integrationOcc.map((o) => o.term));
    const nameOcc = stripIntegrationPrefix(analyze(entry.name, 'index'), integrationTerms);
    const descriptionOcc = analyze(entry.description, 'index');
    const parameterOcc = analyze(entry.parameters.join(' \n '), 'index');
    const all = [nameOcc, integrationOcc, descriptionOcc, parameterOcc];
    for (const occ of all) for (const o of occ) if (!o.raw.includes(' ')) raws.set(o.raw, o.term);
    const fields = all.map((occ, f) => termCounts(occ, FIELD_KEYS[f] === 'integration'));
    const lengths = fields.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
    lengths.forEach((l, f) => (totals[f] = (totals[f] ?? 0) + l));
    perDoc.push({ fields, lengths });
    const nameTerms = [...new Set(nameOcc.filter((o) => !o.part).map((o) => o.term))];
    const last = nameOcc[nameOcc.length - 1];
    const getsOne =
      nameTerms[0] === GET &&
      nameOcc.length > 1 &&
      last !== undefined &&
      !last.raw.includes(' ') &&
      !last.raw.endsWith('s')
        ? last.term
        : undefined;
    docs.push({
      entry,
      nameTerms,
      job: [...nameTerms].sort().join(' '),
      kind: verbIntent(nameTerms[0]),
      nameWords: [...new Set(nameOcc.filter((o) => !o.raw.includes(' ')).map((o) => o.raw))],
      nameBigrams: bigramsOf(nameOcc),
      descriptionBigrams: bigramsOf(descriptionOcc),
      getsOne,
    });
  }

  const n = entries.length;
  const averages = totals.map((t) => (n > 0 ? t / n : 0));
  const df = new Map<string, number>();
  const weighted: Map<string, number>[] = perDoc.map(({ fields, lengths }) => {
    const tf = new Map<string, number>();
    fields.forEach((counts, f) => {
      const key = FIELD_KEYS[f];
      if (!key) return;
      const spec = weights[key];
      const avg = averages[f] || 1;
      const norm = 1 - spec.b + (spec.b * (lengths[f] ?? 0)) / avg;
      for (const [term, c] of counts) tf.set(term, (tf.get(term) ?? 0) + (spec.weight * c) / norm);
    });
    for (const term of tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
    return tf;
  });

  const idf = new Map<string, number>();
  for (const [term, d] of df) idf.set(term, Math.log(1 + (n - d + 0.5) / (d + 0.5)) ** idfExponent);
  const postings = new Map<string, Posting[]>();
  weighted.forEach((tf, doc) => {
    for (const [term, x] of tf) {
      const posting = { doc, score: (idf.get(term) ?? 0) * ((x * (k1 + 1)) / (k1 + x)) };
      const list = postings.get(term);
      if (list) list.push(posting);
      else postings.set(term, [posting]);
    }
  });

  const terms = new Set(postings.keys());
  const bridges = new Set<string>();
  for (const [word, s] of synonymVocabulary()) {
    if (!raws.has(word)) raws.set(word, s);
    bridges.add(s);
  }
  return { docs, postings, idf, vocabulary: new Vocabulary(terms, raws, bridges) };
}
