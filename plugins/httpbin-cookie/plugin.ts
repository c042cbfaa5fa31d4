/**
 * @module plugins/httpbin-cookie/plugin
 * A demonstration of cookie connections (auth type `cookie`): the connection is the session a
 * person signed in to in a live browser, and the gateway sends its cookies, as one Cookie header,
 * to httpbin.org only. The tools ask httpbin.org what it received, which shows the session reach
 * the site while its values never reach the plugin (they come back redacted). httpbin.org has no
 * accounts: opening its sign-in page here sets a demonstration cookie; against a real site the
 * sign-in page is its login form.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import { getCookies, getHeaders, setCookie } from './src/tools.js';

export default definePlugin({
  name: 'httpbin-cookie',
  version: '1.0.0',
  displayName: 'httpbin (cookie demo)',
  description:
    "A demonstration of connections made by signing in: shows what httpbin.org receives with the user's signed-in session (request headers, cookies) and asks it to set a cookie. The session's cookie values are never shown.",
  auth: {
    type: 'cookie',
    loginUrl: 'https://httpbin.org/cookies/set?workbench_demo=signed-in',
    domains: ['httpbin.org'],
    instructions:
      'httpbin.org has no accounts: its sign-in page here sets a demonstration cookie (workbench_demo), and every cookie httpbin.org sets while you browse it in the live browser is captured too.',
  },
  egress: ['httpbin.org'],
  tools: {
    httpbin_cookie_get_headers: getHeaders,
    httpbin_cookie_get_cookies: getCookies,
    httpbin_cookie_set_cookie: setCookie,
  },
});
