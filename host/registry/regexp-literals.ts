/**
 * @module host/registry/regexp-literals
 * Finds the regular-expression literals of a plugin.js by parsing it as text (acorn; the host never
 * evaluates plugin code, invariant 1). V8 parses, compiles and creates a literal's pattern without
 * stopping for a step's time limit, and creates it again in every fresh context: a literal of a
 * few hundred KB of Unicode set operations cost seconds per call, and one whose compiled code needs
 * more than the isolate's memory stopped its worker for good. Literals are held to the bound that
 * patterns built at run time have (MAX_REGEXP_SOURCE, enforced in the sandbox's bootstrap).
 *
 * The whole module is parsed (a tokenizer alone cannot always tell a pattern from a division), with
 * acorn's own pattern checks turned off: what V8 accepts is V8's to judge, at the probe.
 */
import { Parser, type Token } from 'acorn';
import { MAX_REGEXP_SOURCE } from '../../sandbox/worker/bootstrap-source.js';

/** acorn without its regular-expression validation (V8 checks patterns when the sandbox compiles). */
const Lenient = Parser.extend(
  (Base) =>
    class extends (Base as unknown as new (...args: unknown[]) => { validateRegExpFlags(state: unknown): void; validateRegExpPattern(state: unknown): void }) {
      override validateRegExpFlags(): void {}
      override validateRegExpPattern(): void {}
    } as unknown as typeof Base,
);

export type RegExpLiteralCheck =
  | { ok: true }
  /** a literal over the bound: plugin.js is refused */
  | { ok: false; problem: string }
  /**
   * acorn could not parse the module: usually a syntax error, which the sandbox's probe reports in
   * V8's words; if V8 accepts the module all the same, it is refused with this reason (its literals
   * could not be checked)
   */
  | { ok: 'unchecked'; reason: string };

/** Checks the regular-expression literals of plugin.js against MAX_REGEXP_SOURCE. */
export function checkRegExpLiterals(source: string): RegExpLiteralCheck {
  let longest: { length: number; line: number } | undefined;
  const onToken = (token: Token): void => {
    if (token.type.label !== 'regexp') return;
    const { pattern } = (token as Token & { value: { pattern: string } }).value;
    if (pattern.length > (longest?.length ?? MAX_REGEXP_SOURCE)) longest = { length: pattern.length, line: token.loc?.start.line ?? 0 };
  };
  try {
    Lenient.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true, onToken });
  } catch (err) {
    const e = err as Error & { loc?: { line: number; column: number } };
    return {
      ok: 'unchecked',
      reason: `its regular-expression literals could not be checked: the module could not be parsed (${e.message.replace(/ \(\d+:\d+\)$/, '')}${e.loc ? `, line ${e.loc.line}, column ${e.loc.column + 1}` : ''})`,
    };
  }
  if (!longest) return { ok: true };
  return {
    ok: false,
    problem: `line ${longest.line}: a regular-expression literal of ${longest.length} characters; patterns may have at most ${MAX_REGEXP_SOURCE} (V8 compiles and creates them without stopping for a call's time limit)`,
  };
}
