/**
 * @module host/registry/regexp-literals
 * Finds the regular-expression literals of a plugin.js by parsing it as text (acorn; the host never
 * evaluates plugin code, invariant 1). V8 parses, compiles and creates a literal's pattern without
 * stopping for a step's time limit, and creates it again in every fresh context: a literal of a
 * few hundred KB of Unicode set operations cost seconds per call, and one whose compiled code needs
 * more than the isolate's memory stopped its worker for good. Literals are held to the bounds that
 * patterns built at run time have (enforced in the sandbox's bootstrap): at most MAX_REGEXP_SOURCE
 * characters, and no v (unicodeSets) flag, whose nested classes compile for tens of seconds within
 * that length.
 *
 * The whole module is parsed (a tokenizer alone cannot always tell a pattern from a division).
 * acorn's own reading of a literal is replaced: it checks the pattern and then builds it with
 * `new RegExp` in the host, which for a hostile pattern is the very cost this guards against (a
 * 1 MB literal held the host 34 s). Here a literal is only delimited, never checked or built: what
 * V8 accepts is V8's to judge, at the probe.
 */
import { Parser, tokTypes } from 'acorn';
import { MAX_REGEXP_SOURCE } from '../../contracts/isolate.js';

/** what ends a line in JavaScript source (a literal may not hold one) */
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * Characters of regular-expression literals one plugin.js may hold in all: V8 parses every literal
 * when the module compiles, in every new isolate, with no time limit (30 literals of 20,000
 * characters took 3.4 s), and creates those it reaches in every fresh context.
 */
export const MAX_REGEXP_LITERAL_CHARS = 100_000;

/** What a parser sees of a literal: where its pattern starts, the pattern and its flags. */
type Found = (start: number, pattern: string, flags: string) => void;

interface ParserInternals {
  pos: number;
  input: string;
  raise(pos: number, message: string): never;
  readWord1(): string;
  finishToken(type: unknown, value: unknown): unknown;
}

/** acorn reading a regular-expression literal as text only, reporting each one to `found`. */
function delimitingParser(found: Found): typeof Parser {
  return Parser.extend(
    (Base) =>
      class extends (Base as unknown as new (...args: unknown[]) => ParserInternals) {
        readRegexp(): unknown {
          const start = this.pos;
          let escaped = false;
          let inClass = false;
          for (;;) {
            if (this.pos >= this.input.length) this.raise(start, 'Unterminated regular expression');
            const ch = this.input.charAt(this.pos);
            if (LINE_BREAK.test(ch)) this.raise(start, 'Unterminated regular expression');
            if (escaped) escaped = false;
            else if (ch === '\\') escaped = true;
            else if (ch === '[') inClass = true;
            else if (ch === ']') inClass = false;
            else if (ch === '/' && !inClass) break;
            this.pos++;
          }
          const pattern = this.input.slice(start, this.pos);
          this.pos++;
          const flags = this.readWord1();
          found(start, pattern, flags);
          return this.finishToken(tokTypes.regexp, { pattern, flags, value: null });
        }
      } as unknown as typeof Base,
  );
}

export type RegExpLiteralCheck =
  | { ok: true }
  /** a literal over the bounds: plugin.js is refused */
  | { ok: false; problem: string }
  /**
   * acorn could not parse the module: usually a syntax error, which the sandbox's probe reports in
   * V8's words; if V8 accepts the module all the same, it is refused with this reason (its literals
   * could not be checked)
   */
  | { ok: 'unchecked'; reason: string };

const lineOf = (source: string, offset: number): number => {
  let line = 1;
  for (let i = source.indexOf('\n'); i !== -1 && i < offset; i = source.indexOf('\n', i + 1)) line++;
  return line;
};

/** Checks the regular-expression literals of plugin.js: length and flags. */
export function checkRegExpLiterals(source: string): RegExpLiteralCheck {
  let longest: { length: number; start: number } | undefined;
  let setsFlag: number | undefined;
  let all = 0;
  const found: Found = (start, pattern, flags) => {
    all += pattern.length;
    if (pattern.length > (longest?.length ?? MAX_REGEXP_SOURCE)) longest = { length: pattern.length, start };
    if (setsFlag === undefined && flags.includes('v')) setsFlag = start;
  };
  try {
    delimitingParser(found).parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  } catch (err) {
    const e = err as Error & { loc?: { line: number; column: number } };
    return {
      ok: 'unchecked',
      reason: `its regular-expression literals could not be checked: the module could not be parsed (${e.message.replace(/ \(\d+:\d+\)$/, '')}${e.loc ? `, line ${e.loc.line}, column ${e.loc.column + 1}` : ''})`,
    };
  }
  if (longest)
    return {
      ok: false,
      problem: `line ${lineOf(source, longest.start)}: a regular-expression literal of ${longest.length} characters; patterns may have at most ${MAX_REGEXP_SOURCE} (V8 compiles and creates them without stopping for a call's time limit)`,
    };
  if (all > MAX_REGEXP_LITERAL_CHARS)
    return {
      ok: false,
      problem: `its regular-expression literals hold ${all} characters in all; a plugin.js may hold at most ${MAX_REGEXP_LITERAL_CHARS} (V8 parses them all, with no time limit, whenever the module compiles)`,
    };
  if (setsFlag !== undefined)
    return {
      ok: false,
      problem: `line ${lineOf(source, setsFlag)}: a regular-expression literal with the v (unicodeSets) flag, which plugins may not use (its set operations compile without a time limit); use u`,
    };
  return { ok: true };
}
