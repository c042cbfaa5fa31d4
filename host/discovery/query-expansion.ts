/**
 * @module host/discovery/query-expansion
 * What a query asks for: its terms (analysed like the catalog), each widened to every catalog term
 * it may stand for — itself (weight 1), its synonyms, and when it is not a catalog word, typo
 * corrections and prefixes with their synonyms (weights below 1), or failing that, its two halves
 * when it is two known words run together ("username"). A camelCase run that is no catalog word
 * but made of catalog words ("addIssueComment") stands for its parts.
 */
import { analyze, type TermOccurrence } from './analyze.js';
import type { IndexData } from './index-build.js';
import { isMakingVerb, type Intent } from './intent.js';
import { stem } from './stem.js';
import { synonymsOf } from './synonyms.js';
import { tokenize } from './tokenize.js';

/** At most this many distinct query terms are used (a 500-character query has about 80 words). */
export const MAX_QUERY_TERMS = 24;
/** At most this many unknown words per query are looked up as typos, prefixes or compounds. */
export const MAX_FUZZY_LOOKUPS = 8;

export interface Unit {
  occurrence: TermOccurrence;
  /** catalog term → weight (1 for the word itself) */
  alternatives: Map<string, number>;
  /** the camelCase run this unit is a part of, as written ("gitlab" for "lab" of "GitLab") */
  run?: string;
}

/**
 * The query's terms, each with every catalog term it may stand for. When the query reads, a
 * synonym never turns a word into a making verb it did not name ("open" → create).
 */
export function expandQuery(query: string, data: IndexData, intent?: Intent): Unit[] {
  let occ = analyze(query, 'query');
  if (occ.length === 0) {
    // a query made only of stop words ("who are you") is taken literally
    occ = tokenize(query).map((raw, i) => ({ term: stem(raw), raw, start: i, end: i }));
  }
  const seen = new Set<string>();
  const units: Unit[] = [];
  const vocab = data.vocabulary;
  let fuzzy = 0;
  const expand = (o: TermOccurrence): Map<string, number> => {
    const alternatives = new Map<string, number>();
    const put = (t: string, w: number): void => {
      if (vocab.has(t) && (alternatives.get(t) ?? 0) < w) alternatives.set(t, w);
    };
    const widen = (t: string, w: number): void => {
      put(t, w);
      for (const [s, sw] of synonymsOf(t)) {
        // a question does not ask for an action: "my open PRs" is not "create a PR"
        if (intent === 'read' && isMakingVerb(s) && !isMakingVerb(t)) continue;
        put(s, w * sw);
      }
    };
    widen(o.term, 1);
    if (!vocab.has(o.term) && !o.raw.includes(' ') && fuzzy < MAX_FUZZY_LOOKUPS) {
      fuzzy++;
      for (const [t, w] of vocab.near(o.raw, o.term)) widen(t, w);
    }
    return alternatives;
  };
  const known = (o: TermOccurrence): boolean => vocab.has(o.term) || vocab.termOfWord(o.raw) !== undefined;
  for (const o of occ) {
    if (units.length >= MAX_QUERY_TERMS) break;
    if (seen.has(o.term)) continue;
    if (o.parts && !known(o) && o.parts.every(known)) {
      // "listPullRequests" is no word of the catalog but its parts are (list, pr); "GitHub" is one and
      // stays whole, and so does "GitLab", whose "lab" is no word here (it stays unmatched)
      for (const part of o.parts) {
        if (units.length >= MAX_QUERY_TERMS) break;
        if (seen.has(part.term)) continue;
        seen.add(part.term);
        units.push({ occurrence: part, alternatives: expand(part), run: o.raw });
      }
      continue;
    }
    seen.add(o.term);
    const alternatives = expand(o);
    const halves =
      alternatives.size === 0 && !o.raw.includes(' ') && fuzzy < MAX_FUZZY_LOOKUPS ? vocab.split(o.raw) : undefined;
    if (halves) {
      // "username" → "user" + "name", at the same position
      for (const raw of halves) {
        const part = { term: stem(raw), raw, start: o.start, end: o.end };
        if (seen.has(part.term)) continue;
        seen.add(part.term);
        units.push({ occurrence: part, alternatives: expand(part) });
      }
      continue;
    }
    units.push({ occurrence: o, alternatives });
  }
  return units;
}
