/**
 * @module host/registry/patterns
 * JSON Schema `pattern`s come from third-party manifests and run on the host's event loop, so a
 * backtracking RegExp like `^(a+)+$` could stall every caller. Patterns are therefore taken out of
 * the schema before zod compiles it and checked with RE2 (re2js), whose matching is linear in the
 * input. A pattern RE2 cannot compile (lookaround, backreferences), one placed where its value
 * cannot be located without trying branches (anyOf, oneOf, allOf, not, if/then/else, $defs), and
 * patternProperties (whose keys are regular expressions) refuse the plugin at load, path named.
 * API-key field patterns (host/connections/apikey-fields.ts) are compiled by `compilePattern` too.
 */
import { RE2JS } from 're2js';
import { fail } from '../../contracts/errors.js';

/**
 * Compiles a pattern from a manifest with RE2. Throws an Error saying why when RE2 cannot run it
 * (lookaround, backreferences, invalid syntax), with RE2's own reason; callers prefix the path.
 */
export function compilePattern(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    throw fail('GW_ERR_PLUGIN_INVALID', {
      message: `${JSON.stringify(pattern)} is not a linear-time regular expression (RE2 syntax: lookaround and backreferences are not supported): ${(err as Error).message}`,
    });
  }
}

export interface PatternIssue {
  path: (string | number)[];
  message: string;
}

/** What is left of one call's pattern-checking budget (PATTERN_BUDGET), spent as strings are checked. */
export interface PatternBudget {
  left: number;
}

type Checker = (value: unknown, path: (string | number)[], issues: PatternIssue[], budget: PatternBudget) => void;

/**
 * Steps of RE2 one call's arguments may take: RE2 is linear in the input, but each character costs
 * a step for each instruction of the pattern's program, and a counted repetition is that many
 * instructions (`\w{1000}\w{1000}\w{1000}$`, 3,003 instructions, took 15 s over a 250,000-character
 * argument). 25,000,000 steps is about half a second here; a string whose check would pass what is
 * left fails its pattern with a message saying so.
 */
export const PATTERN_BUDGET = 25_000_000;

/** Instructions of a compiled pattern's program (re2js keeps it on the compiled expression). */
function programSize(re: RE2JS, pattern: string): number {
  const size = (re as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog?.inst?.length;
  return typeof size === 'number' && size > 0 ? size : pattern.length + 1;
}

const UNSUPPORTED_PLACES = [
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
  'dependentSchemas',
];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function containsPattern(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(containsPattern);
  if (!isRecord(node)) return false;
  return 'pattern' in node || Object.values(node).some(containsPattern);
}

/** One schema node with its `pattern`s taken out, and the checker applying them (undefined when none). */
interface Walked {
  stripped: unknown;
  check: Checker | undefined;
}

/**
 * Returns a copy of `schema` without `pattern` keys, and a checker that applies those patterns to
 * a value that already passed the stripped schema. Throws an Error naming the path on a pattern it
 * cannot check safely.
 */
export function separatePatterns(schema: Record<string, unknown>): {
  stripped: Record<string, unknown>;
  check: Checker | undefined;
} {
  const r = walk(schema, 'inputSchema');
  return { stripped: r.stripped as Record<string, unknown>, check: r.check };
}

/** Strips one schema node, key by key (same order), collecting the checks its keys ask for. */
function walk(node: unknown, where: string): Walked {
  if (!isRecord(node)) return { stripped: node, check: undefined };
  const out: Record<string, unknown> = {};
  const checks: Checker[] = [];
  for (const [key, value] of Object.entries(node)) walkKey(node, key, value, where, out, checks);
  return { stripped: out, check: checks.length ? (v, p, i, b) => checks.forEach((c) => c(v, p, i, b)) : undefined };
}

/** One key of a schema node: copied into `out` (stripped where it holds sub-schemas) or, for `pattern`, turned into a check. */
function walkKey(
  node: Record<string, unknown>,
  key: string,
  value: unknown,
  where: string,
  out: Record<string, unknown>,
  checks: Checker[],
): void {
  if (key === 'patternProperties') {
    throw fail('GW_ERR_PLUGIN_INVALID', {
      message: `${where}.patternProperties: not supported (its keys are regular expressions); use additionalProperties`,
    });
  } else if (UNSUPPORTED_PLACES.includes(key)) {
    if (containsPattern(value))
      throw fail('GW_ERR_PLUGIN_INVALID', {
        message: `${where}.${key}: "pattern" is not supported here; put it on a plain property`,
      });
    out[key] = value;
  } else if (key === 'pattern') {
    checks.push(patternCheck(value, where));
  } else if (key === 'properties' && isRecord(value)) {
    out[key] = walkProperties(value, where, checks);
  } else if (key === 'additionalProperties' && isRecord(value)) {
    out[key] = walkAdditionalProperties(node, value, where, checks);
  } else if (key === 'items' && isRecord(value)) {
    out[key] = walkItems(value, where, checks);
  } else if (key === 'prefixItems' && Array.isArray(value)) {
    out[key] = walkPrefixItems(value, where, checks);
  } else {
    if (containsPattern(value) && key !== 'default' && key !== 'examples' && key !== 'const' && key !== 'enum')
      throw fail('GW_ERR_PLUGIN_INVALID', { message: `${where}.${key}: "pattern" is not supported here` });
    out[key] = value;
  }
}

/** The check for one `pattern`: compiled with RE2 now, run against strings within the call's budget. */
function patternCheck(value: unknown, where: string): Checker {
  if (typeof value !== 'string') throw fail('GW_ERR_PLUGIN_INVALID', { message: `${where}.pattern: must be a string` });
  let re: RE2JS;
  try {
    re = compilePattern(value);
  } catch (err) {
    throw fail('GW_ERR_PLUGIN_INVALID', { message: `${where}.pattern: ${(err as Error).message}` });
  }
  const steps = programSize(re, value);
  return (v, path, issues, budget) => {
    if (typeof v !== 'string') return;
    budget.left -= steps * (v.length + 1);
    if (budget.left < 0)
      issues.push({
        path,
        message: `is too long to check against the pattern ${value} within the gateway's budget for one call (${PATTERN_BUDGET} steps: ${steps} per character); send shorter strings`,
      });
    else if (!re.matcher(v).find()) issues.push({ path, message: `must match the pattern ${value}` });
  };
}

/** `properties`: each named property's schema stripped; its check runs on that property when present. */
function walkProperties(value: Record<string, unknown>, where: string, checks: Checker[]): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (const [name, sub] of Object.entries(value)) {
    const r = walk(sub, `${where}.properties.${name}`);
    props[name] = r.stripped;
    if (r.check) {
      const c = r.check;
      checks.push((v, path, issues, budget) => {
        if (isRecord(v) && Object.prototype.hasOwnProperty.call(v, name)) c(v[name], [...path, name], issues, budget);
      });
    }
  }
  return props;
}

/** `additionalProperties`: its check runs on every key of the value that `properties` does not name. */
function walkAdditionalProperties(
  node: Record<string, unknown>,
  value: Record<string, unknown>,
  where: string,
  checks: Checker[],
): unknown {
  const r = walk(value, `${where}.additionalProperties`);
  if (r.check) {
    const c = r.check;
    const known = new Set(isRecord(node['properties']) ? Object.keys(node['properties']) : []);
    checks.push((v, path, issues, budget) => {
      if (isRecord(v)) for (const [k, x] of Object.entries(v)) if (!known.has(k)) c(x, [...path, k], issues, budget);
    });
  }
  return r.stripped;
}

/** `items`: its check runs on every element of an array value. */
function walkItems(value: Record<string, unknown>, where: string, checks: Checker[]): unknown {
  const r = walk(value, `${where}.items`);
  if (r.check) {
    const c = r.check;
    checks.push((v, path, issues, budget) => {
      if (Array.isArray(v)) v.forEach((x, i) => c(x, [...path, i], issues, budget));
    });
  }
  return r.stripped;
}

/** `prefixItems`: the i-th schema's check runs on the i-th element, when the array has one. */
function walkPrefixItems(value: unknown[], where: string, checks: Checker[]): unknown[] {
  const parts = value.map((sub, i) => walk(sub, `${where}.prefixItems.${i}`));
  parts.forEach((p, i) => {
    const c = p.check;
    if (c)
      checks.push((v, path, issues, budget) => {
        if (Array.isArray(v) && i < v.length) c(v[i], [...path, i], issues, budget);
      });
  });
  return parts.map((p) => p.stripped);
}
