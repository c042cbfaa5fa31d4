/**
 * @module test/e2e/cookie-sign-in-live.test
 * A cookie connection made the way a person makes one, in real Chromium on both sides: the agent
 * is told NOT_CONNECTED and asks for a connect link; the person signs in to the portal, opens it,
 * presses "Sign in", and lands on the browser built-in's live view of the provider's sign-in page
 * (httpbin.org mapped to a loopback provider with a real form, reached because the operator named
 * it in `upstreams`, with no private range allowed to the browser); they take control, type the
 * username and password and submit, then press "I'm signed in". The session's cookies become the
 * connection; the agent's next call carries them to the provider. The sign-in happened in a
 * context of the link's own: the agent's own browser is not signed in, and the sign-in's context
 * is closed once captured.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import { BROWSER_ENV, CHROMIUM, noChromium } from '../helpers/browser-site.js';
import { cookiesOf, startCookieProvider, type CookieProvider } from '../helpers/cookie-provider.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { callJson } from '../helpers/mcp-call.js';

describe('a cookie connection signed in through the live browser (real Chromium)', { skip: noChromium }, () => {
  let provider: CookieProvider;
  let gw: TestGateway;
  let client: Client;
  let viewer: Browser;
  let person: Page;

  const execute = async (tool: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> =>
    (await callJson(client, 'execute_tools', { executions: [{ tool, args }] })).json.results[0];

  before(async () => {
    provider = await startCookieProvider();
    gw = await startGateway({
      plugins: ['httpbin-cookie'],
      upstreams: { 'https://httpbin.org': provider.origin },
      env: BROWSER_ENV,
      policy: { builtins: { browser: {}, jots: { enabled: false } } },
    });
    client = await gw.mcpClient();
    viewer = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    person = await viewer.newPage({ viewport: { width: 1000, height: 900 } });
  });
  after(async () => {
    await viewer?.close();
    await gw?.close();
    await provider?.close();
  });

  it('captures the session the person signs in to, and the agent calls with it', async () => {
    assert.equal((await execute('httpbin_cookie_get_cookies')).error, 'NOT_CONNECTED');
    const link = (await callJson(client, 'connect', { integration: 'httpbin-cookie' })).json as { url: string };

    await person.goto(link.url);
    await person.getByLabel('Your Workbench API key').fill(gw.apiKey);
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.waitForURL(link.url);
    await person.getByRole('button', { name: 'Sign in to httpbin (cookie demo)' }).click();
    await person.waitForURL(/\/browser\/live\/[A-Za-z0-9_-]+$/);
    await person.locator('#live-frame[data-seq]').waitFor({ state: 'attached' });
    await person.getByRole('button', { name: 'Take control' }).click();
    await person.getByText('You have control').waitFor();

    // the provider's form, driven from the live view: Tab to the username, type, Tab, type, Enter
    const signedInBefore = provider.sessions.size;
    await person.keyboard.press('Tab');
    await person.keyboard.type(provider.username);
    await person.keyboard.press('Tab');
    await person.keyboard.type(provider.password);
    await person.keyboard.press('Enter');
    const deadline = Date.now() + 20_000;
    while (provider.sessions.size === signedInBefore && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(provider.sessions.size, signedInBefore + 1, 'the provider signed the person in');

    await person.getByRole('button', { name: "I'm signed in" }).click();
    await person.waitForURL(link.url);
    assert.match((await person.locator('main').textContent()) ?? '', /connected/i);

    const result = await execute('httpbin_cookie_get_cookies');
    assert.ok(result['result'], JSON.stringify(result));
    const seen = cookiesOf(provider.requests.at(-1) ?? { headers: {} });
    assert.ok(provider.sessions.has(seen[provider.cookieName] ?? ''), 'the call carried the captured session');
  });

  it("signed in a context of the link's own: the agent's browser is not signed in", async () => {
    const item = await gw.execute('browser_navigate', { url: `${provider.origin}/` });
    assert.match(item.result?.url ?? '', /\/login\?next=/, JSON.stringify(item));
  });
});
