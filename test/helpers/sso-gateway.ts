/**
 * @module test/helpers/sso-gateway
 * A gateway whose portal signs people in with single sign-on, against the tests' own OpenID
 * Connect provider (test/helpers/oidc-idp.ts): the gateway's port is chosen first, so that the
 * provider registers its callback on the public URL; then the gateway starts with WORKBENCH_OIDC_*
 * pointing at the provider and the policy's `signIn` given by the test. Headless Chromium drives
 * both through `ssoSignIn`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { createGateway, type Gateway } from '../../host/app.js';
import { BUILTIN_PLUGINS_DIR } from '../../host/paths.js';
import { parsePolicy } from '../../host/policy/load.js';
import { createLogger } from '../../host/telemetry/logger.js';
import { freePort } from './free-port.js';
import { startTestIdp, type TestIdp } from './oidc-idp.js';

export { CHROMIUM, chromiumSkip, LAUNCH_ARGS } from './chromium.js';

export interface SsoGateway {
  gateway: Gateway;
  url: string;
  idp: TestIdp;
  dataDir: string;
  close(): Promise<void>;
}

export async function startSsoGateway(o: {
  /** the policy's `signIn` */
  signIn: Record<string, unknown>;
  /** built-in plugins to load (default none) */
  plugins?: string[];
  upstreams?: Record<string, string>;
}): Promise<SsoGateway> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-sso-'));
  const pluginsDir = path.join(dataDir, 'plugins');
  fs.mkdirSync(pluginsDir);
  for (const name of o.plugins ?? [])
    fs.cpSync(path.join(BUILTIN_PLUGINS_DIR, name), path.join(pluginsDir, name), { recursive: true });
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const idp = await startTestIdp({ redirectUris: [`${publicUrl}/login/sso/callback`] });
  const gateway = await createGateway(
    {
      port,
      host: '127.0.0.1',
      dataDir,
      databaseUrl: path.join(dataDir, 'workbench.db'),
      pluginDirs: [pluginsDir],
      policyFile: '(inline)',
      logLevel: 'silent',
      publicUrl,
    },
    {
      policy: parsePolicy(
        { signIn: o.signIn, upstreams: o.upstreams ?? {}, sandbox: { workers: 1 } },
        'sso test policy',
      ),
      logger: createLogger({ level: 'silent', destination: 'silent' }),
      env: idp.env(),
    },
  );
  const url = await gateway.listen();
  return {
    gateway,
    url,
    idp,
    dataDir,
    async close() {
      await gateway.close();
      await idp.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Signs in at the provider's page as `account`, from a page that is on it (or on its way there):
 * resolves the status of the gateway's answer to the provider's redirect (the callback).
 */
export async function ssoSignIn(page: Page, account: string): Promise<number> {
  await page.getByLabel('Account').fill(account);
  const callback = page.waitForResponse((r) => r.url().includes('/login/sso/callback'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  return (await callback).status();
}
