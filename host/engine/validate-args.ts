/**
 * @module host/engine/validate-args
 * Validates arguments against the tool's compiled schema, applying defaults. Three results:
 * valid (with the parsed value), invalid (with a message naming each failing path), or the
 * validator itself threw — a plugin schema bug, reported as SAFEPARSE_ERROR.
 */
import type * as z from 'zod';

export type ValidationResult =
  | { kind: 'valid'; value: unknown }
  | { kind: 'invalid'; message: string }
  | { kind: 'schema-error'; message: string };

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
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

export function validateArguments(validator: z.ZodType, args: unknown): ValidationResult {
  if (nestsDeeperThan(args, MAX_ARGS_DEPTH)) return { kind: 'invalid', message: `(root): arguments nest deeper than ${MAX_ARGS_DEPTH} levels` };
  try {
    const r = validator.safeParse(args);
    return r.success ? { kind: 'valid', value: r.data } : { kind: 'invalid', message: formatZodIssues(r.error) };
  } catch (err) {
    return { kind: 'schema-error', message: err instanceof Error ? err.message : String(err) };
  }
}
