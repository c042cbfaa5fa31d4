/**
 * @module host/bridge/bridge-error
 * The one error the bridge's interceptors throw. It carries a stable code from
 * the catalogue's bridge family (contracts/errors.ts); `createBridge` turns it into `{ ok: false, error: { code, message } }`
 * before it leaves the host, so no Error object ever crosses to the sandbox.
 */
import { WorkbenchError } from '../../contracts/errors.js';
import type { BridgeErrorCode } from '../../contracts/protocol.js';

export class BridgeError extends WorkbenchError<BridgeErrorCode> {
  override readonly name = 'BridgeError';

  constructor(code: BridgeErrorCode, message: string) {
    super(code, message);
  }
}

/** Matches on `code`, never on `instanceof` alone (STYLE §7.2). */
export function isBridgeError(e: unknown): e is BridgeError {
  return (
    e instanceof BridgeError ||
    (typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'BridgeError')
  );
}
