/**
 * @module test/faults/connection-drain
 * The shutdown drain of host/transport/connection-drain.ts on a plain node:http server and real
 * loopback sockets, for the cases the gateway process cannot be steered into on demand: a listener
 * that is still open when the wait for it to close gives up (slow close hooks), answers held until
 * the test releases them, and a request pipelined behind one (fastify would answer that one 503).
 * The whole-process behaviour is in test/faults/sigterm.test.ts.
 */
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
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
function connect(port: number): {
  socket: net.Socket;
  received: () => string;
  closed: Promise<void>;
  connected: Promise<void>;
} {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (data += chunk));
  socket.on('error', () => undefined); // a reset is one of the ways the server may close it
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, received: () => data, closed, connected };
}

/** Answers held until released, by URL: each answers its own URL as the body. */
function heldAnswers(): {
  handler: http.RequestListener;
  arrived: (url: string) => Promise<void>;
  release: (url: string) => void;
} {
  const held = new Map<string, () => void>();
  const events = new EventEmitter();
  return {
    handler: (req, res) => {
      const url = req.url ?? '';
      held.set(url, () => res.end(url));
      events.emit(url);
    },
    arrived: async (url) => {
      if (!held.has(url)) await once(events, url);
    },
    release: (url) => held.get(url)!(),
  };
}

/** Splits what a raw client received into responses: status line, lower-cased headers, body. */
function responses(received: string): Array<{ status: string; headers: Record<string, string>; body: string }> {
  return received
    .split(/(?=HTTP\/1\.1 )/)
    .filter((r) => r.length > 0)
    .map((r) => {
      const [head = '', body = ''] = r.split('\r\n\r\n');
      const [status = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      return { status, headers, body };
    });
}

const GET = (url: string) => `GET ${url} HTTP/1.1\r\nHost: localhost\r\n\r\n`;

// Node itself sends an answer prepared while the server closes with `Connection: keep-alive`.
describe('connection drain: answers in flight when the server closes', () => {
  /** A connection with a request to `url` in flight (its answer held), and the server closing and drained. */
  async function closingWith(url: string) {
    const answers = heldAnswers();
    const { server, port } = await listen(answers.handler);
    const drain = trackConnections(server);
    const client = connect(port);
    client.socket.write(GET(url));
    await answers.arrived(url);
    const serverClosed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    await drain.endIdleOnceClosed();
    return { answers, client, serverClosed };
  }

  it(
    'sends an answer still in flight with Connection: close, then closes the connection',
    { timeout: 20_000 },
    async () => {
      const { answers, client, serverClosed } = await closingWith('/slow');
      answers.release('/slow');
      await client.closed;
      const [answer, ...more] = responses(client.received());
      assert.equal(answer?.status, 'HTTP/1.1 200 OK');
      assert.equal(answer?.body, '/slow');
      assert.equal(answer?.headers['connection'], 'close', JSON.stringify(answer?.headers));
      assert.deepEqual(more, []);
      await serverClosed;
    },
  );

  it(
    'says Connection: close only on the last answer of a connection: a request pipelined behind it is still answered',
    { timeout: 20_000 },
    async () => {
      const { answers, client, serverClosed } = await closingWith('/first');
      // a request that begins while closing, behind the one in flight on the same connection
      client.socket.write(GET('/second'));
      await answers.arrived('/second');
      answers.release('/first');
      answers.release('/second');
      await client.closed;
      const [first, second, ...more] = responses(client.received());
      assert.equal(first?.body, '/first');
      assert.notEqual(
        first?.headers['connection'],
        'close',
        'the first answer keeps the connection for the one behind it',
      );
      assert.equal(second?.body, '/second', 'the pipelined request is answered');
      assert.equal(second?.headers['connection'], 'close', JSON.stringify(second?.headers));
      assert.deepEqual(more, []);
      await serverClosed;
    },
  );
});

describe('connection drain: the listener outlives the wait for it to close', () => {
  // Without the fix a connection accepted after the drain began was never ended: the silent one
  // stays open (the timeout turns that into a failure) and the other one's request runs.
  it(
    'closes each connection accepted after the drain began, without running a request it carried',
    { timeout: 20_000 },
    async () => {
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
    },
  );
});
