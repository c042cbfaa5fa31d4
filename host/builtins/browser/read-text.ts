/**
 * @module host/builtins/browser/read-text
 * browser_read_text: what a person reads on the page, not its HTML — the rendered text of the body
 * (or of one element) as `innerText` gives it (hidden elements, scripts and styles left out, line
 * breaks where blocks end), with runs of spaces collapsed, each line trimmed and no more than one
 * blank line in a row, cut at maxChars and within the integration's result limit.
 */
import type { Page } from 'playwright-core';

export interface ReadTextResult {
  url: string;
  title: string;
  text: string;
  truncated: boolean;
  /** characters of the whole text, before any cut */
  chars: number;
}

/** Collapses the whitespace of rendered text: spaces within lines, blank lines between them. */
export function slimText(raw: string): string {
  return raw
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[\s\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// evaluated in the page (as text: the gateway is compiled without the DOM's types); a document
// without a body (XML, SVG) gives its text content
const BODY_TEXT_JS =
  "document.body ? document.body.innerText : (document.documentElement ? document.documentElement.textContent || '' : '')";

/** The rendered text of the page's body, or of the first element matching `selector`. */
async function renderedText(page: Page, selector: string | undefined, actionTimeoutMs: number): Promise<string> {
  if (selector !== undefined) return page.locator(selector).first().innerText({ timeout: actionTimeoutMs });
  return String(await page.evaluate(BODY_TEXT_JS));
}

export async function readText(
  page: Page,
  args: { maxChars: number; selector?: string },
  maxResultBytes: number,
  actionTimeoutMs: number,
): Promise<ReadTextResult> {
  const text = slimText(await renderedText(page, args.selector, actionTimeoutMs));
  let cut = text.slice(0, args.maxChars);
  // a character may take up to 4 bytes (and JSON escapes more): keep the result within its limit
  const room = maxResultBytes - 1024 - Buffer.byteLength(page.url()) * 2;
  while (cut.length > 0 && Buffer.byteLength(JSON.stringify(cut)) > room)
    cut = cut.slice(0, Math.floor(cut.length * 0.8));
  return {
    url: page.url(),
    title: await page.title(),
    text: cut,
    truncated: cut.length < text.length,
    chars: text.length,
  };
}
