/**
 * @module bench/loopback-upstream
 * The provider stand-in for benchmarks: an HTTP server on 127.0.0.1 that answers every request
 * with a small JSON body after a configurable delay (0 ms or 20 ms in the cases). Unlike the test
 * helper it keeps no record of requests, so a long run does not grow the process.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackUpstream {
  origin: string;
  /** requests answered so far */
  readonly served: number;
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export async function startLoopbackUpstream(): Promise<LoopbackUpstream> {
  let delayMs = 0;
  let served = 0;
  const body = JSON.stringify({
    ok: true,
    items: [
      { id: 1, name: 'alpha' },
      { id: 2, name: 'beta' },
    ],
  });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = (): void => {
        served++;
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
        });
        res.end(body);
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    get served() {
      return served;
    },
    setDelay(ms) {
      delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
