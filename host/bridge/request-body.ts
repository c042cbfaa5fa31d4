/**
 * @module host/bridge/request-body
 * The body of a plugin's request as the bridge sends it: its text, or the bytes a binary body's
 * base64 carries (plugin code sent an ArrayBuffer, a typed array or a DataView; bytes cross the
 * sandbox's JSON messages as base64). The base64 is checked before it is decoded, well-formed and
 * within the body cap counted in bytes, so a malformed or oversized one costs no decoding.
 */
import type { BridgeRequest } from '../../contracts/protocol.js';
import { base64ByteLength, requestLimitMessage } from '../../contracts/request-limits.js';
import { BridgeError } from './bridge-error.js';

/** padded base64 of the standard alphabet, as the sandbox writes it (length checked apart) */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The request's body, or undefined; throws GW_ERR_BRIDGE_BAD_REQUEST for a malformed or oversized one. */
export function requestBody(raw: BridgeRequest, maxBytes: number): string | Uint8Array | undefined {
  const { body, bodyBase64 } = raw;
  if (bodyBase64 === undefined) {
    if (body !== undefined && typeof body !== 'string')
      throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', 'the body must be a string');
    return body;
  }
  if (body !== undefined || typeof bodyBase64 !== 'string' || bodyBase64.length % 4 !== 0 || !BASE64.test(bodyBase64)) {
    throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', 'the binary body is malformed');
  }
  const bytes = base64ByteLength(bodyBase64);
  if (bytes > maxBytes) throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', requestLimitMessage.body(bytes, maxBytes));
  return Buffer.from(bodyBase64, 'base64');
}
