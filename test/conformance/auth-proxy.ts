/**
 * @module test/conformance/auth-proxy
 * The conformance suite's client sends no credentials; this loopback proxy adds the test user's
 * API key to every request and forwards it, Host and Origin untouched, to the gateway.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startAuthProxy(target: string, apiKey: string): Promise<{ url: string; close(): Promise<void> }> {
  const t = new URL(target);
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${apiKey}` };
    const upstream = http.request(
      { host: t.hostname, port: t.port, method: req.method, path: req.url, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
