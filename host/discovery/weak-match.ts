/**
 * @module host/discovery/weak-match
 * When search_tools warns that the tool wanted may not exist here: its best hit answers too little
 * of the query (it matches at most half of the query's words, weighted as ranking weighs them), or
 * scores so low that what it matches, it matches only loosely. A score alone cannot say it: scores
 * are normalised against a perfect match of every query word, so a long, correctly answered request
 * ("leave a comment on the GitHub issue saying I am working on it") scores as low as an unanswerable
 * short one. The two limits were chosen on the labelled queries of test/fixtures/discovery, the negative ones
 * (`queries-negative.json`, requests no tool here serves) included: `node scripts/eval-search.mjs
 * --hint-curve` shows what other limits would give.
 */
import type { SearchHit } from './search-index.js';

export interface WeakMatchRule {
  /** a best score below this is weak, whatever the best hit covers */
  score: number;
  /** a best hit matching at most this share of the query's words is weak */
  coverage: number;
}

export const WEAK_MATCH: Readonly<WeakMatchRule> = Object.freeze({ score: 0.08, coverage: 0.5 });

/** Whether `hit` (the best, or the one shown first) is too weak to be taken as what the query asked for. */
export function isWeakMatch(
  hit: Pick<SearchHit, 'score' | 'fit'> | undefined,
  rule: WeakMatchRule = WEAK_MATCH,
): boolean {
  if (hit === undefined) return false;
  return hit.score < rule.score || hit.fit.coverage <= rule.coverage;
}

/**
 * What the agent is told about a weak first result: which of its words that tool leaves out (or that
 * it matches them only loosely), and what to do.
 */
export function weakMatchAdvice(tool: string, fit: { missing: readonly string[] }): string {
  const words = fit.missing.map((w) => `"${w}"`).join(', ');
  const why = fit.missing.length
    ? `leaves out ${fit.missing.length === 1 ? 'the word' : 'the words'} ${words} of your request`
    : 'matches your words only loosely';
  return (
    `No tool may fit: the first result, ${tool}, ${why}. Check that a tool's description fits before using it; ` +
    'if none does, the tool you want may not exist here: try other words once, then tell the user rather than use a tool that does something else.'
  );
}
