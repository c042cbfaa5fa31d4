/**
 * @module host/builtins/browser/screenshot
 * browser_screenshot: the viewport, the whole page or one element, captured by Chromium itself
 * (CDP Page.captureScreenshot, whose clip scale lets Chromium draw it smaller instead of the
 * gateway resizing pixels), as an image block within the integration's result limit. The image is
 * first scaled to maxWidth; while the result would still be too large, JPEG quality steps down to
 * 30, then the scale shrinks to what the budget allows, a few times at most.
 */
import type { Page } from 'playwright-core';
import { fail } from '../../../contracts/errors.js';

export interface ScreenshotArgs {
  format: 'jpeg' | 'png';
  quality: number;
  fullPage: boolean;
  selector?: string;
  maxWidth: number;
}

export interface ScreenshotResult {
  _mcpImage: { data: string; mimeType: string };
  width: number;
  height: number;
  /** image pixels per page (CSS) pixel */
  scale: number;
}

interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Chromium cannot draw a texture taller or wider than this many pixels */
const MAX_SIDE = 16_384;
const ATTEMPTS = 8;
/** the JSON around the base64 data */
const ENVELOPE_BYTES = 512;

interface View {
  x: number;
  y: number;
  width: number;
  height: number;
  fullWidth: number;
  fullHeight: number;
}

// evaluated in the page (as text: the gateway is compiled without the DOM's types)
const SCROLL_JS = '({ x: window.scrollX, y: window.scrollY })';
const VIEW_JS = `({
  x: window.scrollX, y: window.scrollY, width: window.innerWidth, height: window.innerHeight,
  fullWidth: Math.max(document.documentElement.scrollWidth, document.body ? document.body.scrollWidth : 0),
  fullHeight: Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0),
})`;

/** The region to capture, in page (document) coordinates. */
async function regionOf(page: Page, args: ScreenshotArgs, actionTimeoutMs: number): Promise<Clip> {
  const view = await page.evaluate<View>(VIEW_JS);
  if (args.selector !== undefined) {
    const element = page.locator(args.selector).first();
    await element.scrollIntoViewIfNeeded({ timeout: actionTimeoutMs });
    const box = await element.boundingBox({ timeout: actionTimeoutMs });
    const scroll = await page.evaluate<{ x: number; y: number }>(SCROLL_JS);
    if (!box || box.width < 1 || box.height < 1)
      throw fail('GW_ERR_BROWSER_ELEMENT_NOT_FOUND', {
        message: `the element "${args.selector.slice(0, 200)}" is not visible (it has no size on the page)`,
      });
    return { x: box.x + scroll.x, y: box.y + scroll.y, width: box.width, height: box.height };
  }
  if (args.fullPage)
    return { x: 0, y: 0, width: Math.max(1, view.fullWidth), height: Math.max(1, Math.min(view.fullHeight, MAX_SIDE)) };
  return { x: view.x, y: view.y, width: view.width, height: view.height };
}

/** The screenshot as an image block of at most `maxResultBytes` in the result. */
export async function takeScreenshot(
  page: Page,
  args: ScreenshotArgs,
  maxResultBytes: number,
  actionTimeoutMs: number,
): Promise<ScreenshotResult> {
  const clip = await regionOf(page, args, actionTimeoutMs);
  const cdp = await page.context().newCDPSession(page);
  try {
    const budget = maxResultBytes - ENVELOPE_BYTES;
    let scale = Math.min(1, args.maxWidth / clip.width, MAX_SIDE / clip.height);
    let quality = args.quality;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const { data } = await cdp.send('Page.captureScreenshot', {
        format: args.format,
        ...(args.format === 'jpeg' ? { quality } : {}),
        clip: { ...clip, scale },
        captureBeyondViewport: args.fullPage || args.selector !== undefined,
      });
      if (data.length <= budget)
        return {
          _mcpImage: { data, mimeType: `image/${args.format}` },
          width: Math.round(clip.width * scale),
          height: Math.round(clip.height * scale),
          scale: Math.round(scale * 1000) / 1000,
        };
      if (args.format === 'jpeg' && quality > 30) quality = Math.max(30, Math.round(quality * 0.6));
      else scale *= Math.max(0.1, Math.min(0.8, Math.sqrt(budget / data.length) * 0.9));
    }
  } finally {
    await cdp.detach().catch(() => undefined);
  }
  throw fail('GW_ERR_BUILTIN_RESULT_TOO_LARGE', {
    message: `the screenshot does not fit in the result limit (${maxResultBytes} bytes) even scaled down; ask for a smaller region (selector), no fullPage, or JPEG`,
  });
}
