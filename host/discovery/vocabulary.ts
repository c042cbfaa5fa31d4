/**
 * @module host/discovery/vocabulary
 * The terms an index knows, and the ways a query word that is not one of them can still reach
 * them: a typo within the edit budget (1 edit from 4 letters, 2 from 8), or a prefix
 * ("config" → "configuration"). Look-ups are memoised per index.
 */
import { editDistance, typoBudget } from './edit-distance.js';

/** Weight of a term reached through a typo of distance 1, 2; and through a prefix. */
export const TYPO_WEIGHT = [1, 0.75, 0.6] as const;
export const PREFIX_WEIGHT = 0.55;
const MAX_PREFIX_TERMS = 8;
const MEMO_LIMIT = 2000;

export class Vocabulary {
  readonly #terms: ReadonlySet<string>;
  /** stems that are not in the catalog but lead to it through a synonym */
  readonly #bridges: ReadonlySet<string>;
  /** raw word → stem, for every word of the catalog and of the synonym tables whose stem is known */
  readonly #raws: ReadonlyMap<string, string>;
  readonly #termsByLength = new Map<number, string[]>();
  readonly #rawsByLength = new Map<number, string[]>();
  readonly #sortedTerms: string[];
  readonly #memo = new Map<string, ReadonlyMap<string, number>>();

  constructor(terms: ReadonlySet<string>, raws: ReadonlyMap<string, string>, bridges: ReadonlySet<string>) {
    this.#terms = terms;
    this.#bridges = bridges;
    this.#raws = raws;
    for (const t of terms) bucket(this.#termsByLength, t);
    for (const r of raws.keys()) bucket(this.#rawsByLength, r);
    this.#sortedTerms = [...terms].sort();
  }

  has(term: string): boolean {
    return this.#terms.has(term);
  }

  /** The catalog term of a word the catalog (or the synonym tables) spells this way, if any. */
  termOfWord(raw: string): string | undefined {
    const t = this.#raws.get(raw);
    return t !== undefined && (this.#terms.has(t) || this.#bridges.has(t)) ? t : undefined;
  }

  /**
   * Splits a run-together word into two known words ("username" → user, name), preferring the
   * most even split; both halves need at least 3 letters.
   */
  split(raw: string): [string, string] | undefined {
    let best: [string, string] | undefined;
    let bestBalance = -1;
    for (let i = 3; i <= raw.length - 3; i++) {
      const a = raw.slice(0, i);
      const b = raw.slice(i);
      if (this.termOfWord(a) === undefined || this.termOfWord(b) === undefined) continue;
      const balance = Math.min(a.length, b.length);
      if (balance > bestBalance) [best, bestBalance] = [[a, b], balance];
    }
    return best;
  }

  /**
   * Terms a misspelt or partial word may have meant, with weights: the closest edit distance wins,
   * comparing both the raw word against known words and the stem against known stems. A result
   * may be a synonym-table stem that is not itself in the catalog (the caller expands it).
   */
  near(raw: string, term: string): ReadonlyMap<string, number> {
    const key = `${raw}\u0000${term}`;
    const hit = this.#memo.get(key);
    if (hit) return hit;
    const out = new Map<string, number>();
    const put = (t: string, w: number): void => {
      if ((this.#terms.has(t) || this.#bridges.has(t)) && (out.get(t) ?? 0) < w) out.set(t, w);
    };
    const budget = typoBudget(raw.length);
    if (budget > 0) {
      for (const [len, words] of this.#rawsByLength) {
        if (Math.abs(len - raw.length) > budget) continue;
        for (const w of words) {
          const d = editDistance(raw, w, budget);
          if (d > 0 && d <= budget) put(this.#raws.get(w) ?? w, TYPO_WEIGHT[d] ?? 0);
        }
      }
      for (const [len, terms] of this.#termsByLength) {
        if (Math.abs(len - term.length) > budget) continue;
        for (const t of terms) {
          const d = editDistance(term, t, budget);
          if (d > 0 && d <= budget) put(t, TYPO_WEIGHT[d] ?? 0);
        }
      }
    }
    if (raw.length >= 3) {
      let n = 0;
      for (const t of this.#prefixed(term.length >= 3 ? term : raw)) {
        if (t === term) continue;
        put(t, PREFIX_WEIGHT);
        if (++n >= MAX_PREFIX_TERMS) break;
      }
    }
    if (this.#memo.size >= MEMO_LIMIT) this.#memo.clear();
    this.#memo.set(key, out);
    return out;
  }

  /** Known terms starting with `prefix`, in sorted order (binary search, then a scan). */
  *#prefixed(prefix: string): Generator<string> {
    let lo = 0;
    let hi = this.#sortedTerms.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.#sortedTerms[mid] ?? '') < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.#sortedTerms.length; i++) {
      const t = this.#sortedTerms[i] ?? '';
      if (!t.startsWith(prefix)) return;
      yield t;
    }
  }
}

function bucket(map: Map<number, string[]>, word: string): void {
  const list = map.get(word.length);
  if (list) list.push(word);
  else map.set(word.length, [word]);
}
