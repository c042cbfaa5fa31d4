/**
 * @module plugins/google-drive/src/upload-url
 * Uploading a file from a URL: the file is fetched through the gateway like any request (the
 * manifest's egressAnyPublicHost: any public https host, never with the Google token, never a
 * private, loopback or metadata address), then uploaded to Drive in one multipart request when it
 * fits the gateway's request-body cap, else as a resumable upload in chunks of a multiple of
 * 256 KiB under that cap. The download is bounded by the gateway's response cap.
 */
import {
  changes,
  checkUpload,
  createApi,
  defineTool,
  utf8,
  z,
  type BridgeFailure,
  type PluginContext,
} from 'workbench/plugin-sdk';
import { ALL_DRIVES, api, fileIdOf, parentId, ResumeIncomplete, UPLOAD, WRITE_FIELDS } from './api.js';
import { slimFile, type DriveFile } from './shape.js';

/** Drive takes the chunks of a resumable upload in multiples of this many bytes (but the last). */
const CHUNK_UNIT = 256 * 1024;
/** room kept for the multipart envelope (boundaries, part headers, metadata) under the body cap */
const ENVELOPE = 16 * 1024;

/** The gateway's refusals of the download, in words about the URL. */
function sourceRefusal(f: BridgeFailure): Error {
  const url = String(f.options['url']);
  const words: Record<string, string> = {
    GW_ERR_BRIDGE_ADDRESS_BLOCKED: `the URL's host is not a public address (a private, loopback, link-local or cloud-metadata address): uploads from a URL fetch public URLs only`,
    GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED: 'only https URLs can be fetched',
    GW_ERR_BRIDGE_HOST_NOT_ALLOWED: `the gateway does not fetch this URL (${f.error.message})`,
    GW_ERR_BRIDGE_RESPONSE_TOO_LARGE:
      "the file is larger than the gateway accepts for one download (the operator's http.maxResponseBytes)",
    GW_ERR_BRIDGE_TIMEOUT: 'the server did not answer in time: retry, or upload a smaller file',
    GW_ERR_BRIDGE_NETWORK: `the server could not be reached (${f.error.message})`,
  };
  const why = words[f.code];
  return why ? Object.assign(new Error(`Could not fetch ${url}: ${why}.`), { code: f.code }) : f.error;
}

/** The file's own server: any public https host, reached without credentials. */
const source = createApi({
  base: 'https://source.invalid',
  provider: "The URL's server",
  integration: 'google-drive',
  failure: (f) =>
    new Error(
      `Could not fetch ${String(f.options['url'])}: its server answered HTTP ${f.status}${f.detail ? ` (${f.detail.slice(0, 200)})` : ''}.`,
    ),
  bridgeFailure: sourceRefusal,
});

/** A file name from Content-Disposition, else the URL's last path segment. */
export function fileNameOf(url: string, disposition: string | null): string {
  const star = disposition ? /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition) : null;
  const plain = disposition ? /filename\s*=\s*"?([^";]+)"?/.exec(disposition) : null;
  let name = star?.[1] ?? plain?.[1] ?? '';
  if (!name) name = url.split(/[?#]/)[0]?.split('/').filter(Boolean).slice(2).pop() ?? '';
  try {
    name = decodeURIComponent(name);
  } catch {
    // not percent-encoded text: kept as it is
  }
  name = name
    .replace(/[\u0000-\u001f/\\]/g, '_')
    .trim()
    .slice(0, 255);
  return name || 'download';
}

/** The type the server gave (without its parameters), else a generic one. */
const typeOf = (contentType: string | null): string =>
  (contentType?.split(';')[0]?.trim().toLowerCase() || 'application/octet-stream').slice(0, 255);

/** Bytes of several parts, one after the other. */
function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A multipart/related body of the metadata and the file's bytes. */
function multipart(metadata: object, bytes: Uint8Array, mime: string): { body: Uint8Array; contentType: string } {
  let boundary = 'workbench-upload-';
  while (boundary.length < 48) boundary += Math.random().toString(36).slice(2);
  boundary = boundary.slice(0, 48);
  const head = utf8(
    `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata)}\r\n` +
      `--${boundary}\r\nContent-Type: ${mime}\r\n\r\n`,
  );
  // a boundary must not occur in the content; 48 random characters will not, in practice
  return {
    body: concat([head, bytes, utf8(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/related; boundary=${boundary}`,
  };
}

/** Uploads in chunks: opens a resumable session, then PUTs each chunk with its Content-Range. */
async function resumable(
  ctx: PluginContext,
  metadata: object,
  bytes: Uint8Array,
  mime: string,
  name: string,
): Promise<DriveFile> {
  const chunk = Math.floor(ctx.limits.maxRequestBodyBytes / CHUNK_UNIT) * CHUNK_UNIT;
  if (chunk === 0) {
    checkUpload(ctx, bytes.length + ENVELOPE, 'the file with its upload envelope');
    throw new Error(
      `The file (${bytes.length} bytes) does not fit one request, and the gateway's request-body cap is under Drive's 256 KiB chunk size.`,
    );
  }
  const chunks = Math.ceil(bytes.length / chunk);
  if (ctx.limits.requestsLeft() < chunks + 1)
    throw new Error(
      `The file (${bytes.length} bytes) takes ${chunks + 1} requests to upload in chunks of ${chunk} bytes, and this call has ${ctx.limits.requestsLeft()} left: ask the operator for a larger request-body cap or request budget, or upload a smaller file.`,
    );
  const opened = await api.request(ctx, 'POST', `${UPLOAD}/files`, {
    query: { uploadType: 'resumable', ...ALL_DRIVES, fields: WRITE_FIELDS },
    body: metadata,
    headers: { 'x-upload-content-type': mime, 'x-upload-content-length': String(bytes.length) },
    action: `start the upload of "${name}"`,
  });
  const session = opened.headers.get('location');
  if (!session || !session.startsWith(`${UPLOAD}/files?`))
    throw new Error(`Google Drive did not return an upload session for "${name}": retry.`);
  for (let start = 0; start < bytes.length; start += chunk) {
    const end = Math.min(start + chunk, bytes.length);
    try {
      const done = await api.request<DriveFile>(ctx, 'PUT', session, {
        rawBody: bytes.subarray(start, end),
        contentType: mime,
        headers: { 'content-range': `bytes ${start}-${end - 1}/${bytes.length}` },
        action: `upload bytes ${start}-${end - 1} of "${name}"`,
        chunk: true,
      });
      if (end === bytes.length) return done.data;
    } catch (err) {
      if (!(err instanceof ResumeIncomplete) || end === bytes.length) throw err;
      const held = /bytes=0-(\d+)/.exec(err.range ?? '');
      if (!held || Number(held[1]) !== end - 1)
        throw new Error(
          `Google Drive holds other bytes of "${name}" than were sent (Range ${err.range ?? 'none'}): upload it again.`,
        );
    }
  }
  throw new Error(`Google Drive did not confirm the upload of "${name}": check the folder before trying again.`);
}

export const uploadFromUrl = defineTool({
  description:
    "Upload (save, copy, import) a file from a public https URL into Google Drive: a PDF, an image, a spreadsheet, any file a link points to. The gateway downloads it (public addresses only; no credential is sent to that server), then creates a new Drive file with its bytes, optionally inside a folder. Returns the new file's id and link, and the size and type fetched. Files are limited by the gateway's download cap (8 MiB by default).",
  input: z.object({
    url: z.string().min(9).max(4000).describe('The https URL of the file.'),
    name: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe("The new file's name; default the name the server gives, else the URL's last path segment."),
    mimeType: z
      .string()
      .regex(/^[a-z0-9.+-]{1,60}\/[a-z0-9.+-]{1,120}$/)
      .optional()
      .describe("The file's type, e.g. application/pdf; default the type the server gives."),
    ...parentId,
    description: z.string().max(2000).optional().describe('A description shown in Drive.'),
  }),
  annotations: changes('Upload file from URL'),
  handler: async (ctx, a) => {
    if (!/^https:\/\/[^/?#]+/i.test(a.url)) throw new Error(`url must be an https URL, not "${a.url.slice(0, 100)}".`);
    // fetched first: nothing of the Google connection has been loaded into this call yet
    const got = await source.request<Uint8Array>(ctx, 'GET', a.url, {
      action: `fetch ${a.url}`,
      expect: 'bytes',
      accept: '*/*',
      url: a.url,
    });
    const bytes = got.data;
    const mime = a.mimeType ?? typeOf(got.headers.get('content-type'));
    const name = a.name ?? fileNameOf(got.url || a.url, got.headers.get('content-disposition'));
    const metadata = {
      name,
      mimeType: mime,
      ...(a.parentId ? { parents: [fileIdOf(a.parentId, 'parentId')] } : {}),
      ...(a.description ? { description: a.description } : {}),
    };
    const fits = bytes.length + ENVELOPE <= ctx.limits.maxRequestBodyBytes;
    let file: DriveFile;
    if (fits) {
      const { body, contentType } = multipart(metadata, bytes, mime);
      file = await api.json<DriveFile>(ctx, 'POST', `${UPLOAD}/files`, {
        query: { uploadType: 'multipart', ...ALL_DRIVES, fields: WRITE_FIELDS },
        rawBody: body,
        contentType,
        action: `upload "${name}"`,
      });
    } else file = await resumable(ctx, metadata, bytes, mime, name);
    return {
      ...slimFile(file),
      source: { url: a.url, bytes: bytes.length, contentType: mime },
      uploadType: fits ? 'multipart' : 'resumable',
    };
  },
});
