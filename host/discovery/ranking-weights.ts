/**
 * @module host/discovery/ranking-weights
 * Every knob of the tool-search ranking in one place, with what it does. The values were tuned on
 * the labelled queries of test/fixtures/discovery (run `node scripts/eval-search.mjs`); change them only
 * with the evaluation in hand.
 */

export interface FieldWeight {
  /** how much one occurrence in this field counts (BM25F field weight) */
  weight: number;
  /** length normalisation: 0 ignores the field's length, 1 divides fully by it */
  b: number;
}

export interface RankingWeights {
  fields: { name: FieldWeight; integration: FieldWeight; description: FieldWeight; parameters: FieldWeight };
  /** BM25 term-frequency saturation */
  k1: number;
  /** idf is raised to this power: below 1 keeps one rare word from outweighing the rest */
  idfExponent: number;
  /** the share of the query a tool matches is raised to this power and multiplies the score */
  coverageExponent: number;
  /** multiplier (1 + this × share of the tool's name words the query asks for) */
  nameCoverageBonus: number;
  /**
   * multiplier (1 + this × share of the tool's name words the query spells exactly the same way):
   * "which projects" prefers list_projects to get_project, though both stem to "project"
   */
  exactFormBonus: number;
  /** added per query bigram found in the name / in the description (their sum is capped) */
  nameBigramBonus: number;
  descriptionBigramBonus: number;
  bigramBonusCap: number;
  /** alternatives (synonyms, corrections) below this weight do not form bigrams */
  bigramMinWeight: number;
  /** multiplier for a tool that writes when the query only reads, or the other way round */
  intentMismatch: number;
  /**
   * multiplier for a tool that writes when the query says neither ("alert violations", "new relic
   * issues"): a bare topic is most often a question, but weakly so
   */
  noIntentWrite: number;
  /**
   * multiplier for a tool that gets one thing (get_issue) when the query asks for its plural ("my
   * jira issues assigned to me"): listing or searching tools answer that
   */
  singleForPlural: number;
}

export const RANKING: RankingWeights = {
  fields: {
    name: { weight: 3, b: 0.3 },
    integration: { weight: 2, b: 0 },
    description: { weight: 0.6, b: 0.75 },
    parameters: { weight: 0.4, b: 0.75 },
  },
  k1: 1.2,
  idfExponent: 1,
  coverageExponent: 1.5,
  nameCoverageBonus: 1.5,
  exactFormBonus: 0.1,
  nameBigramBonus: 0.25,
  descriptionBigramBonus: 0.1,
  bigramBonusCap: 0.5,
  bigramMinWeight: 0.6,
  intentMismatch: 0.5,
  noIntentWrite: 0.75,
  singleForPlural: 0.7,
};

/** The saturated score of a term seen once in a name of average length: the best a term can do. */
export function nameSaturation(w: RankingWeights = RANKING): number {
  const f = w.fields.name.weight;
  return (f * (w.k1 + 1)) / (w.k1 + f);
}
