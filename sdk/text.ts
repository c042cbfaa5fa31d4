/**
 * @module sdk/text
 * Long text within what a result should carry: cut at a length, saying how much more there was
 * (clip), or read a window at a time, saying where to continue (textWindow).
 */

/** `text` cut at `max` characters, saying how many more there were. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [truncated, ${text.length - max} more characters]`;
}

/** A window of a text: its length, where the window starts, its content, and where the next starts (null at the end). */
export interface TextWindow {
  total_chars: number;
  offset: number;
  content: string;
  next_offset: number | null;
}

/** The window [offset, offset + max) of the whole text, with where to continue. */
export function textWindow(text: string, offset: number, max: number): TextWindow {
  const start = Math.min(offset, text.length);
  const end = Math.min(start + max, text.length);
  return {
    total_chars: text.length,
    offset: start,
    content: text.slice(start, end),
    next_offset: end < text.length ? end : null,
  };
}
