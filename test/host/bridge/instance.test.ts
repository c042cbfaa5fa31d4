/**
 * @module test/host/bridge/instance.test
 * The bridge for a connection that names its own instance (CallScope.instance), against real
 * loopback servers: an https instance on a port of its own (the test CA, a stub resolver) is
 * reached as a declared host and gets the credential; the provider's default host stays reachable
 * and gets none, nor does a redirect from the instance to it; another port or scheme of the
 * instance's host is refused; the address rules apply at every request (a loopback instance
 * without the policy's allowance is refused); http only where the policy allows http instances;
 * and a credential sealed for another instance than the call's is never sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BridgeRequest, BridgeResult } from '../../../host/supervisor/index.js';
import { createBridge, type Bridge, type CallScope, type Credential } from '../../../host/bridge/index.js';
import type { EgressPolicy } from '../../../contracts/protocol.js';
import { fakeResolver } from '../../helpers/sandbox/fake-dns.js';
import { egressPolicy, manifest } from '../../helpers/sandbox/harness.js';
import { startTlsUpstream, startUpstream, TEST_CA, type Upstream } from '../../helpers/sandbox/upstream.js';

const TOKEN = 'glpat-instance-bridge-test-0001';
let up: Upstream;
let tls: Upstream;
let instance: string;
const bridges: Bridge[] = [];

function bridgeWith(overrides: Partial<EgressPolicy> = {}): Bridge {
  const b = createBridge(
    egressPolicy({
      upstreams: { 'https://api.example.com': up.origin },
      allowPrivateCidrs: ['127.0.0.0/8'],
      ...overrides,
    }),
    { ca: TEST_CA, resolver: fakeResolver({ 'tls.example.test': ['127.0.0.1'] }) },
  );
  bridges.push(b);
  return b;
}

/** A call of a connection to `at` (undefined: the default), whose credential was sealed for `sealedFor`. */
function scopeOf(at: string | undefined, sealedFor: string | undefined = at): CallScope & { loads: number } {
  const credential: Credential = {
    values: { token: TOKEN },
    ...(sealedFor !== undefined ? { instance: sealedFor } : {}),
  };
  const scope = {
    loads: 0,
    manifest: manifest({ egress: ['api.example.com'] }),
    ...(at !== undefined ? { instance: at } : {}),
    getCredential: async () => {
      scope.loads++;
      return credential;
    },
    requestCount: { n: 0 },
    maxRequests: 10,
    signal: new AbortController().signal,
  };
  return scope;
}

const get = (url: string): BridgeRequest => ({ url, method: 'GET', headers: {} });
const codeOf = (r: BridgeResult): string => (r.ok ? 'ok' : r.error.code);
/** The Authorization header `server` received with its last request (the echo the plugin reads is redacted). */
const sentAuth = (r: BridgeResult, server: Upstream): unknown => {
  assert.ok(r.ok, JSON.stringify(r));
  return server.received.at(-1)?.headers['authorization'];
};

before(async () => {
  up = await startUpstream();
  tls = await startTlsUpstream();
  instance = `https://tls.example.test:${tls.port}`;
});
after(async () => {
  await Promise.all(bridges.map((b) => b.close()));
  await up.close();
  await tls.close();
});

describe('bridge: a connection’s own instance', () => {
  it('reaches the instance (https, its own port) with the credential, and the default host without it', async () => {
    const b = bridgeWith();
    const scope = scopeOf(instance);
    const reached = await b.dispatch(get(`${instance}/echo`), scope);
    assert.equal(sentAuth(reached, tls), `Bearer ${TOKEN}`);
    assert.ok(reached.ok && !reached.response.body.includes(TOKEN), 'what the plugin reads has it redacted');
    assert.equal(sentAuth(await b.dispatch(get('https://api.example.com/echo'), scope), up), undefined);
    // the same default host from a connection without an instance gets it, as before
    assert.equal(
      sentAuth(await b.dispatch(get('https://api.example.com/echo'), scopeOf(undefined)), up),
      `Bearer ${TOKEN}`,
    );
    // a request that is not for the instance never even loads the credential
    const other = scopeOf(instance);
    await b.dispatch(get('https://api.example.com/echo'), other);
    assert.equal(other.loads, 0);
  });

  it('does not carry the credential across a redirect from the instance to the default host', async () => {
    const b = bridgeWith();
    const r = await b.dispatch(
      get(`${instance}/redirect?to=${encodeURIComponent('https://api.example.com/echo')}`),
      scopeOf(instance),
    );
    assert.equal(sentAuth(r, up), undefined);
    assert.ok(r.ok && r.response.url === 'https://api.example.com/echo');
    assert.equal(tls.received.at(-1)?.headers['authorization'], `Bearer ${TOKEN}`, 'the instance’s hop had it');
  });

  it('refuses the instance’s host on another port or scheme, and hosts that are neither declared nor the instance', async () => {
    const b = bridgeWith();
    const scope = scopeOf(instance);
    for (const [url, code] of [
      [`https://tls.example.test:${tls.port + 1}/echo`, 'GW_ERR_BRIDGE_HOST_NOT_ALLOWED'],
      ['https://tls.example.test/echo', 'GW_ERR_BRIDGE_HOST_NOT_ALLOWED'],
      [`http://tls.example.test:${tls.port}/echo`, 'GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED'],
      ['https://evil.example.net/echo', 'GW_ERR_BRIDGE_HOST_NOT_ALLOWED'],
    ] as const)
      assert.equal(codeOf(await b.dispatch(get(url), scope)), code, url);
    assert.equal(scope.loads, 0);
  });

  it('applies the address rules at every request: a loopback instance without the policy’s allowance is refused', async () => {
    const before = tls.received.length;
    const b = bridgeWith({ allowPrivateCidrs: [] });
    const scope = scopeOf(instance);
    assert.equal(codeOf(await b.dispatch(get(`${instance}/echo`), scope)), 'GW_ERR_BRIDGE_ADDRESS_BLOCKED');
    assert.equal(tls.received.length, before);
  });

  it('reaches an http instance only where the policy allows http instances', async () => {
    const plain = up.origin;
    assert.equal(
      codeOf(await bridgeWith().dispatch(get(`${plain}/echo`), scopeOf(plain))),
      'GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED',
    );
    const b = bridgeWith({ allowHttpInstances: true });
    assert.equal(sentAuth(await b.dispatch(get(`${plain}/echo`), scopeOf(plain)), up), `Bearer ${TOKEN}`);
    // allowing http instances does not make other http origins reachable
    assert.equal(
      codeOf(await b.dispatch(get(`http://127.0.0.1:${tls.port}/echo`), scopeOf(plain))),
      'GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED',
    );
  });

  it('never sends a credential sealed for another instance than the call’s', async () => {
    const b = bridgeWith();
    const before = tls.received.length;
    const moved = await b.dispatch(get(`${instance}/echo`), scopeOf(instance, 'https://gitlab.example.com'));
    assert.equal(codeOf(moved), 'GW_ERR_BRIDGE_CONNECTION_CHANGED');
    assert.ok(!moved.ok && /moved to another instance while this call ran; retry/.test(moved.error.message));
    assert.equal(tls.received.length, before, 'nothing was sent');
    // a credential of an instance is not sent to the default host either
    const up0 = up.received.length;
    const toDefault = await b.dispatch(get('https://api.example.com/echo'), scopeOf(undefined, instance));
    assert.equal(codeOf(toDefault), 'GW_ERR_BRIDGE_CONNECTION_CHANGED');
    assert.equal(up.received.length, up0);
  });
});
