/**
 * @module host/builtins/browser/socks-proxy
 * A SOCKS5 proxy on loopback that every connection of one browser context goes through (Chromium's
 * per-context `proxyServer`): page loads, sub-resources, redirect hops, WebSockets, fetches from
 * workers alike. Chromium hands a SOCKS5 proxy the host NAME and resolves nothing itself, so the
 * proxy is where the name is resolved, every address judged (address-guard.ts) and the connection
 * made — to the address judged, which leaves no window for DNS rebinding between a check and a
 * connect. A refusal is answered "not allowed by ruleset" (Chromium: ERR_SOCKS_CONNECTION_FAILED)
 * and reported to the context, whose tool call then names the host.
 *
 * Only what Chromium sends is spoken: no authentication (method 0), CONNECT only. A client that
 * stays silent past the handshake deadline is dropped. Any local process could use the port as a
 * proxy to public addresses (never to private ones); docs/security.md says so.
 */
import net from 'node:net';
import type { Refusal, Target } from './address-guard.js';

export interface AddressProxy {
  /** `socks5://127.0.0.1:<port>`, for Chromium */
  readonly server: string;
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** where a connection to a host and port may go */
  target(host: string, port: number): Promise<Target>;
  onRefused(refusal: Refusal): void;
  /** how long connecting upstream may take, ms */
  connectTimeoutMs: number;
}

const HANDSHAKE_MS = 10_000;

/** SOCKS5 reply codes (RFC 1928 §6) */
const REPLY = { ok: 0, failure: 1, notAllowed: 2, netUnreachable: 3, hostUnreachable: 4, refused: 5, command: 7 };

export async function startAddressProxy(options: ProxyOptions): Promise<AddressProxy> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const server = net.createServer((client) => {
    track(client);
    serveClient(client, options, track);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    server: `socks5://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

interface ConnectRequest {
  host: string;
  port: number;
  /** bytes of the request */
  length: number;
}

/** The CONNECT request at the start of `buf`: undefined while incomplete, 'bad' when not one. */
function parseRequest(buf: Buffer): ConnectRequest | 'bad' | undefined {
  if (buf.length < 5) return undefined;
  if (buf[0] !== 5 || buf[1] !== 1 || buf[2] !== 0) return 'bad';
  const atyp = buf[3];
  const [start, hostBytes] = atyp === 1 ? [4, 4] : atyp === 4 ? [4, 16] : atyp === 3 ? [5, buf[4] ?? 0] : [0, -1];
  if (hostBytes < 0) return 'bad';
  const end = start + hostBytes;
  if (buf.length < end + 2) return undefined;
  const raw = buf.subarray(start, end);
  const host =
    atyp === 1
      ? [...raw].join('.')
      : atyp === 4
        ? (raw.toString('hex').match(/.{4}/g) ?? []).join(':')
        : raw.toString('latin1');
  return { host, port: buf.readUInt16BE(end), length: end + 2 };
}

function reply(socket: net.Socket, code: number): void {
  socket.write(Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]));
  if (code !== REPLY.ok) socket.end();
}

/** Reads the greeting and the request, then connects (or refuses). */
function serveClient(client: net.Socket, options: ProxyOptions, track: (s: net.Socket) => void): void {
  // a client going away mid-way is no fault of ours
  client.on('error', () => undefined);
  const deadline = setTimeout(() => client.destroy(), HANDSHAKE_MS);
  let buf = Buffer.alloc(0);
  let greeted = false;
  const onData = (chunk: Buffer): void => {
    buf = Buffer.concat([buf, chunk]);
    if (!greeted) {
      if (buf.length < 2) return;
      const methods = buf[1] ?? 0;
      if (buf[0] !== 5 || buf.length < 2 + methods) return void (buf[0] !== 5 && client.destroy());
      const offersNoAuth = buf.subarray(2, 2 + methods).includes(0);
      buf = buf.subarray(2 + methods);
      if (!offersNoAuth) return void client.end(Buffer.from([5, 0xff]));
      client.write(Buffer.from([5, 0]));
      greeted = true;
    }
    const request = parseRequest(buf);
    if (request === undefined) return;
    client.off('data', onData);
    clearTimeout(deadline);
    if (request === 'bad') return reply(client, REPLY.command);
    client.pause();
    void connectUpstream(client, request, buf.subarray(request.length), options, track);
  };
  client.on('data', onData);
  client.once('close', () => clearTimeout(deadline));
}

async function connectUpstream(
  client: net.Socket,
  request: ConnectRequest,
  rest: Buffer,
  options: ProxyOptions,
  track: (s: net.Socket) => void,
): Promise<void> {
  const target = await options
    .target(request.host, request.port)
    .catch((): Target => ({ kind: 'unresolved', reason: 'lookup failed' }));
  if (client.destroyed) return;
  if (target.kind === 'refused') {
    options.onRefused({ host: request.host, range: target.range, at: Date.now() });
    return reply(client, REPLY.notAllowed);
  }
  if (target.kind === 'unresolved') return reply(client, REPLY.hostUnreachable);
  const upstream = net.connect({ host: target.address, port: request.port, timeout: options.connectTimeoutMs });
  track(upstream);
  let answered = false;
  const refuse = (code: number): void => {
    if (answered) return void client.destroy();
    answered = true;
    reply(client, code);
    upstream.destroy();
  };
  upstream.once('timeout', () => refuse(REPLY.hostUnreachable));
  upstream.once('error', (err: NodeJS.ErrnoException) =>
    refuse(
      err.code === 'ECONNREFUSED'
        ? REPLY.refused
        : err.code === 'ENETUNREACH'
          ? REPLY.netUnreachable
          : REPLY.hostUnreachable,
    ),
  );
  upstream.once('connect', () => {
    answered = true;
    upstream.setTimeout(0);
    reply(client, REPLY.ok);
    if (rest.length > 0) upstream.write(rest);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
}
