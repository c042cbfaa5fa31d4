/**
 * @module host/portal/cookies
 * Just enough cookie handling for the portal: read one cookie from the Cookie header, and serialise a Set-Cookie
 * value with explicit attributes (HttpOnly, SameSite, Secure, Path, Max-Age). Values are limited
 * to URL-safe characters, so nothing needs quoting.
 */
import { fail } from '../../contracts/errors.js';

export interface CookieOptions {
  maxAgeSec?: number;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'Lax' | 'Strict';
  path?: string;
}

const NAME = /^[A-Za-z0-9_-]+$/;
const VALUE = /^[A-Za-z0-9_.~-]*$/;

/**
 * The value of cookie `name` when the request carries it exactly once; undefined when it carries
 * none or several. For the cookies that say who the browser is (the session, the pre-login CSRF
 * token): a page on a sibling host or another port of this host can plant a second one with a more
 * specific Path, which the browser sends first, and so choose the session a request runs in (an
 * OAuth callback then files the victim's account under the attacker's user). Without the `__Host-`
 * prefix (deployments on http) nothing else stops it.
 */
export function onlyCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let found: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0 || part.slice(0, eq).trim() !== name) continue;
    if (found !== undefined) return undefined;
    found = part.slice(eq + 1).trim();
  }
  return found;
}

/** How many times the Cookie header carries cookie `name`. */
export function cookieCount(header: string | undefined, name: string): number {
  if (!header) return 0;
  let n = 0;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) n++;
  }
  return n;
}

export function serializeCookie(name: string, value: string, o: CookieOptions = {}): string {
  if (!NAME.test(name)) throw fail('GW_ERR_INTERNAL_INVARIANT', { message: `invalid cookie name ${name}` });
  if (!VALUE.test(value)) throw fail('GW_ERR_INTERNAL_INVARIANT', { message: 'invalid cookie value' });
  const parts = [`${name}=${value}`, `Path=${o.path ?? '/'}`];
  if (o.maxAgeSec !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(o.maxAgeSec))}`);
  if (o.httpOnly ?? true) parts.push('HttpOnly');
  if (o.secure) parts.push('Secure');
  parts.push(`SameSite=${o.sameSite ?? 'Lax'}`);
  return parts.join('; ');
}
