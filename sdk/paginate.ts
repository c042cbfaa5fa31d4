/**
 * @module sdk/paginate
 * Reading several pages within a call's budget. A tool that gathers more than one page must stop
 * before the gateway refuses its next request (ctx.limits.requestsLeft()) and hand back where it
 * stopped, so the agent can go on with a second call instead of losing what was read.
 */
import type { HttpHeaders, PluginContext } from '../contracts/plugin-api.js';

/** One page: its items and where the next one starts (null on the last page). */
export interface Page<T, C = string> {
  items: T[];
  next: C | null;
}

export interface CollectOptions {
  /** stop once this many items are held (the result is cut to it) */
  limit: number;
  /** read at most this many pages (default 10) */
  maxPages?: number;
  /** requests to keep for the tool's own later calls (default 0) */
  reserve?: number;
}

/** What several pages gave: the items, where to go on (null when all were read), and why it stopped. */
export interface Collected<T, C = string> {
  items: T[];
  next: C | null;
  /** 'done' (no more pages), 'limit' (enough items), 'pages' (maxPages read), 'budget' (requests left ran out) */
  stopped: 'done' | 'limit' | 'pages' | 'budget';
}

/**
 * Reads pages from `start` (null: the first page) until `limit` items, the last page, `maxPages`
 * pages or the call's request budget. Items past `limit` on the last page read are dropped, and
 * `next` then still points after that page: a cursor cannot start in the middle of one.
 */
export async function collectPages<T, C = string>(
  ctx: PluginContext,
  start: C | null,
  fetchPage: (cursor: C | null) => Promise<Page<T, C>>,
  options: CollectOptions,
): Promise<Collected<T, C>> {
  const maxPages = options.maxPages ?? 10;
  const reserve = options.reserve ?? 0;
  const items: T[] = [];
  let cursor = start;
  for (let pages = 0; ; pages++) {
    if (pages >= maxPages) return { items, next: cursor, stopped: 'pages' };
    if (pages > 0 && ctx.limits.requestsLeft() <= reserve) return { items, next: cursor, stopped: 'budget' };
    const page = await fetchPage(cursor);
    items.push(...page.items);
    cursor = page.next;
    if (items.length >= options.limit) return { items: items.slice(0, options.limit), next: cursor, stopped: 'limit' };
    if (cursor === null) return { items, next: null, stopped: 'done' };
  }
}

/** The rel="next" URL of an RFC 8288 Link header (GitHub, GitLab), or null. */
export function linkNext(headers: HttpHeaders | null | undefined, rel = 'next'): string | null {
  const link = headers?.get('link');
  if (!link) return null;
  for (const part of link.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!m) continue;
    const rels = /\brel\s*=\s*"?([^";]+)"?/i.exec(m[2] ?? '');
    if (rels && rels[1]!.split(/\s+/).includes(rel)) return m[1]!;
  }
  return null;
}

/** The query parameters of a URL (a next link), without needing the URL class the sandbox lacks. */
export function queryOf(url: string): Record<string, string> {
  const at = url.indexOf('?');
  const out: Record<string, string> = {};
  if (at < 0) return out;
  for (const [k, v] of new URLSearchParams(url.slice(at + 1).split('#')[0] ?? '')) out[k] = v;
  return out;
}

/** The next offset for offset/limit APIs: null once a page came back short or the total is reached. */
export function nextOffset(offset: number, pageSize: number, received: number, total?: number): number | null {
  const next = offset + received;
  if (received < pageSize) return null;
  if (total !== undefined && next >= total) return null;
  return next;
}
