/**
 * @module host/errors
 * The gateway's view of the error catalogue (contracts/errors.ts, the one source): its own codes
 * (`group: 'gateway'`) and `GatewayError`, the error the engine, transport and start-up raise with
 * one of them. docs/errors.md lists the same codes (a test keeps them equal).
 */
import { ERRORS, WorkbenchError, codesOf, type ErrorCodeOf } from '../contracts/errors.js';

export type GatewayErrorCode = ErrorCodeOf<'gateway'>;

/** The gateway's codes and their catalogue entries (a view of `ERRORS`). */
export const GATEWAY_ERRORS: { readonly [C in GatewayErrorCode]: (typeof ERRORS)[C] } = Object.fromEntries(
  codesOf('gateway').map((c) => [c, ERRORS[c]]),
) as {
  readonly [C in GatewayErrorCode]: (typeof ERRORS)[C];
};

/** An error raised by the gateway itself, carrying a catalogue code. */
export class GatewayError extends WorkbenchError<GatewayErrorCode> {
  constructor(code: GatewayErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, details);
    this.name = 'GatewayError';
  }
}

export function isGatewayError(err: unknown): err is GatewayError {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { name?: unknown }).name === 'GatewayError' &&
    typeof (err as { code?: unknown }).code === 'string'
  );
}
