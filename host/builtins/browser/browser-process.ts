/**
 * @module host/builtins/browser/browser-process
 * The one Chromium of the gateway, supervised: launched on first use (a gateway whose agents never
 * browse never starts it), shared by every user through their own contexts (user-context.ts), and
 * replaced when it dies. When the process goes away without being asked (a crash, a kill, the OOM
 * killer), `onGone` is told at once, so the calls in flight fail with GW_ERR_BROWSER_CRASHED, and
 * the next call launches a new browser. A launch that fails is not remembered: the next call tries
 * again (an operator may have installed Chromium meanwhile).
 */
import type { Browser } from 'playwright-core';
import { fail } from '../../../contracts/errors.js';
import type { Logger } from '../../telemetry/logger.js';
import { launchChromium, type ChromiumSettings } from './launch.js';
import { startAddressProxy, type AddressProxy } from './socks-proxy.js';

/** One launched browser; a new one is a new object. */
export interface RunningBrowser {
  browser: Browser;
  pid: number;
  /** resolves once this browser is gone, with whether it died on its own */
  gone: Promise<{ crashed: boolean }>;
  readonly isGone: boolean;
}

export class BrowserProcess {
  readonly #settings: ChromiumSettings;
  readonly #logger: Logger;
  readonly #onGone: (running: RunningBrowser, crashed: boolean) => void;
  #current: RunningBrowser | undefined;
  #launching: Promise<RunningBrowser> | undefined;
  /** the browser-wide proxy: refuses everything (each context has its own, with the address rules) */
  #denyAll: AddressProxy | undefined;
  #closing = false;
  #lastFailureLog = 0;
  /** browsers closed on purpose (recycled for memory, the gateway closing): not crashes */
  readonly #asked = new WeakSet<RunningBrowser>();

  constructor(settings: ChromiumSettings, logger: Logger, onGone: (running: RunningBrowser, crashed: boolean) => void) {
    this.#settings = settings;
    this.#logger = logger;
    this.#onGone = onGone;
  }

  /** the process id of the browser running now */
  get pid(): number | undefined {
    return this.#current && !this.#current.isGone ? this.#current.pid : undefined;
  }

  get current(): RunningBrowser | undefined {
    return this.#current && !this.#current.isGone ? this.#current : undefined;
  }

  /** The running browser, launched first when there is none. */
  async get(): Promise<RunningBrowser> {
    const current = this.current;
    if (current) return current;
    if (this.#closing)
      throw fail('GW_ERR_BROWSER_UNAVAILABLE', {
        message: 'the browser is not available: the gateway is shutting down',
      });
    this.#launching ??= this.#launch().finally(() => {
      this.#launching = undefined;
    });
    return this.#launching;
  }

  async #launch(): Promise<RunningBrowser> {
    this.#denyAll ??= await startAddressProxy({
      target: async () => ({ kind: 'refused', range: 'outside any context' }),
      onRefused: () => undefined,
      connectTimeoutMs: 1,
    });
    const started = Date.now();
    const { browser, pid } = await launchChromium(this.#settings, this.#denyAll.server).catch((err: unknown) => {
      // each call tries again: say why once a minute, not once a call
      if (Date.now() - this.#lastFailureLog > 60_000) {
        this.#lastFailureLog = Date.now();
        this.#logger.warn(
          { err },
          'browser: Chromium cannot start; the browser tools answer GW_ERR_BROWSER_UNAVAILABLE',
        );
      }
      throw err;
    });
    let resolveGone: (v: { crashed: boolean }) => void = () => undefined;
    let gone = false;
    const running: RunningBrowser = {
      browser,
      pid,
      gone: new Promise((resolve) => (resolveGone = resolve)),
      get isGone() {
        return gone;
      },
    };
    browser.once('disconnected', () => {
      gone = true;
      const crashed = !this.#closing && !this.#asked.has(running);
      if (crashed) this.#logger.warn({ pid }, 'browser: Chromium exited unexpectedly; the next call starts a new one');
      resolveGone({ crashed });
      this.#onGone(running, crashed);
    });
    this.#current = running;
    this.#logger.info({ pid, ms: Date.now() - started }, 'browser: Chromium started');
    return running;
  }

  /** Closes the running browser on purpose (its contexts are told it is gone, not crashed). */
  async recycle(): Promise<void> {
    const current = this.current;
    if (!current) return;
    this.#asked.add(current);
    await current.browser.close().catch(() => undefined);
    await current.gone;
  }

  async close(): Promise<void> {
    this.#closing = true;
    await this.#launching?.catch(() => undefined);
    await this.recycle();
    await this.#denyAll?.close();
  }
}
