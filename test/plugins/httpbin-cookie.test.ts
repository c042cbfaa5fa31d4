/**
 * @module test/plugins/httpbin-cookie.test
 * The cookie-connection demo end to end: a real gateway runs the httpbin-cookie plugin in its
 * sandbox, with httpbin.org mapped (policy `upstreams`) to a loopback provider that signs people in
 * through a real form and answers 401 without its session cookie. The session is signed in over
 * HTTP and seeded with `workbench connections import --cookies` (the CLI) and with the service's
 * import; an agent's calls over MCP carry it, the site sees it, and its value appears nowhere
 * else: not in results, logs, audit rows, pending links or the database file. A session the site
 * ends answers 401 (the connection stays, as an OAuth2 token's 401 does); cookies that expire turn
 * the connection needs_reauth, and connect hands out a link whose page names the sign-in page.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pino from 'pino';
import { COOKIES_EXPIRED_REASON } from '../../host/connections/connection-reads.js';
import { REDACT_PATHS } from '../../host/telemetry/logger.js';
import { runCli } from '../helpers/cli.js';
import { cookiesOf, startCookieProvider, type CookieProvider } from '../helpers/cookie-provider.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { callJson } from '../helpers/mcp-call.js';
import { csrfOf, signInWithKey } from '../helpers/web-client.js';

let provider: CookieProvider;
let gw: TestGateway;
let client: Client;
let session = '';
const logs: string[] = [];

/** execute_tools over MCP: the one item of a batch of one. */
async function execute(c: Client, tool: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const r = await callJson(c, 'execute_tools', { executions: [{ tool, args }] });
  return (r.json as { results: Record<string, any>[] }).results[0] as Record<string, any>;
}

before(async () => {
  provider = await startCookieProvider();
  const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => void (logs.push(chunk.toString('utf8')), cb()) });
  gw = await startGateway({
    plugins: ['httpbin-cookie'],
    upstreams: { 'https://httpbin.org': provider.origin },
    logger: pino({ level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink),
    logLevel: 'trace',
  });
  client = await gw.mcpClient();
});
after(async () => {
  await gw?.close();
  await provider?.close();
});

describe('httpbin-cookie: a signed-in session as a connection', () => {
  it('not connected at first: execute_tools says to call connect', async () => {
    const item = await execute(client, 'httpbin_cookie_get_cookies');
    assert.equal(item['error'], 'NOT_CONNECTED');
    assert.match(String(item['message']), /Use connect\('httpbin-cookie'\) to connect/);
  });

  it('the CLI imports the signed-in session (only the cookies of httpbin.org), and the calls carry it to the site', async () => {
    const cookies = await provider.signIn({ domain: 'httpbin.org' });
    session = cookies[0]?.value ?? '';
    assert.match(session, /^[0-9a-f]{32}$/);
    const foreign = { name: 'tracker', value: 'tracker-value-1', domain: '.ads.example', path: '/' };
    const imported = runCli(
      { WORKBENCH_DATA_DIR: gw.dataDir, DATABASE_URL: path.join(gw.dataDir, 'workbench.db') },
      'connections',
      'import',
      '--email',
      gw.user.email,
      '--integration',
      'httpbin-cookie',
      '--cookies',
      JSON.stringify([...cookies, foreign]),
      '--json',
    );
    assert.equal(imported.code, 0, imported.stderr);
    const out = JSON.parse(imported.stdout) as Record<string, unknown>;
    assert.equal(out['cookies'], 1);
    assert.deepEqual(out['dropped'], [{ name: 'tracker', domain: '.ads.example', reason: 'not within httpbin.org' }]);
    assert.ok(!imported.stdout.includes(session), 'the CLI does not print the value');

    const got = await execute(client, 'httpbin_cookie_get_cookies');
    assert.deepEqual(got['result'], { cookies: { session: '[REDACTED]' } });
    assert.deepEqual(cookiesOf(provider.last()), { session }, 'the site received the session');
    const headers = await execute(client, 'httpbin_cookie_get_headers');
    assert.equal(headers['result']?.['headers']?.['cookie'], '[REDACTED]');
    assert.equal(provider.last().headers['cookie'], `session=${session}`, 'one Cookie header, nothing more');
  });

  it('a cookie the site sets in an answer does not reach the plugin nor join the session', async () => {
    const r = await execute(client, 'httpbin_cookie_set_cookie', { name: 'theme', value: 'dark' });
    assert.deepEqual(r['result'], { requested: { name: 'theme', value: 'dark' }, cookies: { session: '[REDACTED]' } });
    const [set, after] = provider.requests.slice(-2);
    assert.equal(set?.path, '/cookies/set');
    assert.equal(after?.path, '/cookies', 'the redirect was followed, with the session only');
    assert.deepEqual(cookiesOf(after ?? { headers: {} }), { session });
  });

  it('a session the site ends answers 401 with the words to reconnect; the connection is kept, as an OAuth2 token is', async () => {
    provider.sessions.delete(session);
    const r = await execute(client, 'httpbin_cookie_get_cookies');
    assert.match(
      String(r['error']),
      /httpbin\.org rejected the credential \(401\) while trying to read the cookies: reconnect httpbin-cookie/,
    );
    const listed = await callJson(client, 'list_integrations', {});
    assert.equal(
      (listed.json.integrations as Array<Record<string, unknown>>).find((i) => i['name'] === 'httpbin-cookie')?.[
        'connection'
      ],
      'connected',
    );
  });

  it('cookies that expire turn the connection needs_reauth; connect gives a link whose page names the sign-in page', async () => {
    const other = await gw.createUser('second@example.com');
    const cookies = await provider.signIn({ domain: 'httpbin.org' });
    const soon = Math.floor(Date.now() / 1000) + 2;
    await gw.connect('httpbin-cookie', { cookies: cookies.map((c) => ({ ...c, expires: soon })) }, other.user);
    const c2 = await gw.mcpClient(other.apiKey);
    assert.deepEqual((await execute(c2, 'httpbin_cookie_get_cookies'))['result'], {
      cookies: { session: '[REDACTED]' },
    });
    await new Promise((resolve) => setTimeout(resolve, soon * 1000 - Date.now() + 50));

    const item = await execute(c2, 'httpbin_cookie_get_cookies');
    assert.equal(item['error'], 'NOT_CONNECTED');
    assert.equal(item['reason'], COOKIES_EXPIRED_REASON);
    assert.match(String(item['message']), /connect\('httpbin-cookie'\)/);
    const listed = await callJson(c2, 'list_integrations', {});
    assert.equal(
      (listed.json.integrations as Array<Record<string, unknown>>).find((i) => i['name'] === 'httpbin-cookie')?.[
        'connection'
      ],
      'needs_reauth',
    );
    const link = await callJson(c2, 'connect', { integration: 'httpbin-cookie' });
    assert.equal(link.isError, false);
    assert.equal(link.json.type, 'cookie');
    assert.equal(link.json.url, `${gw.url}/connect/${String(link.json.connectionId)}`);

    const web = await signInWithKey(gw.url, other.apiKey, `/connect/${String(link.json.connectionId)}`);
    const page = await web.get(`/connect/${String(link.json.connectionId)}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /https:\/\/httpbin\.org\/cookies\/set\?workbench_demo=signed-in/);
    assert.match(page.body, /no live browser to sign in with yet/);
    const refused = await web.post(`/connect/${String(link.json.connectionId)}/sign-in`, { _csrf: csrfOf(page.body) });
    assert.equal(refused.status, 409, 'nothing to sign in with: the link stays unused');
    const waited = await callJson(c2, 'wait_for_connection', { connectionId: link.json.connectionId, timeoutSec: 1 });
    assert.equal(waited.json.status, 'TIMEOUT');
    await c2.close();
  });

  it("the session's value is nowhere but in the site's requests: not in logs, audit rows, pending links or the database file", async () => {
    const audit = JSON.stringify(await gw.db.all('SELECT * FROM audit_events'));
    assert.match(audit, /httpbin_cookie_get_cookies/);
    const pending = JSON.stringify(await gw.db.all('SELECT * FROM pending_connects'));
    const connections = JSON.stringify(await gw.db.all('SELECT * FROM connections'));
    assert.ok(
      logs.some((l) => l.includes('"tool":"httpbin_cookie_get_headers"')),
      'the executions were logged',
    );
    const dataDir = gw.dataDir;
    const files = fs.readdirSync(dataDir).filter((f) => f.startsWith('workbench.db'));
    const database = files.map((f) => fs.readFileSync(path.join(dataDir, f)).toString('latin1')).join('');
    for (const [where, text] of Object.entries({ logs: logs.join(''), audit, pending, connections, database }))
      assert.ok(!text.includes(session), `the session value is in the ${where}`);
  });
});
