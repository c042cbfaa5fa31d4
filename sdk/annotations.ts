/**
 * @module sdk/annotations
 * The MCP hints of the two kinds of tool most integrations have: one that only reads from the
 * provider, and one that changes something there. Both reach an outside service (openWorldHint).
 */
import type { ToolAnnotations } from './define.js';

/**
 * A tool that only reads: `{title, readOnlyHint: true, openWorldHint: true}`, and idempotentHint
 * only when `idempotent` is given (MCP clients ignore it on a read-only tool; some plugins say it).
 */
export function reads(title: string, { idempotent }: { idempotent?: boolean } = {}): ToolAnnotations {
  return idempotent === undefined
    ? { title, readOnlyHint: true, openWorldHint: true }
    : { title, readOnlyHint: true, idempotentHint: idempotent, openWorldHint: true };
}

export interface ChangeHints {
  /** it may delete or overwrite what cannot be restored (default false) */
  destructive?: boolean;
  /** doing it twice with the same arguments is the same as once (default false) */
  idempotent?: boolean;
}

/** A tool that changes something at the provider: readOnlyHint false, the hints given, openWorldHint true. */
export function changes(title: string, { destructive = false, idempotent = false }: ChangeHints = {}): ToolAnnotations {
  return { title, readOnlyHint: false, destructiveHint: destructive, idempotentHint: idempotent, openWorldHint: true };
}
