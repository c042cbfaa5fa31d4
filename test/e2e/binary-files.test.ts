/**
 * @module test/e2e/binary-files.test
 * Files as bytes through a real gateway (transport, engine, sandbox process, isolate, bridge) and a
 * loopback file server: a plugin downloads a 5 MiB PNG-like image with `res.bytes()` and returns it
 * as `_mcpImage` with `toBase64()`, and an MCP client gets an image block holding exactly the
 * server's bytes; a plugin turns base64 arguments into bytes and uploads them in a multipart body
 * it builds itself (over REST), and the server receives exactly that body.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const BINARY_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'binary-plugins');

/** 5 MiB that start like a PNG and go on with every byte value, pseudo-randomly */
const IMAGE = Buffer.alloc(5 * 1024 * 1024);
Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]).copy(
  IMAGE,
);
for (let i = 16; i < IMAGE.length; i++) IMAGE[i] = Math.imul(i, 2654435761) >>> 24;

interface Upload {
  contentType: string;
  body: Buffer;
}

describe('files as bytes through the gateway', () => {
  let gw: TestGateway;
  let server: http.Server;
  let client: Client;
  const uploads: Upload[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'GET' && req.url === '/logo.png') {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(IMAGE);
          return;
        }
        if (req.method === 'POST' && req.url === '/upload') {
          const body = Buffer.concat(chunks);
          uploads.push({ contentType: String(req.headers['content-type']), body });
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ id: 'att-1', bytes: body.length }));
          return;
        }
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startGateway({
      plugins: [],
      pluginDirs: [BINARY_PLUGINS],
      upstreams: { 'https://files.fixture.test': origin },
    });
    client = await gw.mcpClient();
  });
  after(async () => {
    await client?.close();
    await gw?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('a 5 MiB image read with bytes() and returned with toBase64() reaches the MCP client as an image block of exactly its bytes', async () => {
    const res = (await client.callTool({
      name: 'execute_tools',
      arguments: { executions: [{ tool: 'files_image', args: { path: '/logo.png' } }] },
    })) as {
      content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
      isError?: boolean;
    };
    assert.equal(res.isError, undefined, JSON.stringify(res.content).slice(0, 500));
    const images = res.content.filter((c) => c.type === 'image');
    assert.equal(images.length, 1);
    assert.equal(images[0]?.mimeType, 'image/png');
    assert.ok(images[0]?.data === IMAGE.toString('base64'), 'the image block holds the server bytes, in base64');
    const text = JSON.parse(res.content.find((c) => c.type === 'text')?.text ?? '{}') as {
      results: Array<{ result: Record<string, unknown> }>;
    };
    assert.deepEqual(text.results[0]?.result, {
      name: '/logo.png',
      bytes: IMAGE.length,
      _mcpImage: { mimeType: 'image/png', bytes: IMAGE.length, content: 'image block 1' },
    });
  });

  it('a file given in base64 is uploaded as bytes in a multipart body the plugin builds (REST)', async () => {
    const file = Buffer.concat([IMAGE.subarray(0, 8), Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i))]);
    const item = await gw.execute('files_upload', {
      name: 'rapport été.png',
      mimeType: 'image/png',
      contentBase64: file.toString('base64'),
    });
    assert.deepEqual(item, { result: { status: 201, answer: { id: 'att-1', bytes: uploads.at(-1)?.body.length } } });
    const upload = uploads.at(-1);
    const boundary = /^multipart\/form-data; boundary=(wb-[0-9a-f]+)$/.exec(upload?.contentType ?? '')?.[1];
    assert.ok(boundary, upload?.contentType);
    const expected = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nattachment\r\n`),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="rapport été.png"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    assert.ok(upload?.body.equals(expected), 'the server received exactly the multipart body');
  });
});
