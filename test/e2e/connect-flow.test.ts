/**
 * @module test/e2e/connect-flow.test
 * The whole connect loop, as an agent and a person live it: execute_tools answers NOT_CONNECTED,
 * the agent calls connect and wait_for_connection (with progress), a real headless Chromium signs
 * in to the portal, opens the link, consents at a mock OAuth provider on loopback and lands on the
 * result page; the wait returns CONNECTED and the retried call reaches the mock upstream with the
 * right bearer token, which appears nowhere in the logs, the audit table, the results, the pages
 * or the database file. Then the same with a provider whose authorize endpoint sends the person on
 * to a sign-in page on a second origin (as Atlassian does): the browser gets there, and the consent
 * and callback still complete the connection.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pino from 'pino';
import { chromium, type Browser } from 'playwright-core';
import { createGateway, type Gateway } from '../../host/app.js';
import { BUILTIN_PLUGINS_DIR } from '../../host/paths.js';
import { parsePolicy } from '../../host/policy/load.js';
import { REDACT_PATHS, type Logger } from '../../host/telemetry/logger.js';
import { startMockOAuth, type MockOAuth } from '../helpers/mock-oauth.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { freePort } from '../helpers/free-port.js';
import { CHROMIUM, chromiumSkip as skip, LAUNCH_ARGS } from '../helpers/chromium.js';

const textOf = (r: unknown): string =>
  (r as { content: { type: string; text?: string }[] }).content.find((c) => c.type === 'text')?.text ?? '';

interface E2E {
  gateway: Gateway;
  url: string;
  apiKey: string;
  dataDir: string;
  client: Client;
  browser: Browser;
}

/** A gateway on a free loopback port with one built-in plugin, a user with a key, an MCP client with it, and Chromium. */
async function startE2E(o: {
  plugin: string;
  email: string;
  upstreams: Record<string, string>;
  env: Record<string, string>;
  logger: Logger;
  logLevel: string;
}): Promise<E2E> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-e2e-'));
  const pluginsDir = path.join(dataDir, 'plugins');
  fs.cpSync(path.join(BUILTIN_PLUGINS_DIR, o.plugin), path.join(pluginsDir, o.plugin), { recursive: true });
  const port = await freePort();
  const gateway = await createGateway(
    {
      port,
      host: '127.0.0.1',
      dataDir,
      databaseUrl: path.join(dataDir, 'workbench.db'),
      pluginDirs: [pluginsDir],
      policyFile: '(inline)',
      logLevel: o.logLevel,
      publicUrl: `http://127.0.0.1:${port}`,
    },
    {
      policy: parsePolicy({ upstreams: o.upstreams, sandbox: { workers: 1 } }, 'e2e policy'),
      logger: o.logger,
      env: o.env,
    },
  );
  const url = await gateway.listen();
  const user = await gateway.users.create(o.email, 'acme');
  const apiKey = (await gateway.users.createApiKey(user.id, 'agent')).key;
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  return { gateway, url, apiKey, dataDir, client, browser };
}

describe('connect flow end to end (headless Chromium)', { skip }, () => {
  let gateway: Gateway;
  let url: string;
  let apiKey: string;
  let dataDir: string;
  let mock: MockOAuth;
  let upstream: Upstream;
  let browser: Browser;
  let client: Client;
  const logs: string[] = [];

  before(async () => {
    mock = await startMockOAuth({ paths: { authorize: '/login/oauth/authorize', token: '/login/oauth/access_token' } });
    upstream = await startUpstream((req) =>
      req.path === '/user' && mock.activeAccessTokens.has((req.headers.authorization ?? '').replace(/^Bearer /, ''))
        ? { json: { login: 'octocat', id: 1, name: 'The Octocat', public_repos: 8, followers: 10, following: 0 } }
        : { status: 401, json: { message: 'Bad credentials' } },
    );
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => void (logs.push(chunk.toString('utf8')), cb()) });
    const logger = pino({ level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink) as Logger;
    ({ gateway, url, apiKey, dataDir, client, browser } = await startE2E({
      plugin: 'github',
      email: 'agent-owner@example.com',
      upstreams: { 'https://api.github.com': upstream.origin, 'https://github.com': mock.origin },
      env: { GITHUB_CLIENT_ID: mock.clientId, GITHUB_CLIENT_SECRET: mock.clientSecret },
      logger,
      logLevel: 'trace',
    }));
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await client?.close().catch(() => undefined);
    await gateway?.close();
    await upstream?.close();
    await mock?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('NOT_CONNECTED → connect → browser consent → CONNECTED → the retried call carries the token, and the token leaks nowhere', async () => {
    const execute = async () =>
      JSON.parse(
        textOf(
          await client.callTool({
            name: 'execute_tools',
            arguments: { executions: [{ tool: 'github_get_me', args: {} }] },
          }),
        ),
      ) as { results: Record<string, unknown>[] };

    const first = (await execute()).results[0];
    assert.equal(first?.['error'], 'NOT_CONNECTED', JSON.stringify(first));
    assert.equal(upstream.requests.length, 0);

    const connect = JSON.parse(
      textOf(await client.callTool({ name: 'connect', arguments: { integration: 'github' } })),
    ) as { connectionId: string; url: string; type: string };
    assert.equal(connect.type, 'oauth2');
    assert.equal(connect.url, `${url}/connect/${connect.connectionId}`);

    const progress: number[] = [];
    const waiting = client.callTool(
      { name: 'wait_for_connection', arguments: { connectionId: connect.connectionId, timeoutSec: 90 } },
      undefined,
      {
        onprogress: (p) => void progress.push(p.progress),
        timeout: 120_000,
        resetTimeoutOnProgress: true,
      },
    );

    const page = await browser.newPage();
    await page.goto(connect.url);
    assert.match(page.url(), /\/login\?next=/, 'signed-out visitors go to the sign-in page first');
    await page.getByLabel('Your Workbench API key').fill(apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/connect/${connect.connectionId}`);
    await page.getByRole('button', { name: 'Continue to GitHub' }).click();
    await page.waitForURL((u) => u.origin === mock.origin);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Allow access?');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${url}/connect/${connect.connectionId}`);
    assert.match((await page.locator('main').textContent()) ?? '', /GitHub: is connected/);
    const pageHtml = await page.content();

    const waited = JSON.parse(textOf(await waiting)) as { status: string };
    assert.equal(waited.status, 'CONNECTED');
    assert.ok(progress.length >= 1, 'progress notifications were sent while waiting');
    assert.equal(mock.counters.consents, 1);
    assert.equal(mock.counters.codeExchanges, 1);

    const retried = await execute();
    const item = retried.results[0] as { result?: { login?: string } };
    assert.equal(item.result?.login, 'octocat', JSON.stringify(item));
    const [token] = [...mock.activeAccessTokens];
    assert.ok(token && mock.activeAccessTokens.size === 1);
    assert.equal(upstream.last().headers.authorization, `Bearer ${token}`);
    const refresh = [...mock.activeRefreshTokens][0] ?? '';

    // The token (and the refresh token) appear nowhere they must not.
    const audit = JSON.stringify(await gateway.db.all('SELECT * FROM audit_events'));
    assert.match(audit, /github_get_me/);
    const pending = JSON.stringify(await gateway.db.all('SELECT * FROM pending_connects'));
    const resultsText = JSON.stringify([first, retried, waited, connect]);
    await gateway.close();
    const dbBytes = fs
      .readdirSync(dataDir)
      .filter((f) => f.startsWith('workbench.db'))
      .map((f) => fs.readFileSync(path.join(dataDir, f)).toString('latin1'))
      .join('');
    assert.ok(
      logs.some((l) => l.includes('"tool":"github_get_me"')),
      'the gateway logged the executions',
    );
    assert.ok(
      logs.some((l) => l.includes('connection saved')),
      'the connection service logged the new connection',
    );
    for (const [where, text] of Object.entries({
      logs: logs.join(''),
      audit,
      pending,
      results: resultsText,
      page: pageHtml,
      database: dbBytes,
    }))
      for (const secret of [token, refresh]) assert.ok(!text.includes(secret), `a token leaked into ${where}`);
  });
});

/**
 * A provider whose authorize endpoint sends a signed-out person on to a second origin (Atlassian:
 * auth.atlassian.com/authorize → id.atlassian.com/login). Chromium enforces the start page's CSP
 * form-action on every redirect of the "Continue" form submission, so the portal must not reach
 * the provider through a redirect of that submission.
 */
describe(
  'connect flow through a provider that signs people in on a second origin (headless Chromium)',
  { skip },
  () => {
    let gateway: Gateway;
    let url: string;
    let apiKey: string;
    let dataDir: string;
    let mock: MockOAuth;
    let browser: Browser;
    let client: Client;

    before(async () => {
      mock = await startMockOAuth({ paths: { authorize: '/authorize', token: '/oauth/token' }, signInElsewhere: true });
      ({ gateway, url, apiKey, dataDir, client, browser } = await startE2E({
        plugin: 'atlassian-jira',
        email: 'jira-user@example.com',
        upstreams: { 'https://auth.atlassian.com': mock.origin },
        env: { ATLASSIAN_JIRA_CLIENT_ID: mock.clientId, ATLASSIAN_JIRA_CLIENT_SECRET: mock.clientSecret },
        logger: pino({ level: 'silent' }),
        logLevel: 'silent',
      }));
    });

    after(async () => {
      await browser?.close().catch(() => undefined);
      await client?.close().catch(() => undefined);
      await gateway?.close();
      await mock?.close();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('Continue reaches the sign-in page on the second origin, and the consent and callback complete the connection', async () => {
      assert.ok(
        mock.signInOrigin && new URL(mock.signInOrigin).origin !== mock.origin,
        'the sign-in page is on another origin',
      );
      const connect = JSON.parse(
        textOf(await client.callTool({ name: 'connect', arguments: { integration: 'atlassian-jira' } })),
      ) as { connectionId: string; url: string };
      const waiting = client.callTool(
        { name: 'wait_for_connection', arguments: { connectionId: connect.connectionId, timeoutSec: 90 } },
        undefined,
        { timeout: 120_000 },
      );
      waiting.catch(() => undefined); // awaited below; a failure before then must not be an unhandled rejection

      const page = await browser.newPage();
      // A navigation refused by the CSP leaves the page where it is and says so on the console.
      const refusedByCsp = new Promise<string>((resolve) =>
        page.on('console', (m) => void (/Content Security Policy/.test(m.text()) && resolve(m.text()))),
      );
      await page.goto(`${url}/login?next=${encodeURIComponent(`/connect/${connect.connectionId}`)}`);
      await page.getByLabel('Your Workbench API key').fill(apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(connect.url);
      await page.getByRole('button', { name: 'Continue to Jira (Atlassian Cloud)' }).click();
      const reached = await Promise.race([
        page.waitForURL((u) => u.origin === mock.signInOrigin).then(() => 'sign-in page'),
        refusedByCsp,
      ]);
      assert.equal(reached, 'sign-in page', 'the browser refused the navigation');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in to the provider');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((u) => u.origin === mock.origin);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Allow access?');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(connect.url);
      assert.match((await page.locator('main').textContent()) ?? '', /Jira \(Atlassian Cloud\): is connected/);

      assert.equal((JSON.parse(textOf(await waiting)) as { status: string }).status, 'CONNECTED');
      assert.deepEqual([mock.counters.signIns, mock.counters.consents, mock.counters.codeExchanges], [1, 1, 1]);
    });
  },
);
