/**
 * @module host/builtins/browser/manifest
 * The browser built-in's manifest: nine tools an agent drives one headless browser with, each
 * user in a context of their own. The schemas are what the engine validates (defaults applied)
 * before a handler runs; the descriptions are what the model reads.
 */
import type { PluginManifest } from '../../../contracts/manifest.js';
import { MAX_PRESSES } from './keys.js';

const selector = {
  type: 'string',
  minLength: 1,
  maxLength: 1000,
  description:
    'A CSS selector ("#submit", "form input[name=q]"), or Playwright\'s "text=Sign in" / "role=button[name=\\"Go\\"]"; the first match is used',
};

const obj = (properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
});

export const BROWSER_MANIFEST: PluginManifest = {
  name: 'browser',
  version: '1.0.0',
  displayName: 'Browser',
  description:
    'A headless web browser the agent drives: open pages, look at them (screenshots, readable text), click, type, press keys and scroll. Each user has a private browser context (cookies stay between calls until browser_close or the idle timeout). A person can watch and take over the same page from a link (browser_live_url), e.g. to sign in or pass a captcha. Only public web addresses are reachable.',
  auth: { type: 'none' },
  egress: [],
  tools: [
    {
      name: 'browser_navigate',
      description:
        "Opens an http(s) URL in the user's browser and waits for the page to load. Returns the final URL (after redirects), the page title and the HTTP status; `blocked` lists sub-requests refused for their address.",
      inputSchema: obj(
        { url: { type: 'string', minLength: 1, maxLength: 8000, description: 'an http:// or https:// URL' } },
        ['url'],
      ),
      annotations: { openWorldHint: true },
    },
    {
      name: 'browser_screenshot',
      description:
        'A picture of the current page (the visible part, the whole page, or one element), returned as an image. It is scaled down to maxWidth and, if needed, further to fit the result limit: `scale` says image pixels per page pixel, so divide image coordinates by it for browser_click x/y.',
      inputSchema: obj({
        format: { type: 'string', enum: ['jpeg', 'png'], default: 'jpeg' },
        quality: { type: 'integer', minimum: 1, maximum: 100, default: 70, description: 'JPEG quality' },
        fullPage: { type: 'boolean', default: false, description: 'the whole scrollable page, not only the viewport' },
        selector: { ...selector, description: `only this element. ${selector.description}` },
        maxWidth: { type: 'integer', minimum: 100, maximum: 4096, default: 1280, description: 'widest image, pixels' },
      }),
      annotations: { readOnlyHint: true },
    },
    {
      name: 'browser_click',
      description:
        'Clicks an element (by selector) or a point (x, y in page pixels of the viewport, as in an unscaled screenshot), then waits for any page load it started. Give either selector or x and y.',
      inputSchema: obj({
        selector,
        x: { type: 'number', minimum: 0, maximum: 100000 },
        y: { type: 'number', minimum: 0, maximum: 100000 },
        button: { type: 'string', enum: ['left', 'right', 'middle'], default: 'left' },
        clickCount: { type: 'integer', minimum: 1, maximum: 3, default: 1, description: '2 for a double click' },
      }),
    },
    {
      name: 'browser_type',
      description:
        'Types text as key presses: into the element matching selector (focused first; with clear, its content is replaced), or into whatever has focus. Use browser_key for Enter, Tab and shortcuts.',
      inputSchema: obj(
        {
          text: { type: 'string', minLength: 1, maxLength: 10000 },
          selector,
          clear: { type: 'boolean', default: false, description: "empty the element's content first" },
        },
        ['text'],
      ),
    },
    {
      name: 'browser_key',
      description:
        'Presses keys: one name or combination ("Enter", "Tab", "Escape", "ArrowDown", "PageDown", "ctrl+a", "Shift+Tab", "Meta+k"), or several separated by spaces ("Tab Tab Enter"), then waits for any page load they started.',
      inputSchema: obj({ keys: { type: 'string', minLength: 1, maxLength: MAX_PRESSES * 24 } }, ['keys']),
    },
    {
      name: 'browser_scroll',
      description:
        'Scrolls the page (under the middle of the viewport) by an amount of pixels. Returns the new scroll position.',
      inputSchema: obj(
        {
          direction: { type: 'string', enum: ['up', 'down', 'left', 'right'] },
          amount: { type: 'integer', minimum: 1, maximum: 100000, default: 600, description: 'pixels' },
        },
        ['direction'],
      ),
    },
    {
      name: 'browser_read_text',
      description:
        "The page's readable text (what a person sees: no HTML, no scripts, whitespace collapsed), of the whole page or of one element, cut at maxChars with truncated: true. Also gives the URL and title.",
      inputSchema: obj({
        maxChars: { type: 'integer', minimum: 100, maximum: 1000000, default: 20000 },
        selector,
      }),
      annotations: { readOnlyHint: true },
    },
    {
      name: 'browser_close',
      description:
        "Closes the user's browser context: its pages, cookies and storage are gone. The next browser call starts afresh.",
      inputSchema: obj({}),
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    {
      name: 'browser_live_url',
      description:
        "A link for the user (a person signed in to this gateway as the same user) to watch the browser's page live and take control of it — to sign in, pass a captcha or show the agent something — then hand it back. While they hold control, acting tools answer GW_ERR_BROWSER_TAKEN_OVER. Give the link to the user; it expires unless used (expiresAt).",
      inputSchema: obj({}),
      annotations: { readOnlyHint: true },
    },
  ],
};
