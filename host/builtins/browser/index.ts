/**
 * @module host/builtins/browser
 * The browser built-in's public entry: `createBrowser` (the integration and its service), and the
 * types the portal's live-view routes and other features (cookie connections) use.
 */
export {
  createBrowser,
  type BrowserBuiltin,
  type BrowserCookie,
  type BrowserOptions,
  type BrowserService,
  type OpenLiveSession,
} from './service.js';
export type {
  LiveDone,
  LiveEnd,
  LiveInput,
  LiveLookup,
  LiveSessionInfo,
  LiveView,
  LiveViewAccess,
} from './live-view.js';
export { cookieSignIn } from './cookie-sign-in.js';
export type { Frame } from './frames.js';
export { normaliseKey } from './keys.js';
