/**
 * @module host/policy/browser-policy
 * The policy's `builtins.browser` section: whether the browser built-in serves, and its limits
 * (host/builtins/browser, docs/builtins.md "Browser"). Every key may be left out; the default is
 * written next to it. The call's own deadline and result limit are the integration's
 * `plugins.browser.limits` (`wallMsPerCall`, `maxResultBytes`), as for any integration.
 */
import * as z from 'zod';
import { parseCidrs } from '../bridge/index.js';

const isCidr = (c: string): boolean => {
  try {
    parseCidrs([c]);
    return true;
  } catch {
    return false;
  }
};

export const browserPolicySchema = z
  .object({
    /** serve the browser tools (when Chromium is found; see docs/operations.md) */
    enabled: z.boolean().default(true),
    /** browser contexts open at once, all users together (default 20); past it a new user's call is refused */
    maxContexts: z.number().int().min(1).max(1000).default(20),
    /** contexts one user may hold at once: the agent's, and those other features open (a sign-in capture) (default 3) */
    maxContextsPerUser: z.number().int().min(1).max(20).default(3),
    /** pages (tabs and pop-ups) open in one context; a pop-up past it is closed at once (default 4) */
    maxPagesPerContext: z.number().int().min(1).max(50).default(4),
    /** a context no call or live view used for this long is closed, its cookies and pages with it, seconds (default 300) */
    idleTimeoutSec: z.number().int().min(1).max(86_400).default(300),
    /** one navigation (browser_navigate, and the load a click or key starts), ms (default 20000) */
    navigationTimeoutMs: z.number().int().min(100).max(600_000).default(20_000),
    /** how long an action waits for its element (a selector) to appear, ms (default 5000) */
    actionTimeoutMs: z.number().int().min(50).max(120_000).default(5_000),
    /**
     * memory of all the browser's processes together (proportional set size, read from /proc), MiB
     * (default 2048): past it the least recently used contexts are closed, and new ones refused
     */
    maxMemoryMb: z.number().int().min(64).max(1_048_576).default(2048),
    /** JavaScript heap of one page's renderer, MiB (default 512): a page past it crashes alone */
    maxPageHeapMb: z.number().int().min(16).max(16_384).default(512),
    /** how long a live-view link (browser_live_url) stays valid without being used, seconds (default 600) */
    liveViewTtlSec: z.number().int().min(10).max(86_400).default(600),
    /**
     * CIDRs (or single addresses) the browser may reach although private, loopback or link-local
     * (default none): an intranet's range, e.g. "10.20.0.0/16". Separate from http.allowPrivateCidrs:
     * what an agent may browse and what plugins may call are different decisions.
     */
    allowPrivateCidrs: z
      .array(
        z
          .string()
          .min(1)
          .refine((c) => isCidr(c), 'must be an IP address or CIDR range, e.g. "10.0.0.0/8"'),
      )
      .default([]),
  })
  .strict();

export type BrowserPolicy = z.infer<typeof browserPolicySchema>;
