/**
 * @module test/host/bridge/record-credentials.test
 * A connection holding several records (projects), each with its own secret: the bridge sends the
 * secret of the record the request's `recordHeader` names, and only that one; a request naming no
 * record or an unknown one is refused before anything is sent; the secret sent is redacted from
 * what comes back, and the plugin may not set the credential header itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBridge, type Bridge, type CallScope } from '../../../host/bridge/index.js';
import { manifestSchema, type PluginManifest } from '../../../contracts/manifest.js';
import { egressPolicy } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

const RECORDS = [
  { name: 'Production', accountId: 'W8R-PROD', passcode: 'pc-prod-6f1e2d', region: 'in1' },
  { name: 'Staging', accountId: 'W8R-STAGE', passcode: 'pc-stage-9a8b7c', region: 'eu1' },
];

const m: PluginManifest = manifestSchema.parse({
  name: 'multi',
  version: '1.0.0',
  displayName: 'Multi',
  description: 'projects',
  egress: ['api.example.com'],
  auth: {
    type: 'apikey',
    fields: [
      {
        name: 'projects',
        label: 'Projects',
        secret: true,
        records: { key: 'accountId', fields: ['name', 'accountId', 'passcode', 'region'], secret: ['passcode'] },
      },
    ],
    inject: { header: 'X-Passcode', format: '{projects.passcode}', recordHeader: 'X-Account-Id' },
  },
  tools: [{ name: 'multi_run', description: 'run', inputSchema: { type: 'object' } }],
});

let up: Upstream;
let bridge: Bridge;
before(async () => {
  up = await startUpstream();
  bridge = createBridge(egressPolicy({ upstreams: { 'https://api.example.com': up.origin } }));
});
after(async () => {
  await bridge.close();
  await up.close();
});

const scope = (): CallScope => ({
  manifest: m,
  getCredential: async () => ({ values: { projects: JSON.stringify(RECORDS) } }),
  requestCount: { n: 0 },
  maxRequests: 10,
  signal: new AbortController().signal,
});
const echo = (headers: Record<string, string>) =>
  bridge.dispatch({ url: 'https://api.example.com/echo', method: 'GET', headers }, scope());

describe('bridge: one record of a records credential', () => {
  it('sends the passcode of the record the header names, with the header itself, and redacts it from the echo', async () => {
    for (const rec of RECORDS) {
      const r = await echo({ 'X-Account-Id': rec.accountId });
      assert.ok(r.ok, JSON.stringify(r));
      const sent = up.received.at(-1)?.headers;
      assert.equal(sent?.['x-passcode'], rec.passcode);
      assert.equal(sent?.['x-account-id'], rec.accountId);
      assert.ok(!r.response.body.includes(rec.passcode) && r.response.body.includes('[REDACTED]'));
      const other = RECORDS.find((o) => o !== rec);
      assert.ok(!JSON.stringify(sent).includes(other?.passcode ?? '?'), "no other record's passcode is sent");
    }
  });

  it('refuses a request that names no record, or an unknown one, before sending anything', async () => {
    const before = up.received.length;
    const none = await echo({});
    assert.ok(!none.ok && none.error.code === 'GW_ERR_BRIDGE_BAD_REQUEST');
    assert.match(
      none.error.message,
      /chooses no record of "projects": set the "x-account-id" header to a record's accountId/,
    );
    const unknown = await echo({ 'x-account-id': 'W8R-OTHER' });
    assert.ok(!unknown.ok && unknown.error.code === 'GW_ERR_BRIDGE_BAD_REQUEST');
    assert.match(unknown.error.message, /no record of "projects" whose accountId is "W8R-OTHER"/);
    assert.ok(!JSON.stringify([none, unknown]).includes('pc-'), 'no passcode in a refusal');
    assert.equal(up.received.length, before, 'nothing reached the upstream');
  });

  it('does not let the plugin set the credential header', async () => {
    const r = await echo({ 'x-account-id': 'W8R-PROD', 'x-passcode': 'guess' });
    assert.ok(!r.ok && /may not be set by plugin code/.test(r.error.message));
  });
});
