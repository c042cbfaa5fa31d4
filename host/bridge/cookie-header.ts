/**
 * @module host/bridge/cookie-header
 * The Cookie header a cookie connection adds to one request, built as a browser builds it
 * (RFC 6265 §5.4): of the stored cookies, those whose domain matches the request's host (§5.1.3),
 * whose path is a prefix of the request's path (§5.1.4), that are secure only over https, and
 * that have not expired; longer paths first. Whether the request's host may get cookies at all
 * (within the manifest's domains, on the origin of the plugin's own request) is decided by the
 * inject-credential step before it asks for the header.
 *
 * A stored cookie's `domain` is written as browsers report it (and playwright's BrowserContext
 * cookies() returns it): with a leading dot for a domain cookie, which also goes to the hosts
 * inside it, without one for a host-only cookie, which goes to that host alone.
 */

/** One stored cookie: playwright's cookie shape, which a browser context's capture returns. */
export interface StoredCookie {
  name: string;
  value: string;
  /** ".example.com" (that domain and the hosts inside it) or "example.com" (that host only) */
  domain: string;
  /** "/" or a path the request's path must start with */
  path: string;
  /** when it expires, in seconds since the epoch; -1 for a session cookie, which does not expire here */
  expires: number;
  secure: boolean;
  httpOnly: boolean;
  sameSite: 'Strict' | 'Lax' | 'None';
}

/** The host a cookie belongs to, without the leading dot of a domain cookie. */
export function cookieHost(cookie: Pick<StoredCookie, 'domain'>): string {
  return cookie.domain.replace(/^\./, '');
}

/** §5.1.3: a domain cookie matches its domain and the hosts inside it; a host-only cookie its host alone. */
export function domainMatches(host: string, cookie: Pick<StoredCookie, 'domain'>): boolean {
  const domain = cookieHost(cookie);
  if (host === domain) return true;
  return cookie.domain.startsWith('.') && host.endsWith(`.${domain}`);
}

/** §5.1.4: the cookie's path is the request's path, or a prefix of it that ends at a "/". */
export function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

/** Whether the cookie has expired at `nowMs` (a session cookie never does). */
export function isExpired(cookie: Pick<StoredCookie, 'expires'>, nowMs: number): boolean {
  return cookie.expires >= 0 && cookie.expires * 1000 <= nowMs;
}

/** The cookies of `cookies` a browser would send with a request for `url` at `nowMs`, in the order it sends them. */
export function cookiesFor(cookies: readonly StoredCookie[], url: URL, nowMs: number): StoredCookie[] {
  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  const path = url.pathname === '' ? '/' : url.pathname;
  const secure = url.protocol === 'https:';
  return cookies
    .filter((c) => domainMatches(host, c) && pathMatches(path, c.path) && (secure || !c.secure) && !isExpired(c, nowMs))
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.path.length - a.c.path.length || a.i - b.i)
    .map(({ c }) => c);
}

/** The Cookie header value for a request for `url`, or undefined when no stored cookie goes with it. */
export function cookieHeaderFor(cookies: readonly StoredCookie[], url: URL, nowMs: number): string | undefined {
  const sent = cookiesFor(cookies, url, nowMs);
  return sent.length === 0 ? undefined : sent.map((c) => `${c.name}=${c.value}`).join('; ');
}
