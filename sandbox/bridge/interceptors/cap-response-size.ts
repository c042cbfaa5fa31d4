/**
 * @module sandbox/bridge/interceptors/cap-response-size
 * Reads the response body while counting bytes and aborts past `maxResponseBytes`, so a huge
 * body never gets buffered in the host (the host's heap is not covered by any isolate limit).
 * The count is of decoded bytes: a compression bomb is stopped like any other large body.
 *
 * Each chunk is also admitted into the bridge's buffer budget (`req.reservation`, all calls
 * together: buffer-budget.ts) before it is kept; a chunk that does not fit ends the request at once
 * with GW_ERR_BRIDGE_BUSY. On every failure the bytes read so far are returned before the
 * connection is torn down, so other requests see the room at once.
 */
import { BridgeError } from '../bridge-error.js';
import type { BufferRefusal } from '../buffer-budget.js';
import type { Interceptor } from '../types.js';

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
      const body = new TextDecoder('utf-8').decode(Buffer.concat(chunks, total));
      return { ...res, body, stream: null };
    };
}
