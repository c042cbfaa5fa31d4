/**
 * @module host/portal/security-headers
 * Headers on every portal response: a strict CSP (same-origin only, no inline script, no framing),
 * X-Frame-Options, nosniff, a referrer policy that keeps link ids off other sites, no caching of
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
