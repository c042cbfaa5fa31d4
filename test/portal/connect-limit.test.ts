/**
 * @module test/portal/connect-limit.test
 * The portal's Connect button and the agent's `connect` tool share one per-user limit on connect
 * links (each is a pending_connects row): without it, a signed-in user or a script posting the
 * button could write rows without bound. Driven over real HTTP and MCP against a real gateway with
 * a SQLite file: links made through both paths count together, the one past the limit is refused on
 * both, and the portal answers 429 with a page saying when to try again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONNECT_LINK_LIMIT } from '../../host/connections/pending.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { csrfOf, signInWithKey } from '../helpers/web-client.js';

const textOf = (r: unknown): string => ((r as { content: { type: string; text?: string }[] }).content.find((c) => c.type === 'text')?.text ?? '');

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
    const connect = async () => JSON.parse(textOf(await agent.callTool({ name: 'connect', arguments: { integration: 'newrelic' } }))) as Record<string, unknown>;
    const viaTool = 10;
    for (let i = 0; i < viaTool; i++) assert.equal(typeof (await connect())['connectionId'], 'string');

    const web = await signInWithKey(gw.url, apiKey);
    const csrf = csrfOf((await web.get('/integrations')).body);
    for (let i = viaTool; i < CONNECT_LINK_LIMIT.max; i++) {
      const res = await web.post('/integrations/newrelic/connect', { _csrf: csrf });
      assert.equal(res.status, 303, `link ${i + 1}: ${res.body.slice(0, 300)}`);
      assert.match(res.location ?? '', /^\/connect\/[A-Za-z0-9_-]+$/);
    }
    const rows = async (): Promise<number> => Number((await gw.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM pending_connects WHERE user_id = ?', [user.id]))?.n);
    assert.equal(await rows(), CONNECT_LINK_LIMIT.max);

    const refused = await web.post('/integrations/newrelic/connect', { _csrf: csrf });
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(refused.body, /<h1[^>]*>Too many connect links<\/h1>/);
    // The oldest link leaves the 10-minute window first: that is when the next one may be made.
    const oldest = Number((await gw.db.get<{ t: number }>('SELECT MIN(created_at) AS t FROM pending_connects WHERE user_id = ?', [user.id]))?.t);
    const retryAt = new Date(oldest + CONNECT_LINK_LIMIT.windowMs).toISOString().slice(11, 16);
    assert.match(refused.body, new RegExp(`Try again in \\d+ minutes? \\(after ${retryAt} UTC\\)`));
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= CONNECT_LINK_LIMIT.windowMs / 1000, `Retry-After: ${retryAfter}`);
    assert.equal(await rows(), CONNECT_LINK_LIMIT.max, 'the refused request created no link');

    const fromTool = await connect();
    assert.equal(fromTool['code'], 'GW_ERR_POLICY_RATE_LIMITED', JSON.stringify(fromTool));
    assert.ok(Number(fromTool['retryAfterSec']) >= 1 && Number(fromTool['retryAfterSec']) <= CONNECT_LINK_LIMIT.windowMs / 1000);
    assert.equal(await rows(), CONNECT_LINK_LIMIT.max);

    // The limit is per user.
    const other = await gw.createUser('other-linker@example.com');
    const otherWeb = await signInWithKey(gw.url, other.apiKey);
    const ok = await otherWeb.post('/integrations/newrelic/connect', { _csrf: csrfOf((await otherWeb.get('/integrations')).body) });
    assert.equal(ok.status, 303);
  });
});
