/**
 * @module host/builtins/jots/service
 * The rules of jots, shared by the tools (handlers.ts) and the routes that serve the sites
 * (host/transport/jots-routes.ts): a site belongs to one user and is found only by that user
 * (another user's id is "not found", never "forbidden"); a deploy or an update is one transaction
 * under the user's row lock (host/storage/users.ts lockUserRow), checked against every quota
 * before it commits, so that two calls at once, on one server or two replicas, cannot pass a quota
 * together and a refusal leaves nothing behind; a share token and a view token are random 256-bit
 * values shown once and stored as SHA-256 hashes.
 */
import { randomBytes } from 'node:crypto';
import { fail } from '../../../contracts/errors.js';
import type { JotsPolicy } from '../../policy/jots-policy.js';
import type { Db } from '../../storage/db.js';
import { hashSecret, lockUserRow, type User } from '../../storage/users.js';
import { prepareDeletes, prepareFiles, type FileInput } from './prepare-files.js';
import { INDEX_FILE } from './site-paths.js';
import * as store from './store.js';

/** How long a view link opened from a portal session lasts. */
export const VIEW_TTL_MS = 3_600_000;
/** How long an expired view link is remembered (it then sends the browser to sign in again, not to a 404). */
const VIEW_GRACE_MS = 86_400_000;
/** The most view links one user holds; opening more drops the oldest. */
const MAX_VIEWS_PER_USER = 100;
const MAX_TITLE_CHARS = 200;

/** A site id: 96 random bits as hex. */
export const SITE_ID = /^[0-9a-f]{24}$/;
/** A share or view token: 256 random bits, base64url. */
export const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export type Quotas = Omit<JotsPolicy, 'enabled'>;

export interface DeployInput {
  title?: string;
  files: FileInput[];
  /** share it from the start: a share token comes back with the site */
  share?: boolean;
}

export interface UpdateInput {
  id: string;
  title?: string;
  files?: FileInput[];
  delete?: string[];
}

/** What a view token opens: a site (live), the site to sign in to again (expired), or nothing. */
export type ViewLookup = { siteId: string } | { expiredSiteId: string } | undefined;

export class JotService {
  readonly #db: Db;
  readonly quotas: Quotas;
  readonly #now: () => number;

  constructor(db: Db, quotas: Quotas, now: () => number = Date.now) {
    this.#db = db;
    this.quotas = quotas;
    this.#now = now;
  }

  /** A new site of the user's, with its files (and its share token, when asked); refused whole when a rule or quota says no. */
  async deploy(user: User, input: DeployInput): Promise<{ site: store.SiteRow; shareToken?: string }> {
    const title = checkTitle(input.title ?? '');
    const files = prepareFiles(input.files, this.quotas);
    if (!files.some((f) => f.path === INDEX_FILE)) throw noIndex('the files have none');
    const bytes = files.reduce((n, f) => n + f.bytes, 0);
    this.#checkSiteBytes(bytes);
    return this.#db.transaction(async (tx) => {
      await lockUserRow(tx, user.id);
      const used = await store.usageOf(tx, user.id);
      if (used.sites >= this.quotas.maxSitesPerUser)
        throw fail(
          'GW_ERR_JOTS_QUOTA_SITES',
          {
            message: `this user already has ${used.sites} sites, the most allowed (${this.quotas.maxSitesPerUser}); delete one with jots_delete first`,
          },
          { details: { limit: this.quotas.maxSitesPerUser, used: used.sites } },
        );
      this.#checkUserBytes(used.bytes, bytes);
      const now = this.#now();
      const shareToken = input.share ? newToken() : undefined;
      const site: store.SiteRow = {
        id: randomBytes(12).toString('hex'),
        ownerId: user.id,
        tenant: user.tenant,
        title,
        shared: shareToken !== undefined,
        fileCount: files.length,
        bytes,
        createdAt: now,
        updatedAt: now,
      };
      await store.insertSite(tx, site, shareToken === undefined ? null : hashSecret(shareToken));
      for (const f of files) await store.putFile(tx, site.id, f, now);
      return shareToken === undefined ? { site } : { site, shareToken };
    });
  }

  /**
   * Writes `files` over the site's (a path sent replaces the file there, others stay) and deletes
   * `delete`, atomically: the result is checked whole (index.html kept, every quota) before it
   * commits. Counts of what was written and deleted come back with the site.
   */
  async update(user: User, input: UpdateInput): Promise<{ site: store.SiteRow; written: number; deleted: number }> {
    const title = input.title === undefined ? undefined : checkTitle(input.title);
    const files = prepareFiles(input.files ?? [], this.quotas);
    const deletes = prepareDeletes(input.delete ?? [], files);
    return this.#db.transaction(async (tx) => {
      await lockUserRow(tx, user.id);
      const site = await this.#ownSite(tx, user, input.id);
      const sizes = new Map((await store.fileMetas(tx, site.id)).map((f) => [f.path, f.bytes]));
      for (const path of deletes) {
        if (!sizes.delete(path))
          throw fail(
            'GW_ERR_JOTS_FILE_NOT_FOUND',
            { message: `site ${site.id} has no file "${path}" to delete; jots_list_files lists its files` },
            { details: { path } },
          );
      }
      for (const f of files) sizes.set(f.path, f.bytes);
      if (!sizes.has(INDEX_FILE)) throw noIndex('the update would delete it');
      if (sizes.size > this.quotas.maxFilesPerSite)
        throw fail(
          'GW_ERR_JOTS_QUOTA_FILES',
          {
            message: `the site would hold ${sizes.size} files; a site may hold at most ${this.quotas.maxFilesPerSite}`,
          },
          { details: { limit: this.quotas.maxFilesPerSite, requested: sizes.size } },
        );
      const bytes = [...sizes.values()].reduce((n, b) => n + b, 0);
      this.#checkSiteBytes(bytes);
      this.#checkUserBytes((await store.usageOf(tx, user.id)).bytes - site.bytes, bytes);
      const now = this.#now();
      for (const path of deletes) await store.deleteFile(tx, site.id, path);
      for (const f of files) await store.putFile(tx, site.id, f, now);
      const next = { title: title ?? site.title, fileCount: sizes.size, bytes, updatedAt: now };
      await store.updateSite(tx, site.id, next);
      return { site: { ...site, ...next }, written: files.length, deleted: deletes.length };
    });
  }

  async list(user: User): Promise<{ sites: store.SiteRow[]; bytes: number }> {
    const sites = await store.sitesOf(this.#db, user.id);
    return { sites, bytes: sites.reduce((n, s) => n + s.bytes, 0) };
  }

  async listFiles(user: User, id: string): Promise<{ site: store.SiteRow; files: store.FileMeta[] }> {
    const site = await this.#ownSite(this.#db, user, id);
    return { site, files: await store.fileMetas(this.#db, site.id) };
  }

  async remove(user: User, id: string): Promise<void> {
    if (!SITE_ID.test(id) || !(await store.deleteSite(this.#db, id, user.id))) throw notFound(id);
  }

  /**
   * Turns sharing on (a new token, returned once; an earlier link stops working) or off (undefined
   * is returned, and the link stops working at once, on every replica).
   */
  async share(user: User, id: string, enabled: boolean): Promise<string | undefined> {
    const token = enabled ? newToken() : undefined;
    const hash = token === undefined ? null : hashSecret(token);
    if (!SITE_ID.test(id) || !(await store.setShare(this.#db, id, user.id, hash, this.#now()))) throw notFound(id);
    return token;
  }

  // ---- serving (host/transport/jots-routes.ts): lookups that answer "nothing" rather than throw

  /** The site `id` when `userId` owns it. */
  async ownedSite(userId: string, id: string): Promise<string | undefined> {
    if (!SITE_ID.test(id)) return undefined;
    return (await this.#db.get<{ id: string }>('SELECT id FROM jot_sites WHERE id = ? AND owner_id = ?', [id, userId]))
      ?.id;
  }

  /** The site a share token opens. */
  async sharedSite(token: string): Promise<string | undefined> {
    return TOKEN.test(token) ? store.siteByShare(this.#db, hashSecret(token)) : undefined;
  }

  /** A new view link (its token) for the owner's browser, or undefined when `userId` does not own the site. */
  async openView(userId: string, id: string): Promise<string | undefined> {
    const siteId = await this.ownedSite(userId, id);
    if (!siteId) return undefined;
    const token = newToken();
    const now = this.#now();
    await this.#db.transaction(async (tx) => {
      await store.pruneViews(tx, userId, now - VIEW_GRACE_MS, MAX_VIEWS_PER_USER - 1);
      await store.insertView(tx, {
        tokenHash: hashSecret(token),
        siteId,
        userId,
        createdAt: now,
        expiresAt: now + VIEW_TTL_MS,
      });
    });
    return token;
  }

  async viewedSite(token: string): Promise<ViewLookup> {
    if (!TOKEN.test(token)) return undefined;
    const view = await store.viewByHash(this.#db, hashSecret(token));
    if (!view) return undefined;
    return view.expiresAt > this.#now() ? { siteId: view.siteId } : { expiredSiteId: view.siteId };
  }

  readFile(siteId: string, path: string): Promise<store.ServedFile | undefined> {
    return store.readFile(this.#db, siteId, path);
  }

  hasFile(siteId: string, path: string): Promise<boolean> {
    return store.hasFile(this.#db, siteId, path);
  }

  async #ownSite(db: Db, user: User, id: string): Promise<store.SiteRow> {
    const site = SITE_ID.test(id) ? await store.siteOf(db, id, user.id) : undefined;
    if (!site) throw notFound(id);
    return site;
  }

  #checkSiteBytes(bytes: number): void {
    if (bytes > this.quotas.maxSiteBytes)
      throw fail(
        'GW_ERR_JOTS_QUOTA_SITE_BYTES',
        {
          message: `the site's files would add up to ${bytes} bytes; a site may hold at most ${this.quotas.maxSiteBytes}`,
        },
        { details: { limit: this.quotas.maxSiteBytes, requested: bytes } },
      );
  }

  /** `others`: the bytes of the user's other sites; `bytes`: this site's, as it would be. */
  #checkUserBytes(others: number, bytes: number): void {
    if (others + bytes > this.quotas.maxBytesPerUser)
      throw fail(
        'GW_ERR_JOTS_QUOTA_USER_BYTES',
        {
          message: `this user's sites would add up to ${others + bytes} bytes; at most ${this.quotas.maxBytesPerUser} are allowed (delete or shrink a site first)`,
        },
        { details: { limit: this.quotas.maxBytesPerUser, used: others, requested: bytes } },
      );
  }
}

/** A share or view token: 256 random bits. */
const newToken = (): string => randomBytes(32).toString('base64url');

function notFound(id: string): Error {
  return fail('GW_ERR_JOTS_NOT_FOUND', {
    message: `no site "${id.slice(0, 64)}" of yours; jots_list shows your sites`,
  });
}

function noIndex(why: string): Error {
  return fail('GW_ERR_JOTS_NO_INDEX', {
    message: `a site must have an ${INDEX_FILE} at its root (its address serves it): ${why}`,
  });
}

function checkTitle(title: string): string {
  if (title.length > MAX_TITLE_CHARS || /[\u0000-\u001f\u007f-\u009f]/.test(title))
    throw fail('GW_ERR_VALIDATION_INVALID_ARGS', {
      message: `title: at most ${MAX_TITLE_CHARS} characters, without control characters`,
    });
  return title;
}
