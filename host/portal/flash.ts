/**
 * @module host/portal/flash
 * One-shot notices for the page a form post redirects to (post, redirect, get): "your new key is
 * …", "Slack was disconnected". A notice is stored server-side for one portal session and one page,
 * shown by the first GET of that page in that session and deleted as it is read, so a reload, a
 * shared link or another session never shows it, and nothing is put in the URL (where anyone could
 * write a fake one, and where a new key would end up in history and logs).
 *
 * Notices live in the database (not in memory), so the GET may land on another replica. Each is
 * sealed with AES-256-GCM under a key derived from the session's cookie value, which the server
 * never stores (it keeps only its hash): a new API key waiting to be shown is not readable from
 * the database, only by the request that carries the cookie.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Db } from '../storage/db.js';
import { randomId } from './sessions.js';

export type FlashPage = 'keys' | 'integrations';

export type Flash =
  | { kind: 'key-created'; key: string; label: string }
  /** `alsoRevoked`: how many keys made with it were revoked with it (absent in notices stored before it was counted) */
  | { kind: 'key-revoked'; alsoRevoked?: number }
  | { kind: 'others-signed-out' }
  /** an app's OAuth access revoked on the keys page (`app`: its name) */
  | { kind: 'app-revoked'; app: string }
  /** `removed`: whether there was a connection to remove; `revocation` as the connection service reports it */
  | { kind: 'disconnected'; integration: string; removed: boolean; revocation: 'revoked' | 'unsupported' | 'failed' };

/** How long a notice waits for its page: the redirect is followed at once; this only bounds leftovers. */
export const FLASH_TTL_MS = 5 * 60_000;

function keyOf(sessionId: string): Buffer {
  return createHmac('sha256', sessionId).update('workbench portal flash v1').digest();
}

function seal(sessionId: string, aad: string, flash: Flash): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(sessionId), iv).setAAD(Buffer.from(aad));
  const body = Buffer.concat([c.update(JSON.stringify(flash), 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), c.getAuthTag().toString('base64url')].join('.');
}

function open(sessionId: string, aad: string, sealed: string): Flash | undefined {
  const [v, iv, body, tag] = sealed.split('.');
  if (v !== 'v1' || !iv || body === undefined || !tag) return undefined;
  try {
    const d = createDecipheriv('aes-256-gcm', keyOf(sessionId), Buffer.from(iv, 'base64url')).setAAD(Buffer.from(aad));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return JSON.parse(Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8')) as Flash;
  } catch {
    return undefined;
  }
}

export class PortalFlash {
  readonly #db: Db;
  readonly #now: () => number;
  readonly ttlMs: number;
  constructor(db: Db, now: () => number = Date.now, ttlMs = FLASH_TTL_MS) {
    this.#db = db;
    this.#now = now;
    this.ttlMs = ttlMs;
  }

  /** Leaves a notice for the next GET of `page` in the session whose cookie value is `sessionId` (stored hashed as `idHash`). */
  async put(idHash: string, sessionId: string, page: FlashPage, flash: Flash): Promise<void> {
    const id = randomId(16);
    const now = this.#now();
    await this.#db.run(
      'INSERT INTO portal_flash (id, session_hash, page, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      [id, idHash, page, seal(sessionId, `${id}|${idHash}|${page}`, flash), now, now + this.ttlMs],
    );
  }

  /**
   * The session's notices for `page`, oldest first, each deleted as it is taken: of two requests
   * racing for one notice, only the one whose delete removed the row shows it.
   */
  async take(idHash: string, sessionId: string, page: FlashPage): Promise<Flash[]> {
    const rows = await this.#db.all<{ id: string; body: string; expires_at: number }>(
      'SELECT id, body, expires_at FROM portal_flash WHERE session_hash = ? AND page = ? ORDER BY created_at, id',
      [idHash, page],
    );
    const now = this.#now();
    const out: Flash[] = [];
    for (const r of rows) {
      const { changes } = await this.#db.run('DELETE FROM portal_flash WHERE id = ?', [r.id]);
      if (changes !== 1 || Number(r.expires_at) <= now) continue;
      const flash = open(sessionId, `${r.id}|${idHash}|${page}`, r.body);
      if (flash) out.push(flash);
    }
    return out;
  }

  /** Deletes notices nobody came back for. */
  async sweep(): Promise<number> {
    const { changes } = await this.#db.run('DELETE FROM portal_flash WHERE expires_at <= ?', [this.#now()]);
    return changes;
  }
}
