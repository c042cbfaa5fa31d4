/**
 * @module test/e2e/mcp-remote.test
 * mcp-remote — the stdio-to-remote bridge desktop MCP hosts run for servers they cannot reach over
 * HTTP themselves — adds Workbench by OAuth alone: it is refused (401), discovers the authorization
 * server from the challenge, registers itself (DCR), and prints the authorization URL; a person
 * signs in and allows it in real Chromium; the browser lands on mcp-remote's own loopback callback,
 * mcp-remote exchanges the code, and the JSON-RPC the host wrote to its stdin is answered — a tool
 * runs with no API key anywhere in its configuration.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { freePort } from '../helpers/free-port.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { CHROMIUM, chromiumSkip as skip, LAUNCH_ARGS } from '../helpers/chromium.js';

const MCP_REMOTE = path.join(PACKAGE_ROOT, 'node_modules', 'mcp-remote', 'dist', 'proxy.js');

/** mcp-remote as a desktop host runs it: JSON-RPC lines on stdin and stdout, its log on stderr. */
class McpRemote {
  readonly child: ChildProcessWithoutNullStreams;
  readonly log: string[] = [];
  readonly #answers = new Map<number, (message: Record<string, unknown>) => void>();

  constructor(serverUrl: string, callbackPort: number, configDir: string) {
    this.child = spawn(process.execPath, [MCP_REMOTE, serverUrl, String(callbackPort), '--host', '127.0.0.1'], {
      // no browser to open: it prints the URL, which the test opens in Chromium
      env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'false', DISPLAY: '' },
    });
    createInterface({ input: this.child.stderr }).on('line', (l) => this.log.push(l));
    createInterface({ input: this.child.stdout }).on('line', (l) => {
      const message = JSON.parse(l) as Record<string, unknown>;
      if (typeof message['id'] === 'number') this.#answers.get(message['id'])?.(message);
    });
  }

  request(id: number, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const answered = new Promise<Record<string, unknown>>((resolve) => this.#answers.set(id, resolve));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return answered;
  }

  notify(method: string): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  }

  /** The authorization URL it printed, once it has. */
  async authorizationUrl(timeoutMs = 60_000): Promise<URL> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.log.findIndex((l) => l.includes('Please authorize this client by visiting'));
      const url = i >= 0 ? this.log.slice(i + 1).find((l) => /^https?:\/\//.test(l.trim())) : undefined;
      if (url) return new URL(url.trim());
      if (Date.now() > deadline) throw new Error(`no authorization URL; mcp-remote said:\n${this.log.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('mcp-remote adds Workbench by OAuth', { skip }, () => {
  let gw: TestGateway;
  let browser: Browser;
  let remote: McpRemote | undefined;
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-mcp-remote-'));

  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins')] });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  });
  after(async () => {
    remote?.child.kill();
    await browser?.close();
    await gw?.close();
    fs.rmSync(configDir, { recursive: true, force: true });
  });

  it('discovers, registers, is allowed in the browser, and runs a tool with the token it got', async () => {
    remote = new McpRemote(`${gw.url}/mcp`, await freePort(), configDir);
    const initialized = remote.request(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'desktop-host', version: '1.0.0' },
    });

    const authorize = await remote.authorizationUrl();
    assert.equal(authorize.origin, gw.url, 'the authorization server is the gateway itself');
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorize.searchParams.get('resource'), `${gw.url}/mcp`);

    const page = await browser.newPage();
    await page.goto(authorize.href);
    await page.getByLabel('Your Workbench API key').fill(gw.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/authorize');
    assert.match((await page.getByRole('heading', { level: 1 }).textContent()) ?? '', /^Allow .+\?$/);
    await page.getByRole('button', { name: 'Allow' }).click();
    // mcp-remote's own loopback callback server takes the code
    await page.waitForURL((u) => u.pathname.endsWith('/oauth/callback'));
    await page.close();

    const init = await initialized;
    assert.equal((init['result'] as { serverInfo: { name: string } }).serverInfo.name, 'workbench');
    remote.notify('notifications/initialized');
    const ran = await remote.request(2, 'tools/call', {
      name: 'execute_tools',
      arguments: { executions: [{ tool: 'echo_args', args: { text: 'through mcp-remote' } }] },
    });
    assert.match(JSON.stringify(ran['result']), /through mcp-remote/);
    const grants = await gw.db.all<{ client_name: string }>('SELECT client_name FROM oauth_grants');
    assert.equal(grants.length, 1, 'one grant, made by this consent');
  });
});
