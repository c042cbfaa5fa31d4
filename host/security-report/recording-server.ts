/**
 * @module host/security-report/recording-server
 * A real HTTP server on 127.0.0.1 that stands in for a provider (GitHub, Slack, …) or for a hostile
 * upstream. Every request is recorded; the handler decides the answer (a reply, or `raw` to write
 * the answer itself: a status line of its own, bytes, a stream). Used by the security report and
 * by the tests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fail } from '../../contracts/errors.js';

export interface RecordedRequest {
  method: string;
  /** path without the query string */
  path: string;
  /** raw URL as received (path + query) */
  url: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** the body's bytes as received (for a binary upload, which `body` decodes lossily) */
  bytes: Uint8Array;
  /** parsed JSON body, or undefined */
  json: unknown;
}

export interface UpstreamReply {
  status?: number;
  /** the reason phrase of the status line (default: the standard one) */
  statusText?: string;
  /** a header given several values is sent as that many lines */
  headers?: Record<string, string | string[]> | undefined;
  /** sent as JSON */
  json?: unknown;
  /** sent as is (text, or bytes such as an image) */
  body?: string | Uint8Array;
  /** writes the whole answer itself (a stream, a connection left hanging); the fields above are ignored */
  raw?: (res: http.ServerResponse) => void;
}

export type UpstreamHandler = (req: RecordedRequest) => UpstreamReply | Promise<UpstreamReply>;

export interface Upstream {
  origin: string;
  requests: RecordedRequest[];
  /** the most recent request (throws when there is none) */
  last(): RecordedRequest;
  setHandler(handler: UpstreamHandler): void;
  close(): Promise<void>;
}

export async function startUpstream(handler: UpstreamHandler = () => ({ json: {} })): Promise<Upstream> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = raw.toString('utf8');
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const rec: RecordedRequest = {
        method: req.method ?? 'GET',
        path: u.pathname,
        url: req.url ?? '/',
        query: u.searchParams,
        headers: req.headers,
        body,
        bytes: new Uint8Array(raw),
        json,
      };
      requests.push(rec);
      Promise.resolve()
        .then(() => current(rec))
        .then(
          (reply) => {
            if (reply.raw) return reply.raw(res);
            const headers: Record<string, string | string[]> = { ...(reply.headers ?? {}) };
            let out: string | Uint8Array = reply.body ?? '';
            if (reply.json !== undefined) {
              out = JSON.stringify(reply.json);
              headers['content-type'] ??= 'application/json; charset=utf-8';
            }
            if (reply.statusText !== undefined) res.writeHead(reply.status ?? 200, reply.statusText, headers);
            else res.writeHead(reply.status ?? 200, headers);
            res.end(out);
          },
          (err: unknown) => {
            res.writeHead(500, { 'content-type': 'text/plain' });
            res.end(String(err));
          },
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    last() {
      const r = requests[requests.length - 1];
      if (!r) throw fail('GW_ERR_REPORT_FAILED', { message: 'the upstream received no request' });
      return r;
    },
    setHandler(h) {
      current = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
