/**
 * @module host/wiring/builtins
 * The built-in integrations the gateway serves (host/builtins): each one the policy leaves on
 * (`builtins.<name>.enabled`), made once at start-up with what it needs, served by the registry
 * beside the plugins (host/registry/builtin-plugin.ts) and closed with the gateway. The services
 * behind them are handed to the routes that serve their pages (a jot's files, a live browser view).
 */
import type { Resolver } from '../bridge/index.js';
import { cookieSignIn, createBrowser, type BrowserService } from '../builtins/browser/index.js';
import type { GatewayConfig } from '../config.js';
import { createJots, type Jots } from '../builtins/jots/index.js';
import type { BuiltinIntegration } from '../builtins/types.js';
import type { Policy } from '../policy/schema.js';
import type { CookieSignInBrowser } from '../portal/cookie-browser.js';
import { builtinPlugin } from '../registry/builtin-plugin.js';
import type { LoadedPlugin } from '../registry/loaded-plugin.js';
import type { Db } from '../storage/db.js';
import type { Logger } from '../telemetry/logger.js';

export interface BuiltinWiring {
  config: GatewayConfig;
  policy: Policy;
  db: Db;
  logger: Logger;
  /** the gateway's environment (the browser reads WORKBENCH_CHROMIUM_PATH and WORKBENCH_CHROMIUM_NO_SANDBOX) */
  env: NodeJS.ProcessEnv;
  /** answers the browser's DNS look-ups instead of the system resolver (tests) */
  resolver?: Resolver | undefined;
  /** built-ins served besides the configured ones (tests) */
  extra?: readonly BuiltinIntegration[] | undefined;
}

export interface Builtins {
  /** as the registry serves them */
  plugins: LoadedPlugin[];
  /** the jots service and its links, for the routes that serve the sites (when the policy leaves jots on) */
  jots?: Jots;
  /** the browser's service (live views, sign-in sessions), when the policy leaves the browser on */
  browser?: BrowserService;
  /** the browser's side of cookie connections (the portal's sign-in pages), with the browser */
  cookieSignIn?: CookieSignInBrowser;
  /** closes every built-in (each on its own: one failing does not keep the others open) */
  close(): Promise<void>;
}

export function createBuiltins(w: BuiltinWiring): Builtins {
  const integrations: BuiltinIntegration[] = [...(w.extra ?? [])];
  const jots = w.policy.builtins.jots.enabled
    ? createJots({
        db: w.db,
        policy: w.policy.builtins.jots,
        publicUrl: w.config.publicUrl,
        ...(w.config.jotsUrl ? { jotsUrl: w.config.jotsUrl } : {}),
      })
    : undefined;
  if (jots) integrations.push(jots.integration);
  // the browser starts nothing until its first call (Chromium is launched then, if it is installed)
  const browser = w.policy.builtins.browser.enabled
    ? createBrowser({
        policy: w.policy,
        env: w.env,
        logger: w.logger,
        publicUrl: w.config.publicUrl,
        ...(w.resolver ? { resolver: w.resolver } : {}),
      })
    : undefined;
  if (browser) integrations.push(browser.integration);
  const plugins = integrations.map(builtinPlugin);
  return {
    plugins,
    ...(jots ? { jots } : {}),
    ...(browser ? { browser: browser.service, cookieSignIn: cookieSignIn(browser.service) } : {}),
    async close() {
      const closed = await Promise.allSettled(integrations.map((b) => b.close()));
      closed.forEach((c, i) => {
        if (c.status === 'rejected')
          w.logger.warn(
            { err: c.reason as unknown, builtin: integrations[i]?.manifest.name },
            'a built-in failed to close',
          );
      });
    },
  };
}
