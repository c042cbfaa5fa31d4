/**
 * @module test/security/hostile-egress.test
 * A hostile plugin fetches hosts it did not declare, loopback and metadata addresses by IP (in odd
 * encodings) and by name, other plugins' upstreams directly and through redirects. Each attempt is
 * one execution through the real gateway: it must fail with the named bridge code, and the loopback
 * servers standing in for internal services must receive nothing.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { startSecurityGateway, type SecurityGateway } from '../helpers/security-gateway.js';

describe('a hostile plugin reaching for hosts it may not reach', () => {
  let gw: SecurityGateway;
  let hostileUp: Upstream;
  let fixtureUp: Upstream;
  let internal: Upstream;
  let bombs: http.Server;
  let apiKey: string;

  before(async () => {
    hostileUp = await startUpstream((req) => {
      const to = req.query.get('to');
      return to ? { status: 302, headers: { location: to } } : { json: { path: req.path } };
    });
    fixtureUp = await startUpstream(() => ({ json: { fixture: true } }));
    internal = await startUpstream(() => ({ json: { internal: 'you should never see this' } }));
    // An upstream the plugin may reach, answering with decompression bombs and header floods.
    const zeros = Buffer.alloc(64 * 1024 * 1024);
    const gzip = zlib.gzipSync(zeros);
    const brotli = zlib.brotliCompressSync(zeros);
    bombs = http.createServer((req, res) => {
      if (req.url === '/gzip')
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' }).end(gzip);
      else if (req.url === '/br')
        res.writeHead(200, { 'content-encoding': 'br', 'content-type': 'application/json' }).end(brotli);
      else if (req.url === '/headers')
        res
          .writeHead(200, Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`x-h${i}`, 'v'.repeat(100)])))
          .end('{}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => bombs.listen(0, '127.0.0.1', resolve));
    gw = await startSecurityGateway({
      upstreams: {
        'https://api.hostile.test': hostileUp.origin,
        'https://api.fixture.test': fixtureUp.origin,
        // a declared name the operator mapped (so reachable): here it serves the bombs
        'https://metadata.google.internal': `http://127.0.0.1:${(bombs.address() as AddressInfo).port}`,
      },
      policy: { http: { requestTimeoutMs: 2000, maxResponseBytes: 4 * 1024 * 1024 } },
    });
    apiKey = (await gw.createUser('mallory@example.com')).apiKey;
  });

  after(async () => {
    await gw?.close();
    for (const u of [hostileUp, fixtureUp, internal]) await u?.close();
    await new Promise((resolve) => bombs?.close(resolve));
  });

  const redirect = (to: string) => `https://api.hostile.test/redirect?to=${encodeURIComponent(to)}`;

  it('refuses every forbidden destination with a bridge code, and the targets see nothing', async () => {
    const internalPort = new URL(internal.origin).port;
    const fixturePort = new URL(fixtureUp.origin).port;
    const cases: Array<[url: string, code: RegExp]> = [
      ['https://evil.example/', /HOST_NOT_ALLOWED/],
      ['https://api.fixture.test/not-mine', /HOST_NOT_ALLOWED/],
      ['https://127.0.0.1/', /ADDRESS_BLOCKED/],
      ['https://2130706433/', /ADDRESS_BLOCKED/],
      ['https://0x7f000001/', /ADDRESS_BLOCKED/],
      ['https://127.1/', /ADDRESS_BLOCKED/],
      ['https://0/', /HOST_NOT_ALLOWED|ADDRESS_BLOCKED/],
      ['https://[::1]/', /HOST_NOT_ALLOWED|ADDRESS_BLOCKED/],
      ['https://[::ffff:127.0.0.1]/', /HOST_NOT_ALLOWED|ADDRESS_BLOCKED/],
      ['https://169.254.169.254/latest/meta-data/', /ADDRESS_BLOCKED/],
      ['https://localhost/', /ADDRESS_BLOCKED/],
      [`http://127.0.0.1:${internalPort}/direct`, /SCHEME_NOT_ALLOWED|HOST_NOT_ALLOWED/],
      [`https://127.0.0.1:${internalPort}/direct`, /HOST_NOT_ALLOWED|ADDRESS_BLOCKED/],
      [`https://localhost:${internalPort}/direct`, /HOST_NOT_ALLOWED|ADDRESS_BLOCKED/],
      [`${fixtureUp.origin}/direct`, /SCHEME_NOT_ALLOWED|HOST_NOT_ALLOWED/],
      [`file:///etc/passwd`, /SCHEME_NOT_ALLOWED|BAD_REQUEST/],
      [`https://api.hostile.test:${internalPort}/port-swap`, /HOST_NOT_ALLOWED/],
      [
        redirect(`http://127.0.0.1:${internalPort}/via-redirect`),
        /SCHEME_NOT_ALLOWED|HOST_NOT_ALLOWED|ADDRESS_BLOCKED/,
      ],
      [redirect(`https://127.0.0.1:${internalPort}/via-redirect`), /HOST_NOT_ALLOWED|ADDRESS_BLOCKED/],
      [redirect('https://169.254.169.254/latest/meta-data/'), /ADDRESS_BLOCKED/],
      [redirect('https://localhost/'), /ADDRESS_BLOCKED/],
      [redirect('https://evil.example/'), /HOST_NOT_ALLOWED/],
      [redirect(`http://127.0.0.1:${fixturePort}/via-redirect`), /HOST_NOT_ALLOWED|SCHEME_NOT_ALLOWED/],
      [redirect('https://api.fixture.test/via-redirect'), /HOST_NOT_ALLOWED/],
    ];
    const items = await gw.batch(
      'hostile-egress',
      cases.map(([url]) => ({ tool: 'egress_fetch', args: { url } })),
      apiKey,
    );
    assert.equal(items.length, cases.length);
    items.forEach((item, i) => {
      const [url, code] = cases[i]!;
      assert.equal(item.result, undefined, `${url} must not be reached: ${JSON.stringify(item)}`);
      assert.equal(item.code, 'GW_ERR_SANDBOX_HANDLER_THREW', `${url}: ${JSON.stringify(item)}`);
      assert.match(item.error, /GW_ERR_BRIDGE_[A-Z_]+/, url);
      assert.match(item.error, code, `${url}: ${item.error}`);
    });
    assert.deepEqual(
      internal.requests.map((r) => r.path),
      [],
      'the internal service received nothing',
    );
    assert.deepEqual(
      fixtureUp.requests.map((r) => r.path),
      [],
      "another plugin's upstream received nothing",
    );
    const redirects = hostileUp.requests.filter((r) => r.path === '/redirect').length;
    assert.equal(hostileUp.requests.length, redirects, "only the redirecting hops reached the plugin's own upstream");
  });

  it('still reaches its own declared host, and over MCP refuses the same way', async () => {
    const [ok] = await gw.mcpExecute(
      [{ tool: 'egress_fetch', args: { url: 'https://api.hostile.test/allowed' } }],
      apiKey,
    );
    assert.equal(ok.result?.status, 200, JSON.stringify(ok));
    assert.equal(
      ok.result.url,
      'https://api.hostile.test/allowed',
      "the final URL is in the plugin's own origin, never the mapped one",
    );
    const [refused] = await gw.mcpExecute(
      [{ tool: 'egress_fetch', args: { url: 'https://169.254.169.254/' } }],
      apiKey,
    );
    assert.equal(refused.code, 'GW_ERR_SANDBOX_HANDLER_THREW');
    assert.match(refused.error, /GW_ERR_BRIDGE_ADDRESS_BLOCKED/);
  });

  it('caps decompression bombs and header floods from a reachable upstream', async () => {
    const urls = ['/gzip', '/br', '/headers'].map((p) => `https://metadata.google.internal${p}`);
    const t0 = performance.now();
    const items = await gw.batch(
      'hostile-egress',
      urls.map((url) => ({ tool: 'egress_fetch', args: { url } })),
      apiKey,
    );
    assert.match(items[0].error, /GW_ERR_BRIDGE_RESPONSE_TOO_LARGE/, `gzip: ${JSON.stringify(items[0])}`);
    assert.match(items[1].error, /GW_ERR_BRIDGE_RESPONSE_TOO_LARGE/, `brotli: ${JSON.stringify(items[1])}`);
    assert.match(items[2].error, /GW_ERR_BRIDGE_(NETWORK|RESPONSE_TOO_LARGE)/, `headers: ${JSON.stringify(items[2])}`);
    assert.ok(performance.now() - t0 < 5000, 'refused quickly, not after inflating 64 MiB');
    assert.equal(gw.gateway.sandbox.stats().crashes, 0);
  });

  it('audits each refused attempt as a failure with its code, and legitimate plugins answer right after', async () => {
    const rows = await gw.gateway.db.all<{
      tool: string;
      success: number;
      error_code: string | null;
      error: string | null;
    }>("SELECT tool, success, error_code, error FROM audit_events WHERE integration = 'hostile-egress'");
    assert.equal(rows.filter((r) => r.success === 0).length, 24 + 1 + 3, 'table cases, the MCP refusal, the bombs');
    assert.ok(
      rows
        .filter((r) => r.success === 0)
        .every((r) => r.error_code === 'GW_ERR_SANDBOX_HANDLER_THREW' && /GW_ERR_BRIDGE_/.test(r.error ?? '')),
    );
    const [echo] = await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: 'after egress' } }], apiKey);
    assert.equal(echo.result?.text, 'after egress');
    const health = await fetch(`${gw.url}/healthz`);
    assert.equal(health.status, 200);
  });
});
