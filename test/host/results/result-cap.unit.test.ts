/**
 * @module test/host/results/result-cap.unit
 * The cap on its own, against a real SQLite continuation store: always valid JSON under the
 * budget, errors never replaced, every stub pageable back to the exact original. capBatch keeps the
 * envelope's length by arithmetic instead of serialising it after each replacement; the answer it
 * gave before that change (kept below as `referenceCapBatch`) is the oracle it must match byte for
 * byte, and the characters JSON.stringify produces while capping are counted to show the work is
 * linear in the batch. continue_tool_result serves each part by slicing at the boundaries stored
 * with the body; its parts must be exactly splitParts' on the body.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { EngineDeps } from '../../../host/engine/execute-single.js';
import { createEngineMetaTools } from '../../../host/meta-tools/engine-tools.js';
import type { MetaToolContext } from '../../../host/meta-tools/types.js';
import { capBatch, type CapOptions, type TruncatedStub } from '../../../host/results/cap.js';
import { partCharsFor, splitParts } from '../../../host/results/parts.js';
import { ContinuationQuotaError, ContinuationStore } from '../../../host/results/continuations.js';
import type { Db } from '../../../host/storage/db.js';
import { minCapChars } from '../../../host/policy/schema.js';
import { openDatabase } from '../../../host/storage/open.js';

// ---- the oracle: capBatch as it was before the envelope's length was kept by arithmetic ----
// It serialises the whole envelope before each replacement (quadratic, and exactly right by
// construction). Only the test uses it; splitParts and partCharsFor are unchanged.

function referenceStubFor(id: string, json: string, maxChars: number, previewChars: number): TruncatedStub {
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

async function referenceCapBatch(items: unknown[], opts: CapOptions): Promise<string> {
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
        const json = JSON.stringify(item.result);
        if (json.length <= previewChars + 400) continue;
        const id = await referenceTryPut(opts, opts.toolOf(i), json);
        if (id === undefined) {
          out[i] = referenceNotStored(json.length, opts.maxChars, opts.toolOf(i));
          continue;
        }
        s = { id, json };
        stubbed.set(i, s);
      }
      out[i] = { result: referenceStubFor(s.id, s.json, opts.maxChars, previewChars) };
    }
  }
  const final = JSON.stringify({ results: out });
  if (final.length <= opts.maxChars) return final;
  const shortened = out.map((it) => referenceShortenErrorItem(it));
  const short = JSON.stringify({ results: shortened });
  if (short.length <= opts.maxChars) return short;
  const id = await referenceTryPut(opts, 'execute_tools', whole);
  if (id !== undefined) {
    const batch = referenceStubFor(id, whole, opts.maxChars, 0);
    const placeholders = items.map((_, i) => ({ result: { truncated: true, inBatch: i } }));
    const placed = JSON.stringify({ results: placeholders, batch });
    if (placed.length <= opts.maxChars) return placed;
    return JSON.stringify({
      results: placeholders,
      batch: { truncated: true, continuationId: id, totalChars: whole.length, totalParts: batch.totalParts },
    });
  }
  const isResult = (it: unknown): boolean => typeof it === 'object' && it !== null && 'result' in it;
  // results stored one by one keep their continuation; the others say they were not stored
  const kept = (i: number, withSizes: boolean): unknown => {
    const s = stubbed.get(i) as { id: string; json: string };
    const stub = referenceStubFor(s.id, s.json, opts.maxChars, 0);
    return {
      result: withSizes
        ? { truncated: true, continuationId: s.id, totalChars: stub.totalChars, totalParts: stub.totalParts }
        : { truncated: true, continuationId: s.id },
    };
  };
  const full = JSON.stringify({
    results: shortened.map((it, i) =>
      stubbed.has(i)
        ? kept(i, true)
        : isResult(it)
          ? referenceNotStored(JSON.stringify(items[i]).length, opts.maxChars, opts.toolOf(i))
          : it,
    ),
  });
  if (full.length <= opts.maxChars) return full;
  const brief = { error: 'not stored', code: 'GW_ERR_RESULT_NOT_STORED' };
  const cut = (it: unknown): unknown =>
    typeof it !== 'object' || it === null
      ? it
      : Object.fromEntries(
          Object.entries(it).map(([k, v]) => [k, typeof v === 'string' && v.length > 40 ? `${v.slice(0, 40)}…` : v]),
        );
  const bare = (it: unknown): unknown =>
    typeof it !== 'object' || it === null ? it : { error: '…', code: (it as { code?: unknown }).code };
  const shorter = JSON.stringify({
    results: out.map((it, i) => (stubbed.has(i) ? kept(i, true) : isResult(it) ? brief : cut(it))),
  });
  if (shorter.length <= opts.maxChars) return shorter;
  const idsOnly = JSON.stringify({
    results: out.map((it, i) => (stubbed.has(i) ? kept(i, false) : isResult(it) ? brief : bare(it))),
  });
  if (idsOnly.length <= opts.maxChars) return idsOnly;
  return JSON.stringify({ results: out.map((it) => (isResult(it) ? brief : bare(it))) });
}

async function referenceTryPut(opts: CapOptions, tool: string, body: string): Promise<string | undefined> {
  try {
    return await opts.store.put(opts.userId, tool, body);
  } catch (err) {
    opts.onStoreError?.(err);
    return undefined;
  }
}

function referenceNotStored(
  chars: number,
  maxChars: number,
  tool: string,
): { error: string; code: 'GW_ERR_RESULT_NOT_STORED'; tool: string } {
  return {
    error: `This result (${chars} characters) is over the ${maxChars}-character response budget, and it could not be stored for continue_tool_result (the database refused the write). Retry later, or narrow the request (limit, filters, pagination).`,
    code: 'GW_ERR_RESULT_NOT_STORED',
    tool,
  };
}

function referenceShortenErrorItem(item: unknown): unknown {
  if (typeof item !== 'object' || item === null || 'result' in item) return item;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item))
    copy[k] = typeof v === 'string' && v.length > 300 ? `${v.slice(0, 300)}…` : v;
  return copy;
}

/**
 * A store that writes down every put and refuses the ones `refused` marks (by call number), so two
 * runs of the cap can be compared call by call, including their retries after a refusal.
 */
function recordingStore(refused: readonly boolean[]): { store: ContinuationStore; puts: string[] } {
  const puts: string[] = [];
  const store = {
    async put(userId: string, tool: string, body: string): Promise<string> {
      const n = puts.length;
      puts.push(`${userId} ${tool} ${body}`);
      if (refused[n] === true) throw new Error('database is locked');
      return `cont_${n}`;
    },
  } as unknown as ContinuationStore;
  return { store, puts };
}

/** Characters JSON escapes, that JSON makes longer, or that are longer than one UTF-16 unit. */
const awkward = fc.constantFrom(
  '"',
  '\\',
  '\n',
  '\t',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u2028',
  '\u2029',
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  'é',
  '€',
  '/',
  'a',
  ' ',
);
const text = fc.oneof(
  fc.string({ maxLength: 1500 }),
  fc.string({ unit: 'binary', maxLength: 800 }),
  fc.array(awkward, { maxLength: 800 }).map((a) => a.join('')),
  // results right at a pass's "a stub would not be smaller" threshold (their JSON is 2 longer)
  fc.constantFrom(397, 398, 399, 697, 698, 699, 2397, 2398, 2399).map((n) => 'b'.repeat(n)),
);
const bigText = fc.tuple(text, fc.integer({ min: 1, max: 12 })).map(([t, r]) => t.repeat(r));
const batchItem = fc.oneof(
  { weight: 6, arbitrary: bigText.map((result) => ({ result })) },
  { weight: 2, arbitrary: fc.record({ result: fc.record({ s: bigText, n: fc.integer() }) }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((result) => ({ result })) },
  { weight: 2, arbitrary: fc.record({ error: bigText, code: fc.constant('GW_ERR_SANDBOX_HANDLER_THREW') }) },
  {
    weight: 1,
    arbitrary: fc.record({
      error: fc.string(),
      code: fc.constant('GW_ERR_ENGINE_NOT_CONNECTED'),
      message: bigText,
      integration: fc.string(),
    }),
  },
  { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.integer(), fc.string(), fc.jsonValue({ maxDepth: 2 })) },
);

describe('result cap', () => {
  let db: Db;
  let store: ContinuationStore;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-cap-'));
    db = await openDatabase(path.join(dir, 'cap.db'), dir);
    store = new ContinuationStore(db, 60);
  });
  after(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const cap = (items: unknown[], maxChars = 60_000) =>
    capBatch(items, { maxChars, userId: 'u1', store, toolOf: () => 't' });

  async function reassemble(stub: { continuationId: string; totalParts: number }, maxChars: number): Promise<string> {
    const stored = await store.get('u1', stub.continuationId);
    assert.ok(stored);
    const parts = splitParts(stored.body, partCharsFor(maxChars));
    assert.equal(parts.length, stub.totalParts);
    return parts.map(([a, b]) => stored.body.slice(a, b)).join('');
  }

  it('leaves small batches untouched', async () => {
    const items = [{ result: { a: 1 } }, { error: 'x', code: 'GW_ERR_ENGINE_TOOL_NOT_FOUND' }];
    assert.equal(await cap(items), JSON.stringify({ results: items }));
  });

  it('stubs the largest results first and never touches errors', async () => {
    const big = { result: { text: 'q"\\'.repeat(40_000) } };
    const mid = { result: { text: 'm'.repeat(20_000) } };
    const err = { error: 'e'.repeat(5000), code: 'GW_ERR_SANDBOX_HANDLER_THREW' };
    const text = await cap([mid, big, err]);
    assert.ok(text.length <= 60_000);
    const out = JSON.parse(text).results;
    assert.equal(out[1].result.truncated, true);
    assert.deepEqual(out[0], mid);
    assert.deepEqual(out[2], err);
    assert.equal(await reassemble(out[1].result, 60_000), JSON.stringify(big.result));
  });

  it('keeps every item of a batch of 50 large results', async () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ result: { i, pad: 'x'.repeat(5000) } }));
    const text = await cap(items);
    assert.ok(text.length <= 60_000);
    assert.equal(JSON.parse(text).results.length, 50);
  });

  it('many small results over the budget: the batch is stored whole, and every item keeps its place', async () => {
    const items = Array.from({ length: 300 }, (_, i) => ({ result: { i, pad: 'y'.repeat(250) } }));
    const text = await cap(items);
    assert.ok(text.length <= 60_000);
    const answer = JSON.parse(text);
    assert.equal(answer.results.length, 300, 'index-aligned');
    assert.deepEqual(answer.results[7], { result: { truncated: true, inBatch: 7 } });
    assert.equal(answer.batch.truncated, true);
    assert.equal(await reassemble(answer.batch, 60_000), JSON.stringify({ results: items }));
  });

  it('shortens error items rather than dropping them', async () => {
    const items = Array.from({ length: 50 }, () => ({ error: 'z'.repeat(3000), code: 'GW_ERR_SANDBOX_HANDLER_THREW' }));
    const text = await cap(items);
    assert.ok(text.length <= 60_000);
    const out = JSON.parse(text).results;
    assert.equal(out.length, 50);
    assert.ok(out.every((e: { error: string }) => e.error.length <= 301));
  });

  it('property: any batch of strings comes back under the budget, valid, and reassemblable', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 3000 }), fc.string({ unit: 'grapheme', maxLength: 3000 })), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 30 }),
        async (strings, repeat) => {
          const maxChars = 5000;
          const items = strings.map((s) => ({ result: { s: s.repeat(repeat) } }));
          const text = await cap(items, maxChars);
          assert.ok(text.length <= maxChars, `${text.length} > ${maxChars}`);
          const out = JSON.parse(text).results as { result: any }[];
          assert.equal(out.length, items.length);
          for (const [i, o] of out.entries()) {
            if (o.result?.truncated === true && typeof o.result.continuationId === 'string') {
              assert.equal(await reassemble(o.result, maxChars), JSON.stringify(items[i]?.result));
            } else assert.deepEqual(o, items[i]);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('property: the answer is byte for byte the one of the envelope serialised after each replacement', async () => {
    const compare = async (items: unknown[], maxChars: number, refused: readonly boolean[]): Promise<string> => {
      const a = recordingStore(refused);
      const b = recordingStore(refused);
      const toolOf = (i: number): string => `tool_${i}`;
      const expected = await referenceCapBatch(items, { maxChars, userId: 'u1', store: a.store, toolOf });
      const actual = await capBatch(items, { maxChars, userId: 'u1', store: b.store, toolOf });
      assert.equal(actual, expected, `maxChars ${maxChars}`);
      assert.deepEqual(b.puts, a.puts, 'the same writes to the store, in the same order');
      return expected;
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchItem, { maxLength: 24 }),
        fc.oneof(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 400, max: 40_000 })),
        fc.oneof(fc.constant([] as boolean[]), fc.array(fc.boolean(), { maxLength: 40 })),
        async (items, maxChars, refused) => {
          const expected = await compare(items, maxChars, refused);
          // right at the edges: a budget equal to the answer (and one less), and to the whole batch
          await compare(items, expected.length, refused);
          await compare(items, expected.length - 1, refused);
          const whole = JSON.stringify({ results: items }).length;
          await compare(items, whole, refused);
          await compare(items, whole - 1, refused);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("property: with maxChars at the policy's floor for the batch, every item keeps its place and the answer fits, whether the store works or not", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchItem, { minLength: 1, maxLength: 40, size: 'max' }),
        fc.integer({ min: 0, max: 3000 }),
        fc.constantFrom('works', 'refuses', 'refuses the batch'),
        async (items, over, storeState) => {
          const maxChars = minCapChars(items.length) + over;
          // a store that refuses every write, or only the whole batch's (the last resort)
          const refusing = {
            store: {
              async put(_u: string, tool: string): Promise<string> {
                if (storeState === 'refuses' || tool === 'execute_tools') throw new Error('database is locked');
                return 'cont_x';
              },
            } as unknown as ContinuationStore,
          };
          const text = await capBatch(items, {
            maxChars,
            userId: 'u1',
            store: storeState === 'works' ? store : refusing.store,
            toolOf: (i) => `tool_${i}`,
          });
          assert.ok(text.length <= maxChars, `${text.length} > ${maxChars} (${storeState})`);
          const results = JSON.parse(text).results as unknown[];
          assert.equal(results.length, items.length, storeState);
          // a result is never dropped: each one is still a result (a stub or a placeholder) or says it was not stored
          items.forEach((it, i) => {
            const r = results[i] as { result?: unknown; code?: unknown };
            if (typeof it === 'object' && it !== null && 'result' in it)
              assert.ok('result' in r || r.code === 'GW_ERR_RESULT_NOT_STORED', JSON.stringify(r));
          });
        },
      ),
      { numRuns: 150 },
    );
    // a store that refuses every write: 40 results, none stored, each says so, within the floor
    const locked = {
      async put(): Promise<string> {
        throw new Error('database is locked');
      },
    } as unknown as ContinuationStore;
    const mixed = Array.from({ length: 40 }, (_, i) => ({ result: 'x'.repeat(i % 2 ? 50 : 900) }));
    const refused = await capBatch(mixed, {
      maxChars: minCapChars(40),
      userId: 'u1',
      store: locked,
      toolOf: () => 't',
    });
    assert.ok(refused.length <= minCapChars(40), `${refused.length} > ${minCapChars(40)}`);
    assert.deepEqual(
      (JSON.parse(refused).results as { code: string }[]).map((r) => r.code),
      mixed.map(() => 'GW_ERR_RESULT_NOT_STORED'),
    );
    // many tiny items at the floor: placeholders for all of them, none dropped
    const tiny = Array.from({ length: 1000 }, (_, i) => ({ result: { i, s: 'x'.repeat(60) } }));
    const placed = JSON.parse(
      await capBatch(tiny, { maxChars: minCapChars(1000), userId: 'u1', store, toolOf: () => 't' }),
    );
    assert.equal(placed.results.length, 1000);
    assert.deepEqual(placed.results[999], { result: { truncated: true, inBatch: 999 } });
  });

  it('when only the whole batch cannot be stored, results stored one by one keep their continuation, in each shorter form', async () => {
    // the database refuses the last resort's write only (as when it fails in the middle of a cap)
    const batchRefused = {
      put: (
        userId: string,
        tool: string,
        body: string,
        parts?: Parameters<ContinuationStore['put']>[3],
      ): Promise<string> =>
        tool === 'execute_tools'
          ? Promise.reject(new Error('database is locked'))
          : store.put(userId, tool, body, parts),
    } as unknown as ContinuationStore;
    const big = (i: number): { result: { i: number; text: string } } => ({
      result: { i, text: `${i}:`.padEnd(5000, 'z') },
    });
    const failure = (i: number): { error: string; code: string } => ({
      error: `upstream said no, item ${i} `.padEnd(500, '.'),
      code: 'UPSTREAM_ERROR',
    });
    // few errors: the full form fits (sizes kept); many: only the ids fit; at the floor with 40 big results: none
    for (const [errors, maxChars, form] of [
      [6, 2600, 'full'],
      [27, minCapChars(30), 'ids only'],
      [0, minCapChars(40), 'none'],
    ] as const) {
      const bigs = form === 'none' ? 40 : 3;
      const items = [
        ...Array.from({ length: bigs }, (_, i) => big(i)),
        ...Array.from({ length: errors }, (_, i) => failure(i)),
      ];
      const text = await capBatch(items, { maxChars, userId: 'u1', store: batchRefused, toolOf: () => 'tool_x' });
      assert.ok(text.length <= maxChars, `${form}: ${text.length} > ${maxChars}`);
      const results = JSON.parse(text).results as {
        result?: { continuationId?: string; totalChars?: number };
        code?: string;
      }[];
      assert.equal(results.length, items.length, form);
      for (let i = 0; i < bigs; i++) {
        const r = results[i];
        if (form === 'none') {
          assert.equal(r?.code, 'GW_ERR_RESULT_NOT_STORED', `${form}: no room for an id per item`);
          continue;
        }
        const id = r?.result?.continuationId;
        assert.ok(id, `${form}: item ${i} lost its continuation: ${JSON.stringify(r)}`);
        assert.equal(r?.result?.totalChars === undefined, form === 'ids only', `${form}: sizes ${JSON.stringify(r)}`);
        assert.equal(
          (await store.get('u1', id))?.body,
          JSON.stringify(big(i).result),
          `${form}: item ${i} pages back whole`,
        );
      }
      for (let i = bigs; i < items.length; i++)
        assert.equal(results[i]?.code, 'UPSTREAM_ERROR', `${form}: error item ${i} keeps its code`);
    }
  });

  it('says a result was not stored because of the quota when that is why, also when only the whole batch was offered', async () => {
    const full = {
      put: () => Promise.reject(new ContinuationQuotaError(140_000, 150_000)),
    } as unknown as ContinuationStore;
    // small results are never offered one by one (a stub would not be smaller): only the whole
    // batch is, and its refusal is why they were not stored
    const small = Array.from({ length: 14 }, (_, i) => ({ result: `${i}:`.padEnd(395, 'q') }));
    for (const items of [small, [{ result: 'z'.repeat(9000) }]]) {
      const results = JSON.parse(
        await capBatch(items, { maxChars: 5300, userId: 'u1', store: full, toolOf: () => 'tool_x' }),
      ).results as { code: string; error: string }[];
      for (const r of results) {
        assert.equal(r.code, 'GW_ERR_RESULT_NOT_STORED');
        assert.match(
          r.error,
          /your stored results are at their quota \(140000 of 150000 characters\) until they expire/,
          r.error,
        );
      }
    }
  });

  it('serialises each item a constant number of times, not the whole batch once per item', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ result: { i, text: 'r\n'.repeat(10_000) } }));
    const whole = JSON.stringify({ results: items }).length;
    const stringify = JSON.stringify;
    let produced = 0;
    JSON.stringify = function counted(this: unknown, ...args: Parameters<typeof stringify>): string {
      const out = stringify.apply(this, args);
      produced += out?.length ?? 0;
      return out;
    } as typeof JSON.stringify;
    let text: string;
    try {
      text = await cap(items);
    } finally {
      JSON.stringify = stringify;
    }
    assert.equal(JSON.parse(text).results.length, 100);
    assert.ok(text.length <= 60_000);
    // each item once as it is, its result once for the store, and each stub it gets: about 2× the
    // batch (serialising the envelope before each of 100 replacements was ~50×)
    assert.ok(produced <= 3 * whole, `JSON.stringify produced ${produced} characters for a batch of ${whole}`);
  });

  it('lets the event loop run between the results it stores', async () => {
    const items = Array.from({ length: 8 }, (_, i) => ({ result: { i, text: 'w'.repeat(20_000) } }));
    let turns = 0;
    let capping = true;
    const turn = (): void => {
      turns++;
      if (capping) setImmediate(turn);
    };
    setImmediate(turn);
    const text = await cap(items);
    capping = false;
    const stored = (JSON.parse(text).results as { result: { truncated?: boolean } }[]).filter(
      (r) => r.result.truncated === true,
    ).length;
    assert.ok(stored >= 4, `${stored} results stored`);
    // the SQLite store writes synchronously: without a yield the whole batch is one turn of the loop
    assert.ok(turns >= stored, `the event loop ran ${turns} times while ${stored} results were stored`);
  });

  /** continue_tool_result as the gateway serves it, with the cap `maxChars`, for user u1. */
  async function page(
    maxChars: number,
    continuationId: string,
    part: number,
  ): Promise<{ part?: number; totalParts?: number; chunk?: string; code?: string }> {
    const tool = createEngineMetaTools({ engine: {} as EngineDeps, continuations: store, maxChars, maxBatch: 50 }).find(
      (t) => t.name === 'continue_tool_result',
    );
    assert.ok(tool);
    const signal = new AbortController().signal;
    const ctx: MetaToolContext = {
      user: { id: 'u1', email: 'u1@example.com', tenant: 'acme', createdAt: 0 },
      transport: 'mcp',
      signal,
      cancelled: signal,
      progress: async () => undefined,
      requestId: 'r1',
    };
    return (await tool.handler(ctx, { continuationId, part })).json as {
      part?: number;
      totalParts?: number;
      chunk?: string;
      code?: string;
    };
  }

  /** Pages a continuation to its end: each chunk, and totalParts as every page says it. */
  async function pageAll(maxChars: number, continuationId: string): Promise<{ chunks: string[]; totalParts: number }> {
    const first = await page(maxChars, continuationId, 1);
    const totalParts = first.totalParts ?? 0;
    const chunks = [first.chunk ?? ''];
    for (let part = 2; part <= totalParts; part++) {
      const p = await page(maxChars, continuationId, part);
      assert.equal(p.totalParts, totalParts);
      chunks.push(p.chunk ?? '');
    }
    assert.equal((await page(maxChars, continuationId, totalParts + 1)).code, 'GW_ERR_RESULT_PART_OUT_OF_RANGE');
    return { chunks, totalParts };
  }

  const splitChunks = (body: string, maxChars: number): string[] =>
    splitParts(body, partCharsFor(maxChars)).map(([a, b]) => body.slice(a, b));

  it('property: continue_tool_result serves exactly the parts splitParts gives on the stored body', async () => {
    await fc.assert(
      fc.asyncProperty(bigText, fc.integer({ min: 1000, max: 12_000 }), async (value, maxChars) => {
        const result = { value: value.repeat(4) };
        const text = await cap([{ result }], maxChars);
        const stub = JSON.parse(text).results[0].result;
        if (stub.truncated !== true) return; // it fitted: nothing to page
        const body = JSON.stringify(result);
        const { chunks, totalParts } = await pageAll(maxChars, stub.continuationId);
        assert.equal(totalParts, stub.totalParts);
        assert.deepEqual(chunks, splitChunks(body, maxChars));
      }),
      { numRuns: 60 },
    );
  });

  it('continue_tool_result reads the one part asked for, stored in its own row when the result was capped', async () => {
    const maxChars = 3000;
    const result = { text: 'p"\u2028'.repeat(9000) };
    const stub = JSON.parse(await cap([{ result }], maxChars)).results[0].result;
    const body = JSON.stringify(result);
    const chunks = splitChunks(body, maxChars);
    assert.equal(stub.totalParts, chunks.length);
    const rows = await db.all<{ part: number; chunk: string }>(
      'SELECT part, chunk FROM result_page_parts WHERE page_id = ? ORDER BY part',
      [stub.continuationId],
    );
    assert.deepEqual(
      rows,
      chunks.map((chunk, k) => ({ part: k + 1, chunk })),
    );
    assert.deepEqual(
      await db.get('SELECT total_chars, total_parts FROM result_pages WHERE id = ?', [stub.continuationId]),
      { total_chars: body.length, total_parts: chunks.length },
    );
    // a part's row, not the body, is what is served: change one and that page changes
    await db.run('UPDATE result_page_parts SET chunk = ? WHERE page_id = ? AND part = 2', [
      'changed',
      stub.continuationId,
    ]);
    const { chunks: served, totalParts } = await pageAll(maxChars, stub.continuationId);
    assert.equal(totalParts, chunks.length);
    assert.deepEqual(
      served,
      chunks.map((c, k) => (k === 1 ? 'changed' : c)),
    );
  });

  it('continuations without usable boundaries are split on read: stored before them, for another cap, or not fitting the body', async () => {
    const maxChars = 2500;
    const body = JSON.stringify({ text: 'q\ud83d\ude00"'.repeat(4000) });
    const budget = partCharsFor(maxChars);
    const ends = splitParts(body, budget).map(([, to]) => to);
    const rows = [
      await store.put('u1', 't', body), // as stored before migration 5
      await store.put('u1', 't', body, {
        budget: partCharsFor(6000),
        ends: splitParts(body, partCharsFor(6000)).map(([, to]) => to),
      }),
      await store.put('u1', 't', body, { budget, ends: [...ends.slice(0, -1), body.length - 1] }),
      await store.put('u1', 't', body, { budget, ends: [ends[1] as number, ends[0] as number, ...ends.slice(2)] }),
    ];
    for (const id of rows) assert.deepEqual((await pageAll(maxChars, id)).chunks, splitChunks(body, maxChars));
    assert.deepEqual(await pageAll(maxChars, await store.put('u1', 't', '')), { chunks: [''], totalParts: 1 });
  });

  it('a result stored is reported stored even when the sweep of expired ones after it fails', async () => {
    // a handle whose DELETEs fail (the sweep's), everything else going to the real database
    const failingDeletes = (d: Db): Db => ({
      kind: d.kind,
      all: (sql, params) => d.all(sql, params),
      get: (sql, params) => d.get(sql, params),
      run: (sql, params) =>
        sql.startsWith('DELETE') ? Promise.reject(new Error('disk I/O error')) : d.run(sql, params),
      transaction: (fn) => d.transaction((tx) => fn(failingDeletes(tx))),
      close: () => d.close(),
    });
    const sweeping = new ContinuationStore(failingDeletes(db), 60);
    const body = JSON.stringify({ text: 'w'.repeat(9000) });
    for (const parts of [
      undefined,
      { budget: partCharsFor(3000), ends: splitParts(body, partCharsFor(3000)).map(([, to]) => to) },
    ]) {
      const id = await sweeping.put('u1', 't', body, parts);
      assert.equal((await store.get('u1', id))?.body, body);
    }
  });

  it("refuses another user's continuation", async () => {
    const id = await store.put('u1', 't', 'body');
    assert.equal(await store.get('u2', id), undefined);
    assert.equal((await store.get('u1', id))?.body, 'body');
  });
});
