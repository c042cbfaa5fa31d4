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
  if (m + 1 > rows[0].length) rows = [new Int32Array(m + 1), new Int32Array(m + 1), new Int32Array(m + 1)];
  // three rolling rows (i-2, i-1, i), reused across calls: a vocabulary scan allocates nothing
  let [prev2, prev, cur] = rows;
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const cb = b.charCodeAt(j - 1);
      let v = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + (ca === cb ? 0 : 1),
      );
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        v = Math.min(v, (prev2[j - 2] as number) + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  const d = prev[m] as number;
  return d > max ? max + 1 : d;
}

let rows: [Int32Array, Int32Array, Int32Array] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/** The typo budget for a word of this length: 0 below 4 characters, 1 from 4, 2 from 8. */
export function typoBudget(length: number): number {
  if (length >= 8) return 2;
  if (length >= 4) return 1;
  return 0;
}
