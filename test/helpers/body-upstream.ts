/**
 * @module test/helpers/body-upstream
 * A loopback upstream serving large bodies on cue, for tests of the bridge's buffer budget: bodies
 * sent at once, bodies held back until a group of requests is in flight together, and bodies sent
 * but for a tail until the test lets them finish (or breaks their connection), so that a test can
 * know how many bytes the gateway holds without timing anything. Every body is bytes of "a",
 * written honouring back-pressure.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const KiB = 1024;
export const MiB = 1024 * KiB;
const CHUNK = Buffer.alloc(64 * KiB, 0x61);

/**
 * Many bodies of `body` bytes at once, each sent but for its last byte until the test lets it
 * finish (`/held?n=body&first=body-1`): 4 of those fit in `limit` and a 5th does not
 * (5 × (body − 1) > limit), with room to spare for one more read chunk, so of 5 or more such
 * requests exactly 4 are admitted and the rest refused, whatever order the chunks are read in.
 */
export const FOUR_FIT = { body: 512 * KiB, limit: 2 * MiB + 384 * KiB };

/** Writes `n` bytes of "a" honouring back-pressure; then `done`. */
function pump(res: http.ServerResponse, n: number, done: () => void): void {
  let left = n;
  const more = (): void => {
    while (left > 0 && !res.destroyed) {
      const piece = CHUNK.subarray(0, Math.min(CHUNK.length, left));
      left -= piece.length;
      if (!res.write(piece)) return void res.once('drain', more);
    }
    done();
  };
  more();
}

export interface BodyUpstream {
  origin: string;
  /** requests received whose URL starts with `prefix` */
  arrived(prefix: string): number;
  /** a held response (`/held?key=`) sends the rest of its body and ends */
  finish(key: string): void;
  /** a held response's connection is destroyed */
  breakOff(key: string): void;
  close(): Promise<void>;
}

/**
 * `/bytes?n=` n bytes; `/barrier?n=&k=&group=` n bytes once k requests of the group have arrived
 * (so that they are all in flight together); `/held?n=&first=&key=` `first` bytes, then the rest
 * on `finish(key)` or a broken connection on `breakOff(key)`; `/redirect?n=&to=` a 302 with an
 * n-byte body.
 */
export async function startBodyUpstream(): Promise<BodyUpstream> {
  const urls: string[] = [];
  const groups = new Map<string, Array<() => void>>();
  const held = new Map<string, { finish: () => void; breakOff: () => void }>();
  const server = http.createServer((req, res) => {
    urls.push(req.url ?? '');
    const u = new URL(req.url ?? '/', 'http://upstream.invalid');
    const n = Number(u.searchParams.get('n') ?? '0');
    const send = (): void => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      pump(res, n, () => res.end());
    };
    if (u.pathname === '/bytes') return send();
    if (u.pathname === '/barrier') {
      const group = u.searchParams.get('group') ?? '';
      const waiting = groups.get(group) ?? [];
      groups.set(group, waiting);
      waiting.push(send);
      if (waiting.length === Number(u.searchParams.get('k'))) for (const go of waiting.splice(0)) go();
      return;
    }
    if (u.pathname === '/held') {
      const first = Number(u.searchParams.get('first') ?? '0');
      res.writeHead(200, { 'content-type': 'text/plain' });
      pump(res, first, () => undefined);
      // a response the gateway gave up on (its connection closed) is left alone
      held.set(u.searchParams.get('key') ?? '', {
        finish: () => void (res.destroyed || pump(res, n - first, () => res.end())),
        breakOff: () => res.destroy(),
      });
      return;
    }
    if (u.pathname === '/redirect') {
      res.writeHead(302, { location: u.searchParams.get('to') ?? '/bytes?n=1', 'content-type': 'text/plain' });
      return pump(res, n, () => res.end());
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const control = (key: string): { finish: () => void; breakOff: () => void } => {
    const h = held.get(key);
    if (!h) throw new Error(`no held response "${key}"`);
    held.delete(key);
    return h;
  };
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived: (prefix) => urls.filter((x) => x.startsWith(prefix)).length,
    finish: (key) => control(key).finish(),
    breakOff: (key) => control(key).breakOff(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits for a condition (polling; bounded, so that a broken test fails instead of hanging). */
export async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`never happened: ${what}`);
}
