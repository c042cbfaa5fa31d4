/**
 * @module host/builtins/browser/cookie-sign-in
 * The browser's side of cookie connections (the seam host/portal/cookie-browser.ts): a connect
 * link's sign-in page opened in a live view, in a browser context of the link's own
 * (`connect:<linkId>`: it starts empty and is never the agent's, so the agent's browsing is not
 * captured and the capture's session is not the agent's); the live page offers "I'm signed in",
 * the link's capture form; then that context's cookies, and its end once they are captured. A
 * second "Sign in" on the same link finds the live view still open instead of starting over.
 */
import type { CookieSignInBrowser } from '../../portal/cookie-browser.js';
import type { LiveSessionInfo } from './live-view.js';
import type { BrowserService } from './service.js';

const spaceOf = (linkId: string): string => `connect:${linkId}`;
const pathOf = (url: string): string => new URL(url).pathname;

export function cookieSignIn(browser: BrowserService): CookieSignInBrowser {
  /** the live view open for each link, by link id */
  const open = new Map<string, { userId: string; live: LiveSessionInfo }>();
  const stillOpen = (linkId: string, userId: string): LiveSessionInfo | undefined => {
    const known = open.get(linkId);
    if (known && known.userId === userId && browser.liveViews.lookup(known.live.id, userId).ok) return known.live;
    open.delete(linkId);
    return undefined;
  };
  return {
    async openSignIn({ userId, linkId, integration, url }) {
      // forget the views of links abandoned meanwhile
      for (const [id, known] of open) stillOpen(id, known.userId);
      const known = stillOpen(linkId, userId);
      if (known) return { liveViewPath: pathOf(known.url) };
      const live = await browser.openLiveSession({
        userId,
        url,
        purpose: `sign in to ${integration}`,
        context: spaceOf(linkId),
        done: { label: "I'm signed in", action: `/connect/${encodeURIComponent(linkId)}/capture` },
      });
      open.set(linkId, { userId, live });
      return { liveViewPath: pathOf(live.url) };
    },
    readCookies: ({ userId, linkId }) => browser.cookies({ userId, context: spaceOf(linkId) }),
    async closeSignIn({ userId, linkId }) {
      open.delete(linkId);
      await browser.closeContext(userId, spaceOf(linkId));
    },
  };
}
