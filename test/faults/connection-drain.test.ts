/**
 * @module test/faults/connection-drain
 * The shutdown drain of host/transport/connection-drain.ts on a plain node:http server and real
 * loopback sockets, for the cases the gateway process cannot be steered into on demand: a listener
 * that is still open when the wait for it to close gives up (slow close hooks). The whole-process
 * behaviour is in test/faults/sigterm.test.ts.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { trackConnections } from '../../host/transport/connection-drain.js';

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A raw client connection: everything it received, and a promise for its close. */
function connect(port: number): { socket: net.Socket; received: () => string; closed: Promise<void>; connected: Promise<void> } {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (data += chunk));
  socket.on('error', () => undefined); // a reset is one of the ways the server may close it
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, received: () => data, closed, connected };
}

describe('connection drain: the listener outlives the wait for it to close', () => {
  // Without the fix a connection accepted after the drain began was never ended: the silent one
  // stays open (the timeout turns that into a failure) and the other one's request runs.
  it('closes each connection accepted after the drain began, without running a request it carried', { timeout: 20_000 }, async () => {
    const ran: string[] = [];
    const { server, port } = await listen((req, res) => {
      ran.push(req.url ?? '');
      res.end('ran');
    });
    const drain = trackConnections(server, { stopListeningWaitMs: 0 });
    await drain.endIdleOnceClosed();
    assert.equal(server.listening, true, 'the listener is still open, as when close hooks are slow');

    const silent = connect(port);
    await silent.closed;

    const talker = connect(port);
    await talker.connected;
    talker.socket.write('GET /late HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await talker.closed;
    assert.equal(talker.received(), '', 'no answer on a connection closed as it arrived');
    assert.deepEqual(ran, [], 'the request it carried did not run');

    // nothing is left for close() to wait on
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  });
});
