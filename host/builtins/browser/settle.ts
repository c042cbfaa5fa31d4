/**
 * @module host/builtins/browser/settle
 * Waiting for what an action started: a click on a link or a pressed Enter sends the page to a new
 * document a moment AFTER the action returns, so "wait for the load state" right away would answer
 * for the old document. `acting` watches the page's main frame while the action runs and a short
 * while after; when a navigation began there, it waits for that document's load (or the request's
 * failure), within the navigation timeout. A page that did not navigate costs the short while only.
 */
import type { Page, Request as PwRequest } from 'playwright-core';

/** how long after an action a navigation it caused may still begin, ms */
const START_WINDOW_MS = 150;

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Runs `action` on `page`, then waits for the load of any document it navigated the page to. */
export async function acting(page: Page, navigationTimeoutMs: number, action: () => Promise<void>): Promise<void> {
  let started: PwRequest | undefined;
  let done = false;
  let wake: () => void = () => undefined;
  const onRequest = (r: PwRequest): void => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) {
      started = r;
      done = false;
    }
  };
  const onDone = (): void => {
    if (!started) return;
    done = true;
    wake();
  };
  const onFailed = (r: PwRequest): void => {
    if (r === started) onDone();
  };
  const onClose = (): void => {
    done = true;
    wake();
  };
  page.on('request', onRequest);
  page.on('load', onDone);
  page.on('requestfailed', onFailed);
  page.on('close', onClose);
  try {
    await action();
    await delay(START_WINDOW_MS);
    if (started && !done && !page.isClosed())
      await Promise.race([new Promise<void>((resolve) => (wake = resolve)), delay(navigationTimeoutMs)]);
  } finally {
    page.off('request', onRequest);
    page.off('load', onDone);
    page.off('requestfailed', onFailed);
    page.off('close', onClose);
  }
}
