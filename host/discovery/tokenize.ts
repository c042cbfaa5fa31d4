/**
 * @module host/discovery/tokenize
 * Splits text into lower-case words: snake_case, kebab-case, camelCase and punctuation all
 * separate words, so `github_list_prs`, `listPRs` and "list PRs"
 * produce the same words.
 */

const WORD = /[\p{L}\p{N}]+/gu;
const HAS_UPPER = /\p{Lu}/u;

/** Words that carry no meaning for finding a tool (dropped on both the query and the index side). */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'of',
  'to',
  'in',
  'on',
  'at',
  'for',
  'from',
  'by',
  'with',
  'into',
  'onto',
  'about',
  'as',
  'is',
  'are',
  'be',
  'been',
  'was',
  'were',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'there',
  'here',
  'i',
  'me',
  'my',
  'mine',
  'we',
  'our',
  'us',
  'you',
  'your',
  'he',
  'she',
  'they',
  'them',
  'their',
  'please',
  'can',
  'could',
  'would',
  'should',
  'will',
  'shall',
  'do',
  'does',
  'did',
  'want',
  'wanna',
  'need',
  'needs',
  'like',
  'some',
  'any',
  'which',
  'what',
  'how',
  'so',
  'if',
  'then',
  'than',
  'just',
  'also',
  'via',
  'using',
  'use',
  'tool',
  'tools',
  'let',
  'lets',
  'hey',
  'quickly',
  'currently',
  'e',
  'g',
  'eg',
  'ie',
  'etc',
  'one',
  'has',
  'have',
  'had',
  'not',
  'no',
  'yes',
  'up',
  'out',
  'over',
  'when',
  'where',
  'who',
  'whom',
  'whose',
  'why',
  'whats',
  'whos',
  'hows',
  'wheres',
  'thats',
  'theres',
  'im',
  'ive',
  'id',
  'dont',
  'doesnt',
  'isnt',
  'arent',
  'cant',
  'wont',
  'all',
  'every',
  'each',
  'returns',
  'return',
  'optional',
  'default',
  'defaults',
  'given',
]);

/**
 * Splits one identifier-like run into words at camelCase boundaries: `listPRsForRepo` → list, prs,
 * for, repo; upper-case runs stay together (`HTTPServer` → http, server); digits stay attached.
 */
function splitRun(run: string): string[] {
  if (!HAS_UPPER.test(run)) return [run];
  const spaced = run
    // a plural "s" after an upper-case run belongs to it: PRs, IDs, URLs
    .replace(/(\p{Lu}{2,})s(?!\p{Ll})/gu, '$1S')
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2');
  return spaced.split(' ').filter((p) => p !== '');
}

/** One run of letters and digits: the whole word and its camelCase parts, lower-cased. */
export interface WordRun {
  whole: string;
  /** one element unless the run was camelCase (`GitHub` → git, hub) */
  parts: string[];
}

/**
 * Runs of letters and digits in `text`, in order. Everything else separates runs (so snake_case
 * and kebab-case split here); apostrophes join ("user's" → "users").
 */
export function tokenizeRuns(text: string): WordRun[] {
  const out: WordRun[] = [];
  const cleaned = text.replace(/['\u2019]/g, '');
  for (const m of cleaned.matchAll(WORD)) {
    const parts = splitRun(m[0]).map((p) => p.toLowerCase());
    out.push({ whole: m[0].toLowerCase(), parts });
  }
  return out;
}

/** Lower-case words of `text`, in order, camelCase split, stop words included (see {@link STOP_WORDS}). */
export function tokenize(text: string): string[] {
  return tokenizeRuns(text).flatMap((r) => r.parts);
}
