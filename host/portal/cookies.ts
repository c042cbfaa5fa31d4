/**
 * @module host/portal/cookies
 * Just enough cookie handling for the portal: parse the Cookie header, and serialise a Set-Cookie
 * value with explicit attributes (HttpOnly, SameSite, Secure, Path, Max-Age). Values are limited
 * to URL-safe characters, so nothing needs quoting.
 */

export interface CookieOptions {
  maxAgeSec?: number;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'Lax' | 'Strict';
  path?: string;
}

const NAME = /^[A-Za-z0-9_-]+$/;
const VALUE = /^[A-Za-z0-9_.~-]*$/;

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    // The first occurrence wins (the most specific path comes first); never overwrite it.
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

export function serializeCookie(name: string, value: string, o: CookieOptions = {}): string {
  if (!NAME.test(name)) throw new TypeError(`invalid cookie name ${name}`);
  if (!VALUE.test(value)) throw new TypeError('invalid cookie value');
  const parts = [`${name}=${value}`, `Path=${o.path ?? '/'}`];
  if (o.maxAgeSec !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(o.maxAgeSec))}`);
  if (o.httpOnly ?? true) parts.push('HttpOnly');
  if (o.secure) parts.push('Secure');
  parts.push(`SameSite=${o.sameSite ?? 'Lax'}`);
  return parts.join('; ');
}
