/**
 * @module host/connections/cookie-capture
 * Turning a browser session's cookies into a cookie connection's credential. Each cookie is read
 * in playwright's shape (what a browser context's cookies() returns, and what
 * `connections import --cookies` takes); a cookie of an upstream target the policy maps is taken
 * as a cookie of the host it stands for; only the unexpired cookies within the manifest's
 * `domains` are kept, and the capture counts as signed in only when the `signedInCheck` cookies
 * are among them. The connection's expiry is when the cookies it needs expire.
 */
import * as z from 'zod';
import { withinDomains, type CookieAuth } from '../../contracts/manifest.js';
import { cookieHost, isExpired, type StoredCookie } from '../bridge/index.js';
import { ConnectionError } from './errors.js';

/** Cookies one capture or import may hand in, and keep. */
export const MAX_COOKIES_GIVEN = 1000;
export const MAX_COOKIES_KEPT = 200;
const MAX_VALUE_CHARS = 4096;

/** A name a Cookie header can carry: printable ASCII but space, ";" and "=". */
const NAME = /^[\x21-\x3a\x3c\x3e-\x7e]{1,256}$/;
/** A value a Cookie header can carry: printable ASCII and space, but ";". */
const VALUE = /^[\x20-\x3a\x3c-\x7e]*$/;

const cookieSchema = z.object({
  name: z.string({ error: 'required: the cookie name' }).min(1, 'must not be empty'),
  value: z.string({ error: 'required: the cookie value (a string)' }),
  domain: z.string({ error: 'required: the host the cookie belongs to, e.g. ".example.com" or "example.com"' }).min(1),
  path: z.string().startsWith('/', 'must start with "/"').max(1024).default('/'),
  expires: z
    .number({ error: 'must be a number: seconds since the epoch, or -1 for a session cookie' })
    .refine(Number.isFinite, 'must be a finite number of seconds since the epoch (or -1)')
    .default(-1),
  httpOnly: z.boolean().default(false),
  secure: z.boolean().default(false),
  sameSite: z.enum(['Strict', 'Lax', 'None']).default('Lax'),
});

/** A cookie left out of a capture, and why. */
export interface DroppedCookie {
  name: string;
  domain: string;
  reason: string;
}

export interface CookieSelection {
  kept: StoredCookie[];
  dropped: DroppedCookie[];
}

export interface SelectOptions {
  nowMs: number;
  /**
   * the policy's upstream targets, by host name, with the hosts they stand for: a live browser
   * sent to a mapped login page gets the target's cookies, which are the mapped host's
   */
  mappedHosts?: ReadonlyMap<string, readonly string[]>;
}

/** The hosts each upstream target (by host name) stands for, from the policy's `upstreams`. */
export function mappedHostsOf(upstreams: Readonly<Record<string, string>>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [from, to] of Object.entries(upstreams)) {
    const target = new URL(to).hostname.toLowerCase();
    out.set(target, [...(out.get(target) ?? []), new URL(from).hostname.toLowerCase()]);
  }
  return out;
}

/**
 * The cookies of `input` (a JSON array of cookies) to keep for a connection of `auth`, and those
 * left out with the reason. Throws ConnectionError(GW_ERR_CONNECTION_INVALID_INPUT) naming each
 * cookie that is not a cookie at all (a missing name, a value that is not a string, …).
 */
export function selectCookies(auth: CookieAuth, input: unknown, options: SelectOptions): CookieSelection {
  const given = parseCookies(input);
  const byKey = new Map<string, StoredCookie>();
  const dropped: DroppedCookie[] = [];
  for (const raw of given) {
    const cookie = asDeclaredHost(auth, { ...raw, domain: raw.domain.toLowerCase() }, options.mappedHosts);
    const reason = whyDropped(auth, cookie, options.nowMs);
    if (reason !== undefined) dropped.push({ name: cookie.name.slice(0, 100), domain: cookie.domain, reason });
    // a later cookie of the same name, domain and path replaces an earlier one, as in a browser
    else byKey.set(`${cookie.name}\0${cookie.domain}\0${cookie.path}`, cookie);
  }
  const kept = [...byKey.values()];
  if (kept.length > MAX_COOKIES_KEPT)
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      `${kept.length} cookies are within ${auth.domains.join(', ')}, more than the ${MAX_COOKIES_KEPT} a connection may hold`,
      { cookies: `at most ${MAX_COOKIES_KEPT}` },
    );
  return { kept, dropped };
}

function parseCookies(input: unknown): StoredCookie[] {
  if (!Array.isArray(input))
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      'cookies must be a JSON array of cookies ({name, value, domain, path, expires, httpOnly, secure, sameSite})',
      { cookies: 'must be an array' },
    );
  if (input.length > MAX_COOKIES_GIVEN)
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      `${input.length} cookies given, more than ${MAX_COOKIES_GIVEN}`,
      { cookies: `at most ${MAX_COOKIES_GIVEN}` },
    );
  const problems: Record<string, string> = {};
  const out: StoredCookie[] = [];
  input.forEach((item: unknown, i) => {
    const parsed = cookieSchema.safeParse(item);
    if (parsed.success) out.push({ ...parsed.data, expires: parsed.data.expires < 0 ? -1 : parsed.data.expires });
    else
      for (const issue of parsed.error.issues) {
        const at = `cookies[${i}]${issue.path.length ? `.${issue.path.map(String).join('.')}` : ''}`;
        problems[at] ??= typeof item === 'object' && item !== null ? issue.message : 'must be an object';
      }
  });
  const entries = Object.entries(problems);
  if (entries.length > 0)
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      entries
        .slice(0, 10)
        .map(([at, m]) => `${at}: ${m}`)
        .join('; ') + (entries.length > 10 ? `; and ${entries.length - 10} more` : ''),
      problems,
    );
  return out;
}

/**
 * A cookie of an upstream target (a loopback provider standing for the real one) as a host-only
 * cookie of the declared host the target stands for; the login page's host first when several do.
 */
function asDeclaredHost(
  auth: CookieAuth,
  cookie: StoredCookie,
  mappedHosts: ReadonlyMap<string, readonly string[]> | undefined,
): StoredCookie {
  const sources = mappedHosts?.get(cookieHost(cookie))?.filter((h) => withinDomains(h, auth.domains)) ?? [];
  if (sources.length === 0) return cookie;
  const loginHost = new URL(auth.loginUrl).hostname.toLowerCase();
  return { ...cookie, domain: sources.includes(loginHost) ? loginHost : (sources[0] as string) };
}

function whyDropped(auth: CookieAuth, cookie: StoredCookie, nowMs: number): string | undefined {
  if (!withinDomains(cookieHost(cookie), auth.domains)) return `not within ${auth.domains.join(', ')}`;
  if (!NAME.test(cookie.name)) return 'its name has characters a Cookie header cannot carry';
  if (cookie.value.length > MAX_VALUE_CHARS) return `its value is longer than ${MAX_VALUE_CHARS} characters`;
  if (!VALUE.test(cookie.value)) return 'its value has characters a Cookie header cannot carry';
  if (isExpired(cookie, nowMs)) return 'expired';
  return undefined;
}

/**
 * Why the kept cookies do not make a signed-in session, or undefined when they do: none at all,
 * or a cookie of `signedInCheck` missing.
 */
export function notSignedIn(auth: CookieAuth, kept: readonly StoredCookie[]): string | undefined {
  if (kept.length === 0)
    return `no unexpired cookie of ${auth.domains.join(', ')} was captured: sign in at ${auth.loginUrl} first`;
  const missing = (auth.signedInCheck?.cookies ?? []).filter((name) => !kept.some((c) => c.name === name));
  if (missing.length > 0)
    return `not signed in yet: the cookie${missing.length > 1 ? 's' : ''} ${missing.map((n) => `"${n}"`).join(', ')} of ${auth.domains.join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing; sign in at ${auth.loginUrl} first`;
  return undefined;
}

/**
 * When the session ends (epoch ms), or null when it does not (session cookies): when the last of
 * the cookies expires, or, with `signedInCheck`, when the first of its cookies does (a name set on
 * several paths or domains lasts as long as its longest-lived cookie).
 */
export function sessionExpiresAt(auth: CookieAuth, cookies: readonly StoredCookie[]): number | null {
  const lifetime = (cs: readonly StoredCookie[]): number =>
    Math.max(...cs.map((c) => (c.expires < 0 ? Infinity : c.expires * 1000)));
  const needed = auth.signedInCheck?.cookies;
  const end = needed
    ? Math.min(...needed.map((name) => lifetime(cookies.filter((c) => c.name === name))))
    : lifetime(cookies);
  if (end === -Infinity) return 0; // no cookie to go on: ended (notSignedIn refuses such a capture first)
  return Number.isFinite(end) ? Math.floor(end) : null;
}
