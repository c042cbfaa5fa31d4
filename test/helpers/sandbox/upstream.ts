/**
 * @module test/helpers/sandbox/upstream
 * A loopback upstream for sandbox tests (127.0.0.1 only): JSON, header echo, an error page that
 * quotes the Authorization header, open redirects, a large body, a slow and a hanging endpoint,
 * UTF-8 text of 1–4 bytes a character, and bodies that are not UTF-8 text (every byte value, n
 * bytes of 0xff, invalid sequences, a byte-order mark, a Latin-1 error page quoting the
 * Authorization header, the request's own bytes echoed).
 * Every request it receives is recorded, so tests can prove what did (not) reach it.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** the body decoded as UTF-8 */
  body: string;
  /** the body's bytes */
  bytes: Buffer;
}

/** the 256 byte values, in order */
export const EVERY_BYTE = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
/** text of one, two, three and four UTF-8 bytes a character, and a U+FFFD of its own (served as JSON by /utf8) */
export const UTF8_TEXT = 'héllo ✓ 日本 😀 \ufffd';
/** text with invalid UTF-8 in it: a stray byte, a bad continuation, sequences cut short (/invalid-utf8) */
export const INVALID_UTF8 = Buffer.concat([
  Buffer.from('ok '),
  Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82, 0x20, 0xf0, 0x9f, 0x98, 0xed, 0xa0, 0x80]),
  Buffer.from(' end'),
]);

export interface Upstream {
  origin: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

const FIXTURES = new URL('../../../../test/fixtures/sandbox/', import.meta.url);
export const TEST_CA = fs.readFileSync(new URL('test-only-tls-cert.pem', FIXTURES), 'utf8');
const TEST_KEY = fs.readFileSync(new URL('test-only-tls-key.pem', FIXTURES), 'utf8');

function handle(received: Received[]): http.RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const body = bytes.toString('utf8');
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, bytes });
      const url = new URL(req.url ?? '/', 'http://upstream.invalid');
      const json = (status: number, value: unknown, extra: Record<string, string> = {}): void => {
        res.writeHead(status, { 'content-type': 'application/json', ...extra });
        res.end(JSON.stringify(value));
      };
      switch (url.pathname) {
        case '/json':
          return json(200, { items: [1, 2, 3] });
        case '/echo':
          return json(
            200,
            { youSent: req.headers, url: req.url, method: req.method, body },
            { 'x-echo-auth': String(req.headers['authorization'] ?? '') },
          );
        case '/echo-escaped': {
          // the Authorization header echoed as other JSON encoders write it: PHP escapes "/", .NET "+", some every character
          const auth = String(req.headers['authorization'] ?? '');
          const style = url.searchParams.get('style');
          const text = JSON.stringify({ auth });
          const escaped =
            style === 'php'
              ? text.replace(/\//g, '\\/')
              : style === 'dotnet'
                ? text.replace(/\+/g, '\\u002B')
                : text.replace(
                    /"auth":"(.*)"/,
                    (_m, v: string) =>
                      `"auth":"${[...v].map((c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')).join('')}"`,
                  );
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(escaped);
        }
        case '/session':
          res.writeHead(200, {
            'content-type': 'application/json',
            'set-cookie': 'session=s3ss10n-value; HttpOnly',
            'authentication-info': 'nextnonce="abc"',
            'x-kept': 'yes',
          });
          return res.end('{}');
        case '/status/401':
          return json(401, { error: `invalid token ${String(req.headers['authorization'] ?? '')}` });
        case '/redirect': {
          const status = Number(url.searchParams.get('status') ?? '302');
          res.writeHead(status, { location: url.searchParams.get('to') ?? '/json' });
          return res.end();
        }
        case '/big': {
          const chunk = 'x'.repeat(64 * 1024);
          res.writeHead(200, { 'content-type': 'text/plain' });
          let sent = 0;
          const pump = (): void => {
            while (sent < 64 && !res.destroyed) {
              sent++;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end();
          };
          return pump();
        }
        case '/every-byte':
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          return res.end(EVERY_BYTE);
        case '/ff': {
          const n = Number(url.searchParams.get('n') ?? '0');
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(n) });
          return res.end(Buffer.alloc(n, 0xff));
        }
        case '/utf8':
          return json(200, { text: UTF8_TEXT });
        case '/invalid-utf8':
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end(INVALID_UTF8);
        case '/bom':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"é"}')]));
        case '/latin1-401': {
          // an error page in Latin-1 (not UTF-8: ü is one byte) quoting the header, raw and in base64
          const auth = String(req.headers['authorization'] ?? '');
          res.writeHead(401, { 'content-type': 'text/html; charset=iso-8859-1' });
          return res.end(
            Buffer.from(`<p>Ungültiges Token: ${auth} (${Buffer.from(auth).toString('base64')})</p>`, 'latin1'),
          );
        }
        case '/echo-bytes':
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          return res.end(bytes);
        case '/slow':
          return void setTimeout(() => json(200, { slow: true }), Number(url.searchParams.get('ms') ?? '500'));
        case '/hang':
          return; // never answers
        default:
          return json(404, { error: 'not found' });
      }
    });
  };
}

async function listen(server: http.Server | https.Server, scheme: string, received: Received[]): Promise<Upstream> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `${scheme}://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

export function startUpstream(): Promise<Upstream> {
  const received: Received[] = [];
  return listen(http.createServer(handle(received)), 'http', received);
}

/** HTTPS on loopback with the test-only certificate for "tls.example.test". */
export function startTlsUpstream(): Promise<Upstream> {
  const received: Received[] = [];
  return listen(https.createServer({ key: TEST_KEY, cert: TEST_CA }, handle(received)), 'https', received);
}
