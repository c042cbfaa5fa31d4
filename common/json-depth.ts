/**
 * @module common/json-depth
 * Nesting depth of JSON text, by scanning characters (no parse, no recursion, no allocation), so
 * a 10,000-level result is refused before any recursive consumer (validator, logger, MCP
 * serialiser) can overflow its stack on it.
 */

export const MAX_RESULT_DEPTH = 64;

export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) max = depth;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return max;
}
