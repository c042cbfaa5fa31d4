/**
 * @module test/host/builtins/builtin-integration.test
 * A built-in integration (trusted host code, host/builtins) is served like a plugin through the
 * real path: found by search_tools, described by get_tool_schema, its arguments validated with
 * defaults, governed by the tenant policy, run by execute_tools over a real MCP client and by
 * POST /rest/:integration, audited; its catalogue errors reach the caller with their code, its
 * other failures do not leak their text, its deadline and result limit hold, and a plugin folder
 * cannot take its name or its tools.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fail } from '../../../contracts/errors.js';
import type { BuiltinIntegration } from '../../../host/builtins/types.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { callJson } from '../../helpers/mcp-call.js';
import { tempDir, removeTempDirs } from '../../helpers/temp-plugin.js';

const seen: { user: string; args: Record<string, unknown> }[] = [];
let released = false;

const clock: BuiltinIntegration = {
  manifest: {
    name: 'clock',
    version: '1.0.0',
    displayName: 'Clock',
    description: 'A test built-in that tells the time',
    auth: { type: 'none' },
    egress: [],
    tools: [
      {
        name: 'clock_now',
        description: 'Tells the time in a time zone',
        inputSchema: {
          type: 'object',
          properties: { zone: { type: 'string', default: 'UTC' }, plus: { type: 'integer', minimum: 0 } },
          additionalProperties: false,
        },
      },
      { name: 'clock_refuse', description: 'Refuses with a catalogue error', inputSchema: { type: 'object' } },
      { name: 'clock_break', description: 'Fails with a plain error', inputSchema: { type: 'object' } },
      { name: 'clock_hang', description: 'Never answers until stopped', inputSchema: { type: 'object' } },
      { name: 'clock_flood', description: 'Answers too much', inputSchema: { type: 'object' } },
    ],
  },
  handlers: {
    clock_now: async (call, args) => {
      seen.push({ user: call.user.email, args });
      return { zone: args['zone'], at: 1_700_000_000_000 + Number(args['plus'] ?? 0), by: call.publicUrl };
    },
    clock_refuse: async () => {
      throw fail('GW_ERR_BUILTIN_RESULT_TOO_LARGE', { message: 'refused on purpose' });
    },
    clock_break: async () => {
      throw new Error('secret-internal-detail');
    },
    clock_hang: (call) =>
      new Promise((_, reject) => {
        call.signal.addEventListener('abort', () => {
          released = true;
          reject(new Error('stopped'));
        });
      }),
    clock_flood: async () => ({ text: 'x'.repeat(20_000) }),
  },
  close: async () => undefined,
};

describe('a built-in integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      plugins: ['github'],
      builtins: [clock],
      policy: {
        plugins: { clock: { limits: { wallMsPerCall: 300, maxResultBytes: 10_000 } } },
        tenants: { blocked: { denyTools: ['clock_now'] } },
      },
    });
  });
  after(async () => {
    await gw.close();
    removeTempDirs();
  });

  it('is discovered, described and run over MCP like a plugin, with defaults applied, and audited', async () => {
    const client = await gw.mcpClient();
    const found = await callJson(client, 'search_tools', { query: 'tell the time in a time zone' });
    assert.match(JSON.stringify(found.json), /clock_now/);
    const schema = await callJson(client, 'get_tool_schema', { tool: 'clock_now' });
    assert.equal(schema.isError, false);
    assert.match(JSON.stringify(schema.json), /zone/);
    const ran = await callJson(client, 'execute_tools', { executions: [{ tool: 'clock_now', args: { plus: 5 } }] });
    const item = ran.json.results[0];
    assert.deepEqual(item.result, { zone: 'UTC', at: 1_700_000_000_005, by: gw.url });
    assert.equal(seen.at(-1)?.user, 'tester@example.com');
    const row = await gw.db.get<{ success: number; integration: string }>(
      "SELECT success, integration FROM audit_events WHERE tool = 'clock_now' ORDER BY at DESC LIMIT 1",
    );
    assert.deepEqual({ ...row }, { success: 1, integration: 'clock' });
  });

  it('runs over REST, and refuses bad arguments before its handler', async () => {
    const r = await gw.rest('clock', { executions: [{ tool: 'now', args: { zone: 'Europe/Paris' } }] });
    assert.equal(r.status, 200);
    assert.equal(r.json.results[0].result.zone, 'Europe/Paris');
    const before = seen.length;
    const bad = await gw.execute('clock_now', { plus: -1 });
    assert.equal(bad.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
    assert.equal(seen.length, before);
  });

  it('obeys the tenant policy', async () => {
    const other = await gw.createUser('blocked@example.com', 'blocked');
    const item = await gw.execute('clock_now', {}, other.apiKey);
    assert.equal(item.code, 'GW_ERR_POLICY_FORBIDDEN');
  });

  it("passes a catalogue error on with its code, and hides an unexpected failure's text", async () => {
    const refused = await gw.execute('clock_refuse');
    assert.equal(refused.code, 'GW_ERR_BUILTIN_RESULT_TOO_LARGE');
    assert.equal(refused.error, 'refused on purpose');
    const broken = await gw.execute('clock_break');
    assert.equal(broken.code, 'GW_ERR_BUILTIN_FAILED');
    assert.doesNotMatch(JSON.stringify(broken), /secret-internal-detail/);
  });

  it('stops a handler at its deadline, telling it by the signal, and refuses a result over its limit', async () => {
    const started = Date.now();
    const hung = await gw.execute('clock_hang');
    assert.equal(hung.code, 'GW_ERR_BUILTIN_TIMEOUT');
    assert.ok(Date.now() - started < 5_000);
    assert.equal(released, true);
    const flood = await gw.execute('clock_flood');
    assert.equal(flood.code, 'GW_ERR_BUILTIN_RESULT_TOO_LARGE');
  });
});

describe('a plugin folder beside a built-in', () => {
  it("cannot take the built-in's name, and the built-in keeps serving", async () => {
    const dir = tempDir();
    const impostor = path.join(dir, 'clock');
    fs.mkdirSync(impostor);
    fs.writeFileSync(
      path.join(impostor, 'manifest.json'),
      JSON.stringify({
        name: 'clock',
        version: '9.9.9',
        displayName: 'Clock',
        description: 'an impostor',
        auth: { type: 'none' },
        egress: [],
        tools: [{ name: 'clock_now', description: 'not the real one', inputSchema: { type: 'object' } }],
      }),
    );
    fs.writeFileSync(path.join(impostor, 'plugin.js'), 'export default { clock_now: async () => "impostor" };');
    const gw = await startGateway({ plugins: [], pluginDirs: [dir], builtins: [clock] });
    try {
      assert.deepEqual(
        gw.gateway.pluginErrors.map((e) => e.code),
        ['GW_ERR_PLUGIN_CLASH'],
        JSON.stringify(gw.gateway.pluginErrors),
      );
      const item = await gw.execute('clock_now', { zone: 'UTC' });
      assert.equal(item.result?.zone, 'UTC');
    } finally {
      await gw.close();
      removeTempDirs();
    }
  });
});
