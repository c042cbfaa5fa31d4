/**
 * @module test/plugins/google-drive-upload.test
 * drive_upload_from_url through the real gateway and sandbox: the file is fetched from a loopback
 * stand-in for a public file server (an origin the policy maps, as an operator would) without the
 * Google token, then uploaded to a stand-in for www.googleapis.com — in one multipart/related
 * request whose binary part is the file's exact bytes, or, over the request-body cap, as a
 * resumable upload in 256 KiB chunks with their Content-Range. Private, loopback and metadata
 * addresses are refused (as the URL and as a redirect target), and so are plain http, a source
 * error and a file over the download cap, each before anything reaches Drive.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { startUpstream, type RecordedRequest, type Upstream, type UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'ya29.drive-upload-test-token-0002';
const FILES = 'https://files.example.org';
const WRITE_FIELDS = 'id,name,mimeType,parents,driveId,webViewLink,trashed,modifiedTime';
const SESSION = 'https://www.googleapis.com/upload/drive/v3/files?uploadType=resumable&upload_id=UP-123';

/** Every byte value, repeated to `n` bytes: a body that text decoding would change. */
const bytesOf = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) % 256);

let drive: Upstream;
let files: Upstream;
let gw: TestGateway;
let small: TestGateway;

const CREATED = {
  id: 'F1',
  name: 'report.pdf',
  mimeType: 'application/pdf',
  parents: ['P1'],
  webViewLink: 'https://drive.google.com/file/d/F1/view',
  modifiedTime: '2026-06-01T10:00:00.000Z',
};

before(async () => {
  drive = await startUpstream();
  files = await startUpstream();
  const credential = { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 };
  gw = await startPluginGateway('google-drive', drive, credential, { more: { [FILES]: files } });
  small = await startPluginGateway('google-drive', drive, credential, {
    more: { [FILES]: files },
    policy: { http: { maxRequestBodyBytes: 256 * 1024, maxResponseBytes: 1024 * 1024 } },
  });
});
after(async () => {
  await gw?.close();
  await small?.close();
  await drive?.close();
  await files?.close();
});

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

function serve(up: Upstream, handler: (req: RecordedRequest) => UpstreamReply): void {
  up.requests.length = 0;
  up.setHandler(handler);
}

/** The parts of a multipart/related body: their headers and their bytes. */
function partsOf(req: RecordedRequest): Array<{ headers: string; bytes: Buffer }> {
  const boundary = /boundary=([^;]+)/.exec(String(req.headers['content-type']))?.[1] ?? '';
  const raw = Buffer.from(req.bytes);
  const out: Array<{ headers: string; bytes: Buffer }> = [];
  const sep = Buffer.from(`--${boundary}`);
  let at = raw.indexOf(sep);
  for (;;) {
    const next = raw.indexOf(sep, at + sep.length);
    if (next < 0) break;
    const part = raw.subarray(at + sep.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    out.push({ headers: part.subarray(0, split).toString(), bytes: part.subarray(split + 4) });
    at = next;
  }
  return out;
}

describe('drive_upload_from_url', () => {
  test('fetches the file without the token, then uploads its exact bytes in one multipart request', async () => {
    const file = bytesOf(5000);
    serve(files, () => ({
      headers: {
        'content-type': 'application/pdf; qs=0.9',
        'content-disposition': 'attachment; filename="Q2 report.pdf"',
      },
      body: file,
    }));
    serve(drive, () => ({ json: { ...CREATED, name: 'Q2 report.pdf' } }));
    const r = await ok('drive_upload_from_url', {
      url: `${FILES}/docs/q2.pdf?dl=1`,
      parentId: 'P1',
      description: 'Q2',
    });
    assert.deepEqual(r, {
      id: 'F1',
      name: 'Q2 report.pdf',
      mimeType: 'application/pdf',
      modifiedTime: '2026-06-01T10:00:00.000Z',
      size: null,
      parents: ['P1'],
      owners: [],
      driveId: null,
      webViewLink: 'https://drive.google.com/file/d/F1/view',
      source: { url: `${FILES}/docs/q2.pdf?dl=1`, bytes: 5000, contentType: 'application/pdf' },
      uploadType: 'multipart',
    });
    const fetched = files.last();
    assert.equal(fetched.method, 'GET');
    assert.equal(fetched.url, '/docs/q2.pdf?dl=1');
    assert.equal(fetched.headers.authorization, undefined, 'the file server never gets the Google token');
    assert.equal(drive.requests.length, 1);
    const up = drive.last();
    assert.equal(up.method, 'POST');
    assert.equal(up.path, '/upload/drive/v3/files');
    assert.deepEqual(Object.fromEntries(up.query), {
      uploadType: 'multipart',
      supportsAllDrives: 'true',
      fields: WRITE_FIELDS,
    });
    assert.equal(up.headers.authorization, `Bearer ${TOKEN}`);
    assert.match(String(up.headers['content-type']), /^multipart\/related; boundary=/);
    const [meta, content] = partsOf(up);
    assert.match(meta?.headers ?? '', /application\/json/);
    assert.deepEqual(JSON.parse(meta?.bytes.toString() ?? ''), {
      name: 'Q2 report.pdf',
      mimeType: 'application/pdf',
      parents: ['P1'],
      description: 'Q2',
    });
    assert.match(content?.headers ?? '', /Content-Type: application\/pdf/);
    assert.ok(content && Buffer.compare(content.bytes, Buffer.from(file)) === 0, 'the file bytes, unchanged');
  });

  test('names the file after the URL and takes the given type when the server says neither', async () => {
    serve(files, () => ({ headers: { 'content-type': 'application/octet-stream' }, body: bytesOf(10) }));
    serve(drive, () => ({ json: CREATED }));
    await ok('drive_upload_from_url', { url: `${FILES}/a/b/photo%20one.png`, mimeType: 'image/png' });
    const [meta, content] = partsOf(drive.last());
    assert.deepEqual(JSON.parse(meta?.bytes.toString() ?? ''), { name: 'photo one.png', mimeType: 'image/png' });
    assert.match(content?.headers ?? '', /image\/png/);
  });

  test('over the request-body cap: a resumable upload in 256 KiB chunks with their Content-Range', async () => {
    const file = bytesOf(600_000);
    serve(files, () => ({ headers: { 'content-type': 'application/zip' }, body: file }));
    let puts = 0;
    serve(drive, (req) => {
      if (req.method === 'POST') return { headers: { location: SESSION }, json: {} };
      puts++;
      const end = [262143, 524287][puts - 1];
      return end !== undefined
        ? { status: 308, headers: { range: `bytes=0-${end}` }, body: '' }
        : { json: { ...CREATED, name: 'big.zip', mimeType: 'application/zip' } };
    });
    const item = (await small.execute('drive_upload_from_url', { url: `${FILES}/big.zip` })) as {
      result: Record<string, unknown>;
    };
    assert.equal(item.result?.['uploadType'], 'resumable', JSON.stringify(item));
    const [open, ...chunks] = drive.requests;
    assert.equal(open?.method, 'POST');
    assert.deepEqual(Object.fromEntries(open?.query ?? []), {
      uploadType: 'resumable',
      supportsAllDrives: 'true',
      fields: WRITE_FIELDS,
    });
    assert.deepEqual(open?.json, { name: 'big.zip', mimeType: 'application/zip' });
    assert.equal(open?.headers['x-upload-content-type'], 'application/zip');
    assert.equal(open?.headers['x-upload-content-length'], '600000');
    assert.deepEqual(
      chunks.map((c) => [c.method, c.url, c.headers['content-range'], c.bytes.length, c.headers.authorization]),
      [
        [
          'PUT',
          '/upload/drive/v3/files?uploadType=resumable&upload_id=UP-123',
          'bytes 0-262143/600000',
          262144,
          `Bearer ${TOKEN}`,
        ],
        [
          'PUT',
          '/upload/drive/v3/files?uploadType=resumable&upload_id=UP-123',
          'bytes 262144-524287/600000',
          262144,
          `Bearer ${TOKEN}`,
        ],
        [
          'PUT',
          '/upload/drive/v3/files?uploadType=resumable&upload_id=UP-123',
          'bytes 524288-599999/600000',
          75712,
          `Bearer ${TOKEN}`,
        ],
      ],
    );
    const sent = Buffer.concat(chunks.map((c) => Buffer.from(c.bytes)));
    assert.equal(Buffer.compare(sent, Buffer.from(file)), 0, 'the chunks are the file');
  });

  for (const url of [
    'https://127.0.0.1/secret.pdf',
    'https://localhost/secret.pdf',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/secret.pdf',
    'https://10.0.0.5/share/file.pdf',
  ])
    test(`refuses ${url}: not a public address, and nothing reaches Drive`, async () => {
      serve(drive, () => ({ json: CREATED }));
      await fails('drive_upload_from_url', { url }, /Could not fetch .*: the URL's host is not a public address/);
      assert.equal(drive.requests.length, 0);
    });

  test('refuses a redirect to a private address, plain http, and says what the server answered', async () => {
    serve(drive, () => ({ json: CREATED }));
    serve(files, () => ({ status: 302, headers: { location: 'https://127.0.0.1/internal' } }));
    await fails('drive_upload_from_url', { url: `${FILES}/moved` }, /not a public address/);
    await fails('drive_upload_from_url', { url: 'http://files.example.org/a.pdf' }, /must be an https URL/);
    serve(files, () => ({ status: 404, body: 'Not Found' }));
    await fails('drive_upload_from_url', { url: `${FILES}/missing.pdf` }, /its server answered HTTP 404/);
    assert.equal(drive.requests.length, 0);
  });

  test('a file over the download cap is refused in words, before anything reaches Drive', async () => {
    serve(drive, () => ({ json: CREATED }));
    serve(files, () => ({ headers: { 'content-type': 'application/zip' }, body: bytesOf(1_200_000) }));
    const item = (await small.execute('drive_upload_from_url', { url: `${FILES}/huge.zip` })) as Record<
      string,
      unknown
    >;
    assert.match(String(item['message'] ?? item['error']), /larger than the gateway accepts for one download/);
    assert.equal(drive.requests.length, 0);
  });
});
