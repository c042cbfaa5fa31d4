/**
 * @module test/host/result-cap
 * The cap on its own, against a real SQLite continuation store: always valid JSON under the
 * budget, errors never replaced, every stub pageable back to the exact original.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { capBatch, partCharsFor, splitParts } from '../../host/results/cap.js';
import { ContinuationStore } from '../../host/results/continuations.js';
import type { Db } from '../../host/storage/db.js';
import { openDatabase } from '../../host/storage/open.js';

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

  const cap = (items: unknown[], maxChars = 60_000) => capBatch(items, { maxChars, userId: 'u1', store, toolOf: () => 't' });

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
      fc.asyncProperty(fc.array(fc.oneof(fc.string({ maxLength: 3000 }), fc.string({ unit: 'grapheme', maxLength: 3000 })), { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 30 }), async (strings, repeat) => {
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
      }),
      { numRuns: 40 },
    );
  });

  it('refuses another user\'s continuation', async () => {
    const id = await store.put('u1', 't', 'body');
    assert.equal(await store.get('u2', id), undefined);
    assert.equal((await store.get('u1', id))?.body, 'body');
  });
});
