/**
 * @module sdk/binary
 * Bytes in and out within the gateway's caps: an upload is checked against the request-body cap
 * before it is sent (with words an agent can act on), a download is read as bytes and may become
 * an MCP image, and base64 / base64url convert both ways (the sandbox has Uint8Array's base64).
 */
import type { ImageResult, PluginContext } from '../contracts/plugin-api.js';

/** Uint8Array's base64 methods, which the sandbox adds (sandbox-globals.d.ts) and Node.js 20 lacks. */
interface Base64Bytes {
  toBase64(options?: { alphabet?: 'base64' | 'base64url'; omitPadding?: boolean }): string;
}
interface Base64Constructor {
  fromBase64(
    text: string,
    options?: { alphabet?: 'base64' | 'base64url'; lastChunkHandling?: 'loose' | 'strict' },
  ): Uint8Array;
}
const b64 = (bytes: Uint8Array): Base64Bytes => bytes as unknown as Base64Bytes;

/** Thrown when an upload would be over the gateway's request-body cap (named Error: the agent reads only the message). */
export class TooLargeError extends Error {}

/** Throws when `bytes` is over the call's request-body cap; `what` names it ("the file"). */
export function checkUpload(ctx: PluginContext, bytes: number, what = 'the upload'): void {
  const cap = ctx.limits.maxRequestBodyBytes;
  if (bytes > cap)
    throw new TooLargeError(
      `${what} is ${bytes} bytes, over the gateway's limit of ${cap} bytes for one request: send a smaller one.`,
    );
}

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Standard base64 of bytes. */
export function toBase64(bytes: Uint8Array): string {
  return b64(bytes).toBase64();
}

/** Bytes from standard or URL-safe base64 (padding optional); throws on anything else. */
export function fromBase64(text: string): Uint8Array {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  return (Uint8Array as unknown as Base64Constructor).fromBase64(standard, { lastChunkHandling: 'loose' });
}

/** URL-safe base64 without padding (Gmail's raw messages, JWT-like ids). */
export function toBase64Url(bytes: Uint8Array): string {
  return b64(bytes).toBase64({ alphabet: 'base64url', omitPadding: true });
}

/** An MCP image result from bytes the plugin fetched. */
export function imageResult(bytes: Uint8Array, mimeType: string): ImageResult {
  return { _mcpImage: { data: b64(bytes).toBase64(), mimeType } };
}
