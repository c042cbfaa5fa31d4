/**
 * @module host/bridge/bridge-error
 * The one error the bridge's interceptors throw. It carries a stable code from
 * `BRIDGE_ERROR_CODES`; `createBridge` turns it into `{ ok: false, error: { code, message } }`
 * before it leaves the host, so no Error object ever crosses to the sandbox.
 */
import type { BridgeErrorCode } from '../../contracts/protocol.js';

export class BridgeError extends Error {
  override readonly name = 'BridgeError';
  readonly code: BridgeErrorCode;

  constructor(code: BridgeErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Matches on `code`, never on `instanceof` alone (STYLE §7.2). */
export function isBridgeError(e: unknown): e is BridgeError {
  return e instanceof BridgeError || (typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'BridgeError');
}
