/**
 * @module host/builtins/browser/live-view
 * Live views: a person, signed in to the portal as the SAME user, watches a browser context's
 * active page and can take control of it — click, type, press keys, scroll — then hand it back.
 * A live view is reached by an unguessable id (its link) and only by its user: the portal asks
 * `lookup(id, userId)` with the signed-in user, and another user's id gets `not-yours`. The link
 * expires when left unused for `liveViewTtlSec` (each frame and input renews it), and ends with its
 * context. While the person holds control the agent's acting tools answer GW_ERR_BROWSER_TAKEN_OVER;
 * control lapses by itself a minute after the person's page stops asking for frames, so an
 * abandoned tab never locks the agent out. Views live in this gateway process (a replica does not
 * know another's: docs/scaling.md).
 */
import { randomBytes } from 'node:crypto';
import { fail } from '../../../contracts/errors.js';
import { FrameSource, type Frame } from './frames.js';
import { normaliseKey } from './keys.js';
import type { UserContext } from './user-context.js';

export type LiveInput =
  | { kind: 'click'; x: number; y: number; button: 'left' | 'right' | 'middle' }
  | { kind: 'key'; key: string }
  | { kind: 'text'; text: string }
  | { kind: 'scroll'; x: number; y: number; dx: number; dy: number };

/**
 * A form the live view's page offers to end the person's part (e.g. "I'm signed in", posted to a
 * connect link's capture step): a portal path, posted with the session's CSRF token.
 */
export interface LiveDone {
  label: string;
  /** a path of this gateway, e.g. "/connect/<id>/capture" */
  action: string;
}

/** How a live session finished: the person handed control back, its context ended, or it expired unused. */
export type LiveEnd = 'handed-back' | 'ended' | 'expired';

export interface LiveSessionInfo {
  id: string;
  /** the portal page a person opens, signed in as the same user */
  url: string;
  /** when the link stops working unless it is used before (ISO 8601) */
  expiresAt: string;
  /** settles the first time the person hands control back, or when the view ends or expires */
  finished: Promise<LiveEnd>;
}

/** One live view, as the portal drives it. */
export interface LiveView {
  readonly purpose: string;
  /** the form that ends the person's part, if the feature that opened the view asked for one */
  readonly done: LiveDone | undefined;
  /** who acts on the page now */
  readonly control: 'agent' | 'person';
  nextFrame(after: number, waitMs: number, signal?: AbortSignal): Promise<Frame | undefined>;
  takeControl(): void;
  handBack(): void;
  /** acts on the page; refused (GW_ERR_BROWSER_TAKEN_OVER's opposite: 409) unless the person holds control */
  input(e: LiveInput): Promise<void>;
}

export type LiveLookup = { ok: true; view: LiveView } | { ok: false; problem: 'unknown' | 'not-yours' | 'ended' };

/** What the portal's live-view routes use. */
export interface LiveViewAccess {
  lookup(id: string, userId: string): LiveLookup;
  /** answers every waiting frame request now (the HTTP server is closing) */
  wakeAll(): void;
}

/** a person's control lapses this long after their last frame or input request, ms */
const CONTROL_LEASE_MS = 60_000;
const SWEEP_MS = 30_000;
/** live views one context keeps; opening one more forgets the oldest */
const VIEWS_PER_CONTEXT = 5;

class LiveSession implements LiveView {
  readonly id = randomBytes(24).toString('base64url');
  expiresAt: number;
  #end: LiveEnd | undefined;
  #finish: (end: LiveEnd) => void = () => undefined;
  readonly finished: Promise<LiveEnd>;

  constructor(
    readonly uc: UserContext,
    readonly purpose: string,
    readonly frames: FrameSource,
    readonly ttlMs: number,
    readonly done: LiveDone | undefined,
  ) {
    this.expiresAt = Date.now() + ttlMs;
    this.finished = new Promise<LiveEnd>((resolve) => (this.#finish = resolve));
  }

  get ended(): boolean {
    return this.#end !== undefined || this.uc.endReason !== undefined;
  }

  get control(): 'agent' | 'person' {
    return this.uc.takenOver ? 'person' : 'agent';
  }

  /** The view was used: its link, its context and the person's control (if held) stay alive. */
  #touch(): void {
    this.expiresAt = Date.now() + this.ttlMs;
    this.uc.touch();
    if (this.uc.takenOver) this.uc.personUntil = Date.now() + CONTROL_LEASE_MS;
  }

  nextFrame(after: number, waitMs: number, signal?: AbortSignal): Promise<Frame | undefined> {
    this.#touch();
    return this.frames.next(after, waitMs, signal);
  }

  takeControl(): void {
    this.uc.personUntil = Date.now() + CONTROL_LEASE_MS;
    this.#touch();
  }

  handBack(): void {
    this.uc.personUntil = 0;
    this.#touch();
    this.#finish('handed-back');
  }

  async input(e: LiveInput): Promise<void> {
    if (!this.uc.takenOver)
      throw fail('GW_ERR_BROWSER_TAKEN_OVER', { message: 'take control first: the agent is driving this browser' });
    this.#touch();
    const page = await this.uc.activePage();
    if (e.kind === 'click') await page.mouse.click(e.x, e.y, { button: e.button });
    else if (e.kind === 'key') await page.keyboard.press(normaliseKey(e.key));
    else if (e.kind === 'text') await page.keyboard.type(e.text);
    else {
      await page.mouse.move(e.x, e.y);
      await page.mouse.wheel(e.dx, e.dy);
    }
  }

  end(how: LiveEnd): void {
    if (this.#end) return;
    this.#end = how;
    this.#finish(how);
  }
}

export class LiveViews implements LiveViewAccess {
  readonly #sessions = new Map<string, LiveSession>();
  readonly #frames = new WeakMap<UserContext, FrameSource>();
  readonly #publicUrl: string;
  readonly #ttlMs: number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(publicUrl: string, ttlSec: number) {
    this.#publicUrl = publicUrl.replace(/\/+$/, '');
    this.#ttlMs = ttlSec * 1000;
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_MS).unref();
  }

  /** A new live view of `uc`'s active page (with a form that ends the person's part, if `done`). */
  open(uc: UserContext, purpose: string, done?: LiveDone): LiveSessionInfo {
    // only a path of this gateway: the page posts the person's session token to it
    if (done && !/^\/(?![/\\])[^\s]*$/.test(done.action))
      throw fail('GW_ERR_INTERNAL_INVARIANT', { message: "a live view's done action must be a path of this gateway" });
    let frames = this.#frames.get(uc);
    if (!frames) {
      const source = new FrameSource(uc);
      frames = source;
      this.#frames.set(uc, source);
      // its views stay known (as ended) until they would have expired: the link then says "ended", not "unknown"
      uc.onEnd(() => {
        for (const s of this.#sessions.values()) if (s.uc === uc) this.#end(s, 'ended');
        void source.stop();
      });
    }
    const mine = [...this.#sessions.values()].filter((s) => s.uc === uc);
    for (const old of mine.slice(0, Math.max(0, mine.length - VIEWS_PER_CONTEXT + 1))) this.#drop(old);
    const session = new LiveSession(uc, purpose, frames, this.#ttlMs, done);
    this.#sessions.set(session.id, session);
    return {
      id: session.id,
      url: `${this.#publicUrl}/browser/live/${session.id}`,
      expiresAt: new Date(session.expiresAt).toISOString(),
      finished: session.finished,
    };
  }

  lookup(id: string, userId: string): LiveLookup {
    const s = this.#sessions.get(id);
    if (!s) return { ok: false, problem: 'unknown' };
    if (s.uc.userId !== userId) return { ok: false, problem: 'not-yours' };
    if (s.expiresAt < Date.now()) this.#end(s, 'expired');
    return s.ended ? { ok: false, problem: 'ended' } : { ok: true, view: s };
  }

  wakeAll(): void {
    for (const s of this.#sessions.values()) s.frames.wakeAll();
  }

  #end(s: LiveSession, how: LiveEnd): void {
    s.end(how);
    s.frames.wakeAll();
  }

  #drop(s: LiveSession): void {
    this.#sessions.delete(s.id);
    this.#end(s, 'ended');
  }

  /** Forgets the views past their expiry (ended ones included). */
  #sweep(): void {
    const now = Date.now();
    for (const s of [...this.#sessions.values()])
      if (s.expiresAt < now) {
        this.#end(s, 'expired');
        this.#drop(s);
      }
  }

  close(): void {
    clearInterval(this.#sweeper);
    for (const s of [...this.#sessions.values()]) this.#drop(s);
  }
}
