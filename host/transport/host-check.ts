/**
 * @module host/transport/host-check
 * DNS-rebinding protection for loopback binds: when the server listens on a loopback address, the
 * Host header must name a loopback host (or the public URL's host), and an Origin header, when
 * present, must too. Requests without Origin (non-browser clients) pass.
 */
import { isIPv4 } from 'node:net';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** an IPv4 loopback literal (127.0.0.0/8); not a DNS name that merely starts with "127." */
const isLoopbackV4 = (host: string): boolean => isIPv4(host) && host.startsWith('127.');

export function isLoopbackBind(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || isLoopbackV4(host);
}

function hostnameOf(value: string, withScheme: boolean): string | undefined {
  try {
    return new URL(withScheme ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** `publicUrl` and `otherUrls` (the jots origin, WORKBENCH_JOTS_URL) name the hosts allowed besides loopback ones. */
export function createHostChecker(
  publicUrl: string | undefined,
  otherUrls: readonly string[] = [],
): (host: string | undefined, origin: string | undefined) => string | undefined {
  const allowed = new Set(['localhost', '127.0.0.1', '[::1]']);
  for (const url of [publicUrl, ...otherUrls]) {
    const host = url ? hostnameOf(url, true) : undefined;
    if (host) allowed.add(host);
  }
  return (host, origin) => {
    const h = host ? hostnameOf(host, false) : undefined;
    if (!h || !(allowed.has(h) || isLoopbackV4(h)))
      return `Host header "${host ?? ''}" is not allowed on a loopback bind`;
    if (origin !== undefined && origin !== 'null') {
      const o = hostnameOf(origin, true);
      if (!o || !(allowed.has(o) || isLoopbackV4(o))) return `Origin "${origin}" is not allowed`;
    } else if (origin === 'null') return 'Origin "null" is not allowed';
    return undefined;
  };
}
