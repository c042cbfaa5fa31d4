/**
 * @module common/normalise-url
 * The one place a URL is parsed for the bridge: WHATWG parsing (which canonicalises numeric and
 * odd IPv4 spellings such as `2130706433` or `0x7f.1` to `127.0.0.1`), then the host is lower-cased
 * and a trailing dot removed, so that every later check compares exactly one spelling.
 */

export function normaliseUrl(input: URL | string): URL {
  const url = new URL(typeof input === 'string' ? input : input.href);
  if (url.hostname.endsWith('.')) url.hostname = url.hostname.replace(/\.+$/, '');
  return url;
}

/** The host as the policy compares it: lower case, no trailing dot, IPv6 without brackets kept as is. */
export function policyHost(url: URL): string {
  return url.hostname.toLowerCase().replace(/\.+$/, '');
}
