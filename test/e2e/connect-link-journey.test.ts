/**
 * @module test/e2e/connect-link-journey.test
 * The connect link as a person meets it, in headless Chromium, on a server whose people sign in
 * with single sign-on (a real OpenID Connect provider on loopback; API-key sign-in turned off):
 * the agent calls connect and waits; the link opened while signed out says what is being connected
 * and for whom (masked) and offers single sign-on; after signing in at the provider the person is
 * back on the link, fills in the form, and the agent's wait answers the link's own CONNECTED.
 * Opened by someone signed in as another account, the link says whose it is and who is signed in,
 * and signing out from there comes back to it. Afterwards, connect says the integration is connected.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser } from 'playwright-core';
import {
  CHROMIUM,
  LAUNCH_ARGS,
  chromiumSkip,
  ssoSignIn,
  startSsoGateway,
  type SsoGateway,
} from '../helpers/sso-gateway.js';

const textOf = (r: unknown): string =>
  (r as { content: { type: string; text?: string }[] }).content.find((c) => c.type === 'text')?.text ?? '';

describe(
  'the connect link, signed out → single sign-on → connected (headless Chromium)',
  { skip: chromiumSkip },
  () => {
    let sso: SsoGateway;
    let browser: Browser;
    let agent: Client;

    before(async () => {
      sso = await startSsoGateway({
        plugins: ['newrelic'],
        signIn: { apiKey: false, sso: { allowedDomains: ['acme.test', 'beta.test'], defaultTenant: 'beta' } },
      });
      // the agent's user was made by an operator, with the key its agent uses; the person signs in with SSO
      const ada = await sso.gateway.users.create('ada@acme.test', 'acme');
      const { key } = await sso.gateway.users.createApiKey(ada.id, 'agent');
      sso.idp.accounts.set('ada-sub', { email: 'ada@acme.test', email_verified: true });
      sso.idp.accounts.set('bea-sub', { email: 'bea@beta.test', email_verified: true });
      agent = new Client({ name: 'journey-agent', version: '1.0.0' });
      await agent.connect(
        new StreamableHTTPClientTransport(new URL(`${sso.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
    });

    after(async () => {
      await browser?.close().catch(() => undefined);
      await agent?.close().catch(() => undefined);
      await sso?.close();
    });

    const call = async (name: string, args: Record<string, unknown>) =>
      JSON.parse(textOf(await agent.callTool({ name, arguments: args }))) as Record<string, unknown>;

    it('says what is connected for whom, signs in with SSO, lands back on the link, and the wait answers CONNECTED', async () => {
      const link = (await call('connect', { integration: 'newrelic' })) as { connectionId: string; url: string };
      const path = new URL(link.url).pathname;
      const waiting = agent.callTool(
        { name: 'wait_for_connection', arguments: { connectionId: link.connectionId, timeoutSec: 120 } },
        undefined,
        { timeout: 150_000 },
      );
      waiting.catch(() => undefined); // awaited below

      // Someone signed in as another account opens it: told whose it is, and who they are.
      const other = await (await browser.newContext()).newPage();
      await other.goto(`${sso.url}/login/sso?next=/integrations`);
      assert.equal(await ssoSignIn(other, 'bea-sub'), 303);
      const refused = await other.goto(link.url);
      assert.equal(refused?.status(), 403);
      const refusedText = (await other.locator('main').textContent()) ?? '';
      assert.match(refusedText, /different Workbench account: it connects New Relic for a\*\*\*@acme\.test/);
      assert.match(refusedText, /signed in as bea@beta\.test/);
      assert.doesNotMatch(refusedText, /ada@acme\.test/);
      await other.getByRole('button', { name: 'Sign out and sign in as a***@acme.test' }).click();
      await other.waitForURL((u) => u.pathname === '/login');
      assert.equal(new URL(other.url()).searchParams.get('next'), path, 'signing out leads back to the link');
      await other.context().close();

      // The owner, signed out, opens the link.
      const page = await (await browser.newContext()).newPage();
      await page.goto(link.url);
      assert.equal(new URL(page.url()).pathname, '/login');
      const main = (await page.locator('main').textContent()) ?? '';
      assert.match(main, /Sign in to connect New Relic for a\*\*\*@acme\.test/);
      assert.equal(await page.getByLabel('Your Workbench API key').count(), 0, 'API-key sign-in is off');
      await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
      await page.waitForURL((u) => u.origin === sso.idp.issuer);
      assert.equal(await ssoSignIn(page, 'ada-sub'), 303);
      await page.waitForURL(link.url);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Connect New Relic');
      await page.getByLabel('User API key').fill('NRAK-JOURNEY0123456789ABCDEFGH');
      await page.getByRole('button', { name: 'Connect New Relic' }).click();
      await page.waitForURL(link.url);
      assert.match((await page.locator('main').textContent()) ?? '', /New Relic: is connected/);
      await page.context().close();

      const waited = JSON.parse(textOf(await waiting)) as Record<string, unknown>;
      assert.deepEqual(waited, { connectionId: link.connectionId, integration: 'newrelic', status: 'CONNECTED' });

      const again = await call('connect', { integration: 'newrelic' });
      assert.equal(again['status'], 'ALREADY_CONNECTED', JSON.stringify(again));
      assert.equal(again['url'], undefined);
    });
  },
);
