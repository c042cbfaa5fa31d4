/**
 * @module host/security-report/hostile-upstream
 * The upstream the attack plugins are allowed to reach (their declared hosts are mapped to it, on
 * 127.0.0.1), behaving as a hostile or careless API would: it echoes the credential it received in
 * every form a redaction could miss, redirects wherever it is told, and answers with bodies built
 * to exhaust the gateway. Beside it, the canary: a loopback server standing for an internal
 * service, which no case may ever reach.
 */
import { gzipSync } from 'node:zlib';
import type http from 'node:http';
import { startUpstream, type RecordedRequest, type Upstream, type UpstreamReply } from './recording-server.js';

/** The secret the request carried: a bearer token, or the password half of HTTP Basic. */
export function credentialOf(req: RecordedRequest): string {
  const auth = String(req.headers['authorization'] ?? '');
  if (/^Bearer /i.test(auth)) return auth.slice(7);
  if (/^Basic /i.test(auth)) return Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':').slice(1).join(':');
  return '';
}

/** Every byte as %XX (the form `encodeURIComponent` leaves alone for letters and digits). */
export function percentEveryByte(text: string, lowerHex = false): string {
  const hex = [...Buffer.from(text, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0')).join('');
  return lowerHex ? hex : hex.toUpperCase();
}

/** Every character as a JSON `\uXXXX` escape. */
const jsonEscapeEvery = (text: string): string =>
  [...text].map((c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')).join('');

/** The credential in the forms /echo/:form writes it into a JSON body. */
const BODY_FORMS: Record<string, (token: string, auth: string) => string> = {
  raw: (t) => t,
  lower: (t) => t.toLowerCase(),
  upper: (t) => t.toUpperCase(),
  percent: (t) => percentEveryByte(t),
  'percent-lower': (t) => percentEveryByte(t, true),
  base64: (t) => Buffer.from(t).toString('base64'),
  base64url: (t) => Buffer.from(t).toString('base64url'),
  'base64-header': (_t, auth) => Buffer.from(auth).toString('base64'),
  header: (_t, auth) => auth,
};

/** /echo/:form: the credential in a body, a header, a header's name, the status line, or a redirect. */
function echo(form: string, req: RecordedRequest): UpstreamReply {
  const token = credentialOf(req);
  const auth = String(req.headers['authorization'] ?? '');
  const body = BODY_FORMS[form];
  if (body) return { json: { form, echoed: body(token, auth) } };
  switch (form) {
    case 'json-escaped':
      return { body: `{"echoed":"${jsonEscapeEvery(token)}"}`, headers: { 'content-type': 'application/json' } };
    case 'bytes':
      return {
        body: Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(`token=${token}`)]),
        headers: { 'content-type': 'application/octet-stream' },
      };
    case 'in-header':
      return { json: {}, headers: { 'x-echo': token } };
    case 'in-header-lower':
      return { json: {}, headers: { 'x-echo': token.toLowerCase() } };
    case 'in-header-name':
      return { json: {}, headers: { [`x-t-${token}`]: '1' } };
    case 'in-status-text':
      return { status: 200, statusText: `OK ${token}`, json: {} };
    case 'in-set-cookie':
      return { json: {}, headers: { 'set-cookie': `session=${token}; HttpOnly` } };
    case 'in-location':
      return { status: 302, headers: { location: `/landing?t=${token}` } };
    case 'in-location-lower':
      return { status: 302, headers: { location: `/landing?t=${token.toLowerCase()}` } };
    case 'in-location-percent':
      return { status: 302, headers: { location: `/landing?t=${percentEveryByte(token)}` } };
    case 'in-redirect-host':
      return { status: 302, headers: { location: `https://${token}.evil.test/` } };
    case 'in-redirect-punycode':
      return { status: 302, headers: { location: `https://${token}\u00e4.evil.test/` } };
    default:
      return { status: 404, json: { error: `no echo form ${form}` } };
  }
}

/** A body of `bytes` bytes of "x", streamed (it need not fit in memory at once). */
function stream(bytes: number): UpstreamReply {
  return {
    raw: (res: http.ServerResponse) => {
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      let sent = 0;
      res.writeHead(200, { 'content-type': 'text/plain' });
      const pump = (): void => {
        while (sent < bytes && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    },
  };
}

let gzipBomb: Buffer | undefined;
/** 32 MiB of zeros, gzipped to about 32 KiB (made once, when first asked for). */
const gzipBombBody = (): Buffer => (gzipBomb ??= gzipSync(Buffer.alloc(32 * 1024 * 1024)));

/** The answer to one request, by path. */
export function answer(req: RecordedRequest): UpstreamReply | Promise<UpstreamReply> {
  const p = req.path;
  if (p.startsWith('/echo/')) return echo(p.slice('/echo/'.length), req);
  switch (p) {
    case '/json':
      return { json: { items: [1, 2, 3] } };
    case '/echo':
      return {
        json: { youSent: req.headers, url: req.url, method: req.method, body: req.body },
        headers: { 'x-echo-auth': String(req.headers['authorization'] ?? '') },
      };
    case '/status/401':
      return { status: 401, json: { error: `invalid token ${String(req.headers['authorization'] ?? '')}` } };
    case '/redirect':
      return {
        status: Number(req.query.get('status') ?? '302'),
        headers: { location: req.query.get('to') ?? '/json' },
      };
    case '/loop':
      return { status: 302, headers: { location: '/loop' } };
    case '/landing':
      return { json: { landed: true, url: req.url } };
    case '/big':
      return stream(12 * 1024 * 1024);
    case '/gzip-bomb':
      return { body: gzipBombBody(), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } };
    case '/header-flood':
      return {
        json: {},
        headers: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`x-h${i}`, 'v'.repeat(100)])),
      };
    case '/dense':
      return { body: '[' + '{},'.repeat(1_000_000) + '{}]', headers: { 'content-type': 'application/json' } };
    case '/deep':
      return { body: '['.repeat(550_000) + ']'.repeat(550_000), headers: { 'content-type': 'application/json' } };
    case '/slow':
      return new Promise((resolve) =>
        setTimeout(() => resolve({ json: { slow: true } }), Number(req.query.get('ms') ?? '500')),
      );
    case '/hang':
      return { raw: () => undefined };
    default:
      return { status: 404, json: { error: 'not found', path: p } };
  }
}

export interface AttackTargets {
  /** the hostile upstream the attack plugins' declared hosts are mapped to */
  upstream: Upstream;
  /** the internal service no case may reach */
  canary: Upstream;
  close(): Promise<void>;
}

export async function startAttackTargets(): Promise<AttackTargets> {
  const upstream = await startUpstream(answer);
  const canary = await startUpstream(() => ({ json: { internal: 'an internal service: no case may reach it' } }));
  return {
    upstream,
    canary,
    async close() {
      await upstream.close();
      await canary.close();
    },
  };
}
