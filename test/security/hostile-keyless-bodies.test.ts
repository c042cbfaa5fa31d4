/**
 * @module test/security/hostile-keyless-bodies.test
 * A client with no key sends bodies where no key is needed: to the portal's forms and to addresses
 * that do not exist. Only POST /mcp and /rest/:integration take bodies up to requests.bodyLimitBytes,
 * and only once the key is checked. Elsewhere the server must not read and parse megabytes for a
 * stranger (a 4 MB JSON array to /login took ~0.8 s of the event loop and answered 403; bodies to
 * unknown paths were read and parsed whole, and slow ones held for the receive timeout): a body to
 * an unknown address is answered 404 before it is read and the connection closed; the portal
 * takes forms only (any other type is refused unread with 415) of at most 64 KiB. Callers with a
 * key still send large bodies to /mcp and /rest.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');

interface RawAnswer {
  status: number;
  head: string;
  /** the server closed the connection (while the client still had most of its body to send) */
  closed: boolean;
}

/**
 * Sends a request head announcing `length` bytes of body and only the first `sent` of them, then
 * waits (bounded) for the answer's head and for the connection to close. A server that wanted the
 * whole body would never answer.
 */
function announceBody(
  url: string,
  request: string,
  contentType: string,
  length: number,
  sent: string,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let data = '';
    let status = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer while the body was unsent: ${JSON.stringify(data.slice(0, 300))}`));
    }, 10_000);
    const finish = (closed: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, head: data.split('\r\n\r\n')[0] ?? '', closed });
    };
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(
      `${request} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n\r\n${sent}`,
    );
  });
}

describe('bodies sent without a key', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [FIXTURES] });
  });
  after(async () => gw.close());

  it('a body to an address that does not exist is answered 404 unread, and the connection closed', async () => {
    const r = await announceBody(gw.url, 'POST /nonexistent', 'application/json', 4_000_000, '[1,1,1');
    assert.equal(r.status, 404, r.head);
    assert.match(r.head, /^connection: close$/im);
    assert.equal(r.closed, true);
    // a chunked body the same
    const chunked = await new Promise<RawAnswer>((resolve, reject) => {
      const { hostname, port } = new URL(gw.url);
      const socket = net.connect(Number(port), hostname);
      let data = '';
      socket.on('data', (c) => (data += c.toString('latin1')));
      socket.on('close', () =>
        resolve({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0),
          head: data.split('\r\n\r\n')[0] ?? '',
          closed: true,
        }),
      );
      socket.on('error', reject);
      socket.write(
        `PUT /nothing/here HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n[1,1`,
      );
    });
    assert.equal(chunked.status, 404, chunked.head);
  });

  it('any answer given before the body was read closes the connection: a GET with a body, a refused Host', async () => {
    // the portal's catch-all answers every GET; the body a GET announces is never wanted
    const get = await announceBody(gw.url, 'GET /nonexistent', 'application/octet-stream', 1_000_000_000, 'x');
    assert.equal(get.status, 404, get.head);
    assert.match(get.head, /^connection: close$/im);
    assert.equal(get.closed, true);
    const page = await announceBody(gw.url, 'GET /login', 'application/octet-stream', 1_000_000_000, 'x');
    assert.equal(page.status, 200, page.head);
    assert.equal(page.closed, true);
    // a Host this loopback server does not answer to (DNS rebinding): 403 before anything is read
    const { port } = new URL(gw.url);
    const foreign = await new Promise<RawAnswer>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let data = '';
      socket.on('data', (c) => (data += c.toString('latin1')));
      socket.on('close', () =>
        resolve({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0),
          head: data.split('\r\n\r\n')[0] ?? '',
          closed: true,
        }),
      );
      socket.on('error', reject);
      socket.write(
        'POST /login HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n\r\napiKey=',
      );
    });
    assert.equal(foreign.status, 403, foreign.head);
    assert.match(foreign.head, /^connection: close$/im);
  });

  it('the portal refuses a JSON body unread (415), whatever its size', async () => {
    const r = await announceBody(gw.url, 'POST /login', 'application/json', 4_000_000, '[1,1,1');
    assert.equal(r.status, 415, r.head);
    const small = await fetch(`${gw.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"apiKey":"x"}',
    });
    assert.equal(small.status, 415);
  });

  it('the portal takes forms of at most 64 KiB', async () => {
    const big = await fetch(`${gw.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `apiKey=${'x'.repeat(70 * 1024)}`,
    });
    assert.equal(big.status, 413);
    // a form of ordinary size is read (and refused for its missing CSRF token, not its size)
    const form = await fetch(`${gw.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'apiKey=x',
    });
    assert.equal(form.status, 403);
  });

  it('with a key, /rest and /mcp still take bodies up to requests.bodyLimitBytes', async () => {
    // 200 KiB of arguments: over the keyless limit, well under requests.bodyLimitBytes (4 MiB)
    const text = 'y'.repeat(200 * 1024);
    const rest = await gw.rest('fixture-echo', { tool: 'echo_args', args: { text, times: 1 } });
    assert.equal(rest.status, 200, JSON.stringify(rest.json).slice(0, 300));
    assert.equal(rest.json.result.text.length, text.length);
    const client = await gw.mcpClient();
    const answer = (await client.callTool({
      name: 'execute_tools',
      arguments: { executions: [{ tool: 'echo_args', args: { text, times: 1 } }] },
    })) as { content: { text: string }[]; isError?: boolean };
    assert.notEqual(answer.isError, true);
    // (the result is over the 60,000-character cap: it comes back as a stub to page through)
    assert.equal(JSON.parse(answer.content[0]?.text ?? '{}').results[0].result.truncated, true);
  });
});
