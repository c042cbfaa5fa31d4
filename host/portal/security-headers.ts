/**
 * @module host/portal/security-headers
 * Headers on every portal response: a strict CSP (same-origin only, no script but the live browser
 * view's own, on its page; no framing), X-Frame-Options, nosniff, a referrer policy that keeps link ids off other sites, no caching of
 * pages that show private data, and HSTS when the public URL is https.
 */

/**
 * Forms submit to this origin only, on every page: the OAuth2 "Continue" form is answered with a
 * page that goes on to the provider by itself (see connect-routes.ts), so no page needs to let a
 * form lead elsewhere. One page adds one origin: the consent page of the authorization server
 * (consent-routes.ts), whose answer redirects to the client's redirect URI, an exact URI the client
 * registered and the page names; `formAction` is that URI's origin.
 */
export function contentSecurityPolicy(formAction: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    ["form-action 'self'", ...formAction].join(' '),
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The live browser view's page (browser-routes.ts), the one portal page with a script: the same
 * policy, but scripts from this origin (no inline script, nothing from elsewhere) and frames shown
 * through blob: URLs the script makes from the images it fetched here.
 */
export function liveViewContentSecurityPolicy(): string {
  return contentSecurityPolicy()
    .replace("script-src 'none'", "script-src 'self'")
    .replace("img-src 'self' data:", "img-src 'self' blob:");
}

export function securityHeaders(secure: boolean, formAction: readonly string[] = []): Record<string, string> {
  const h: Record<string, string> = {
    'content-security-policy': contentSecurityPolicy(formAction),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    // same-origin: our own form posts keep a real Origin header; other sites never see a link id.
    'referrer-policy': 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
    'cache-control': 'no-store',
  };
  if (secure) h['strict-transport-security'] = 'max-age=31536000; includeSubDomains';
  return h;
}
