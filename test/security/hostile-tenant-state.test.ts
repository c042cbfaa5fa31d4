/**
 * @module test/security/hostile-tenant-state.test
 * With `sandbox.contextMode: "per-tenant"` a plugin's module state lives as long as its tenant's
 * context, by design. A hostile plugin must still never carry state from one tenant to another, nor
 * from one plugin to another.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { findSecrets, startSecurityGateway, type SecurityGateway } from '../helpers/security-gateway.js';

const SECRET = `SECRET-STATE-${randomBytes(6).toString('hex')}`;

describe('a hostile plugin keeping state in per-tenant contexts', () => {
  let gw: SecurityGateway;
  let acme1: string;
  let acme2: string;
  let globex: string;

  before(async () => {
    gw = await startSecurityGateway({ policy: { sandbox: { contextMode: 'per-tenant' } } });
    acme1 = (await gw.createUser('a1@example.com', 'acme')).apiKey;
    acme2 = (await gw.createUser('a2@example.com', 'acme')).apiKey;
    globex = (await gw.createUser('g@example.com', 'globex')).apiKey;
  });
  after(async () => {
    await gw?.close();
  });

  it('shares module state within one tenant (the mode is in effect)', async () => {
    await gw.batch('hostile-state', [{ tool: 'state_remember', args: { secret: SECRET } }], acme1);
    const [same] = await gw.batch('hostile-state', [{ tool: 'state_recall' }], acme2);
    assert.ok(same.result?.memory.includes(SECRET), `per-tenant contexts keep module state: ${JSON.stringify(same)}`);
  });

  it('never lets another tenant see it, over REST or MCP', async () => {
    const [rest] = await gw.batch('hostile-state', [{ tool: 'state_recall' }], globex);
    const [mcp] = await gw.mcpExecute([{ tool: 'state_recall' }], globex);
    for (const item of [rest, mcp]) {
      assert.deepEqual(item.result?.memory, [], JSON.stringify(item));
      assert.equal(item.result.stash, null);
      assert.equal(item.result.proto, null);
      assert.equal(item.result.json, '{"a":1}');
    }
    assert.deepEqual(findSecrets([JSON.stringify(rest), JSON.stringify(mcp)], [SECRET]), []);
  });

  it('never lets another plugin of the same tenant see it or its patched built-ins', async () => {
    const [echo] = await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: 'mine' } }], acme1);
    assert.deepEqual(echo, { result: { text: 'mine', args: { text: 'mine', times: 1 } } });
    const [walk] = await gw.batch('hostile-reader', [{ tool: 'reader_globals' }], acme2);
    assert.ok(!walk.result.own.includes('__stash'), 'no global left by hostile-state in another plugin');
    assert.deepEqual(findSecrets([JSON.stringify(echo), JSON.stringify(walk)], [SECRET]), []);
  });
});
