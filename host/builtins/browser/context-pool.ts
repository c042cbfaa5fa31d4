/**
 * @module host/builtins/browser/context-pool
 * Every open browser context, by user and "space": the agent's tools use the space `agent`; other
 * features (a sign-in whose cookies become a connection) open spaces of their own, so a person's
 * sign-in never lands in what the agent browses. A context is never shared between users. The pool
 * enforces the global cap (`maxContexts`) and the per-user one (`maxContextsPerUser`), refuses new
 * contexts while the browser is over its memory limit, closes a context left idle, and ends every
 * context of a browser that died, so that their calls in flight answer GW_ERR_BROWSER_CRASHED.
 */
import { fail } from '../../../contracts/errors.js';
import type { BrowserPolicy } from '../../policy/browser-policy.js';
import type { Logger } from '../../telemetry/logger.js';
import type { AddressGuard } from './address-guard.js';
import type { BrowserProcess, RunningBrowser } from './browser-process.js';
import { UserContext, endError, type EndReason } from './user-context.js';

/** The space the agent's tools browse in. */
export const AGENT_SPACE = 'agent';

const keyOf = (userId: string, space: string): string => `${userId}\u0000${space}`;

export class ContextPool {
  readonly #contexts = new Map<string, UserContext>();
  readonly #opening = new Map<string, Promise<UserContext>>();
  readonly #process: BrowserProcess;
  readonly #guard: AddressGuard;
  readonly #policy: BrowserPolicy;
  readonly #logger: Logger;
  /** whether the browser was over its memory limit at the last look (memory-watch.ts) */
  overMemory = false;

  constructor(process: BrowserProcess, guard: AddressGuard, policy: BrowserPolicy, logger: Logger) {
    this.#process = process;
    this.#guard = guard;
    this.#policy = policy;
    this.#logger = logger;
  }

  get size(): number {
    return this.#contexts.size;
  }

  /** The user's open context in `space`, if any. */
  find(userId: string, space = AGENT_SPACE): UserContext | undefined {
    const uc = this.#contexts.get(keyOf(userId, space));
    return uc && !uc.endReason ? uc : undefined;
  }

  /** The user's context in `space`: the open one, or a new one within the limits. */
  async acquire(userId: string, space = AGENT_SPACE): Promise<UserContext> {
    const key = keyOf(userId, space);
    const open = this.find(userId, space);
    if (open) return open;
    const opening = this.#opening.get(key);
    if (opening) return opening;
    this.#admit(userId);
    const made = this.#open(userId, space).finally(() => this.#opening.delete(key));
    this.#opening.set(key, made);
    return made;
  }

  /** Refuses a new context past the caps or the memory limit. */
  #admit(userId: string): void {
    const all = this.#contexts.size + this.#opening.size;
    if (all >= this.#policy.maxContexts)
      throw fail('GW_ERR_BROWSER_TOO_MANY_CONTEXTS', {
        message: `the browser already holds ${this.#policy.maxContexts} contexts (builtins.browser.maxContexts, all users); retry in a minute, when an idle one has closed`,
      });
    const mine = [...this.#contexts.values()].filter((c) => c.userId === userId).length;
    if (mine >= this.#policy.maxContextsPerUser)
      throw fail('GW_ERR_BROWSER_TOO_MANY_CONTEXTS', {
        message: `this user already holds ${mine} browser contexts (builtins.browser.maxContextsPerUser); close one first`,
      });
    if (this.overMemory)
      throw fail('GW_ERR_BROWSER_MEMORY_LIMIT', {
        message: `the browser is over its memory limit (builtins.browser.maxMemoryMb = ${this.#policy.maxMemoryMb}); no new context opens until idle ones are closed. Retry in a minute`,
      });
  }

  async #open(userId: string, space: string): Promise<UserContext> {
    const running = await this.#process.get();
    const uc = await UserContext.open({ userId, space, running, guard: this.#guard, policy: this.#policy }).catch(
      async (err: unknown) => {
        // the browser went away as the context opened: say why (its exit is told a moment after the failure)
        await Promise.race([running.gone, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
        throw running.isGone ? endError((await running.gone).crashed ? 'crashed' : 'memory') : err;
      },
    );
    if (running.isGone) {
      await uc.close('crashed');
      throw endError((await running.gone).crashed ? 'crashed' : 'memory');
    }
    const key = keyOf(userId, space);
    this.#contexts.set(key, uc);
    uc.onEnd(() => {
      if (this.#contexts.get(key) === uc) this.#contexts.delete(key);
    });
    uc.watchIdle(() => {
      this.#logger.debug({ userId, space }, 'browser: an idle context was closed');
      void uc.close('idle');
    });
    return uc;
  }

  /** Closes the user's context in `space` (browser_close); nothing when none is open. */
  async close(userId: string, space = AGENT_SPACE, reason: EndReason = 'closed'): Promise<boolean> {
    const uc = this.find(userId, space);
    if (!uc) return false;
    await uc.close(reason);
    return true;
  }

  /** The open context used longest ago (the first to go when memory runs short). */
  leastRecentlyUsed(): UserContext | undefined {
    let lru: UserContext | undefined;
    for (const uc of this.#contexts.values()) if (!uc.endReason && (!lru || uc.lastUsed < lru.lastUsed)) lru = uc;
    return lru;
  }

  /** The browser is gone: every context it held ends (crashed, unless it was closed on purpose). */
  browserGone(running: RunningBrowser, crashed: boolean): void {
    for (const uc of [...this.#contexts.values()])
      if (uc.running === running) void uc.close(crashed ? 'crashed' : 'memory');
  }

  async closeAll(reason: EndReason): Promise<void> {
    await Promise.all([...this.#contexts.values()].map((uc) => uc.close(reason)));
  }
}
