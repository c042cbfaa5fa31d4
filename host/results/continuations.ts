/**
 * @module host/results/continuations
 * Oversized results kept server-side, bound to the user who received them, with a TTL. Stored in
 * the database so that any replica can serve the continuation and a restart loses nothing. A body
 * is split into its continue_tool_result parts once, when stored: its head is a row of
 * `result_pages` and each part a row of `result_page_parts`, so serving a part reads that part, not
 * the whole body (paging a 32 MB result costs the same per call as paging a small one).
 *
 * Rows of `result_continuations` (stored before migration 6, or stored whole: without part
 * boundaries) are still served: a body stored whole is split on read; one stored with its part
 * boundaries (migration 5) is sliced at them. A replica of an earlier version reads only that
 * table, so during a rolling upgrade it answers "unknown" for results stored the new way.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/db.js';
import { WorkbenchError, messageOf } from '../../contracts/errors.js';
import { endsFit, splitPartEnds } from './parts.js';

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

/** One part of a stored result, as continue_tool_result serves it. */
export interface ResultPage {
  id: string;
  tool: string;
  totalChars: number;
  totalParts: number;
  /** the part's characters; undefined when the part asked for is past the last one */
  chunk: string | undefined;
}

/** Migration 5's layout: decimal offsets joined by commas. */
function decodeParts(budget: number | string | null, ends: string | null): PartBoundaries | undefined {
  if (budget === null || ends === null) return undefined;
  const parsed = ends.split(',').map(Number);
  if (!parsed.every(Number.isSafeInteger)) return undefined;
  return { budget: Number(budget), ends: parsed };
}

/** Part rows written by one INSERT: at most this many, and at most this many characters of chunks. */
const PARTS_PER_STATEMENT = 64;
const CHARS_PER_STATEMENT = 4 * 1024 * 1024;

interface PageHead {
  id: string;
  tool: string;
  part_budget: number | string;
  total_chars: number | string;
  total_parts: number | string;
}

interface WholeHead {
  id: string;
  tool: string;
  part_budget: number | string | null;
  part_ends: string | null;
}

/** A result not stored because its user's stored results would pass resultCap.maxStoredCharsPerUser. */
export class ContinuationQuotaError extends WorkbenchError<'GW_ERR_RESULT_NOT_STORED'> {
  constructor(
    readonly used: number,
    readonly quota: number,
  ) {
    super('GW_ERR_RESULT_NOT_STORED', messageOf('GW_ERR_RESULT_NOT_STORED', { used, quota }));
    this.name = 'ContinuationQuotaError';
  }
}

export class ContinuationStore {
  readonly #db: Db;
  readonly #ttlMs: number;
  readonly #maxCharsPerUser: number;
  #lastSweep = 0;

  constructor(db: Db, ttlSec: number, maxCharsPerUser = Number.POSITIVE_INFINITY) {
    this.#db = db;
    this.#ttlMs = ttlSec * 1000;
    this.#maxCharsPerUser = maxCharsPerUser;
  }

  /** Characters of `userId`'s stored results that have not expired. */
  async storedChars(userId: string, now = Date.now()): Promise<number> {
    const pages = await this.#db.get<{ n: number | string | null }>(
      'SELECT SUM(total_chars) AS n FROM result_pages WHERE user_id = ? AND expires_at > ?',
      [userId, now],
    );
    const whole = await this.#db.get<{ n: number | string | null }>(
      'SELECT SUM(LENGTH(body)) AS n FROM result_continuations WHERE user_id = ? AND expires_at > ?',
      [userId, now],
    );
    return Number(pages?.n ?? 0) + Number(whole?.n ?? 0);
  }

  /**
   * Stores `body` for `userId`. With `parts` (the boundaries splitParts gave for a part budget),
   * each part is stored as its own row; without them, or with boundaries that do not fit the body,
   * the body is stored whole and split when it is read. Throws ContinuationQuotaError when the
   * user's stored results would pass the quota.
   */
  async put(userId: string, tool: string, body: string, parts?: PartBoundaries): Promise<string> {
    const id = 'cont_' + randomBytes(16).toString('hex');
    const now = Date.now();
    // one user's oversized results must not fill the database for everyone (replicas storing at the
    // same moment may each pass it once: a bound, not an exact count)
    if (Number.isFinite(this.#maxCharsPerUser)) {
      const used = await this.storedChars(userId, now);
      if (used + body.length > this.#maxCharsPerUser) throw new ContinuationQuotaError(used, this.#maxCharsPerUser);
    }
    const expires = now + this.#ttlMs;
    if (parts === undefined || !endsFit(parts.ends, body.length)) {
      await this.#db.run(
        'INSERT INTO result_continuations (id, user_id, tool, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
        [id, userId, tool, body, now, expires],
      );
    } else {
      const ends = parts.ends;
      await this.#db.transaction(async (tx) => {
        await tx.run(
          'INSERT INTO result_pages (id, user_id, tool, part_budget, total_chars, total_parts, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          [id, userId, tool, parts.budget, body.length, ends.length, now, expires],
        );
        for (let k = 0; k < ends.length;) {
          const values: (string | number)[] = [];
          let chars = 0;
          for (
            ;
            k < ends.length && values.length < PARTS_PER_STATEMENT * 3 && (chars === 0 || chars < CHARS_PER_STATEMENT);
            k++
          ) {
            const chunk = body.slice(ends[k - 1] ?? 0, ends[k]);
            values.push(id, k + 1, chunk);
            chars += chunk.length;
          }
          const rows = Array.from({ length: values.length / 3 }, () => '(?, ?, ?)').join(', ');
          await tx.run(`INSERT INTO result_page_parts (page_id, part, chunk) VALUES ${rows}`, values);
        }
      });
    }
    // the result is stored: a sweep that fails (the database busy or read-only for a moment) is
    // tried again after the next write, and never turns this write into a failure
    await this.#sweep(now).catch(() => undefined);
    return id;
  }

  /**
   * Part `part` (from 1) of a stored result, split for the part budget `budget`; undefined when the
   * result is unknown, expired, or another user's. A result stored for another budget (the cap has
   * changed since) or stored whole is split for this one on read.
   */
  async page(userId: string, id: string, part: number, budget: number): Promise<ResultPage | undefined> {
    const head = await this.#pageHead(userId, id);
    if (head && Number(head.part_budget) === budget) {
      const totalParts = Number(head.total_parts);
      const page: ResultPage = {
        id: head.id,
        tool: head.tool,
        totalChars: Number(head.total_chars),
        totalParts,
        chunk: undefined,
      };
      if (part > totalParts) return page;
      const row = await this.#db.get<{ chunk: string }>(
        'SELECT chunk FROM result_page_parts WHERE page_id = ? AND part = ?',
        [head.id, part],
      );
      if (!row) return undefined; // swept since the head was read
      page.chunk = row.chunk;
      return page;
    }
    const whole = head ? await this.#joined(head) : await this.#stored(userId, id);
    if (!whole) return undefined;
    const stored = whole.parts;
    const ends =
      stored !== undefined && stored.budget === budget && endsFit(stored.ends, whole.body.length)
        ? stored.ends
        : splitPartEnds(whole.body, budget);
    const chunk = part > ends.length ? undefined : whole.body.slice(ends[part - 2] ?? 0, ends[part - 1]);
    return { id: whole.id, tool: whole.tool, totalChars: whole.body.length, totalParts: ends.length, chunk };
  }

  /** The whole stored result, or undefined when unknown, expired, or another user's. */
  async get(userId: string, id: string): Promise<StoredResult | undefined> {
    const head = await this.#pageHead(userId, id);
    return head ? this.#joined(head) : this.#stored(userId, id);
  }

  /** Forgets every stored result of `userId`. */
  async deleteForUser(userId: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await tx.run('DELETE FROM result_page_parts WHERE page_id IN (SELECT id FROM result_pages WHERE user_id = ?)', [
        userId,
      ]);
      await tx.run('DELETE FROM result_pages WHERE user_id = ?', [userId]);
      await tx.run('DELETE FROM result_continuations WHERE user_id = ?', [userId]);
    });
  }

  #pageHead(userId: string, id: string): Promise<PageHead | undefined> {
    return this.#db.get<PageHead>(
      'SELECT id, tool, part_budget, total_chars, total_parts FROM result_pages WHERE id = ? AND user_id = ? AND expires_at > ?',
      [id, userId, Date.now()],
    );
  }

  /** A result stored a part per row, joined again (read for a budget it was not split for). */
  async #joined(head: PageHead): Promise<StoredResult | undefined> {
    const rows = await this.#db.all<{ chunk: string }>(
      'SELECT chunk FROM result_page_parts WHERE page_id = ? ORDER BY part',
      [head.id],
    );
    if (rows.length !== Number(head.total_parts)) return undefined; // swept since the head was read
    const ends: number[] = [];
    let at = 0;
    for (const r of rows) ends.push((at += r.chunk.length));
    return {
      id: head.id,
      tool: head.tool,
      body: rows.map((r) => r.chunk).join(''),
      parts: { budget: Number(head.part_budget), ends },
    };
  }

  /** A result stored whole (result_continuations), with its boundaries when it has them. */
  async #stored(userId: string, id: string): Promise<StoredResult | undefined> {
    const row = await this.#db.get<WholeHead & { body: string }>(
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
    const last = this.#lastSweep;
    this.#lastSweep = now;
    try {
      await this.#deleteExpired(now);
    } catch (err) {
      this.#lastSweep = last;
      throw err;
    }
  }

  async #deleteExpired(now: number): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await tx.run(
        'DELETE FROM result_page_parts WHERE page_id IN (SELECT id FROM result_pages WHERE expires_at <= ?)',
        [now],
      );
      await tx.run('DELETE FROM result_pages WHERE expires_at <= ?', [now]);
      await tx.run('DELETE FROM result_continuations WHERE expires_at <= ?', [now]);
    });
  }
}
