/**
 * @module test/e2e/oauth-consent.test
 * Adding Workbench to an MCP client by OAuth, as a person lives it, in real headless Chromium: the
 * SDK client is refused (401), discovers the authorization server, registers, and sends the person
 * to the authorization URL; signed out, they sign in and land back on the consent page, which names
 * the app and the exact redirect URI; Allow takes the browser to the app's loopback redirect URI
 * (the consent page's CSP lets its form lead there and nowhere else) with the code and the state;
 * the client finishes and runs a tool. Deny takes the browser there with access_denied.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { callJson } from '../helpers/mcp-call.js';
import {
  connectWithProvider,
  MemoryOAuthProvider,
  oauthTransport,
  startLoopbackServer,
  type LoopbackServer,
} from '../helpers/oauth-client.js';
import { CHROMIUM, chromiumSkip as skip, LAUNCH_ARGS } from '../helpers/chromium.js';

describe('an MCP client added by OAuth, consent given in Chromium', { skip }, () => {
  let gw: TestGateway;
  let app: LoopbackServer;
  let browser: Browser;

  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins')] });
    // the app's redirect URI: a loopback server, as desktop MCP hosts run one
    app = await startLoopbackServer(() => ({
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: '<!doctype html><title>Back in the app</title><h1>You can close this window</h1>',
    }));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await gw?.close();
  });

  /** The SDK's first attempt: refused, registered, and the authorization URL the person is sent to. */
  async function startFlow(provider: MemoryOAuthProvider): Promise<ReturnType<typeof oauthTransport>> {
    const transport = oauthTransport(gw.url, provider);
    await assert.rejects(new Client({ name: 'e2e', version: '0' }).connect(transport), UnauthorizedError);
    return transport;
  }

  async function signIn(page: Page): Promise<void> {
    assert.match(page.url(), /\/login\?next=%2Fauthorize%3F/, 'signed-out people sign in first');
    await page.getByLabel('Your Workbench API key').fill(gw.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/authorize');
  }

  it('sign in, Allow, back to the app with the code; the client then runs a tool', async () => {
    const provider = new MemoryOAuthProvider(`${app.origin}/callback`, { client_name: 'Desktop Host' });
    const transport = await startFlow(provider);
    const page = await browser.newPage();
    const csp: string[] = [];
    page.on('console', (m) => void (/Content Security Policy/.test(m.text()) && csp.push(m.text())));
    await page.goto(provider.lastAuthorizationUrl.href);
    await signIn(page);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Allow Desktop Host?');
    assert.equal(await page.locator('#consent-redirect').textContent(), `${app.origin}/callback`);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.origin === app.origin);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'You can close this window');
    assert.deepEqual(csp, [], 'no Content Security Policy violation');
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('state'), provider.lastState);
    const code = back.searchParams.get('code');
    assert.ok(code);
    await page.close();

    await transport.finishAuth(code);
    const client = await connectWithProvider(gw.url, provider);
    const run = await callJson(client, 'execute_tools', {
      executions: [{ tool: 'echo_args', args: { text: 'from chromium' } }],
    });
    assert.equal(run.isError, false);
    assert.match(JSON.stringify(run.json), /from chromium/);
    await client.close();
  });

  it('Deny takes the browser back to the app with access_denied and no code', async () => {
    const provider = new MemoryOAuthProvider(`${app.origin}/callback`, { client_name: 'Refused Host' });
    await startFlow(provider);
    const page = await browser.newPage();
    await page.goto(provider.lastAuthorizationUrl.href);
    await signIn(page);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((u) => u.origin === app.origin);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('state'), provider.lastState);
    assert.equal(back.searchParams.get('code'), null);
    await page.close();
  });
});
