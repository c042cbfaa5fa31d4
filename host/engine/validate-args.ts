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

export function validateArguments(validator: z.ZodType, args: unknown): ValidationResult {
  try {
    const r = validator.safeParse(args);
    return r.success ? { kind: 'valid', value: r.data } : { kind: 'invalid', message: formatZodIssues(r.error) };
  } catch (err) {
    return { kind: 'schema-error', message: err instanceof Error ? err.message : String(err) };
  }
}
