/**
 * @module host/transport/jot-headers
 * The headers every answer of the jot routes carries (jots-routes.ts), content or not. The heart of
 * them is the CSP `sandbox` directive: the browser runs a jot page in an opaque origin, so whatever
 * origin serves it, the page's script is not of that origin — it cannot read or write that origin's
 * cookies or storage, its requests carry no SameSite cookie, and the gateway's pages (the portal
 * among them) are cross-origin to it and unreadable. `connect-src 'none'` keeps its script from
 * making requests at all; images, styles and scripts come from the site itself or inline only, so a
 * page cannot fetch from (or leak to) other hosts by loading resources. docs/security.md (Jots)
 * goes through the threat model.
 */

/** The Content-Security-Policy of every jot answer. */
export const JOT_CSP = [
  'sandbox allow-scripts allow-forms',
  "default-src 'self' 'unsafe-inline' data: blob:",
  "connect-src 'none'",
  "form-action 'self'",
  "base-uri 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface JotAnswer {
  /**
   * reached through a capability in its path (a share or view link): its page's own images,
   * styles and scripts are requested from the page's opaque origin, which the browser counts as
   * another origin, so the resource policy must let any origin load it — the token in the path is
   * what guards it, not the requester's origin
   */
  capability: boolean;
  /** a shared site's file: browsers may keep it, revalidating each time (a revoked link ends at once) */
  shared: boolean;
}

export function jotHeaders(answer: JotAnswer): Record<string, string> {
  return {
    'content-security-policy': JOT_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': answer.capability ? 'cross-origin' : 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
    'x-frame-options': 'DENY',
    'x-robots-tag': 'noindex, nofollow, noarchive',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
    'cache-control': answer.shared ? 'private, no-cache' : 'no-store',
  };
}
