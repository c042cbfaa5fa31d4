/**
 * @module host/builtins/jots/store
 * The jots tables (migration 15) read and written in portable SQL, so every replica on a shared
 * PostgreSQL serves the same sites. Each function takes the handle to run on: the database, or a
 * transaction of the service (host/builtins/jots/service.ts), which owns the rules (owner checks,
 * quotas, atomic updates). A file's bytes are stored as base64 text.
 */
import type { Db } from '../../storage/db.js';

export interface SiteRow {
  id: string;
  ownerId: string;
  tenant: string;
  title: string;
  shared: boolean;
  fileCount: number;
  bytes: number;
  createdAt: number;
  updatedAt: number;
}

export interface FileMeta {
  path: string;
  contentType: string;
  bytes: number;
  sha256: string;
  updatedAt: number;
}

/** A file ready to store: its bytes as base64. */
export interface StoredFile {
  path: string;
  contentType: string;
  bytes: number;
  sha256: string;
  base64: string;
}

/** A file as served. */
export interface ServedFile {
  path: string;
  contentType: string;
  sha256: string;
  body: Buffer;
}

interface SiteDbRow {
  id: string;
  owner_id: string;
  tenant: string;
  title: string;
  share_hash: string | null;
  file_count: number;
  bytes: number;
  created_at: number;
  updated_at: number;
}

const SITE_COLUMNS = 'id, owner_id, tenant, title, share_hash, file_count, bytes, created_at, updated_at';

const toSite = (r: SiteDbRow): SiteRow => ({
  id: r.id,
  ownerId: r.owner_id,
  tenant: r.tenant,
  title: r.title,
  shared: r.share_hash !== null,
  fileCount: Number(r.file_count),
  bytes: Number(r.bytes),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** The site `id` when `ownerId` owns it; undefined otherwise (another user's site is not found). */
export async function siteOf(db: Db, id: string, ownerId: string): Promise<SiteRow | undefined> {
  const r = await db.get<SiteDbRow>(`SELECT ${SITE_COLUMNS} FROM jot_sites WHERE id = ? AND owner_id = ?`, [
    id,
    ownerId,
  ]);
  return r && toSite(r);
}

export async function sitesOf(db: Db, ownerId: string): Promise<SiteRow[]> {
  const rows = await db.all<SiteDbRow>(
    `SELECT ${SITE_COLUMNS} FROM jot_sites WHERE owner_id = ? ORDER BY created_at, id`,
    [ownerId],
  );
  return rows.map(toSite);
}

/** How many sites a user has and their bytes together (SUM is NUMERIC on PostgreSQL: read as text, made a number). */
export async function usageOf(db: Db, ownerId: string): Promise<{ sites: number; bytes: number }> {
  const r = await db.get<{ n: number | string; total: number | string | null }>(
    'SELECT COUNT(*) AS n, SUM(bytes) AS total FROM jot_sites WHERE owner_id = ?',
    [ownerId],
  );
  return { sites: Number(r?.n ?? 0), bytes: Number(r?.total ?? 0) };
}

/** A new site; `shareHash` shares it from the start. */
export async function insertSite(db: Db, site: SiteRow, shareHash: string | null): Promise<void> {
  await db.run(
    `INSERT INTO jot_sites (id, owner_id, tenant, title, share_hash, shared_at, file_count, bytes, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      site.id,
      site.ownerId,
      site.tenant,
      site.title,
      shareHash,
      shareHash === null ? null : site.createdAt,
      site.fileCount,
      site.bytes,
      site.createdAt,
      site.updatedAt,
    ],
  );
}

export async function updateSite(
  db: Db,
  id: string,
  set: { title: string; fileCount: number; bytes: number; updatedAt: number },
): Promise<void> {
  await db.run('UPDATE jot_sites SET title = ?, file_count = ?, bytes = ?, updated_at = ? WHERE id = ?', [
    set.title,
    set.fileCount,
    set.bytes,
    set.updatedAt,
    id,
  ]);
}

/** Deletes a site of `ownerId` with its files and view links (ON DELETE CASCADE); false when there is none. */
export async function deleteSite(db: Db, id: string, ownerId: string): Promise<boolean> {
  return (await db.run('DELETE FROM jot_sites WHERE id = ? AND owner_id = ?', [id, ownerId])).changes > 0;
}

/** Sets (a hash) or clears (null) a site's share link; false when `ownerId` has no such site. */
export async function setShare(
  db: Db,
  id: string,
  ownerId: string,
  shareHash: string | null,
  now: number,
): Promise<boolean> {
  const { changes } = await db.run('UPDATE jot_sites SET share_hash = ?, shared_at = ? WHERE id = ? AND owner_id = ?', [
    shareHash,
    shareHash === null ? null : now,
    id,
    ownerId,
  ]);
  return changes > 0;
}

export async function fileMetas(db: Db, siteId: string): Promise<FileMeta[]> {
  const rows = await db.all<{ path: string; content_type: string; bytes: number; sha256: string; updated_at: number }>(
    'SELECT path, content_type, bytes, sha256, updated_at FROM jot_files WHERE site_id = ? ORDER BY path',
    [siteId],
  );
  return rows.map((r) => ({
    path: r.path,
    contentType: r.content_type,
    bytes: Number(r.bytes),
    sha256: r.sha256,
    updatedAt: Number(r.updated_at),
  }));
}

/** Writes a file, replacing the one at its path. */
export async function putFile(db: Db, siteId: string, file: StoredFile, now: number): Promise<void> {
  await db.run(
    `INSERT INTO jot_files (site_id, path, content_type, bytes, sha256, content, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (site_id, path) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes,
       sha256 = excluded.sha256, content = excluded.content, updated_at = excluded.updated_at`,
    [siteId, file.path, file.contentType, file.bytes, file.sha256, file.base64, now],
  );
}

export async function deleteFile(db: Db, siteId: string, path: string): Promise<void> {
  await db.run('DELETE FROM jot_files WHERE site_id = ? AND path = ?', [siteId, path]);
}

/** One file of a site, with its bytes. */
export async function readFile(db: Db, siteId: string, path: string): Promise<ServedFile | undefined> {
  const r = await db.get<{ path: string; content_type: string; sha256: string; content: string }>(
    'SELECT path, content_type, sha256, content FROM jot_files WHERE site_id = ? AND path = ?',
    [siteId, path],
  );
  return r && { path: r.path, contentType: r.content_type, sha256: r.sha256, body: Buffer.from(r.content, 'base64') };
}

/** Whether a site holds a file at `path` (no bytes read). */
export async function hasFile(db: Db, siteId: string, path: string): Promise<boolean> {
  return (await db.get('SELECT 1 AS one FROM jot_files WHERE site_id = ? AND path = ?', [siteId, path])) !== undefined;
}

/** The site a share token's hash opens, if any. */
export async function siteByShare(db: Db, shareHash: string): Promise<string | undefined> {
  return (await db.get<{ id: string }>('SELECT id FROM jot_sites WHERE share_hash = ?', [shareHash]))?.id;
}

export async function insertView(
  db: Db,
  view: { tokenHash: string; siteId: string; userId: string; createdAt: number; expiresAt: number },
): Promise<void> {
  await db.run('INSERT INTO jot_views (token_hash, site_id, user_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)', [
    view.tokenHash,
    view.siteId,
    view.userId,
    view.createdAt,
    view.expiresAt,
  ]);
}

/** A view link's site and end, if its hash is known (expired ones too, until pruned). */
export async function viewByHash(
  db: Db,
  tokenHash: string,
): Promise<{ siteId: string; expiresAt: number } | undefined> {
  const r = await db.get<{ site_id: string; expires_at: number }>(
    'SELECT site_id, expires_at FROM jot_views WHERE token_hash = ?',
    [tokenHash],
  );
  return r && { siteId: r.site_id, expiresAt: Number(r.expires_at) };
}

/**
 * Deletes view links that ended before `before` (any user's), and a user's links beyond the newest
 * `keep` (so a signed-in browser opening sites in a loop holds a bounded number of rows).
 */
export async function pruneViews(db: Db, userId: string, before: number, keep: number): Promise<void> {
  await db.run('DELETE FROM jot_views WHERE expires_at < ?', [before]);
  const old = await db.all<{ token_hash: string }>(
    'SELECT token_hash FROM jot_views WHERE user_id = ? ORDER BY created_at DESC, token_hash LIMIT 1000 OFFSET ?',
    [userId, keep],
  );
  for (const r of old) await db.run('DELETE FROM jot_views WHERE token_hash = ?', [r.token_hash]);
}
