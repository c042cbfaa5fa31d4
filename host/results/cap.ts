/**
 * @module host/results/cap
 * The result cap for MCP: the text returned to the model never exceeds `maxChars` and is always
 * valid JSON. Items that do not fit are replaced, largest first, by a stub with a preview, the
 * total size and a continuation id; the full item is stored server-side and `continue_tool_result`
 * pages through it in parts of `partChars`. If the store refuses the write (database read-only,
 * full or locked), the item becomes a GW_ERR_RESULT_NOT_STORED error instead: the batch still
 * answers, with every other item intact.
 */
import type { ContinuationStore } from './continuations.js';

export interface CapOptions {
  maxChars: number;
  userId: string;
  store: ContinuationStore;
  /** the tool each item came from, for the stored record */
  toolOf: (index: number) => string;
  /** told when the store refuses a write (the item then becomes GW_ERR_RESULT_NOT_STORED) */
  onStoreError?: (err: unknown) => void;
}

/** Budget of each continuation part's chunk once JSON-escaped: the cap less room for the envelope. */
export const partCharsFor = (maxChars: number): number => Math.max(500, maxChars - 2000);

/** Characters `ch` takes inside a JSON string literal. */
function escapedLength(code: number): number {
  if (code === 0x22 || code === 0x5c || code === 0x08 || code === 0x0c || code === 0x0a || code === 0x0d || code === 0x09) return 2;
  if (code < 0x20 || (code >= 0xd800 && code <= 0xdfff) || code === 0x2028 || code === 0x2029) return 6;
  return 1;
}

/**
 * Splits `body` into parts whose JSON-escaped length fits `budget`, so that every
 * continue_tool_result envelope stays under the cap. Deterministic: the stub and each later call
 * compute the same boundaries. Surrogate pairs are never split.
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

export interface TruncatedStub {
  truncated: true;
  continuationId: string;
  totalChars: number;
  totalParts: number;
  preview?: string;
  instruction: string;
}

function stubFor(id: string, json: string, maxChars: number, previewChars: number): TruncatedStub {
  const totalParts = splitParts(json, partCharsFor(maxChars)).length;
  const stub: TruncatedStub = {
    truncated: true,
    continuationId: id,
    totalChars: json.length,
    totalParts,
    instruction: `This result was ${json.length} characters, over the response budget. Call continue_tool_result with {"continuationId":"${id}","part":1} (parts 1..${totalParts}) and join the "chunk" fields in order, or narrow the request (limit, filters, pagination).`,
  };
  if (previewChars > 0) stub.preview = json.slice(0, previewChars);
  return stub;
}

/**
 * Caps a batch envelope `{results:[…]}`. Items are `{result}` or error objects; only `result`
 * values are ever replaced, so errors always reach the caller whole.
 */
export async function capBatch(items: unknown[], opts: CapOptions): Promise<string> {
  const whole = JSON.stringify({ results: items });
  if (whole.length <= opts.maxChars) return whole;
  const out = [...items];
  const encoded = items.map((it) => JSON.stringify(it));
  const order = encoded.map((s, i) => ({ i, len: s.length })).sort((a, b) => b.len - a.len);
  const stubbed = new Map<number, { id: string; json: string }>();
  for (const previewChars of [2000, 300, 0]) {
    for (const { i } of order) {
      const current = JSON.stringify({ results: out });
      if (current.length <= opts.maxChars) return current;
      const item = items[i];
      if (typeof item !== 'object' || item === null || !('result' in item)) continue;
      let s = stubbed.get(i);
      if (!s) {
        const json = JSON.stringify((item as { result: unknown }).result);
        if (json.length <= previewChars + 400) continue; // a stub would not be smaller
        const id = await tryPut(opts, opts.toolOf(i), json);
        if (id === undefined) {
          out[i] = notStored(json.length, opts.maxChars, opts.toolOf(i));
          continue;
        }
        s = { id, json };
        stubbed.set(i, s);
      }
      out[i] = { result: stubFor(s.id, s.json, opts.maxChars, previewChars) };
    }
  }
  const final = JSON.stringify({ results: out });
  if (final.length <= opts.maxChars) return final;
  // Still too large: what remains is many error items or tiny results. Shorten long strings in
  // error items (never drop an item), and as a last resort store the whole batch.
  const shortened = out.map((it) => shortenErrorItem(it));
  const short = JSON.stringify({ results: shortened });
  if (short.length <= opts.maxChars) return short;
  const id = await tryPut(opts, 'execute_tools', whole);
  if (id !== undefined) {
    // the whole batch goes to a continuation; each item keeps its place, pointing there (many
    // small results, e.g. a large maxBatch: every one under a stub's size)
    const batch = stubFor(id, whole, opts.maxChars, 0);
    const placed = JSON.stringify({ results: items.map((_, i) => ({ result: { truncated: true, inBatch: i } })), batch });
    if (placed.length <= opts.maxChars) return placed;
    return JSON.stringify({ results: [], batch }); // not even one placeholder per item fits
  }
  // nothing could be stored: every remaining result item says so; error items stay (shortened)
  return JSON.stringify({
    results: shortened.map((it, i) => (typeof it === 'object' && it !== null && 'result' in it ? notStored(JSON.stringify(items[i]).length, opts.maxChars, opts.toolOf(i)) : it)),
  });
}

/** The continuation id, or undefined when the store refused the write (the failure is reported). */
async function tryPut(opts: CapOptions, tool: string, body: string): Promise<string | undefined> {
  try {
    return await opts.store.put(opts.userId, tool, body);
  } catch (err) {
    opts.onStoreError?.(err);
    return undefined;
  }
}

function notStored(chars: number, maxChars: number, tool: string): { error: string; code: 'GW_ERR_RESULT_NOT_STORED'; tool: string } {
  return {
    error: `This result (${chars} characters) is over the ${maxChars}-character response budget, and it could not be stored for continue_tool_result (the database refused the write). Retry later, or narrow the request (limit, filters, pagination).`,
    code: 'GW_ERR_RESULT_NOT_STORED',
    tool,
  };
}

function shortenErrorItem(item: unknown): unknown {
  if (typeof item !== 'object' || item === null || 'result' in item) return item;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) copy[k] = typeof v === 'string' && v.length > 300 ? `${v.slice(0, 300)}…` : v;
  return copy;
}
