/**
 * @module host/portal/cookie-browser
 * The seam between the cookie connect pages (cookie-connect.ts) and the browser built-in: what a
 * live browser must do for a person to sign in to a provider and have the session's cookies
 * captured. Its own module so that the portal's context and the pages both name it without
 * importing each other.
 */

/**
 * SEAM for the browser built-in: the live browser a cookie connect link signs in with. The
 * browser side implements it and hands it to the portal as `PortalDeps.cookieBrowser`.
 */
export interface CookieSignInBrowser {
  /**
   * Opens `url` (the manifest's loginUrl, mapped through the policy's `upstreams`) in a live
   * session in the user's browser context, or finds the one already open for this link, and
   * answers the portal path of its live view (e.g. "/browser/live/…"), where the person watches
   * and drives the page. That page offers "I'm signed in": a form post of `_csrf` to
   * `/connect/<linkId>/capture` (or a link back to `/connect/<linkId>`, which has the button).
   */
  openSignIn(input: { userId: string; linkId: string; integration: string; url: string }): Promise<{
    liveViewPath: string;
  }>;
  /** The cookies of the user's browser context (playwright's BrowserContext.cookies(), all of them): what the capture keeps. */
  readCookies(input: { userId: string; linkId: string }): Promise<unknown[]>;
  /** Ends the link's live session once its cookies are captured (a no-op when there is none). */
  closeSignIn(input: { userId: string; linkId: string }): Promise<void>;
}
