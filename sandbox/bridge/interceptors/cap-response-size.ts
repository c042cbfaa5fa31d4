/**
 * @module sandbox/bridge/interceptors/cap-response-size
 * Reads the response body while counting bytes and aborts past `maxResponseBytes`, so a huge
 * body never gets buffered in the host (the host's heap is not covered by any isolate limit).
 * The count is of decoded bytes: a compression bomb is stopped like any other large body.
 */
import { BridgeError } from '../bridge-error.js';
import type { Interceptor } from '../types.js';

function tooLarge(max: number): BridgeError {
  return new BridgeError('GW_ERR_BRIDGE_RESPONSE_TOO_LARGE', `the response body is larger than ${max} bytes`);
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
      const reader = stream.getReader();
      const chunks: Uint8Array[] = [];
      let total = 0;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          total += value.byteLength;
          if (total > max) {
            await reader.cancel().catch(() => undefined);
            throw tooLarge(max);
          }
          chunks.push(value);
        }
      } finally {
        reader.releaseLock();
      }
      const body = new TextDecoder('utf-8').decode(Buffer.concat(chunks, total));
      return { ...res, body, stream: null };
    };
}
