/**
 * @module host/engine/validate-args
 * Validates arguments against the tool's compiled schema, applying defaults. Three results:
 * valid (with the parsed value), invalid (with a message naming each failing path), or the
 * validator itself threw — a plugin schema bug, reported as SAFEPARSE_ERROR.
 */
import type * as z from 'zod';

export type ValidationResult =
  { kind: 'valid'; value: unknown } | { kind: 'invalid'; message: string } | { kind: 'schema-error'; message: string };

export function formatZodIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 20)
    .map((i) => {
      const where = i.path.length ? i.path.map(String).join('.') : '(root)';
      return `${where}: ${i.message}`;
    })
    .join('; ');
}

/** Deepest nesting accepted in arguments (checked iteratively, before anything recurses). */
export const MAX_ARGS_DEPTH = 64;

/** True when `value` nests objects/arrays deeper than `limit`; never recurses. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * True when the JSON text of `value` is surely longer than `limit` bytes: a lower bound of its
 * UTF-8 length (each string's UTF-16 units, which UTF-8 never writes in fewer bytes, its quotes,
 * each key with its quotes and colon, commas and brackets, numbers, booleans and null exactly),
 * counted without serialising and given up as soon as it passes the limit, so a 4 MB array costs
 * no more than `limit` steps. Arguments come from JSON, so they hold no cycles.
 */
export function jsonLengthOver(value: unknown, limit: number): boolean {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 2;
    else if (Array.isArray(v)) {
      total += 2 + Math.max(0, v.length - 1);
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      total += 2 + Math.max(0, keys.length - 1);
      for (const k of keys) {
        total += k.length + 3;
        stack.push((v as Record<string, unknown>)[k]);
      }
    } else if (typeof v === 'number') total += Number.isFinite(v) ? String(v).length : 4;
    else total += v === false ? 5 : 4;
    if (total > limit) return true;
  }
  return false;
}

/**
 * Checks of one argument value against one sub-schema a call's validation may take: the number of
 * values in the arguments times the sub-schemas one value may be checked against (the tool's
 * schemaSize). zod checks every value, and keeps an issue for every failed anyOf branch of every
 * value: 100,000 integers against an anyOf of 1,000 options ran the host out of memory, 10 options
 * took a second, and at 2,000,000 a failing anyOf of 1,000 string checks still took 9 s and 2 GB
 * (three issues a branch); 100,000 keeps a call to about half a second. The built-in plugins'
 * schemas count at most 16 sub-schemas: 6,250 values a call.
 */
export const VALIDATION_BUDGET = 100_000;

/** True when `value` holds more than `limit` values (objects, arrays and primitives), counted until it passes. */
export function holdsMoreValuesThan(value: unknown, limit: number): boolean {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (++count > limit) return true;
    if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (typeof v === 'object' && v !== null)
      for (const k of Object.keys(v)) stack.push((v as Record<string, unknown>)[k]);
  }
  return false;
}

export function validateArguments(validator: z.ZodType, args: unknown): ValidationResult {
  if (nestsDeeperThan(args, MAX_ARGS_DEPTH))
    return { kind: 'invalid', message: `(root): arguments nest deeper than ${MAX_ARGS_DEPTH} levels` };
  try {
    const r = validator.safeParse(args);
    return r.success ? { kind: 'valid', value: r.data } : { kind: 'invalid', message: formatZodIssues(r.error) };
  } catch (err) {
    return { kind: 'schema-error', message: err instanceof Error ? err.message : String(err) };
  }
}
