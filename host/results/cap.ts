/**
 * @module host/results/cap
 * The result cap for MCP: the text returned to the model never exceeds `maxChars` and is always
 * valid JSON. Items that do not fit are replaced, largest first, by a stub with a preview, the
 * total size and a continuation id; the full item is stored server-side, with where each of its
 * parts ends, and `continue_tool_result` pages through it in parts of `partChars`. If the store
 * refuses the write (database read-only, full or locked), the item becomes a
 * GW_ERR_RESULT_NOT_STORED error instead: the batch still answers, with every other item intact.
 */
import { ContinuationQuotaError, type ContinuationStore, type PartBoundaries } from './continuations.js';
import { partCharsFor, splitPartEnds } from './parts.js';

export interface CapOptions {
  maxChars: number;
  userId: string;
  store: ContinuationStore;
  /** the tool each item came from, for the stored record */
  toolOf: (index: number) => string;
  /** told when the store refuses a write (the item then becomes GW_ERR_RESULT_NOT_STORED) */
  onStoreError?: (err: unknown) => void;
}

export interface TruncatedStub {
  truncated: true;
  continuationId: string;
  totalChars: number;
  totalParts: number;
  preview?: string;
  instruction: string;
}

function stubFor(id: string, chars: number, totalParts: number, preview: string): TruncatedStub {
  const stub: TruncatedStub = {
    truncated: true,
    continuationId: id,
    totalChars: chars,
    totalParts,
    instruction: `This result was ${chars} characters, over the response budget. Call continue_tool_result with {"continuationId":"${id}","part":1} (parts 1..${totalParts}) and join the "chunk" fields in order, or narrow the request (limit, filters, pagination).`,
  };
  if (preview.length > 0) stub.preview = preview;
  return stub;
}

/** Characters of each stub's preview, one pass each: a batch that still does not fit loses them. */
const PREVIEW_PASSES = [2000, 300, 0] as const;

const OPEN = '{"results":[';
const CLOSE = ']}';

/** An item's text inside the envelope's array (where `undefined` is written `null`). */
const encodeItem = (item: unknown): string => JSON.stringify(item) ?? 'null';

/**
 * The envelope `{"results":[…]}` held as the JSON text of each item, with its length kept by
 * arithmetic: JSON.stringify of an array is its elements' texts joined by commas, so the envelope
 * is OPEN + Σ item lengths + (n − 1) commas + CLOSE, and replacing an item changes it by (new text's
 * length − old text's length). Serialising the whole envelope again to measure it after each
 * replacement made capping quadratic (50 results of 650 KB held the event loop for seconds, 500 of
 * them for minutes: bench/README.md). Each item is serialised once here, and once more each time it
 * is replaced.
 */
class Envelope {
  readonly texts: string[];
  #length: number;

  constructor(items: readonly unknown[]) {
    this.texts = items.map(encodeItem);
    this.#length = envelopeLength(this.texts);
  }

  get length(): number {
    return this.#length;
  }

  replace(i: number, item: unknown): void {
    const text = encodeItem(item);
    this.#length += text.length - (this.texts[i] as string).length;
    this.texts[i] = text;
  }

  text(): string {
    return envelopeText(this.texts);
  }
}

function envelopeLength(texts: readonly string[]): number {
  let sum = OPEN.length + CLOSE.length + Math.max(0, texts.length - 1);
  for (const t of texts) sum += t.length;
  return sum;
}

/** Byte for byte what JSON.stringify({ results }) gives for the items these texts encode. */
const envelopeText = (texts: readonly string[]): string => OPEN + texts.join(',') + CLOSE;

interface StoredItem {
  id: string;
  /** the item's result as JSON: what the continuation holds */
  json: string;
  totalParts: number;
}

/**
 * Caps a batch envelope `{results:[…]}`. Items are `{result}` or error objects; only `result`
 * values are ever replaced, so errors always reach the caller whole. Items are JSON data (results
 * parsed from the sandbox's JSON); for them the answer is exactly what serialising the envelope
 * after each replacement gave, in time linear in the batch: each item's result is serialised and
 * split into parts once, and the envelope's text is built once, when it is returned.
 */
export async function capBatch(items: unknown[], opts: CapOptions): Promise<string> {
  const envelope = new Envelope(items);
  if (envelope.length <= opts.maxChars) return envelope.text();
  const run: CapRun = {
    items,
    opts,
    envelope,
    original: [...envelope.texts],
    out: [...items],
    budget: partCharsFor(opts.maxChars),
    prepared: new Map(),
    stubbed: new Map(),
    refusals: new Map(),
  };
  if (await stubLargest(run)) return envelope.text();
  // Still too large: what remains is many error items or tiny results. Shorten long strings in
  // error items (never drop an item), and as a last resort store the whole batch.
  const shortened = run.out.map((it) => shortenErrorItem(it));
  const shortTexts = shortened.map((it, i) => (it === run.out[i] ? (envelope.texts[i] as string) : encodeItem(it)));
  if (envelopeLength(shortTexts) <= opts.maxChars) return envelopeText(shortTexts);
  return storeWholeBatch(run, shortened);
}

/** One capping of a batch: the items as they came, and what has been replaced and stored so far. */
interface CapRun {
  items: unknown[];
  opts: CapOptions;
  envelope: Envelope;
  /** each item's JSON text as it came */
  original: string[];
  /** the items, with the replacements made so far */
  out: unknown[];
  /** characters of a continuation's part */
  budget: number;
  /**
   * each result's JSON, serialised once, and its part boundaries once it is to be stored (a result
   * the store refused is offered to it again in the next pass)
   */
  prepared: Map<number, { json: string; ends?: number[] }>;
  stubbed: Map<number, StoredItem>;
  /** why the store refused an item's result (the last time it was offered) */
  refusals: Map<number, unknown>;
}

function replaceItem(run: CapRun, i: number, item: unknown): void {
  run.out[i] = item;
  run.envelope.replace(i, item);
}

/**
 * Replaces results by stubs, largest first, with a shorter preview on each pass, until the
 * envelope fits; whether it does.
 */
async function stubLargest(run: CapRun): Promise<boolean> {
  const { items, opts, envelope } = run;
  const order = run.original.map((s, i) => ({ i, len: s.length })).sort((a, b) => b.len - a.len);
  for (const previewChars of PREVIEW_PASSES) {
    for (const { i } of order) {
      if (envelope.length <= opts.maxChars) return true;
      const item = items[i];
      if (typeof item !== 'object' || item === null || !('result' in item)) continue;
      const s = run.stubbed.get(i) ?? (await storeResult(run, i, item, previewChars));
      if (!s) continue;
      replaceItem(run, i, { result: stubFor(s.id, s.json.length, s.totalParts, s.json.slice(0, previewChars)) });
    }
  }
  return envelope.length <= opts.maxChars;
}

/**
 * Stores item `i`'s result for a continuation. Undefined when a stub with this preview would not
 * be smaller, or when the store refused the write (the item then says it was not stored).
 */
async function storeResult(
  run: CapRun,
  i: number,
  item: { result: unknown },
  previewChars: number,
): Promise<StoredItem | undefined> {
  const { opts, budget } = run;
  let p = run.prepared.get(i);
  if (!p) {
    p = { json: JSON.stringify(item.result) };
    run.prepared.set(i, p);
  }
  const json = p.json;
  if (json.length <= previewChars + 400) return undefined; // a stub would not be smaller
  const ends = (p.ends ??= splitPartEnds(json, budget));
  const id = await tryPut(opts, opts.toolOf(i), json, { budget, ends }, (err) => run.refusals.set(i, err));
  // Serialising, splitting and storing one large result takes milliseconds, and the SQLite
  // store writes synchronously: let other requests (health checks, other callers) run
  // between items rather than after the whole batch.
  await yieldToEventLoop();
  if (id === undefined) {
    replaceItem(run, i, notStored(json.length, opts.maxChars, opts.toolOf(i), run.refusals.get(i)));
    return undefined;
  }
  const s = { id, json, totalParts: ends.length };
  run.stubbed.set(i, s);
  return s;
}

/**
 * The whole batch goes to a continuation; each item keeps its place, pointing there (many small
 * results, e.g. a large maxBatch: every one under a stub's size).
 */
async function storeWholeBatch(run: CapRun, shortened: unknown[]): Promise<string> {
  const { items, opts, budget } = run;
  const whole = envelopeText(run.original);
  const wholeEnds = splitPartEnds(whole, budget);
  let batchRefused: unknown;
  const id = await tryPut(opts, 'execute_tools', whole, { budget, ends: wholeEnds }, (err) => (batchRefused = err));
  if (id === undefined) return withoutBatch(run, shortened, batchRefused);
  const batch = stubFor(id, whole.length, wholeEnds.length, '');
  const placeholders = items.map((_, i) => ({ result: { truncated: true, inBatch: i } }));
  const placed = JSON.stringify({ results: placeholders, batch });
  if (placed.length <= opts.maxChars) return placed;
  // without the instruction; the policy's floor on maxChars (minCapChars) leaves room for this:
  // one item per execution is never given up
  return JSON.stringify({
    results: placeholders,
    batch: { truncated: true, continuationId: id, totalChars: whole.length, totalParts: wholeEnds.length },
  });
}

/**
 * The whole batch could not be stored: results stored one by one keep their continuation (without
 * the instruction and preview), every other result says it was not stored, and error items stay,
 * each form shorter until the answer fits (down to {"error":"…","code"}: the policy's floor
 * leaves room for that, not for an id per item, so the very last form gives the ids up).
 */
function withoutBatch(run: CapRun, shortened: unknown[], batchRefused: unknown): string {
  const { opts, out, original, stubbed } = run;
  const isResult = (it: unknown): boolean => typeof it === 'object' && it !== null && 'result' in it;
  const kept = (i: number, withSizes: boolean): unknown => {
    const s = stubbed.get(i) as StoredItem;
    return {
      result: withSizes
        ? { truncated: true, continuationId: s.id, totalChars: s.json.length, totalParts: s.totalParts }
        : { truncated: true, continuationId: s.id },
    };
  };
  const full = JSON.stringify({
    results: shortened.map((it, i) =>
      stubbed.has(i)
        ? kept(i, true)
        : isResult(it)
          ? notStored(
              (original[i] as string).length,
              opts.maxChars,
              opts.toolOf(i),
              run.refusals.get(i) ?? batchRefused,
            )
          : it,
    ),
  });
  if (full.length <= opts.maxChars) return full;
  const brief = { error: 'not stored', code: 'GW_ERR_RESULT_NOT_STORED' };
  const bare = (it: unknown): unknown =>
    typeof it !== 'object' || it === null ? it : { error: '…', code: (it as { code?: unknown }).code };
  const shorter = JSON.stringify({
    results: out.map((it, i) => (stubbed.has(i) ? kept(i, true) : isResult(it) ? brief : shortenErrorItem(it, 40))),
  });
  if (shorter.length <= opts.maxChars) return shorter;
  const idsOnly = JSON.stringify({
    results: out.map((it, i) => (stubbed.has(i) ? kept(i, false) : isResult(it) ? brief : bare(it))),
  });
  if (idsOnly.length <= opts.maxChars) return idsOnly;
  return JSON.stringify({ results: out.map((it) => (isResult(it) ? brief : bare(it))) });
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The continuation id, or undefined when the store refused the write (the failure is reported). */
async function tryPut(
  opts: CapOptions,
  tool: string,
  body: string,
  parts: PartBoundaries,
  refused?: (err: unknown) => void,
): Promise<string | undefined> {
  try {
    return await opts.store.put(opts.userId, tool, body, parts);
  } catch (err) {
    opts.onStoreError?.(err);
    refused?.(err);
    return undefined;
  }
}

function notStored(
  chars: number,
  maxChars: number,
  tool: string,
  why?: unknown,
): { error: string; code: 'GW_ERR_RESULT_NOT_STORED'; tool: string } {
  if (why instanceof ContinuationQuotaError)
    return {
      error: `This result (${chars} characters) is over the ${maxChars}-character response budget and was not stored for continue_tool_result: your stored results are at their quota (${why.used} of ${why.quota} characters) until they expire. Narrow the request, or retry later.`,
      code: 'GW_ERR_RESULT_NOT_STORED',
      tool,
    };
  return {
    error: `This result (${chars} characters) is over the ${maxChars}-character response budget, and it could not be stored for continue_tool_result (the database refused the write). Retry later, or narrow the request (limit, filters, pagination).`,
    code: 'GW_ERR_RESULT_NOT_STORED',
    tool,
  };
}

function shortenErrorItem(item: unknown, chars = 300): unknown {
  if (typeof item !== 'object' || item === null || 'result' in item) return item;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item))
    copy[k] = typeof v === 'string' && v.length > chars ? `${v.slice(0, chars)}…` : v;
  return copy;
}
