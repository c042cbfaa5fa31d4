/**
 * @module host/connections/errors
 * Errors raised by the connection layer for bad input (an API-key form, an import, a connect
 * request) and for flows that cannot proceed. Each carries a catalogue code (contracts/errors.ts,
 * `group: 'connection'`) and, for input errors, one message per field so forms and the CLI can say
 * exactly what to fix.
 */
import { WorkbenchError, codesOf, type ErrorCodeOf } from '../../contracts/errors.js';

/** The connection layer's codes (a view of the catalogue). */
export const CONNECTION_ERROR_CODES = codesOf('connection');

export type ConnectionErrorCode = ErrorCodeOf<'connection'>;

export class ConnectionError extends WorkbenchError<ConnectionErrorCode> {
  /** field name → problem, for input errors */
  readonly fields: Record<string, string>;
  constructor(code: ConnectionErrorCode, message: string, fields: Record<string, string> = {}) {
    super(code, message);
    this.name = 'ConnectionError';
    this.fields = fields;
  }
}

export function isConnectionError(err: unknown): err is ConnectionError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ConnectionError';
}
