/**
 * @module host/results/continuations
 * Oversized results kept server-side, bound to the user who received them, with a TTL. Stored in
 * the database so that any replica can serve the continuation and a restart loses nothing.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/db.js';

export interface StoredResult {
  id: string;
  tool: string;
  body: string;
}

export class ContinuationStore {
  readonly #db: Db;
  readonly #ttlMs: number;
  #lastSweep = 0;

  constructor(db: Db, ttlSec: number) {
    this.#db = db;
    this.#ttlMs = ttlSec * 1000;
  }

  async put(userId: string, tool: string, body: string): Promise<string> {
    const id = 'cont_' + randomBytes(16).toString('hex');
    const now = Date.now();
    await this.#db.run('INSERT INTO result_continuations (id, user_id, tool, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)', [
      id,
      userId,
      tool,
      body,
      now,
      now + this.#ttlMs,
    ]);
    await this.#sweep(now);
    return id;
  }

  /** The stored result, or undefined when unknown, expired, or another user's. */
  async get(userId: string, id: string): Promise<StoredResult | undefined> {
    const row = await this.#db.get<{ id: string; tool: string; body: string }>(
      'SELECT id, tool, body FROM result_continuations WHERE id = ? AND user_id = ? AND expires_at > ?',
      [id, userId, Date.now()],
    );
    return row;
  }

  async #sweep(now: number): Promise<void> {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    await this.#db.run('DELETE FROM result_continuations WHERE expires_at <= ?', [now]);
  }
}
