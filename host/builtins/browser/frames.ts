/**
 * @module host/builtins/browser/frames
 * The pictures a live view shows: Chromium's screencast of the context's active page (CDP
 * Page.startScreencast: a JPEG each time the page changes, nothing while it does not), kept as the
 * latest frame with a sequence number. A viewer asks for the frame after the one it has and waits
 * (long poll) until there is one. The screencast runs only while someone watches: it starts on the
 * first request, follows the active page when it changes (a pop-up), and stops once nobody asked
 * for a while.
 */
import type { CDPSession, Page } from 'playwright-core';
import type { UserContext } from './user-context.js';

export interface Frame {
  seq: number;
  jpeg: Buffer;
  /** the page's viewport, CSS pixels (input coordinates are in these) */
  width: number;
  height: number;
}

/** no viewer request for this long stops the screencast, ms */
const IDLE_STOP_MS = 15_000;
const QUALITY = 70;

interface ScreencastFrame {
  data: string;
  sessionId: number;
  metadata: { deviceWidth: number; deviceHeight: number };
}

export class FrameSource {
  readonly #uc: UserContext;
  #latest: Frame | undefined;
  #seq = 0;
  #waiters = new Set<() => void>();
  #page: Page | undefined;
  #cdp: CDPSession | undefined;
  #starting: Promise<void> | undefined;
  #lastWanted = 0;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(uc: UserContext) {
    this.#uc = uc;
  }

  /** The first frame after `after`, waiting up to `waitMs` for it; undefined when none came. */
  async next(after: number, waitMs: number, signal?: AbortSignal): Promise<Frame | undefined> {
    this.#lastWanted = Date.now();
    this.#idleTimer ??= setInterval(() => {
      if (Date.now() - this.#lastWanted > IDLE_STOP_MS) void this.stop();
    }, IDLE_STOP_MS).unref();
    await this.#follow();
    if (this.#latest && this.#latest.seq > after) return this.#latest;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      signal?.addEventListener('abort', done, { once: true });
      this.#waiters.add(done);
    });
    return this.#latest && this.#latest.seq > after ? this.#latest : undefined;
  }

  /** Wakes every waiting viewer (the context ended, the gateway closes). */
  wakeAll(): void {
    for (const w of [...this.#waiters]) w();
  }

  /** Starts the screencast on the active page, or moves it there when the active page changed. */
  async #follow(): Promise<void> {
    if (this.#uc.endReason) return;
    const page = await this.#uc.activePage().catch(() => undefined);
    if (!page || page === this.#page) return this.#starting;
    const previous = this.#cdp;
    this.#cdp = undefined;
    this.#page = page;
    this.#starting = this.#start(page, previous);
    return this.#starting;
  }

  async #start(page: Page, previous: CDPSession | undefined): Promise<void> {
    if (previous) await previous.detach().catch(() => undefined);
    const cdp = await page
      .context()
      .newCDPSession(page)
      .catch(() => undefined);
    // the page closed meanwhile: the next request follows the page active then
    if (!cdp || this.#page !== page) {
      if (this.#page === page) this.#page = undefined;
      return void (await cdp?.detach().catch(() => undefined));
    }
    this.#cdp = cdp;
    cdp.on('Page.screencastFrame', (f: ScreencastFrame) => {
      void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => undefined);
      this.#publish(Buffer.from(f.data, 'base64'), f.metadata.deviceWidth, f.metadata.deviceHeight);
    });
    const size = page.viewportSize() ?? { width: 1280, height: 720 };
    // a frame at once: the screencast sends one only when the page next paints
    const first = (await cdp
      .send('Page.captureScreenshot', { format: 'jpeg', quality: QUALITY })
      .catch(() => undefined)) as { data: string } | undefined;
    if (first) this.#publish(Buffer.from(first.data, 'base64'), size.width, size.height);
    await cdp
      .send('Page.startScreencast', { format: 'jpeg', quality: QUALITY, maxWidth: size.width, maxHeight: size.height })
      .catch(() => undefined);
  }

  #publish(jpeg: Buffer, width: number, height: number): void {
    this.#latest = { seq: ++this.#seq, jpeg, width: Math.round(width), height: Math.round(height) };
    for (const w of [...this.#waiters]) w();
  }

  async #detach(): Promise<void> {
    const cdp = this.#cdp;
    this.#cdp = undefined;
    this.#page = undefined;
    if (cdp) await cdp.detach().catch(() => undefined);
  }

  async stop(): Promise<void> {
    clearInterval(this.#idleTimer);
    this.#idleTimer = undefined;
    this.wakeAll();
    await this.#detach();
  }
}
