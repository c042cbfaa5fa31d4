/**
 * @module host/builtins/browser/service
 * The browser built-in put together: one supervised Chromium (browser-process.ts), a context per
 * user and space (context-pool.ts) under the address rules (address-guard.ts, socks-proxy.ts), a
 * memory watch, live views, and the nine tools. Besides the tools it offers a small service to the
 * rest of the gateway (`BrowserService`): the portal's live-view routes use `liveViews`, and a
 * feature that needs a person to sign in somewhere in a browser (cookie connections) opens a live
 * session on a URL in a context of the user's, waits for the person to hand it back, and reads
 * that context's cookies.
 */
import { fail } from '../../../contracts/errors.js';
import type { Resolver } from '../../bridge/index.js';
import { sandboxLimits } from '../../policy/limits.js';
import type { Policy } from '../../policy/schema.js';
import type { Logger } from '../../telemetry/logger.js';
import type { BuiltinIntegration } from '../types.js';
import { AddressGuard, portOf } from './address-guard.js';
import { addressRefused, browserError } from './browser-errors.js';
import { BrowserProcess } from './browser-process.js';
import { AGENT_SPACE, ContextPool } from './context-pool.js';
import { chromiumSettings } from './launch.js';
import { LiveViews, type LiveDone, type LiveSessionInfo, type LiveViewAccess } from './live-view.js';
import { BROWSER_MANIFEST } from './manifest.js';
import { MemoryWatch } from './memory-watch.js';
import { browserHandlers, goto } from './tools.js';

export interface OpenLiveSession {
  userId: string;
  /** the http(s) page to open first (address rules apply) */
  url: string;
  /** what the person is asked to do, for the logs and the page ("sign in to Example") */
  purpose: string;
  /**
   * the user's context to use: the agent's ("agent", the default) or one of the caller's own
   * (e.g. "connect:example"), which starts empty and is never the agent's
   */
  context?: string;
  /** a form the live view's page offers to end the person's part ("I'm signed in") */
  done?: LiveDone;
  signal?: AbortSignal;
}

/** A cookie as the browser holds it. */
export interface BrowserCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Unix time in seconds; -1 for a session cookie */
  expires: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite: 'Strict' | 'Lax' | 'None';
}

export interface BrowserService {
  /** Opens `url` in the user's context (made if needed) and a live view of it; resolves once the page loaded. */
  openLiveSession(o: OpenLiveSession): Promise<LiveSessionInfo>;
  /**
   * The cookies of the user's context (default the agent's): for `urls`, those a request to one of
   * them would carry; for `domains`, those set for one of them or a subdomain; with neither, all.
   * Empty when the context is not open.
   */
  cookies(o: { userId: string; context?: string; urls?: string[]; domains?: string[] }): Promise<BrowserCookie[]>;
  /** Closes the user's context (default the agent's); false when none was open. */
  closeContext(userId: string, context?: string): Promise<boolean>;
  /** for the portal's live-view routes */
  readonly liveViews: LiveViewAccess;
  /** the browser process's id while one runs */
  readonly pid: number | undefined;
}

export interface BrowserBuiltin {
  integration: BuiltinIntegration;
  service: BrowserService;
}

export interface BrowserOptions {
  policy: Policy;
  /** WORKBENCH_CHROMIUM_PATH, WORKBENCH_CHROMIUM_NO_SANDBOX */
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** the gateway's public origin (live-view links) */
  publicUrl: string;
  /** answers DNS look-ups instead of the system resolver (tests) */
  resolver?: Resolver;
  /** how often the memory watch reads the browser's memory, ms (default 5000; tests) */
  memoryCheckMs?: number;
}

export function createBrowser(o: BrowserOptions): BrowserBuiltin {
  const policy = o.policy.builtins.browser;
  const guard = new AddressGuard(policy.allowPrivateCidrs, o.resolver, Object.values(o.policy.upstreams));
  // the contexts of a browser that went away end with it (called only once both exist)
  const chromium = new BrowserProcess(chromiumSettings(o.env, policy.maxPageHeapMb), o.logger, (running, crashed) =>
    contexts.browserGone(running, crashed),
  );
  const contexts = new ContextPool(chromium, guard, policy, o.logger);
  const memory = new MemoryWatch(chromium, contexts, policy.maxMemoryMb, o.logger);
  memory.start(o.memoryCheckMs);
  const live = new LiveViews(o.publicUrl, policy.liveViewTtlSec);
  const maxResultBytes = sandboxLimits(o.policy, BROWSER_MANIFEST.name).maxResultBytes;

  const service: BrowserService = {
    openLiveSession: (s) => openLiveSession(contexts, guard, live, policy.navigationTimeoutMs, s),
    cookies: async ({ userId, context = AGENT_SPACE, urls, domains }) => {
      const uc = contexts.find(userId, context);
      if (!uc) return [];
      const all = (await uc.context.cookies(urls && urls.length > 0 ? urls : undefined)) as BrowserCookie[];
      if (!domains || domains.length === 0) return all;
      const wanted = domains.map((d) => d.toLowerCase().replace(/^\./, ''));
      return all.filter((c) => {
        const host = c.domain.toLowerCase().replace(/^\./, '');
        return wanted.some((d) => host === d || host.endsWith(`.${d}`));
      });
    },
    closeContext: (userId, context = AGENT_SPACE) => contexts.close(userId, context),
    liveViews: live,
    get pid() {
      return chromium.pid;
    },
  };
  const integration: BuiltinIntegration = {
    manifest: BROWSER_MANIFEST,
    handlers: browserHandlers({ pool: contexts, guard, live, policy, maxResultBytes }),
    async close() {
      memory.stop();
      live.close();
      await contexts.closeAll('shutdown');
      await chromium.close();
    },
  };
  return { integration, service };
}

async function openLiveSession(
  pool: ContextPool,
  guard: AddressGuard,
  live: LiveViews,
  navigationTimeoutMs: number,
  s: OpenLiveSession,
): Promise<LiveSessionInfo> {
  const url = AddressGuard.pageUrl(s.url);
  const target = await guard.target(url.hostname, portOf(url));
  if (target.kind === 'refused') throw addressRefused({ host: url.hostname, range: target.range, at: Date.now() });
  const uc = await pool.acquire(s.userId, s.context ?? AGENT_SPACE);
  await uc.run(s.signal ?? new AbortController().signal, async () => {
    const since = Date.now();
    const page = await uc.replaceErrorPage(await uc.activePage());
    try {
      await goto(page, url.href, navigationTimeoutMs);
    } catch (err) {
      throw await browserError(err, uc, 'navigation', since, page);
    }
  });
  if (uc.endReason) throw fail('GW_ERR_BROWSER_CLOSED', { message: 'the browser context closed as the page opened' });
  return live.open(uc, s.purpose, s.done);
}
