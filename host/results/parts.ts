/**
 * @module host/results/parts
 * How a result over the response budget is cut into continuation parts: each part's chunk, once
 * JSON-escaped, fits the budget, so every continue_tool_result envelope stays under the cap. Used
 * when a result is stored (results/cap.ts) and when a stored one is read back (continuations.ts).
 */

/** Budget of each continuation part's chunk once JSON-escaped: the cap less room for the envelope. */
export const partCharsFor = (maxChars: number): number => Math.max(500, maxChars - 2000);

/** Characters `ch` takes inside a JSON string literal. */
function escapedLength(code: number): number {
  if (
    code === 0x22 ||
    code === 0x5c ||
    code === 0x08 ||
    code === 0x0c ||
    code === 0x0a ||
    code === 0x0d ||
    code === 0x09
  )
    return 2;
  if (code < 0x20 || (code >= 0xd800 && code <= 0xdfff) || code === 0x2028 || code === 0x2029) return 6;
  return 1;
}

/**
 * Splits `body` into parts whose JSON-escaped length fits `budget`, so that every
 * continue_tool_result envelope stays under the cap. Run once when a result is stored: the stub's
 * totalParts and the boundaries kept with the continuation come from it. Deterministic, so a
 * continuation kept without boundaries is split the same way on read. Surrogate pairs are never
 * split.
 */
export function splitParts(body: string, budget: number): [number, number][] {
  const parts: [number, number][] = [];
  let start = 0;
  let used = 0;
  for (let i = 0; i < body.length; i++) {
    const code = body.charCodeAt(i);
    const pair = code >= 0xd800 && code <= 0xdbff && i + 1 < body.length;
    const len = pair ? 2 : escapedLength(code);
    if (used + len > budget && i > start) {
      parts.push([start, i]);
      start = i;
      used = 0;
    }
    used += len;
    if (pair) i++;
  }
  if (start < body.length || parts.length === 0) parts.push([start, body.length]);
  return parts;
}

/** Where each part splitParts gives ends: what a continuation stores, so it is split only once. */
export const splitPartEnds = (body: string, budget: number): number[] => splitParts(body, budget).map(([, to]) => to);

/** Increasing integers ending at the body's length (one part, ending at 0, for an empty body). */
export function endsFit(ends: readonly number[], length: number): boolean {
  if (ends.length === 0 || ends[ends.length - 1] !== length) return false;
  if (length === 0) return ends.length === 1;
  let previous = 0;
  for (const end of ends) {
    if (!Number.isInteger(end) || end <= previous) return false;
    previous = end;
  }
  return true;
}
