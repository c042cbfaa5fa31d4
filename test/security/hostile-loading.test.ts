/**
 * @module test/security/hostile-loading.test
 * Hostile plugins attack at load time: one spins forever while its module evaluates, one never
 * finishes a top-level await, one asks for an API-key field whose pattern RE2 cannot run (no value
 * would ever match: nobody could connect). All are refused at start-up (the modules that never
 * finish loading by the sandbox's probe, within their limits); the other plugins keep serving.
 * Plugins that take another's name, tool names or tool prefix: hostile-namespace.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { startSecurityGateway, type SecurityGateway } from '../helpers/security-gateway.js';

describe('hostile plugins at load time', () => {
  let gw: SecurityGateway;
  let hostileUp: Upstream;
  let fixtureUp: Upstream;
  let apiKey: string;

  before(async () => {
    hostileUp = await startUpstream(() => ({ json: { hostile: true } }));
    fixtureUp = await startUpstream((req) => ({ json: { path: req.path } }));
    gw = await startSecurityGateway({
      upstreams: { 'https://api.hostile.test': hostileUp.origin, 'https://api.fixture.test': fixtureUp.origin },
      policy: {
        plugins: {
          'hostile-load-spin': { limits: { cpuMsPerCall: 300 } },
          'hostile-load-await': { limits: { wallMsPerCall: 1000 } },
        },
      },
    });
    const u = await gw.createUser('loader@example.com');
    apiKey = u.apiKey;
    await gw.connect('fixture-http', u.user, 'tok-fixture-http');
  });
  after(async () => {
    await gw?.close();
    await hostileUp?.close();
    await fixtureUp?.close();
  });

  it('refuses a plugin whose API-key field pattern RE2 cannot run, naming the field and why', async () => {
    const refused = gw.gateway.pluginErrors.find((e) => e.dir.endsWith('hostile-unmatchable'));
    assert.ok(refused, JSON.stringify(gw.gateway.pluginErrors));
    assert.match(refused.file, /hostile-unmatchable[\\/]manifest\.json$/);
    assert.match(
      refused.message,
      /^auth\.fields\.1\.pattern \(field "workspace"\): "\^\(\?!internal-\)\[a-z0-9-\]\+\$" is not a linear-time regular expression \(RE2 syntax: lookaround and backreferences are not supported\): /,
    );
    assert.equal(gw.gateway.registry.plugin('hostile-unmatchable'), undefined);
    const [call] = await gw.mcpExecute([{ tool: 'unmatchable_get' }], apiKey);
    assert.equal(call.code, 'GW_ERR_ENGINE_TOOL_NOT_FOUND');
  });

  it('refuses at start-up a module that spins while loading (probed in the sandbox within its limits), legit calls unaffected', async () => {
    const refused = gw.gateway.pluginErrors.find((e) => e.dir.endsWith('hostile-load-spin'));
    assert.ok(refused, JSON.stringify(gw.gateway.pluginErrors));
    assert.match(refused.file, /hostile-load-spin[\\/]plugin\.js$/);
    assert.match(
      refused.message,
      /^the module's top-level code ran longer than its limits allow \(cpuMsPerCall 300 ms/,
    );
    const [item] = await gw.mcpExecute([{ tool: 'spin_load' }], apiKey);
    assert.equal(item.code, 'GW_ERR_ENGINE_TOOL_NOT_FOUND', JSON.stringify(item));
    const [legit] = await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: 'beside' } }], apiKey);
    assert.equal(legit.result?.text, 'beside');
  });

  it('refuses at start-up a module whose top-level await never settles, saying so', async () => {
    const refused = gw.gateway.pluginErrors.find((e) => e.dir.endsWith('hostile-load-await'));
    assert.ok(refused, JSON.stringify(gw.gateway.pluginErrors));
    assert.match(refused.message, /top-level code has not finished \(a top-level await that never settles\?\)/);
    const stats = gw.gateway.sandbox.stats();
    assert.equal(stats.crashes, 0);
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  });
});
