/**
 * @module host/discovery/edit-distance
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), bounded: once
 * the distance is known to exceed `max` the computation stops, which keeps typo look-ups over a
 * whole vocabulary cheap.
 */

/**
 * Edit distance between `a` and `b` counting insertions, deletions, substitutions and swaps of
 * two adjacent characters as one edit each. Returns `max + 1` as soon as the distance is known to
 * be larger than `max`.
 */
export function editDistance(a: string, b: string, max = Number.MAX_SAFE_INTEGER): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n === 0) return m;
  if (m === 0) return n;
  // three rolling rows: i-2, i-1, i
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = Array.from({ length: m + 1 }, (_, j) => j);
  let cur = new Array<number>(m + 1).fill(0);
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const cb = b.charCodeAt(j - 1);
      const cost = ca === cb ? 0 : 1;
      let v = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        v = Math.min(v, (prev2[j - 2] ?? 0) + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  const d = prev[m] ?? 0;
  return d > max ? max + 1 : d;
}

/** The typo budget for a word of this length: 0 below 4 characters, 1 from 4, 2 from 8. */
export function typoBudget(length: number): number {
  if (length >= 8) return 2;
  if (length >= 4) return 1;
  return 0;
}
