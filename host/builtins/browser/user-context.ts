/**
 * @module host/builtins/browser/user-context
 * One user's browser context: its own cookies, storage, cache and renderer processes (Chromium
 * never shares them between contexts), its own SOCKS proxy (every connection judged by the
 * address rules, refusals recorded here so the call that met one can name it), a route check on
 * every request, service workers blocked and downloads off. It holds at most `maxPagesPerContext`
 * pages: a pop-up past that is closed at once. Tools act on its active page (the newest open
 * one). Calls run one at a time, in order; each ends early, with the reason's catalogue error,
 * when the context ends (closed, idle, crashed browser, memory). A call stopped at its deadline
 * whose page still does not answer a moment later loses that page (a page busy in an endless
 * script would otherwise hold every later call of the user).
 */
import type { BrowserContext, Page, Route, Request as PwRequest } from 'playwright-core';
import { fail, type WorkbenchError } from '../../../contracts/errors.js';
import type { BrowserPolicy } from '../../policy/browser-policy.js';
import type { AddressGuard, Refusal } from './address-guard.js';
import type { RunningBrowser } from './browser-process.js';
import { startAddressProxy, type AddressProxy } from './socks-proxy.js';

export type EndReason = 'closed' | 'idle' | 'crashed' | 'memory' | 'shutdown';

export const VIEWPORT = { width: 1280, height: 720 };

/** How long after a call's deadline its page may still be busy before it is closed, ms. */
const UNRESPONSIVE_GRACE_MS = 2_000;
const REFUSALS_KEPT = 20;
const noop = (): void => undefined;

export interface UserContextOptions {
  userId: string;
  space: string;
  running: RunningBrowser;
  guard: AddressGuard;
  policy: BrowserPolicy;
}

export class UserContext {
  readonly userId: string;
  readonly space: string;
  readonly running: RunningBrowser;
  readonly context: BrowserContext;
  readonly #proxy: AddressProxy;
  readonly #policy: BrowserPolicy;
  lastUsed = Date.now();
  /** pop-ups closed for the page limit since the context opened */
  popupsClosed = 0;
  /** a person holds control in the live view until then (ms); acting tools are refused meanwhile */
  personUntil = 0;
  readonly #refusals: Refusal[] = [];
  readonly #pages: Page[] = [];
  readonly #crashed = new WeakSet<Page>();
  readonly #endListeners: ((reason: EndReason) => void)[] = [];
  #endReason: EndReason | undefined;
  #rejectEnded: (err: WorkbenchError) => void = noop;
  /** rejects with the end's catalogue error once the context ends (raced against every call) */
  readonly ended: Promise<never>;
  #queue: Promise<void> = Promise.resolve();
  #busy = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  #onIdle: () => void = noop;

  private constructor(o: UserContextOptions, context: BrowserContext, proxy: AddressProxy) {
    this.userId = o.userId;
    this.space = o.space;
    this.running = o.running;
    this.context = context;
    this.#proxy = proxy;
    this.#policy = o.policy;
    this.ended = new Promise<never>((_, reject) => (this.#rejectEnded = reject));
    this.ended.catch(noop);
  }

  /** Opens a context in the running browser, with its proxy, route check and page watch. */
  static async open(o: UserContextOptions): Promise<UserContext> {
    // the proxy starts first (the context is made with its address) and reports to the context once it exists
    const made: { uc?: UserContext } = {};
    const proxy = await startAddressProxy({
      target: (host, port) => o.guard.target(host, port),
      onRefused: (r) => made.uc?.recordRefusal(r),
      connectTimeoutMs: o.policy.navigationTimeoutMs,
    });
    let context: BrowserContext | undefined;
    try {
      context = await o.running.browser.newContext({
        proxy: { server: proxy.server },
        serviceWorkers: 'block',
        acceptDownloads: false,
        viewport: VIEWPORT,
        locale: 'en-US',
      });
      const uc = new UserContext(o, context, proxy);
      made.uc = uc;
      context.setDefaultNavigationTimeout(o.policy.navigationTimeoutMs);
      context.setDefaultTimeout(o.policy.actionTimeoutMs);
      context.on('page', (page) => uc.#adopt(page));
      await context.route('**/*', (route, request) => uc.#check(route, request, o.guard));
      await context.newPage();
      return uc;
    } catch (err) {
      // half made (the browser went away meanwhile): nothing of it may stay open
      await context?.close().catch(noop);
      await proxy.close();
      throw err;
    }
  }

  /** The route check: a request to a refused address never leaves the browser. */
  async #check(route: Route, request: PwRequest, guard: AddressGuard): Promise<void> {
    const refusal = await guard.refusal(request.url());
    if (refusal) {
      this.recordRefusal(refusal);
      await route.abort('blockedbyclient').catch(noop);
    } else await route.continue().catch(noop);
  }

  #adopt(page: Page): void {
    if (this.#pages.filter((p) => !p.isClosed()).length >= this.#policy.maxPagesPerContext) {
      this.popupsClosed++;
      void page.close().catch(noop);
      return;
    }
    this.#pages.push(page);
    page.once('close', () => {
      const i = this.#pages.indexOf(page);
      if (i !== -1) this.#pages.splice(i, 1);
    });
    page.once('crash', () => this.#crashed.add(page));
  }

  recordRefusal(r: Refusal): void {
    this.#refusals.push(r);
    if (this.#refusals.length > REFUSALS_KEPT) this.#refusals.shift();
  }

  /** addresses refused since `since` (ms), oldest first */
  refusalsSince(since: number): Refusal[] {
    return this.#refusals.filter((r) => r.at >= since);
  }

  isCrashed(page: Page): boolean {
    return this.#crashed.has(page);
  }

  /** The page tools act on: the newest open one; a crashed one is closed, and a blank page opened when none is left. */
  async activePage(): Promise<Page> {
    for (let i = this.#pages.length - 1; i >= 0; i--) {
      const page = this.#pages[i] as Page;
      if (page.isClosed()) continue;
      if (!this.#crashed.has(page)) return page;
      await page.close().catch(noop);
    }
    return this.context.newPage();
  }

  /**
   * A new page in place of `page`, which shows Chromium's error page: a navigation from an error
   * page may be restarted by Chromium in another process mid-way, which Playwright reports as the
   * navigation "interrupted by another navigation" to the same URL.
   */
  async replaceErrorPage(page: Page): Promise<Page> {
    if (!page.url().startsWith('chrome-error:')) return page;
    // closed first: at the page limit a new page would be refused as a pop-up
    await page.close().catch(noop);
    return this.context.newPage();
  }

  get endReason(): EndReason | undefined {
    return this.#endReason;
  }

  /** Whether a person holds control in the live view now. */
  get takenOver(): boolean {
    return this.personUntil > Date.now();
  }

  onEnd(listener: (reason: EndReason) => void): void {
    this.#endListeners.push(listener);
  }

  /** Runs `fn` after the calls before it, touched; ends early with the context's end or the signal. */
  run<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    if (this.#endReason) return Promise.reject(endError(this.#endReason));
    let settled = false;
    const work = this.#queue.then(async () => {
      signal.throwIfAborted();
      this.#busy++;
      this.touch();
      try {
        return await fn();
      } finally {
        this.#busy--;
        this.touch();
      }
    });
    // the next call waits for this one, unless its page stopped answering and was given up
    let giveUp: () => void = noop;
    const givenUp = new Promise<void>((resolve) => (giveUp = resolve));
    this.#queue = Promise.race([work.then(noop, noop), givenUp]).finally(() => (settled = true));
    const onAbort = (): void => {
      setTimeout(() => {
        if (settled) return;
        this.#abandonActivePage();
        giveUp();
      }, UNRESPONSIVE_GRACE_MS).unref();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    return Promise.race([work, this.ended, aborted(signal)]);
  }

  /** The active page stopped answering (an endless script): later calls get a new page; it closes when it can. */
  #abandonActivePage(): void {
    const page = this.#pages.at(-1);
    if (!page || page.isClosed()) return;
    this.#crashed.add(page);
    void page.close({ runBeforeUnload: false }).catch(noop);
  }

  /** Marks the context used now (calls, the live view): its idle timeout starts again. */
  touch(): void {
    this.lastUsed = Date.now();
    this.#idleTimer?.refresh();
  }

  /** Calls `onIdle` once the context was left alone for idleTimeoutSec (not while a call runs). */
  watchIdle(onIdle: () => void): void {
    this.#onIdle = onIdle;
    this.#idleTimer = setTimeout(() => this.#idleCheck(), this.#policy.idleTimeoutSec * 1000).unref();
  }

  #idleCheck(): void {
    if (this.#busy > 0 || this.takenOver) this.#idleTimer?.refresh();
    else this.#onIdle();
  }

  /** Ends the context: calls in flight get the reason's error, then its pages, cookies and proxy go. */
  async close(reason: EndReason): Promise<void> {
    if (this.#endReason) return;
    this.#endReason = reason;
    clearTimeout(this.#idleTimer);
    this.#rejectEnded(endError(reason));
    for (const l of this.#endListeners) l(reason);
    if (!this.running.isGone) await this.context.close().catch(noop);
    await this.#proxy.close();
  }
}

/** The catalogue error a call in flight gets when its context ends for `reason`. */
export function endError(reason: EndReason): WorkbenchError {
  switch (reason) {
    case 'crashed':
      return fail('GW_ERR_BROWSER_CRASHED', {
        message:
          'the browser process died while this call ran; its pages and cookies are gone. Retry: the next call starts a new browser',
      });
    case 'memory':
      return fail('GW_ERR_BROWSER_MEMORY_LIMIT', {
        message:
          "the browser went over its memory limit (builtins.browser.maxMemoryMb), and this user's context was closed to free memory (the least recently used go first); retry in a minute (it starts empty)",
      });
    case 'shutdown':
      return fail('GW_ERR_BROWSER_CLOSED', { message: 'the browser was closed: the gateway is shutting down' });
    default:
      return fail('GW_ERR_BROWSER_CLOSED', {
        message: `the browser context was closed while this call ran (${reason === 'idle' ? 'its idle timeout' : 'browser_close'}); the next call opens a new, empty one`,
      });
  }
}

/** Rejects with the signal's reason once it aborts (never settles otherwise). */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}
