/**
 * @module host/discovery/analyze
 * Turns text into the terms the index stores and the query matches: words → stems → phrases
 * collapsed to one term → stop words dropped. A camelCase word ("GitHub") is one term, and the
 * index also keeps its parts; a query keeps them aside for when the whole is no known word
 * ("listPullRequests"). Each term keeps its position span so that adjacent
 * terms can be recognised as a bigram ("create pr" in "Create a pull request").
 */
import { stem } from './stem.js';
import { phrasesStartingWith } from './synonyms.js';
import { STOP_WORDS, tokenizeRuns, type WordRun } from './tokenize.js';

export interface TermOccurrence {
  /** the stemmed term */
  term: string;
  /** the word(s) as written, lower-cased */
  raw: string;
  /** first and last position, counted over the kept (non-stop) words */
  start: number;
  end: number;
  /** a word inside a phrase or camelCase run that was also kept as a whole (index mode only) */
  part?: true;
  /**
   * query mode, a camelCase run: its parts analysed as words ("listPullRequests" → list, pr), for
   * when the run as a whole is no known word
   */
  parts?: TermOccurrence[];
}

/**
 * `index` mode keeps a phrase's own words as well as its term (a document saying "pull request"
 * matches both "pr" and "pull"); `query` mode keeps only the phrase term, so that the phrase
 * counts as one thing the user asked for.
 */
export type AnalyzeMode = 'index' | 'query';

function matchPhrase(stems: readonly string[], i: number): { words: readonly string[]; term: string } | undefined {
  for (const p of phrasesStartingWith(stems[i] ?? '')) {
    if (i + p.words.length > stems.length) continue;
    if (p.words.every((w, k) => stems[i + k] === w)) return p;
  }
  return undefined;
}

/** Analyses `text` into term occurrences, in order. */
export function analyze(text: string, mode: AnalyzeMode): TermOccurrence[] {
  const runs = tokenizeRuns(text);
  const words = runs.flatMap((r) => r.parts);
  /** index in `words` where each camelCase run (more than one part) begins */
  const camel = new Map<number, WordRun>();
  let k = 0;
  for (const r of runs) {
    if (r.parts.length > 1) camel.set(k, r);
    k += r.parts.length;
  }
  const stems = words.map(stem);
  const out: TermOccurrence[] = [];
  let pos = 0;
  let i = 0;
  while (i < words.length) {
    const run = camel.get(i);
    if (run) {
      // "GitHub": the whole word is the term ("github"); the index also keeps "git" and "hub"
      const span = run.parts.length;
      const whole: TermOccurrence = { term: stem(run.whole), raw: run.whole, start: pos, end: pos + span - 1 };
      if (mode === 'query') {
        const parts = analyze(run.parts.join(' '), 'query').map((o) => ({
          ...o,
          start: o.start + pos,
          end: o.end + pos,
        }));
        if (parts.length > 0) whole.parts = parts;
      }
      out.push(whole);
      if (mode === 'index')
        run.parts.forEach((w, j) =>
          out.push({ term: stems[i + j] ?? w, raw: w, start: pos + j, end: pos + j, part: true }),
        );
      pos += span;
      i += span;
      continue;
    }
    const phrase = matchPhrase(stems, i);
    if (phrase) {
      const members = words.slice(i, i + phrase.words.length);
      const kept = members.filter((w) => !STOP_WORDS.has(w));
      const span = Math.max(1, kept.length);
      out.push({ term: phrase.term, raw: members.join(' '), start: pos, end: pos + span - 1 });
      if (mode === 'index') {
        let p = pos;
        members.forEach((w, j) => {
          if (STOP_WORDS.has(w)) return;
          out.push({ term: stems[i + j] ?? w, raw: w, start: p, end: p, part: true });
          p++;
        });
      }
      pos += span;
      i += phrase.words.length;
      continue;
    }
    const w = words[i] ?? '';
    if (!STOP_WORDS.has(w)) {
      out.push({ term: stems[i] ?? w, raw: w, start: pos, end: pos });
      pos++;
    }
    i++;
  }
  return out;
}

/**
 * The query's words as written (lower-cased, stop words kept, camelCase split) with each phrase
 * replaced by one word: its first word marked with PHRASE_MARK ("~new" for "new relic"). What intent
 * is read from: a phrase names a thing, so its first word is no imperative ("new" in "new relic"
 * is no "create", "merge" in "merge request" no "merge", "direct message" no "dm bob"), though it
 * may still ask a question ("check" in "check run status").
 */
export const PHRASE_MARK = '~';

export function intentWords(text: string): string[] {
  const words = tokenizeRuns(text).flatMap((r) => r.parts);
  const stems = words.map(stem);
  const out: string[] = [];
  let i = 0;
  while (i < words.length) {
    const phrase = matchPhrase(stems, i);
    if (phrase) {
      out.push(PHRASE_MARK + (words[i] ?? ''));
      i += phrase.words.length;
    } else {
      out.push(words[i] ?? '');
      i++;
    }
  }
  return out;
}

/** Adjacent pairs "a b" (the end of one occurrence directly before the start of the next). */
export function bigramsOf(occurrences: readonly TermOccurrence[]): Set<string> {
  const byStart = new Map<number, string[]>();
  for (const o of occurrences) {
    const list = byStart.get(o.start);
    if (list) list.push(o.term);
    else byStart.set(o.start, [o.term]);
  }
  const out = new Set<string>();
  for (const o of occurrences) {
    for (const next of byStart.get(o.end + 1) ?? []) out.add(`${o.term} ${next}`);
  }
  return out;
}
