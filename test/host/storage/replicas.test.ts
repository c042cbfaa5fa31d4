/**
 * @module test/host/storage/replicas.test
 * Two gateways on one PostgreSQL database act as replicas behind a load balancer: they start (and
 * migrate) together; a user and key made on one authenticate on the other; an execute_tools call on
 * one writes audit events the other shows; a connect link made on A is completed through B's portal
 * while A's wait_for_connection polls the shared record; a continuation issued by A is paged on B;
 * a server on the shared database without WORKBENCH_ENCRYPTION_KEY refuses to start.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { generateKey } from '../../../host/connections/vault.js';
import { MIGRATIONS } from '../../../host/storage/migrations.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, startServe } from '../../helpers/cli.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const NR_KEY = 'NRAK-REPLICA0123456789ABCDEFGH';
const ACCOUNTS = Array.from({ length: 120 }, (_, i) => ({
  id: 1000 + i,
  name: `Account ${i} of the replica test, with a longer name`,
}));

const textOf = (r: unknown): string =>
  (r as { content: { type: string; text?: string }[] }).content.find((c) => c.type === 'text')?.text ?? '';
// Tests read arbitrary result shapes.
const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<any> =>
  JSON.parse(textOf(await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })));

/** A cookie-keeping form client over real HTTP (no redirects followed), sending the browser's Origin. */
function webClient(base: string): {
  get(p: string): Promise<{ status: number; body: string; location: string | null }>;
  post(p: string, form: Record<string, string>): Promise<{ status: number; body: string; location: string | null }>;
} {
  const jar = new Map<string, string>();
  const send = async (method: string, p: string, form?: Record<string, string>) => {
    const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (form) Object.assign(headers, { 'content-type': 'application/x-www-form-urlencoded', origin: base });
    const res = await fetch(base + p, {
      method,
      headers,
      redirect: 'manual',
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ''] = c.split(';');
      const eq = pair.indexOf('=');
      if (/Max-Age=0/i.test(c) || eq === pair.length - 1) jar.delete(pair.slice(0, eq));
      else jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return { status: res.status, body: await res.text(), location: res.headers.get('location') };
  };
  return { get: (p) => send('GET', p), post: (p, form) => send('POST', p, form) };
}

const csrfOf = (body: string): string => {
  const m = /name="_csrf" value="([^"]+)"/.exec(body);
  if (!m?.[1]) throw new Error(`no CSRF token in page: ${body.slice(0, 300)}`);
  return m[1];
};

async function signIn(base: string, apiKey: string, next: string): Promise<ReturnType<typeof webClient>> {
  const web = webClient(base);
  const page = await web.get(`/login?next=${encodeURIComponent(next)}`);
  const res = await web.post('/login', { _csrf: csrfOf(page.body), apiKey, next });
  assert.equal(res.status, 303, `sign-in on ${base}: ${res.body.slice(0, 300)}`);
  return web;
}

describe('two gateways on one PostgreSQL database act as replicas', { skip: postgresSkipReason() ?? false }, () => {
  let pg: TestPostgres;
  let upstream: Upstream;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    pg = await startPostgres();
    upstream = await startUpstream(() => ({ json: { data: { actor: { accounts: ACCOUNTS } } } }));
    const options = {
      databaseUrl: pg.url,
      plugins: ['newrelic'],
      upstreams: { 'https://api.newrelic.com': upstream.origin },
      // Replicas share the encryption key, or one could not read a connection the other stored.
      env: { WORKBENCH_ENCRYPTION_KEY: generateKey().toString('hex') },
      policy: { resultCap: { maxChars: 1000 }, requests: { maxBatch: 10 } },
      workers: 1,
    };
    // Started together on an empty database: both migrate at once.
    [a, b] = await Promise.all([startGateway(options), startGateway(options)]);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await upstream?.close();
    await pg?.stop();
  });

  test('both started and migrated together on an empty database: each migration applied once, one shared test user', async () => {
    const rows = await a.db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(
      rows.map((r) => r.version),
      MIGRATIONS.map((m) => m.version),
    );
    assert.equal(a.user.id, b.user.id);
    assert.notEqual(a.url, b.url);
  });

  test('a user and key created through A authenticate on B (REST, MCP, portal); revoking on A locks B out', async () => {
    const { user, apiKey } = await a.createUser('replica-user@example.com');
    const r = await b.rest('newrelic', { executions: [{ tool: 'newrelic_list_accounts', args: {} }] }, apiKey);
    assert.equal(r.status, 200);
    assert.equal(r.json.results[0].error, 'NOT_CONNECTED', JSON.stringify(r.json));
    const client = await b.mcpClient(apiKey);
    const me = await call(client, 'whoami', {});
    assert.equal(me.email ?? me.user?.email, 'replica-user@example.com', JSON.stringify(me));
    await signIn(b.url, apiKey, '/integrations');
    const [key] = await a.gateway.users.listApiKeys(user.id);
    assert.equal(await a.gateway.users.revokeApiKey(user.id, key?.id ?? ''), true);
    assert.equal(
      (await b.rest('newrelic', { executions: [{ tool: 'newrelic_list_accounts', args: {} }] }, apiKey)).status,
      401,
    );
  });

  test('execute_tools on A writes audit events that B reads and shows; B uses the connection A stored', async () => {
    await a.connect('newrelic', { values: { apiKey: NR_KEY }, config: { region: 'us' } });
    const client = await a.mcpClient();
    const out = await call(client, 'execute_tools', {
      executions: [
        { tool: 'newrelic_list_accounts', args: {} },
        { tool: 'newrelic_get_entity', args: {} },
      ],
    });
    assert.equal(out.results.length, 2);
    assert.equal(out.results[1].code, 'GW_ERR_VALIDATION_INVALID_ARGS', JSON.stringify(out.results[1]).slice(0, 300));
    const rows = await b.db.all<{ tool: string; success: number; transport: string; duration_ms: number; at: number }>(
      'SELECT tool, success, transport, duration_ms, at FROM audit_events WHERE user_id = ? ORDER BY tool',
      [a.user.id],
    );
    assert.deepEqual(
      rows.map((r) => [r.tool, r.success, r.transport]),
      [
        ['newrelic_get_entity', 0, 'mcp'],
        ['newrelic_list_accounts', 1, 'mcp'],
      ],
    );
    assert.equal(typeof rows[0]?.at, 'number');
    const web = await signIn(b.url, a.apiKey, '/activity');
    const activity = await web.get('/activity');
    assert.equal(activity.status, 200);
    assert.match(activity.body, /newrelic_list_accounts/);
    assert.match((await web.get('/activity?success=no')).body, /newrelic_get_entity/);
    const filtered = (await web.get('/activity?tool=NewRelic_List')).body; // any case, "_" taken literally
    assert.match(filtered, /newrelic_list_accounts/);
    assert.doesNotMatch(filtered, /newrelic_get_entity/);
    upstream.requests.length = 0;
    const onB = await b.execute('newrelic_list_accounts');
    assert.equal(onB.result?.accounts?.length, ACCOUNTS.length, JSON.stringify(onB).slice(0, 300));
    assert.equal(upstream.last().headers['api-key'], NR_KEY, 'B decrypted the credential A stored');
  });

  test('a connect link made on A is completed on B; wait_for_connection on A sees CONNECTED', async () => {
    const { apiKey } = await a.createUser('connector@example.com');
    const agentOnA = await a.mcpClient(apiKey);
    const link = await call(agentOnA, 'connect', { integration: 'newrelic' });
    assert.equal(link.type, 'apikey');
    assert.equal(link.url, `${a.url}/connect/${link.connectionId}`);
    const waiting = call(agentOnA, 'wait_for_connection', { connectionId: link.connectionId, timeoutSec: 30 });

    // The person's browser lands on B (the load balancer's choice).
    const path = new URL(link.url).pathname;
    const web = await signIn(b.url, apiKey, path);
    const form = await web.get(path);
    assert.equal(form.status, 200, form.body.slice(0, 300));
    const posted = await web.post(`${path}/form`, {
      _csrf: csrfOf(form.body),
      apiKey: 'NRAK-FROMB0123456789ABCDEFGHIJ',
      region: 'us',
      accountId: '',
    });
    assert.equal(posted.status, 303, posted.body.slice(0, 500));

    const waited = await waiting;
    assert.equal(waited.status, 'CONNECTED', JSON.stringify(waited));
    upstream.requests.length = 0;
    const out = await call(agentOnA, 'execute_tools', { executions: [{ tool: 'newrelic_list_accounts', args: {} }] });
    assert.ok(out.results[0].result, JSON.stringify(out).slice(0, 300));
    assert.equal(upstream.last().headers['api-key'], 'NRAK-FROMB0123456789ABCDEFGHIJ');
    assert.equal(
      (
        await web.post(`${path}/form`, {
          _csrf: csrfOf(form.body),
          apiKey: 'NRAK-AGAIN0123456789ABCDEFGHIJ',
          region: 'us',
        })
      ).status,
      410,
      'the link works once',
    );
  });

  test('a server on PostgreSQL without WORKBENCH_ENCRYPTION_KEY refuses to start (exit 2, saying what to set) and generates no key of its own', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-nokey-'));
    try {
      const env = { DATABASE_URL: await pg.createDatabase(), WORKBENCH_DATA_DIR: dataDir };
      const server = await startServe(env);
      await server.stop();
      assert.equal(server.url, undefined, `it started: ${server.output()}`);
      assert.equal(server.exitCode, 2, server.output());
      assert.match(
        server.output(),
        /GW_ERR_CONFIG_INVALID: WORKBENCH_ENCRYPTION_KEY is required with a PostgreSQL DATABASE_URL: set it to the same key on every server/,
      );
      assert.ok(!fs.existsSync(path.join(dataDir, 'encryption.key')), 'no key file generated');
      // nor does connections import seal with a key of its own; users create needs no key
      assert.equal(runCli(env, 'users', 'create', '--email', 'nokey@example.com').code, 0);
      const imported = runCli(
        env,
        'connections',
        'import',
        '--email',
        'nokey@example.com',
        '--integration',
        'newrelic',
        '--values',
        '{"apiKey":"NRAK-NOKEY0123456789ABCDEFGHIJ"}',
      );
      assert.equal(imported.code, 2, imported.stdout);
      assert.match(imported.stderr, /GW_ERR_CONFIG_INVALID: WORKBENCH_ENCRYPTION_KEY is required/);
      assert.ok(!fs.existsSync(path.join(dataDir, 'encryption.key')), 'no key file generated');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a continuation issued by A is paged on B, and only for its user', async () => {
    const onA = await a.mcpClient();
    const out = await call(onA, 'execute_tools', { executions: [{ tool: 'newrelic_list_accounts', args: {} }] });
    const stub = out.results[0].result;
    assert.equal(stub.truncated, true, JSON.stringify(out).slice(0, 300));
    assert.ok(stub.totalParts > 1);
    const onB = await b.mcpClient();
    let joined = '';
    for (let part = 1; ; part++) {
      const page = await call(onB, 'continue_tool_result', { continuationId: stub.continuationId, part });
      assert.equal(page.part, part, JSON.stringify(page).slice(0, 300));
      joined += page.chunk;
      if (!page.hasMore) break;
    }
    assert.equal(joined.length, stub.totalChars);
    const full = JSON.parse(joined);
    assert.deepEqual(full.accounts, ACCOUNTS);
    const stranger = await b.createUser('stranger@example.com');
    const other = await b.mcpClient(stranger.apiKey);
    const refused = await call(other, 'continue_tool_result', { continuationId: stub.continuationId, part: 1 });
    assert.equal(refused.code, 'GW_ERR_RESULT_CONTINUATION_UNKNOWN');
  });
});
