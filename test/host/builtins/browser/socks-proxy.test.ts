/**
 * @module test/host/builtins/browser/socks-proxy.test
 * The browser's SOCKS5 proxy, spoken to byte by byte as Chromium speaks it: a name is resolved by
 * the proxy, every address judged, and the connection made to the very address judged — so a name
 * that answers an allowed address first and a forbidden one next (DNS rebinding) is refused, and a
 * refusal is reported. A client that never finishes its handshake is dropped.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AddressGuard, type Refusal } from '../../../../host/builtins/browser/address-guard.js';
import { startAddressProxy, type AddressProxy } from '../../../../host/builtins/browser/socks-proxy.js';

/** One SOCKS5 CONNECT by host name; resolves to the reply code and, on success, the socket. */
function socksConnect(proxy: AddressProxy, host: string, port: number): Promise<{ code: number; socket: net.Socket }> {
  const proxyPort = Number(new URL(proxy.server).port);
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxyPort, '127.0.0.1');
    socket.once('error', reject);
    let stage = 0;
    socket.on('data', (d: Buffer) => {
      if (stage === 0) {
        assert.deepEqual([...d.subarray(0, 2)], [5, 0]);
        stage = 1;
        const name = Buffer.from(host, 'latin1');
        const req = Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, Buffer.from([port >> 8, port & 255])]);
        // sent in two pieces: the proxy must read a request that arrives split
        socket.write(req.subarray(0, 3));
        setTimeout(() => socket.write(req.subarray(3)), 20);
      } else if (stage === 1) {
        stage = 2;
        socket.removeAllListeners('data');
        resolve({ code: d[1] ?? -1, socket });
      }
    });
    socket.write(Buffer.from([5, 1, 0]));
  });
}

describe('the address proxy', () => {
  let server: http.Server;
  let forbidden: http.Server;
  let port: number;
  const hits: string[] = [];
  let answers: string[] = [];
  const refusals: Refusal[] = [];
  let proxy: AddressProxy;

  before(async () => {
    server = http.createServer((req, res) => void (hits.push(`allowed ${req.url}`), res.end('allowed')));
    forbidden = http.createServer((req, res) => void (hits.push(`forbidden ${req.url}`), res.end('forbidden')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((r) => forbidden.listen(port, '127.0.0.2', r));
    // each look-up of "rebind.test" takes the next answer
    const guard = new AddressGuard(['127.0.0.1/32'], (host, _o, cb) => {
      if (host !== 'rebind.test') return cb(Object.assign(new Error('nx'), { code: 'ENOTFOUND' }), []);
      cb(null, [{ address: answers.shift() ?? '127.0.0.2', family: 4 }]);
    });
    proxy = await startAddressProxy({
      target: (h, p) => guard.target(h, p),
      onRefused: (r) => refusals.push(r),
      connectTimeoutMs: 2000,
    });
  });

  after(async () => {
    await proxy.close();
    server.close();
    forbidden.close();
  });

  it('connects to an allowed address and carries the bytes both ways', async () => {
    answers = ['127.0.0.1'];
    const { code, socket } = await socksConnect(proxy, 'rebind.test', port);
    assert.equal(code, 0);
    const body = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.write('GET /one HTTP/1.1\r\nHost: rebind.test\r\nConnection: close\r\n\r\n');
    });
    assert.match(body, /allowed$/);
    assert.deepEqual(hits, ['allowed /one']);
  });

  it('refuses a name that now answers a forbidden address (rebinding), and reports it; literals too', async () => {
    answers = ['127.0.0.2'];
    const rebound = await socksConnect(proxy, 'rebind.test', port);
    assert.equal(rebound.code, 2, 'connection not allowed by ruleset');
    rebound.socket.destroy();
    for (const literal of ['127.0.0.2', '169.254.169.254', '10.0.0.1', '::1']) {
      const r = await socksConnect(proxy, literal, port);
      assert.equal(r.code, 2, literal);
      r.socket.destroy();
    }
    assert.deepEqual(
      refusals.map((r) => `${r.host} ${r.range}`),
      ['rebind.test loopback', '127.0.0.2 loopback', '169.254.169.254 linkLocal', '10.0.0.1 private', '::1 loopback'],
    );
    assert.deepEqual(hits, ['allowed /one'], 'the forbidden server was never reached');
  });

  it('answers "host unreachable" for a name that does not resolve, and "refused" for a closed port', async () => {
    const missing = await socksConnect(proxy, 'nowhere.test', port);
    assert.equal(missing.code, 4);
    missing.socket.destroy();
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    answers = ['127.0.0.1'];
    const refused = await socksConnect(proxy, 'rebind.test', closedPort);
    assert.equal(refused.code, 5);
    refused.socket.destroy();
  });

  it('refuses a client that offers only authentication methods, and drops a request that is not CONNECT', async () => {
    const proxyPort = Number(new URL(proxy.server).port);
    const reply = await new Promise<number[]>((resolve) => {
      const s = net.connect(proxyPort, '127.0.0.1', () => s.write(Buffer.from([5, 1, 2])));
      s.once('data', (d: Buffer) => resolve([...d]));
    });
    assert.deepEqual(reply, [5, 0xff]);
    const bind = await new Promise<number>((resolve) => {
      const s = net.connect(proxyPort, '127.0.0.1', () => s.write(Buffer.from([5, 1, 0])));
      s.once('data', () => {
        s.once('data', (d: Buffer) => resolve(d[1] ?? -1));
        s.write(Buffer.from([5, 2, 0, 1, 127, 0, 0, 1, 0, 80]));
      });
    });
    assert.equal(bind, 7, 'command not supported');
  });
});
