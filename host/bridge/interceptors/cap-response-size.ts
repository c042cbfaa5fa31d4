/**
 * @module host/bridge/interceptors/cap-response-size
 * Reads the response body while counting bytes and aborts past `maxResponseBytes`, so a huge
 * body never gets buffered in the host (the host's heap is not covered by any isolate limit).
 * The count is of decoded bytes: a compression bomb is stopped like any other large body.
 *
 * Each chunk is also admitted into the bridge's buffer budget (`req.reservation`, all calls
 * together: buffer-budget.ts) before it is kept; a chunk that does not fit ends the request at once
 * with GW_ERR_BRIDGE_BUSY. On every failure the bytes read so far are returned before the
 * connection is torn down, so other requests see the room at once.
 *
 * The body is then handed on as text when its bytes are UTF-8 without a byte-order mark (the
 * common case, JSON; the isolate rebuilds the exact bytes from the text when plugin code asks for
 * them), else as its bytes (an image, a PDF, a zip, Latin-1 text), which the isolate decodes to
 * text only when plugin code asks for that. The text path costs what it did: the same decoding,
 * then a search for U+FFFD, which the decoder puts in place of invalid bytes (free on text with
 * no character above U+00FF, which V8 stores a byte a character; the bytes are validated only
 * when the text does hold one). A fatal decoder's separate validation pass cost 4–20 % more on
 * ASCII JSON of 100 KB–1 MB.
 */
import { isUtf8 } from 'node:buffer';
import { BridgeError } from '../bridge-error.js';
import type { BufferRefusal } from '../buffer-budget.js';
import type { Interceptor } from '../types.js';

const UTF8 = new TextDecoder('utf-8');

/** The body as text when its bytes are exactly that text's UTF-8, else its bytes. */
function bodyOf(bytes: Uint8Array): { body: string; bytes?: Uint8Array } {
  // a decoder drops a byte-order mark: such a body goes as bytes, which keep it
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { body: '', bytes };
  const body = UTF8.decode(bytes);
  if (body.indexOf('\ufffd') < 0 || isUtf8(bytes)) return { body };
  return { body: '', bytes };
}

function tooLarge(max: number): BridgeError {
  return new BridgeError('GW_ERR_BRIDGE_RESPONSE_TOO_LARGE', `the response body is larger than ${max} bytes`);
}

function busy(refused: BufferRefusal): BridgeError {
  return new BridgeError(
    'GW_ERR_BRIDGE_BUSY',
    refused.of === 'budget'
      ? `the gateway is holding as many response bodies as it may at once (${refused.limit} bytes, http.maxBufferedBytes, all plugins together); retry later`
      : `this plugin's requests are holding as many response bodies as one plugin may at once (${refused.limit} bytes of http.maxBufferedBytes); retry later, or make fewer large requests at once`,
  );
}

export function capResponseSize(): Interceptor {
  return (next) =>
    async function capResponseSizeStep(req, call) {
      const res = await next(req, call);
      const max = call.policy.maxResponseBytes;
      const stream = res.stream;
      if (!stream) return { ...res, stream: null };
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > max) {
        await stream.cancel().catch(() => undefined);
        throw tooLarge(max);
      }
      const { reservation } = req;
      const reader = stream.getReader();
      const chunks: Uint8Array[] = [];
      let total = 0;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          total += value.byteLength;
          let refusal: BridgeError | undefined;
          if (total > max) refusal = tooLarge(max);
          else {
            const refused = reservation.grow(value.byteLength);
            if (refused) refusal = busy(refused);
          }
          if (refusal) {
            reservation.release();
            await reader.cancel().catch(() => undefined);
            throw refusal;
          }
          chunks.push(value);
        }
      } catch (e) {
        reservation.release();
        throw e;
      } finally {
        reader.releaseLock();
      }
      return { ...res, ...bodyOf(Buffer.concat(chunks, total)), stream: null };
    };
}
