/**
 * @module test/host/portal/connect-limit.test
 * The portal's Connect button and the agent's `connect` tool share one per-user limit on connect
 * links (each is a pending_connects row): without it, a signed-in user or a script posting the
 * button could write rows without bound. Driven over real HTTP and MCP against a real gateway with
 * a SQLite file: links made through both paths count together, the one past the limit is refused on
 * both, and the portal answers 429 with a page saying when to try again. A JSON-RPC batch of
 * `connect` calls, whose calls the gateway runs at once, still makes no more than the limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONNECT_LINK_LIMIT } from '../../../host/connections/pending.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { csrfOf, signInWithKey } from '../../helpers/web-client.js';

const textOf = (r: unknown): string =>
  (r as { content: { type: string; text?: string }[] }).content.find((c) => c.type === 'text')?.text ?? '';

describe("the portal's Connect button shares the connect tool's link limit", () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({ plugins: ['newrelic'], workers: 1 });
  });
  after(async () => {
    await gw?.close();
  });

  it(`${CONNECT_LINK_LIMIT.max} links made through the connect tool and the portal together, then 429 with a retry time on the portal and RATE_LIMITED on the tool`, async () => {
    const { user, apiKey } = await gw.createUser('linker@example.com');
    const agent = await gw.mcpClient(apiKey);
    const connect = async () =>
      JSON.parse(textOf(await agent.callTool({ name: 'connect', arguments: { integration: 'newrelic' } }))) as Record<
        string,
        unknown
      >;
    const viaTool = 10;
    for (let i = 0; i < viaTool; i++) assert.equal(typeof (await connect())['connectionId'], 'string');

    const web = await signInWithKey(gw.url, apiKey);
    const csrf = csrfOf((await web.get('/integrations')).body);
    for (let i = viaTool; i < CONNECT_LINK_LIMIT.max; i++) {
      const res = await web.post('/integrations/newrelic/connect', { _csrf: csrf });
      assert.equal(res.status, 303, `link ${i + 1}: ${res.body.slice(0, 300)}`);
      assert.match(res.location ?? '', /^\/connect\/[A-Za-z0-9_-]+$/);
    }
    const rows = async (): Promise<number> =>
      Number(
        (await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM pending_connects WHERE user_id = ?', [user.id]))?.n,
      );
    assert.equal(await rows(), CONNECT_LINK_LIMIT.max);

    const refused = await web.post('/integrations/newrelic/connect', { _csrf: csrf });
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(refused.body, /<h1[^>]*>Too many connect links<\/h1>/);
    // The oldest link leaves the 10-minute window first: that is when the next one may be made.
    const oldest = Number(
      (await gw.db.get<{ t: number }>('SELECT MIN(created_at) AS t FROM pending_connects WHERE user_id = ?', [user.id]))
        ?.t,
    );
    const retryAt = new Date(oldest + CONNECT_LINK_LIMIT.windowMs).toISOString().slice(11, 16);
    assert.match(refused.body, new RegExp(`Try again in \\d+ minutes? \\(after ${retryAt} UTC\\)`));
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= CONNECT_LINK_LIMIT.windowMs / 1000, `Retry-After: ${retryAfter}`);
    assert.equal(await rows(), CONNECT_LINK_LIMIT.max, 'the refused request created no link');

    const fromTool = await connect();
    assert.equal(fromTool['code'], 'GW_ERR_POLICY_RATE_LIMITED', JSON.stringify(fromTool));
    assert.ok(
      Number(fromTool['retryAfterSec']) >= 1 && Number(fromTool['retryAfterSec']) <= CONNECT_LINK_LIMIT.windowMs / 1000,
    );
    assert.equal(await rows(), CONNECT_LINK_LIMIT.max);

    // The limit is per user.
    const other = await gw.createUser('other-linker@example.com');
    const otherWeb = await signInWithKey(gw.url, other.apiKey);
    const ok = await otherWeb.post('/integrations/newrelic/connect', {
      _csrf: csrfOf((await otherWeb.get('/integrations')).body),
    });
    assert.equal(ok.status, 303);
  });

  it(`a JSON-RPC batch of 100 connect calls makes ${CONNECT_LINK_LIMIT.max} links; the other calls get the limit's RATE_LIMITED answer`, async () => {
    const { user, apiKey } = await gw.createUser('batch-linker@example.com');
    const batch = Array.from({ length: 100 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'connect', arguments: { integration: 'newrelic' } },
    }));
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${apiKey}`,
      },
      body: JSON.stringify(batch),
    });
    assert.equal(res.status, 200);
    const answers = (await res.json()) as { id: number; result: unknown }[];
    assert.deepEqual(
      answers.map((a) => a.id).sort((a, b) => a - b),
      batch.map((m) => m.id),
      'one answer per call',
    );
    const bodies = answers.map((a) => JSON.parse(textOf(a.result)) as Record<string, unknown>);
    const made = bodies.filter((b) => typeof b['connectionId'] === 'string');
    const refused = bodies.filter((b) => b['code'] === 'GW_ERR_POLICY_RATE_LIMITED');
    assert.equal(made.length, CONNECT_LINK_LIMIT.max);
    assert.equal(
      refused.length,
      100 - CONNECT_LINK_LIMIT.max,
      JSON.stringify(bodies.find((b) => !made.includes(b) && !refused.includes(b))),
    );
    for (const r of refused) {
      assert.equal(
        r['error'],
        `Too many connect links in 10 minutes (limit ${CONNECT_LINK_LIMIT.max}); reuse the last one or wait.`,
      );
      assert.ok(Number(r['retryAfterSec']) >= 1 && Number(r['retryAfterSec']) <= CONNECT_LINK_LIMIT.windowMs / 1000);
    }
    const rows = await gw.db.all<{ id: string }>('SELECT id FROM pending_connects WHERE user_id = ?', [user.id]);
    assert.equal(rows.length, CONNECT_LINK_LIMIT.max);
    assert.deepEqual(
      new Set(rows.map((r) => r.id)),
      new Set(made.map((b) => b['connectionId'])),
      'every link made was answered, and only those',
    );
  });
});
