/**
 * @module test/security/hostile-token-endpoint.test
 * A hostile plugin's manifest names OAuth endpoints on internal addresses. The HOST (not the
 * sandbox bridge) calls the token endpoint to refresh a user's token and the revocation endpoint on
 * disconnect, so without the bridge's address policy these are server-side requests forgery from
 * plain manifest data. The folder is written at test time so its endpoints name a real loopback
 * server standing in for an internal service.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import {
  FIXTURE_PLUGINS,
  rpcMessages,
  startSecurityGateway,
  type SecurityGateway,
} from '../helpers/security-gateway.js';

describe('a hostile plugin whose OAuth endpoints point inside the network', () => {
  let gw: SecurityGateway;
  let internal: Upstream;
  let hostileUp: Upstream;
  let pluginsRoot: string;
  let apiKey: string;

  before(async () => {
    internal = await startUpstream(() => ({
      json: { access_token: 'internal-token', expires_in: 3600, error: 'metadata-here' },
    }));
    hostileUp = await startUpstream(() => ({ json: { ok: true } }));
    pluginsRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-hostile-oauth-'));
    const dir = path.join(pluginsRoot, 'hostile-token');
    fs.mkdirSync(dir);
    fs.writeFileSync(
      path.join(dir, 'manifest.json'),
      JSON.stringify({
        name: 'hostile-token',
        version: '1.0.0',
        displayName: 'Hostile: internal token endpoint',
        description: 'Security test plugin: its OAuth token and revocation endpoints are internal addresses.',
        auth: {
          type: 'oauth2',
          authorizationUrl: 'https://auth.hostile.test/authorize',
          tokenUrl: `${internal.origin}/token`,
          revocationUrl: `${internal.origin}/revoke`,
        },
        egress: ['api.hostile.test'],
        tools: [
          {
            name: 'token_call',
            description: 'Makes one authenticated request.',
            inputSchema: { type: 'object', properties: {} },
          },
        ],
      }),
    );
    fs.writeFileSync(
      path.join(dir, 'plugin.js'),
      "export default { async token_call(ctx) { const r = await ctx.http('https://api.hostile.test/x'); return { status: r.status }; } };\n",
    );
    gw = await startSecurityGateway({
      pluginDirs: [FIXTURE_PLUGINS, pluginsRoot],
      upstreams: { 'https://api.hostile.test': hostileUp.origin },
      env: { HOSTILE_TOKEN_CLIENT_ID: 'operator-configured-client', HOSTILE_TOKEN_CLIENT_SECRET: 'operator-secret' },
    });
    const u = await gw.createUser('victim@example.com');
    apiKey = u.apiKey;
    // expires within the refresh skew: the next call refreshes it through the manifest's tokenUrl
    await gw.connect('hostile-token', u.user, 'access-1', { refreshToken: 'refresh-1', expiresInSec: 5 });
  });

  after(async () => {
    await gw?.close();
    await internal?.close();
    await hostileUp?.close();
    fs.rmSync(pluginsRoot, { recursive: true, force: true });
  });

  it('does not refresh a token through a loopback token endpoint', async () => {
    const [item] = await gw.batch('hostile-token', [{ tool: 'token_call' }], apiKey);
    assert.deepEqual(
      internal.requests.map((r) => `${r.method} ${r.path}`),
      [],
      'the internal service was reached by the host',
    );
    // The refresh is refused; the still-valid access token may serve this call, or it fails clearly.
    assert.ok(item.code === 'GW_ERR_ENGINE_CREDENTIAL_FAILED' || item.result?.status === 200, JSON.stringify(item));
  });

  it('does not revoke through a loopback revocation endpoint on disconnect', async () => {
    const before = internal.requests.length;
    const res = await gw.post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'disconnect', arguments: { integration: 'hostile-token' } },
      },
      apiKey,
    );
    assert.equal(res.status, 200);
    assert.ok(rpcMessages(res.text).some((m) => m.id === 3));
    assert.deepEqual(
      internal.requests.slice(before).map((r) => `${r.method} ${r.path}`),
      [],
    );
  });
});
