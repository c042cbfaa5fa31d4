/**
 * @module host/discovery/stem
 * A small suffix-stripping English stemmer, written for tool names and descriptions rather than
 * prose. It only has to be consistent: "issues", "issue" and "issued" meet at one stem, as do
 * "creating", "created", "create" and "creation", or "deployment" and "deploys". Stems need not be
 * words ("messag", "creat").
 */

const VOWEL = /[aeiouy]/;

function isConsonant(word: string, i: number): boolean {
  const c = word[i];
  if (c === undefined) return false;
  if ('aeiou'.includes(c)) return false;
  // "y" after a consonant acts as a vowel (try, reply)
  if (c === 'y') return i === 0 || !isConsonant(word, i - 1);
  return true;
}

/** consonant-vowel-consonant ending with a last letter other than w, x, y ("nam", "fil", "pag"). */
function endsShortSyllable(word: string): boolean {
  const n = word.length;
  if (n < 3) return false;
  const last = word[n - 1] ?? '';
  return isConsonant(word, n - 3) && !isConsonant(word, n - 2) && isConsonant(word, n - 1) && !'wxy'.includes(last);
}

function endsDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word[n - 1] === word[n - 2] && isConsonant(word, n - 1);
}

/** Step 1: plurals and third-person "s". */
function stripPlural(w: string): string {
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('s') && w.length >= 3 && !/(ss|us|is)$/.test(w)) return w.slice(0, -1);
  return w;
}

/** Step 2: -ed and -ing, then repair the stem ("runn" → "run", "nam" → "name"). */
function stripVerbEnding(w: string): string {
  if (w.endsWith('ied') && w.length > 4) return `${w.slice(0, -3)}y`;
  let base: string | undefined;
  if (w.endsWith('eed')) return w;
  if (w.endsWith('ed') && w.length >= 5) base = w.slice(0, -2);
  else if (w.endsWith('ing') && w.length >= 6) base = w.slice(0, -3);
  if (base === undefined || !VOWEL.test(base)) return w;
  if (endsDoubleConsonant(base) && !/[lsz]$/.test(base)) return base.slice(0, -1);
  if (base.length === 3 && endsShortSyllable(base)) return `${base}e`;
  return base;
}

/** Step 3: derivational endings that name the same thing (deployment, creation, reviewer). */
function stripDerivation(w: string): string {
  if (w.endsWith('ment') && w.length - 4 >= 4) return w.slice(0, -4);
  if (w.endsWith('ion') && w.length - 3 >= 4 && /[st]$/.test(w.slice(0, -3))) return w.slice(0, -3);
  if (w.endsWith('er') && w.length - 2 >= 5) {
    const base = w.slice(0, -2);
    return endsDoubleConsonant(base) && !/[lsz]$/.test(base) ? base.slice(0, -1) : base;
  }
  return w;
}

/** Step 4: a silent final "e" on longer words ("issue" → "issu", "close" → "clos"). */
function stripFinalE(w: string): string {
  return w.length >= 5 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/**
 * Stems one lower-case word. Words of two letters or fewer, and words containing digits, are
 * returned unchanged.
 */
export function stem(word: string): string {
  if (word.length <= 2 || /\d/.test(word)) return word;
  const hit = memo.get(word);
  if (hit !== undefined) return hit;
  let w = stripPlural(word);
  w = stripVerbEnding(w);
  w = stripDerivation(w);
  w = stripFinalE(w);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(word, w);
  return w;
}

/** Catalog text repeats the same few thousand words: stems are memoised (bounded). */
const memo = new Map<string, string>();
const MEMO_LIMIT = 20_000;
