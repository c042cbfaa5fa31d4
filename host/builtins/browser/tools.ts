/**
 * @module host/builtins/browser/tools
 * The nine tools' handlers. Each acts on the caller's own context (context-pool.ts, space
 * `agent`), one call at a time per user, on its active page; each failure becomes a
 * GW_ERR_BROWSER_* error (browser-errors.ts). Acting tools (navigate, click, type, key, scroll) are
 * refused while a person holds control in the live view; looking (screenshot, read_text) is not.
 */
import type { Page, Response } from 'playwright-core';
import { fail } from '../../../contracts/errors.js';
import type { BrowserPolicy } from '../../policy/browser-policy.js';
import type { BuiltinCall, BuiltinHandler } from '../types.js';
import { AddressGuard, portOf } from './address-guard.js';
import { addressRefused, browserError, type Step } from './browser-errors.js';
import type { ContextPool } from './context-pool.js';
import { keyPresses } from './keys.js';
import type { LiveViews } from './live-view.js';
import { readText } from './read-text.js';
import { acting } from './settle.js';
import { takeScreenshot, type ScreenshotArgs } from './screenshot.js';
import { VIEWPORT, type UserContext } from './user-context.js';

export interface ToolDeps {
  pool: ContextPool;
  guard: AddressGuard;
  live: LiveViews;
  policy: BrowserPolicy;
  /** the integration's limits.maxResultBytes */
  maxResultBytes: number;
}

type Args = Record<string, unknown>;
type OnPage<T> = (page: Page, uc: UserContext, since: number) => Promise<T>;

/** what the page run of an acting tool must not do while a person holds control */
const TAKEN_OVER = (): Error =>
  fail('GW_ERR_BROWSER_TAKEN_OVER', {
    message:
      'a person has taken control of this browser in the live view; wait until they hand it back (or leave the view), then retry. Screenshots and read_text still work',
  });

/** Runs `fn` on the caller's active page, in turn, with its failures as catalogue errors. */
async function onPage<T>(d: ToolDeps, call: BuiltinCall, step: Step, acts: boolean, fn: OnPage<T>): Promise<T> {
  const uc = await d.pool.acquire(call.user.id);
  return uc.run(call.signal, async () => {
    if (acts && uc.takenOver) throw TAKEN_OVER();
    const since = Date.now();
    let page: Page | undefined;
    try {
      page = await uc.activePage();
      return await fn(page, uc, since);
    } catch (err) {
      throw await browserError(err, uc, step, since, page);
    }
  });
}

/** The title, or '' while the page is between documents. */
const titleOf = (page: Page): Promise<string> => page.title().catch(() => '');

/** After an action: where the (possibly new) active page is now, and the pop-ups the page limit closed. */
async function afterAction(uc: UserContext, d: ToolDeps, popupsBefore: number): Promise<Args> {
  const page = await uc.activePage();
  // a pop-up the action opened is the active page now: wait for its first load
  await page.waitForLoadState('load', { timeout: d.policy.navigationTimeoutMs }).catch(() => undefined);
  const closed = uc.popupsClosed - popupsBefore;
  return {
    ok: true,
    url: page.url(),
    title: await titleOf(page),
    ...(closed > 0
      ? { popupsClosed: closed, note: `pop-ups past the limit of ${d.policy.maxPagesPerContext} pages were closed` }
      : {}),
  };
}

/**
 * page.goto, made robust to Chromium's error pages: a navigation that failed (a refused address)
 * commits "chrome-error://" a moment AFTER page.goto has rejected, and a navigation started in that
 * moment is cut short by it (or by its own restart). So a failed navigation waits for its error
 * page, and one cut short by another is tried again (twice at most).
 */
export async function goto(page: Page, url: string, timeoutMs: number): Promise<Response | null> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await page.goto(url, { waitUntil: 'load', timeout: timeoutMs });
    } catch (err) {
      const text = String((err as Error).message);
      if (/is interrupted by another navigation/.test(text) && attempt < 2) continue;
      if (/net::ERR_/.test(text)) await errorPageShown(page);
      throw err;
    }
  }
}

/** Waits (a second at most) until the page shows Chromium's error page. */
async function errorPageShown(page: Page): Promise<void> {
  for (let waited = 0; waited < 1000 && !page.isClosed() && !page.url().startsWith('chrome-error:'); waited += 25)
    await new Promise((resolve) => setTimeout(resolve, 25));
}

async function navigate(d: ToolDeps, call: BuiltinCall, args: Args): Promise<unknown> {
  const url = AddressGuard.pageUrl(String(args['url']));
  // refused before any context opens; the route check and the proxy judge it (and each hop) again
  const target = await d.guard.target(url.hostname, portOf(url));
  if (target.kind === 'refused') throw addressRefused({ host: url.hostname, range: target.range, at: Date.now() });
  return onPage(d, call, 'navigation', true, async (shown, uc, since) => {
    const page = await uc.replaceErrorPage(shown);
    const response = await goto(page, url.href, d.policy.navigationTimeoutMs);
    const blocked = [
      ...new Map(uc.refusalsSince(since).map((r) => [r.host, { host: r.host, range: r.range }])).values(),
    ];
    return {
      url: page.url(),
      title: await titleOf(page),
      status: response?.status() ?? null,
      ...(blocked.length > 0 ? { blocked } : {}),
    };
  });
}

async function click(d: ToolDeps, call: BuiltinCall, args: Args): Promise<unknown> {
  const selector = args['selector'] as string | undefined;
  const { x, y } = args as { x?: number; y?: number };
  const valid = selector !== undefined ? x === undefined && y === undefined : x !== undefined && y !== undefined;
  if (!valid) throw fail('GW_ERR_VALIDATION_INVALID_ARGS', { message: 'give either selector, or both x and y' });
  const options = {
    button: args['button'] as 'left' | 'right' | 'middle',
    clickCount: Number(args['clickCount'] ?? 1),
  };
  return onPage(d, call, 'action', true, async (page, uc) => {
    const before = uc.popupsClosed;
    await acting(page, d.policy.navigationTimeoutMs, async () => {
      if (selector !== undefined)
        await page
          .locator(selector)
          .first()
          .click({ ...options, timeout: d.policy.actionTimeoutMs });
      else await page.mouse.click(x as number, y as number, options);
    });
    return afterAction(uc, d, before);
  });
}

async function type(d: ToolDeps, call: BuiltinCall, args: Args): Promise<unknown> {
  const selector = args['selector'] as string | undefined;
  return onPage(d, call, 'action', true, async (page) => {
    if (selector !== undefined) {
      const element = page.locator(selector).first();
      if (args['clear'] === true) await element.fill('', { timeout: d.policy.actionTimeoutMs });
      await element.focus({ timeout: d.policy.actionTimeoutMs });
    }
    await page.keyboard.type(String(args['text']));
    return { ok: true, url: page.url(), typed: String(args['text']).length };
  });
}

async function key(d: ToolDeps, call: BuiltinCall, args: Args): Promise<unknown> {
  const presses = keyPresses(String(args['keys']));
  return onPage(d, call, 'action', true, async (page, uc) => {
    const before = uc.popupsClosed;
    await acting(page, d.policy.navigationTimeoutMs, async () => {
      for (const k of presses) await page.keyboard.press(k);
    });
    return { ...(await afterAction(uc, d, before)), pressed: presses };
  });
}

async function scroll(d: ToolDeps, call: BuiltinCall, args: Args): Promise<unknown> {
  const amount = Number(args['amount'] ?? 600);
  const [dx, dy] = ({ up: [0, -amount], down: [0, amount], left: [-amount, 0], right: [amount, 0] } as const)[
    args['direction'] as 'up' | 'down' | 'left' | 'right'
  ];
  return onPage(d, call, 'action', true, async (page) => {
    await page.mouse.move(VIEWPORT.width / 2, VIEWPORT.height / 2);
    await page.mouse.wheel(dx, dy);
    // two frames: the scroll is applied (smooth scrolling is off) and the position reads true
    const at = await page.evaluate<{ x: number; y: number; height: number; width: number }>(SCROLLED_JS);
    return { ok: true, scrollX: at.x, scrollY: at.y, pageWidth: at.width, pageHeight: at.height };
  });
}

// evaluated in the page (as text: the gateway is compiled without the DOM's types)
const SCROLLED_JS = `new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve({
  x: Math.round(window.scrollX), y: Math.round(window.scrollY),
  width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
}))))`;

/** The handlers, by tool name. */
export function browserHandlers(d: ToolDeps): Record<string, BuiltinHandler> {
  return {
    browser_navigate: (call, args) => navigate(d, call, args),
    browser_screenshot: (call, args) =>
      onPage(d, call, 'action', false, (page) =>
        takeScreenshot(page, args as unknown as ScreenshotArgs, d.maxResultBytes, d.policy.actionTimeoutMs),
      ),
    browser_click: (call, args) => click(d, call, args),
    browser_type: (call, args) => type(d, call, args),
    browser_key: (call, args) => key(d, call, args),
    browser_scroll: (call, args) => scroll(d, call, args),
    browser_read_text: (call, args) =>
      onPage(d, call, 'action', false, (page) =>
        readText(page, args as { maxChars: number; selector?: string }, d.maxResultBytes, d.policy.actionTimeoutMs),
      ),
    browser_close: async (call) => ({ ok: true, closed: await d.pool.close(call.user.id) }),
    browser_live_url: async (call) => {
      const uc = await d.pool.acquire(call.user.id);
      const { url, expiresAt } = d.live.open(uc, 'the agent asked for a person');
      return { url, expiresAt, note: 'open it signed in to this gateway as the same user; it expires unless used' };
    },
  };
}
