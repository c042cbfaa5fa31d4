/**
 * @module test/host/bridge/any-public-host.test
 * A manifest with `egressAnyPublicHost` (a tool that fetches a URL the user gives): an undeclared
 * host is reached over https without the credential, however the manifest binds it; private,
 * loopback, link-local and metadata addresses stay refused, as literals and as names resolving to
 * them, even where the policy's allowPrivateCidrs opens them for declared hosts; scheme, port and
 * user-information rules still hold; a plugin without the key is still refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBridge, type Bridge, type CallScope } from '../../../host/bridge/index.js';
import type { BridgeRequest, BridgeResult } from '../../../host/supervisor/index.js';
import type { PluginManifest } from '../../../contracts/manifest.js';
import { fakeResolver } from '../../helpers/sandbox/fake-dns.js';
import { egressPolicy, manifest } from '../../helpers/sandbox/harness.js';
import { startUpstream, type Upstream } from '../../helpers/sandbox/upstream.js';

const TOKEN = 'ya29.any-host-test-token';
let up: Upstream;
let bridge: Bridge;

const open = manifest({
  egress: ['api.example.com'],
  egressAnyPublicHost: true,
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://auth.example.com/a',
    tokenUrl: 'https://auth.example.com/t',
    scopes: [],
    scopeSeparator: ' ',
    pkce: true,
    authorizationParams: {},
    clientAuth: 'body',
    inject: { header: 'authorization', format: 'Bearer {token}' },
  },
});

const scope = (m: PluginManifest = open): CallScope => ({
  manifest: m,
  getCredential: async () => ({ values: { token: TOKEN } }),
  requestCount: { n: 0 },
  maxRequests: 20,
  signal: new AbortController().signal,
});
const get = (url: string): BridgeRequest => ({ url, method: 'GET', headers: {} });
const codeOf = (r: BridgeResult): string => (r.ok ? 'ok' : r.error.code);

before(async () => {
  up = await startUpstream();
  bridge = createBridge(
    egressPolicy({
      upstreams: { 'https://api.example.com': up.origin, 'https://files.example.net': up.origin },
      // opens private ranges for declared hosts; never for "any public host"
      allowPrivateCidrs: ['10.0.0.0/8', '127.0.0.0/8', '192.168.0.0/16'],
      requestTimeoutMs: 1000,
    }),
    {
      resolver: fakeResolver({
        'intranet.example.org': ['10.1.2.3'],
        'loop.example.org': ['127.0.0.1'],
        'metadata.example.org': ['169.254.169.254'],
        'mixed.example.org': ['93.184.216.34', '192.168.1.10'],
      }),
    },
  );
});
after(async () => {
  await bridge.close();
  await up.close();
});

describe('bridge: egressAnyPublicHost', () => {
  it('reaches an undeclared host without the credential; the declared host still gets it', async () => {
    const r = await bridge.dispatch(get('https://files.example.net/echo'), scope());
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(up.received.at(-1)?.headers['authorization'], undefined, 'no credential for an undeclared host');
    const d = await bridge.dispatch(get('https://api.example.com/echo'), scope());
    assert.ok(d.ok);
    assert.equal(up.received.at(-1)?.headers['authorization'], `Bearer ${TOKEN}`);
  });

  const refused: Array<[string, string]> = [
    ['https://127.0.0.1/file', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['https://10.1.2.3/file', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['https://[::1]/file', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['https://169.254.169.254/latest/meta-data/', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['https://2130706433/file', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['https://intranet.example.org/file', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['https://loop.example.org/file', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['https://metadata.example.org/file', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['https://mixed.example.org/file', 'GW_ERR_BRIDGE_ADDRESS_BLOCKED'],
    ['http://files.example.org/file', 'GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED'],
    ['https://files.example.org:8443/file', 'GW_ERR_BRIDGE_HOST_NOT_ALLOWED'],
    ['https://user:pw@files.example.org/file', 'GW_ERR_BRIDGE_HOST_NOT_ALLOWED'],
  ];
  for (const [url, code] of refused)
    it(`refuses ${url} with ${code}, although allowPrivateCidrs opens it for declared hosts`, async () => {
      const before = up.received.length;
      assert.equal(codeOf(await bridge.dispatch(get(url), scope())), code);
      assert.equal(up.received.length, before);
    });

  it('a plugin without egressAnyPublicHost is still refused an undeclared host', async () => {
    const closed = { ...open, egressAnyPublicHost: undefined } as PluginManifest;
    assert.equal(
      codeOf(await bridge.dispatch(get('https://files.example.net/echo'), scope(closed))),
      'GW_ERR_BRIDGE_HOST_NOT_ALLOWED',
    );
  });

  it('a policy denyHosts entry still refuses such a host', async () => {
    const b = createBridge(
      egressPolicy({ upstreams: { 'https://files.example.net': up.origin }, denyHosts: ['files.example.net'] }),
    );
    assert.equal(
      codeOf(await b.dispatch(get('https://files.example.net/echo'), scope())),
      'GW_ERR_BRIDGE_HOST_NOT_ALLOWED',
    );
    await b.close();
  });
});
