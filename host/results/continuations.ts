/**
 * @module host/results/continuations
 * Oversized results kept server-side, bound to the user who received them, with a TTL. Stored in
 * the database so that any replica can serve the continuation and a restart loses nothing. Each
 * body is kept with its part boundaries (where each continue_tool_result part ends, split once
 * when stored), so that serving a part is a slice on any replica.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/db.js';

/** Where each part of a stored body ends, for the part budget it was split with. */
export interface PartBoundaries {
  budget: number;
  /** part k is body.slice(ends[k - 2] ?? 0, ends[k - 1]) */
  ends: number[];
}

export interface StoredResult {
  id: string;
  tool: string;
  body: string;
  /** absent for rows stored without them (before migration 5) */
  parts?: PartBoundaries;
}

/** Decimal offsets joined by commas: ~10 characters a part, next to ~58,000 of body. */
const encodeEnds = (ends: readonly number[]): string => ends.join(',');

function decodeParts(budget: number | string | null, ends: string | null): PartBoundaries | undefined {
  if (budget === null || ends === null) return undefined;
  const parsed = ends.split(',').map(Number);
  if (!parsed.every(Number.isSafeInteger)) return undefined;
  return { budget: Number(budget), ends: parsed };
}

export class ContinuationStore {
  readonly #db: Db;
  readonly #ttlMs: number;
  #lastSweep = 0;

  constructor(db: Db, ttlSec: number) {
    this.#db = db;
    this.#ttlMs = ttlSec * 1000;
  }

  async put(userId: string, tool: string, body: string, parts?: PartBoundaries): Promise<string> {
    const id = 'cont_' + randomBytes(16).toString('hex');
    const now = Date.now();
    await this.#db.run(
      'INSERT INTO result_continuations (id, user_id, tool, body, created_at, expires_at, part_budget, part_ends) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [id, userId, tool, body, now, now + this.#ttlMs, parts ? parts.budget : null, parts ? encodeEnds(parts.ends) : null],
    );
    await this.#sweep(now);
    return id;
  }

  /** The stored result, or undefined when unknown, expired, or another user's. */
  async get(userId: string, id: string): Promise<StoredResult | undefined> {
    const row = await this.#db.get<{ id: string; tool: string; body: string; part_budget: number | string | null; part_ends: string | null }>(
      'SELECT id, tool, body, part_budget, part_ends FROM result_continuations WHERE id = ? AND user_id = ? AND expires_at > ?',
      [id, userId, Date.now()],
    );
    if (!row) return undefined;
    const stored: StoredResult = { id: row.id, tool: row.tool, body: row.body };
    const parts = decodeParts(row.part_budget, row.part_ends);
    if (parts) stored.parts = parts;
    return stored;
  }

  async #sweep(now: number): Promise<void> {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    await this.#db.run('DELETE FROM result_continuations WHERE expires_at <= ?', [now]);
  }
}
