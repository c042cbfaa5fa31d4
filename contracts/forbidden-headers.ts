/**
 * @module contracts/forbidden-headers
 * The request headers plugin-authored input may not set: those that carry credentials or steer
 * routing. Used by the bridge (a plugin's ctx.http headers) and by the manifest schema (the
 * credential header a manifest names). Kept apart from the bridge, and free of Node.js, because
 * contracts/manifest.ts needs it and that module is type-checked inside plugin authors' projects
 * (through the SDK's types), where only plain ECMAScript is declared.
 */

const FORBIDDEN = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'keep-alive',
  'expect',
  'via',
  'forwarded',
  'x-real-ip',
  'http2-settings',
  // read by some servers and proxies as the path or the client's address
  'x-original-url',
  'x-rewrite-url',
  'true-client-ip',
  'x-client-ip',
  'x-host',
]);
const FORBIDDEN_PREFIXES = ['proxy-', 'x-forwarded-', 'sec-'];

/**
 * A header that carries credentials or steers routing. Refused from plugin code, and (all but
 * `authorization`) as a manifest's credential header, which is plugin-authored too.
 */
export function isForbiddenHeader(name: string): boolean {
  const n = name.toLowerCase();
  return FORBIDDEN.has(n) || FORBIDDEN_PREFIXES.some((p) => n.startsWith(p));
}
