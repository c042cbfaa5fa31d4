/**
 * @module test/helpers/fault-upstream
 * A raw loopback HTTP server that misbehaves on purpose: answers 500, hangs, resets the
 * connection, trickles bytes, or streams an endless body while honouring back-pressure (so the
 * test never holds more than a socket buffer of it). Every loop is bounded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FaultMode = 'ok' | 'error500' | 'hang' | 'reset' | 'trickle' | 'huge' | 'slow';

export interface FaultUpstream {
  origin: string;
  mode: FaultMode;
  /** ms the "slow" mode waits before answering */
  slowMs: number;
  /** bytes written by the "huge" mode in its latest response */
  hugeBytesSent: number;
  /** resolves when the latest "huge" response stopped (client went away or cap reached) */
  hugeDone: Promise<void>;
  requests: number;
  /** "slow" requests being answered now, and the most at once */
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
}

const HUGE_CAP = 1024 * 1024 * 1024; // 1 GiB: the upper bound of what the huge mode will ever send
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

export async function startFaultUpstream(mode: FaultMode = 'ok'): Promise<FaultUpstream> {
  const timers = new Set<NodeJS.Timeout>();
  let resolveHuge: () => void = () => undefined;
  const state: FaultUpstream = {
    origin: '',
    mode,
    slowMs: 1000,
    hugeBytesSent: 0,
    hugeDone: Promise.resolve(),
    requests: 0,
    inFlight: 0,
    maxInFlight: 0,
    close: async () => undefined,
  };
  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const server = http.createServer((req, res) => {
    state.requests++;
    req.resume();
    switch (state.mode) {
      case 'ok':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, url: req.url }));
        return;
      case 'slow':
        state.inFlight++;
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
        later(state.slowMs, () => {
          state.inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, url: req.url }));
        });
        return;
      case 'error500':
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'upstream exploded' }));
        return;
      case 'hang':
        return; // never answers; the connection is destroyed by close()
      case 'reset':
        req.socket.destroy();
        return;
      case 'trickle': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"slow":"');
        let n = 0;
        const drip = (): void => {
          if (res.destroyed || n++ >= 600) return void res.end('"}');
          res.write('x');
          later(100, drip);
        };
        drip();
        return;
      }
      case 'huge': {
        state.hugeBytesSent = 0;
        state.hugeDone = new Promise<void>((resolve) => (resolveHuge = resolve));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"data":"');
        const pump = (): void => {
          while (!res.destroyed && state.hugeBytesSent < HUGE_CAP) {
            state.hugeBytesSent += CHUNK.length;
            if (!res.write(CHUNK)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end('"}');
          resolveHuge();
        };
        res.on('close', () => resolveHuge());
        pump();
        return;
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
